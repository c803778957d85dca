use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "created_at", server_timestamp = true)]
struct Entry {
    room: String,
    created_at: FirestoreTimestamp,
}

fn main() {}
