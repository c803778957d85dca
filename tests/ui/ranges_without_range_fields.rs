use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Trade {
    price: i64,
    at: i64,
}

fn main() {
    let _ = Trade::query().all().filter(Trade::ranges().price.greater_than(10));
}
