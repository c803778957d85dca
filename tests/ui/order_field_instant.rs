use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

/// Stored as an RFC 3339 string with a variable number of fraction digits.

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    
    timestamp: sharded_runtime::firestore::FirestoreInstant,
}

fn main() {}
