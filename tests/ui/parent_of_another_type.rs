use serde::{Deserialize, Serialize};
use sharded_runtime::{Parent, Sharded};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms")]
struct Message {
    at: i64,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "users")]
struct Event {
    at: i64,
}

// A room is no parent of events.
fn events(db: &sharded_runtime::firestore::FirestoreDb, room: &Parent<Message>) {
    let _ = Event::collection_in(db, room);
}

fn main() {}
