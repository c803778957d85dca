use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Trade {
    #[sharded(aggregate)]
    #[serde(skip)]
    cached_total: i64,
    #[sharded(aggregate = "yes")]
    quantity: i64,
    timestamp: FirestoreTimestamp,
}

fn main() {}
