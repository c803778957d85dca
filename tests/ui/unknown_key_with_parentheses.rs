use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

// A misspelt key that takes parentheses: one error, and the keys after it still read.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, indexes(kind, venue), order_by = "at")]
struct Fill {
    kind: String,
    venue: String,
    at: i64,
}

fn main() {}
