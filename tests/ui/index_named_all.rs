use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

// A field called `all` would get the query method the whole collection has.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Flag {
    #[sharded(index)]
    all: bool,
    at: i64,
}

fn main() {}
