use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreDb;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Trade {
    #[sharded(index)]
    venue: String,
    #[sharded(aggregate)]
    quantity: i64,
    at: i64,
}

async fn totals(db: &FirestoreDb, page: sharded_runtime::PageOf<sharded_runtime::WholeCollection<Trade>>) {
    let quantity = Trade::aggregates().quantity;
    let _ = Trade::query().venue("XNAS").limit(10).sum(db, quantity).await;
    let _ = Trade::query().all().after(page.next).avg(db, quantity).await;
}

fn main() {}
