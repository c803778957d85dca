use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

// A field set belongs on the struct: written on a field, it says so.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Fill {
    #[sharded(index(kind, venue))]
    kind: String,
    venue: String,
    at: i64,
}

fn main() {}
