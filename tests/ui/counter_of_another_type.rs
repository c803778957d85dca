use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreDb;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Post {
    #[sharded(counter(shards = 10))]
    likes: i64,
    at: i64,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Comment {
    #[sharded(counter(shards = 10))]
    likes: i64,
    at: i64,
}

async fn like(db: &FirestoreDb) {
    Post::collection(db).increment("p", Comment::counters().likes, 1).await.unwrap();
}

fn main() {}
