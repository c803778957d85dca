use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Post {
    #[sharded(contains)]
    tags: Vec<String>,
    labels: Vec<String>,
    at: i64,
}

fn main() {
    let _ = Post::query().tags_contains("rust");
    let _ = Post::query().tags_contains_any(["rust", "go"]);
    let _ = Post::query().labels_contains("x");
}
