use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Reading {
    #[sharded(index)]
    venue: String,
    #[sharded(index)]
    venue_in: String,
    timestamp: FirestoreTimestamp,
}

fn main() {}
