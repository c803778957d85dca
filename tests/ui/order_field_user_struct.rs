use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

/// A struct is stored as a map, which cannot be ranged over.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Moment {
    seconds: i64,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    
    timestamp: Moment,
}

fn main() {}
