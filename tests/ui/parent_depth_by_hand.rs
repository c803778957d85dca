use serde::{Deserialize, Serialize};
use sharded_runtime::{Parent, Sharded};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms")]
struct Message {
    text: String,
    at: i64,
}

// Declared one level down (`rooms/{room}/message`), not two.
impl sharded_runtime::bounds::ParentDepth<2> for Message {}

fn main() {
    let _ = Parent::<Message>::new(&["r1", "r2"]);
}
