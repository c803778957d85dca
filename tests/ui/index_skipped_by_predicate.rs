use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

// Left out when empty: a query for "" would miss those documents.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Note {
    #[sharded(index)]
    #[serde(skip_serializing_if = "String::is_empty")]
    tag: String,
    at: i64,
}

fn main() {}
