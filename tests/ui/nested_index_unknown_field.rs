use serde::{Deserialize, Serialize};
use sharded_runtime::{Sharded, StoredNames};
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, StoredNames)]
struct Price {
    currency: String,
    micros: i64,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index(curency: String))]
    price: Price,
    timestamp: FirestoreTimestamp,
}

fn main() {}
