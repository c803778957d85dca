use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Post {
    #[sharded(counter(shards = 10))]
    likes: f64,
    at: i64,
}

fn main() {}
