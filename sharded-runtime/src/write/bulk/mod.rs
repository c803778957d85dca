//! Writing many documents: a ramped, retrying bulk writer (Google's BulkWriter, for Rust and
//! for sharded types).

mod batcher;
mod clock;
mod field_names;
mod landed;
mod op;
mod options;
mod outcome;
mod rate_limiter;
mod requests;
pub(crate) mod sequential_ids;
mod writer;

pub use crate::wire::option_check::MAX_DURATION;
pub use crate::wire::retry::Backoff;
// Test hooks: virtual time for tests of schedules. Hidden, as every test hook is (see the
// README's "Stability"): public for this workspace's own tests, not part of the API.
pub use crate::model::throttling::Throttling;
#[doc(hidden)]
pub use clock::{Clock, Sleep, SystemClock, VirtualClock};
pub use options::{BulkWriterOptions, MAX_BATCH_SIZE, MAX_PENDING};
pub use outcome::{BulkStats, PendingWrite, WriteFailure, WriteOutcome};
/// The writer's token bucket, reachable for the benchmarks and the ramp's tests only.
#[doc(hidden)]
pub use rate_limiter::RateLimiter;
pub use writer::{BulkWriter, BulkWriterIn};

#[cfg(feature = "jobs")]
pub(crate) use landed::same_value;
