use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

// A retired set has no schedule: `since` belongs to `previous(...)`.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 2, retired(shards = 3, since = "2026-11-22T19:00:00Z"), order_by = "timestamp")]
struct Instrument {
    timestamp: FirestoreTimestamp,
}

fn main() {}
