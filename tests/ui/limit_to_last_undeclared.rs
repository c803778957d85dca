use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Log {
    #[sharded(index)]
    level: u32,
    at: i64,
}

// The last documents are read from the end, in the other direction: `reversible` plans it.
async fn newest_last(db: &sharded_runtime::firestore::FirestoreDb) {
    let _ = Log::query().all().limit_to_last(10).fetch(db).await;
}

fn main() {}
