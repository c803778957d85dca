//! The recipe's `instruments`, as a user of sharded declares them.

use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Price {
    pub currency: String,
    pub micros: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[serde(rename_all = "camelCase")]
#[sharded(shard_values = ["x", "y", "z"], order_by = "timestamp")]
pub struct Instrument {
    pub symbol: String,
    #[sharded(index(currency: String))]
    pub price: Price,
    #[sharded(index)]
    pub exchange: String,
    #[sharded(index)]
    pub instrument_type: String,
    pub timestamp: FirestoreTimestamp,
}

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
