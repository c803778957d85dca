use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Offer {
    price: i64,
    at: i64,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Order {
    price: i64,
    at: i64,
}

// A merge writes its own type's fields: `Order::fields().price` is no field of an offer.
async fn merge(db: &sharded_runtime::firestore::FirestoreDb, offer: &Offer) {
    let _ = Offer::collection(db)
        .merge_fields("o1", offer, &[Order::fields().price])
        .await;
}

fn main() {}
