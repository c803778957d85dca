use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    #[sharded(index)]
    instrument_type: String,
    timestamp: FirestoreTimestamp,
}

async fn next_page(db: &FirestoreDb) {
    let page = Instrument::query().exchange("EXCHG1").page(db, 5).await.unwrap();
    let cursor = page.next.unwrap();
    let _wrong = Instrument::query().instrument_type("etf").after(cursor);
}

fn main() {
    let _ = next_page;
}
