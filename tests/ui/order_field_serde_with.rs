use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    #[serde(with = "sharded_runtime::firestore::serialize_as_timestamp")]
    timestamp: sharded_runtime::firestore::FirestoreInstant,
}

fn main() {}
