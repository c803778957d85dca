use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[serde(rename_all = "camelCase")]
#[sharded(shards = 3, order_by = "timestamp", shard_field = "instrumentType")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    instrument_type: String,
    timestamp: FirestoreTimestamp,
}

fn main() {}
