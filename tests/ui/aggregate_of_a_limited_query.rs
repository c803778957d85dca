use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::reads::{count, sum};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Trade {
    #[sharded(index)]
    venue: String,
    #[sharded(aggregate)]
    quantity: i64,
    at: i64,
}

async fn totals(db: &FirestoreDb) {
    let quantity = Trade::aggregates().quantity;
    let _ = Trade::query().venue("XNAS").limit(10).aggregate(db, (count(), sum(quantity))).await;
}

fn main() {}
