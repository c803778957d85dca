use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Log {
    #[sharded(index)]
    level: u32,
    text: String,
    at: i64,
}

#[derive(Deserialize)]
struct Line {
    text: String,
}

async fn lines(db: &FirestoreDb) {
    let _ = Log::query().level(1).listen_as::<Line>(db);
}

fn main() {}
