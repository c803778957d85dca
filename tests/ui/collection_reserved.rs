use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp", collection = "_sharded_audit")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    timestamp: FirestoreTimestamp,
}

fn main() {}
