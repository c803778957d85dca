use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms", collection_group)]
struct Message {
    #[sharded(index)]
    author: String,
    #[sharded(index)]
    topic: String,
    at: i64,
}

fn main() {
    let _ = Message::query()
        .author("ann")
        .or(Message::query().topic("rust").in_group());
}
