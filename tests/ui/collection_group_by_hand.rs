use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms")]
struct Message {
    text: String,
    at: i64,
}

// Not declared `collection_group`: the index file holds no COLLECTION_GROUP index.
impl sharded_runtime::bounds::CollectionGroup for Message {}

fn main() {
    let _ = Message::query().all().in_group();
}
