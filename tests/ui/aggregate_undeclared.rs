use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Trade {
    #[sharded(aggregate)]
    price: f64,
    volume: i64,
    timestamp: FirestoreTimestamp,
}

async fn total(db: &sharded_runtime::firestore::FirestoreDb) {
    let _ = Trade::query().all().sum(db, Trade::aggregates().price).await;
    let _ = Trade::query().all().sum(db, Trade::aggregates().volume).await;
}

fn main() {
    let _ = total;
}
