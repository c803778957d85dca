use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "likes")]
struct Post {
    #[sharded(counter(shards = 10))]
    likes: i64,
    #[sharded(index, counter(shards = 10))]
    views: i64,
}

fn main() {}
