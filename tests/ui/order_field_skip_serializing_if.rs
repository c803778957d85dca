use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    #[serde(skip_serializing_if = "is_epoch")]
    timestamp: FirestoreTimestamp,
}

fn is_epoch(timestamp: &FirestoreTimestamp) -> bool {
    timestamp.0.as_second() == 0
}

fn main() {}
