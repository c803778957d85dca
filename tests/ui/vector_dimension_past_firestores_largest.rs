use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Passage {
    #[sharded(vector(dimension = 4096))]
    embedding: sharded_runtime::firestore::FirestoreVector,
    at: i64,
}

fn main() {}
