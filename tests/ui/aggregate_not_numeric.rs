use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Trade {
    #[sharded(aggregate)]
    price: Option<f64>,
    #[sharded(aggregate)]
    volume: u64,
    #[sharded(aggregate)]
    venue: String,
    timestamp: FirestoreTimestamp,
}

fn main() {}
