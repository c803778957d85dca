use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, previous(shard_values = ["2", "1", "0"]), order_by = "timestamp")]
struct Instrument {
    timestamp: FirestoreTimestamp,
}

fn main() {}
