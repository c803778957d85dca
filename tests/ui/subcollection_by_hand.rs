use serde::{Deserialize, Serialize};
use sharded_runtime::{Parent, Sharded};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Log {
    level: u32,
    at: i64,
}

// Declared without a parent: its documents live at the top level.
impl sharded_runtime::bounds::Subcollection for Log {}

fn main() {
    let _ = Parent::<Log>::from_ids(&["r1"]);
}
