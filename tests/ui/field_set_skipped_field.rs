use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp", index(exchange, note))]
struct Instrument {
    exchange: String,
    #[serde(skip)]
    note: String,
    timestamp: FirestoreTimestamp,
}

fn main() {}
