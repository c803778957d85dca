use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Trade {
    #[sharded(index)]
    venue: String,
    #[sharded(index)]
    side: String,
    #[sharded(range(all, venue))]
    price: i64,
    at: i64,
}

fn main() {
    let _ = Trade::query().side("buy").filter(Trade::ranges().price.greater_than(10));
}
