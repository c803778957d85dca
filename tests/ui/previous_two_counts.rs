use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 6, previous(shards = 3, writes_per_second = 1500), order_by = "timestamp")]
struct Instrument {
    timestamp: FirestoreTimestamp,
}

fn main() {}
