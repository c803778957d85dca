use serde::{Deserialize, Serialize};
use sharded_runtime::{Sharded, StoredNames};

#[derive(Serialize, Deserialize, StoredNames)]
struct Price {
    currency: String,
}

// A nested path in a field set: one error, and `order_by` after it is still read.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, index(price.currency, exchange), order_by = "at")]
struct Instrument {
    price: Price,
    exchange: String,
    at: i64,
}

fn main() {}
