use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

// Every value of the retired set is current or previous: nothing is retired.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 6, previous(shards = 4), retired(shards = 3), order_by = "timestamp")]
struct Instrument {
    timestamp: FirestoreTimestamp,
}

fn main() {}
