use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Sale {
    #[sharded(index)]
    region: String,
    #[sharded(index)]
    channel: String,
    #[sharded(aggregate(all, region))]
    amount: i64,
    at: i64,
}

async fn by_channel(db: &FirestoreDb) {
    let _ = Sale::query().channel("web").sum(db, Sale::aggregates().amount).await;
}

fn main() {}
