use serde::{Deserialize, Serialize};
use sharded_runtime::{Sharded, StoredNames};

#[derive(Serialize, Deserialize, StoredNames)]
struct Money {
    currency: String,
    micros: i64,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Sale {
    #[sharded(index)]
    region: String,
    #[sharded(aggregate(micros: i64))]
    amount: Money,
    #[sharded(range(micros: i64))]
    refund: Money,
    at: i64,
}

fn main() {}
