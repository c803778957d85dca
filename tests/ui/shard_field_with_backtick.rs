use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp", shard_field = "shard`id")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    timestamp: FirestoreTimestamp,
}

fn main() {}
