use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Post {
    #[sharded(counter)]
    likes: i64,
    #[sharded(counter(shards = 10, writes_per_second = 10))]
    views: i64,
    #[sharded(counter(shard = 10))]
    shares: i64,
    at: i64,
}

fn main() {}
