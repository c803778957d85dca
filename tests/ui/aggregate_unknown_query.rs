use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Sale {
    #[sharded(index)]
    region: String,
    #[sharded(aggregate(all, regoin))]
    amount: i64,
    at: i64,
}

fn main() {}
