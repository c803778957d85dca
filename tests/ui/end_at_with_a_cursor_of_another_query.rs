use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Log {
    #[sharded(index)]
    level: u32,
    #[sharded(index)]
    host: String,
    at: i64,
}

async fn end_where_another_query_stopped(db: &FirestoreDb) {
    let by_host = Log::query().host("a").page(db, 10).await.unwrap();
    let _ = Log::query().level(1).end_at(by_host.next.unwrap());
}

fn main() {
    let _ = end_where_another_query_stopped;
}
