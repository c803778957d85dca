use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{AtomicBatch, Sharded};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms")]
struct Message {
    text: String,
    at: i64,
}

fn queue(db: &FirestoreDb, message: &Message) {
    let mut batch = AtomicBatch::new(db);
    let _ = batch.upsert("m1", message);
}

fn main() {}
