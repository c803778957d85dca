use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

// A field's key written on the struct, with a value in parentheses.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", aggregate(quantity))]
struct Fill {
    quantity: i64,
    at: i64,
}

fn main() {}
