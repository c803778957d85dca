use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", reversible)]
struct Log {
    #[sharded(index)]
    level: u32,
    at: i64,
}

async fn page_back_the_wrong_way(db: &FirestoreDb) {
    let reversed = Log::query().level(1).reversed().page(db, 10).await.unwrap();
    let _ = Log::query().level(1).after(reversed.next.unwrap());
}

fn main() {
    let _ = page_back_the_wrong_way;
}
