use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

/// An alias slips past any check by name; the trait bound sees through it.
type Stamp = Vec<i64>;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    
    timestamp: Stamp,
}

fn main() {}
