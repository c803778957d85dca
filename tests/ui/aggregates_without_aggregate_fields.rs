use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

// No field is `#[sharded(aggregate)]`, so there is no `T::aggregates()` to call.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Trade {
    price: f64,
    timestamp: FirestoreTimestamp,
}

async fn total(db: &sharded_runtime::firestore::FirestoreDb) {
    let _ = Trade::query().all().sum(db, Trade::aggregates().price).await;
}

fn main() {
    let _ = total;
}
