use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Trade {
    #[sharded(range)]
    tags: Vec<String>,
    at: i64,
}

fn main() {}
