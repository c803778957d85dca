use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    timestamp: FirestoreTimestamp,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Trade {
    #[sharded(index)]
    exchange: String,
    timestamp: FirestoreTimestamp,
}

async fn update(db: &FirestoreDb, instrument: &Instrument) {
    let _ = Instrument::collection(db)
        .update_fields("aaa", instrument, &[Trade::fields().exchange])
        .await;
}

fn main() {}
