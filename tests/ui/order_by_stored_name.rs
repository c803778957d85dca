use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

// `ts` is the stored name; attributes name the Rust field.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "ts", index(ccy, exchange))]
struct Quote {
    #[serde(rename = "ccy")]
    currency: String,
    exchange: String,
    #[serde(rename = "ts")]
    timestamp: i64,
}

fn main() {}
