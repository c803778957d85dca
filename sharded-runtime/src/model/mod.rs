//! The model of a sharded type: what a `#[derive(Sharded)]` declares and stores — the
//! `Sharded` trait and its sealed bounds, shard values and how writes draw them while a shard
//! set changes (the ramp, `Throttling`), order keys and order stamps, numeric and counter
//! fields, stored names, parents, document ids, names and id ranges, and Firestore's order of
//! values; and the handles (`ShardedCollection`, `InTransaction`, `ShardedCollectionGroup`),
//! defined here as data, that each room above adds its methods to. Plain data and rules: it
//! imports only the wire's option checks, nothing from the rooms above it (writes, queries,
//! counters, jobs, Datastore), and sends nothing.

pub(crate) mod collection;
pub(crate) mod counter_field;
pub(crate) mod declared;
pub(crate) mod document_id;
pub(crate) mod document_path;
pub(crate) mod expiry;
pub(crate) mod fields;
pub(crate) mod handle;
pub(crate) mod numeric;
pub(crate) mod order_key;
pub(crate) mod order_stamp;
pub(crate) mod parent;
// Id ranges split jobs; without `jobs`, only `MAX_PARTS` bounds the bulk writer's workers.
#[cfg_attr(not(feature = "jobs"), allow(dead_code))]
pub(crate) mod partition;
pub mod reshard;
pub(crate) mod rollout;
pub(crate) mod shard;
pub(crate) mod sharded;
pub(crate) mod stored;
pub(crate) mod stored_names;
pub(crate) mod throttling;
pub(crate) mod value_order;
