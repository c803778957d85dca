use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Post {
    title: String,
    likes: i64,
    at: i64,
}

fn main() {
    let _ = Post::transforms().title.increment("1".to_owned());
}
