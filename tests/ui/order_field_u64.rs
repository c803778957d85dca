use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

/// Values above i64::MAX would be stored wrapped to negative integers.

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    
    timestamp: u64,
}

fn main() {}
