use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Trade {
    #[sharded(range(all, venu))]
    price: i64,
    #[sharded(index)]
    venue: String,
    #[sharded(range)]
    at: i64,
}

fn main() {}
