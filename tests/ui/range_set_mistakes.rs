use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

// Each `ranges(...)` has one mistake: one field, an unknown field, a field without range
// filters, a field named twice, fields no query filters on together, a set declared twice
// (in another order), and the key without its list.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
#[sharded(ranges(price))]
#[sharded(ranges(price, quantiy))]
#[sharded(ranges(price, exchange))]
#[sharded(ranges(price, price))]
#[sharded(ranges(size, weight))]
#[sharded(ranges(price, quantity))]
#[sharded(ranges(quantity, price))]
#[sharded(ranges)]
struct Order {
    #[sharded(index)]
    exchange: String,
    #[sharded(range)]
    price: i64,
    #[sharded(range)]
    quantity: i64,
    #[sharded(range(all))]
    size: i64,
    #[sharded(range(exchange))]
    weight: i64,
    timestamp: FirestoreTimestamp,
}

fn main() {}
