use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Trade {
    #[sharded(range)]
    price: i64,
    qty: i64,
    at: i64,
}

fn main() {
    let _ = Trade::query().all().filter(Trade::ranges().qty.greater_than(10));
}
