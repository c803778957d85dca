//! Writes: a sharded document serialized with its shard and checked by the write guard, the
//! `Write` every path sends, single writes on a `ShardedCollection`, transforms, atomic
//! batches and transactions, and the bulk writer. It imports the model and the wire, never
//! counters, jobs or Datastore.

pub(crate) mod atomic;
pub mod bulk;
pub(crate) mod document;
pub(crate) mod firestore_write;
pub(crate) mod increment;
pub(crate) mod serialize;
pub(crate) mod single;
pub(crate) mod transform;
pub(crate) mod write_guard;
