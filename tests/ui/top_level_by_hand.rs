use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreDb;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms")]
struct Message {
    text: String,
    at: i64,
}

// Declared under `rooms`: its documents are never at the top level.
impl sharded_runtime::bounds::TopLevel for Message {}

fn everywhere(db: &FirestoreDb) {
    let _ = Message::collection(db);
}

fn main() {}
