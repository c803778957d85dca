use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms")]
struct Message {
    text: String,
    at: i64,
}

async fn post(db: &FirestoreDb, message: &Message) {
    let _ = Message::collection(db).upsert("m1", message).await;
}

fn main() {}
