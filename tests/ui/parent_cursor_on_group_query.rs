use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{Parent, Sharded};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms", collection_group)]
struct Message {
    #[sharded(index)]
    author: String,
    at: i64,
}

// A page of one room's messages does not go on across every room.
async fn next_page(db: &FirestoreDb, lobby: &Parent<Message>) {
    let page = Message::query().author("ann").in_parent(lobby).page(db, 5).await.unwrap();
    let cursor = page.next.unwrap();
    let _wrong = Message::query().author("ann").in_group().after(cursor);
}

// Nor does a group query narrow to one parent.
fn narrowed(lobby: &Parent<Message>) {
    let _wrong = Message::query().author("ann").in_group().in_parent(lobby);
}

fn main() {
    let _ = (next_page, narrowed);
}
