use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{CursorOf, Sharded};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Fill {
    #[sharded(aggregate)]
    quantity: i64,
    at: i64,
}

async fn volume_until(db: &FirestoreDb, until: CursorOf<sharded_runtime::WholeCollection<Fill>>) {
    let quantity = Fill::aggregates().quantity;
    let _ = Fill::query().all().end_at(until).sum(db, quantity).await;
}

fn main() {}
