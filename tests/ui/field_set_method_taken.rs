use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

// The set's query method would be `a_and_b`, the name the indexed field `a_and_b` has.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp", index(a, b))]
struct Pair {
    a: String,
    b: String,
    #[sharded(index)]
    a_and_b: String,
    timestamp: FirestoreTimestamp,
}

fn main() {}
