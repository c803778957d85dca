use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 6, previous(since = "2026-11-22T19:00:00Z"), order_by = "timestamp")]
struct Instrument {
    timestamp: FirestoreTimestamp,
}

fn main() {}
