use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Post {
    #[sharded(counter(shards = 0))]
    likes: i64,
    #[sharded(counter(writes_per_second = 5000))]
    views: i64,
    at: i64,
}

fn main() {}
