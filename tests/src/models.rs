//! The recipe's `instruments` (the example app's own model) and a collection sized past one `in`.

use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

pub use sharded_examples::{Instrument, Price};

/// Sized for 20,000 writes/s: 40 shards, more than one `in` can hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    writes_per_second = 20_000,
    order_by = "at",
    direction = "asc",
    collection = "ticks",
    shard_field = "bucket"
)]
pub struct Tick {
    #[sharded(index)]
    pub venue: String,
    pub at: FirestoreTimestamp,
    pub seq: i64,
}
