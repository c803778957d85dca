use serde::{Deserialize, Serialize};
use sharded_runtime::{Parent, Sharded};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms")]
struct Message {
    at: i64,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Instrument {
    at: i64,
}

fn main() {
    // Group queries need `collection_group`, which plans their indexes.
    let _ = Message::query().all().in_group();
    // A top-level collection has no parent.
    let _ = Parent::<Instrument>::new(&["x"]);
}
