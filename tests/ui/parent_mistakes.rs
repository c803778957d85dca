use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms/", collection = "messages")]
struct EmptySegment {
    at: i64,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms", collection_group = true)]
struct GroupWithValue {
    at: i64,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", collection_group, collection_group)]
struct GroupTwice {
    at: i64,
}

fn main() {}
