//! Jobs over a whole collection: backfills, rebalances, renames and verifications
//! (`shard_job`), their parts (`partition`, `balanced_parts`), the engine a task runs under
//! (`task_part`: Cloud Run or a Kubernetes Indexed Job), and the state that tracks them across
//! tasks (`tracked`). Behind the `jobs` feature; it sits above writes and queries.

pub(crate) mod balanced_parts;
pub(crate) mod purge;
pub(crate) mod shard_job;
pub(crate) mod stored_checkpoint;
pub(crate) mod task_part;
pub(crate) mod tracked;
