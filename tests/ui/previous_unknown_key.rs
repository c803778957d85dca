use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 6, previous(shard = 3, order_by = "timestamp"), order_by = "timestamp")]
struct Instrument {
    timestamp: FirestoreTimestamp,
}

fn main() {}
