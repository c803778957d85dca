use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    symbol: String,
    timestamp: FirestoreTimestamp,
}

// One mistake, one error: what follows the query on a field without an index type-checks.
async fn newest(db: &FirestoreDb) {
    let _ = Instrument::query().symbol("AAPL").limit(5).fetch(db).await;
    let _ = Instrument::query().symbol_in(["AAPL"]).after(None).page(db, 10).await;
}

fn main() {
    let _ = newest;
}
