use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    #[serde(skip)]
    cache: u32,
    timestamp: FirestoreTimestamp,
}

async fn update(db: &FirestoreDb, instrument: &Instrument) {
    let fields = Instrument::fields();
    let _ = Instrument::collection(db)
        .update_fields("aaa", instrument, &[fields.exchnage])
        .await;
    // A field serde skips is not stored, so it cannot be updated either.
    let _ = Instrument::collection(db)
        .update_fields("aaa", instrument, &[fields.cache])
        .await;
}

fn main() {}
