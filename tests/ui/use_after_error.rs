use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 0, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    timestamp: FirestoreTimestamp,
}

async fn store(db: &sharded_runtime::firestore::FirestoreDb, instrument: &Instrument) {
    let _ = Instrument::collection(db).upsert("a", instrument).await;
    let _indexes = Instrument::indexes();
    let _collection: &str = Instrument::COLLECTION;
}

fn main() {
    let _ = store;
    let _ = query;
}

async fn query(db: &sharded_runtime::firestore::FirestoreDb) {
    let _ = Instrument::query().exchange("EXCHG1").limit(5).fetch(db).await;
}
