use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::reads::{avg, count, sum};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Trade {
    #[sharded(aggregate)]
    quantity: i64,
    #[sharded(aggregate)]
    price: f64,
    at: i64,
}

async fn totals(db: &FirestoreDb) {
    let fields = Trade::aggregates();
    let six = (
        count(),
        sum(fields.quantity),
        avg(fields.quantity),
        sum(fields.price),
        avg(fields.price),
        count(),
    );
    let _ = Trade::query().all().aggregate(db, six).await;
}

fn main() {}
