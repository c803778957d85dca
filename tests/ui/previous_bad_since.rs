use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 6, previous(shards = 3, since = "2026-11-22 19:00"), order_by = "timestamp")]
struct Instrument {
    timestamp: FirestoreTimestamp,
}

fn main() {}
