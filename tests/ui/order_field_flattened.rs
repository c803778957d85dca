use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize)]
struct When {
    at: i64,
}

// A flattened order field is not stored under its own name: one error.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "when")]
struct Event {
    #[serde(flatten)]
    when: When,
}

fn main() {}
