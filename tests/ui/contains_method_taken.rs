use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Post {
    #[sharded(contains)]
    tags: Vec<String>,
    #[sharded(index)]
    tags_contains: String,
    at: i64,
}

fn main() {}
