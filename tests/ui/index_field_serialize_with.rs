use serde::{Deserialize, Serialize, Serializer};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

fn upper<S: Serializer>(value: &str, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&value.to_uppercase())
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    #[serde(serialize_with = "upper")]
    exchange: String,
    timestamp: FirestoreTimestamp,
}

fn main() {}
