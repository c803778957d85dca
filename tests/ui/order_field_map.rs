use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "prices")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    prices: std::collections::BTreeMap<String, i64>,
}

fn main() {}
