use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::{Cursor, Sharded, reads::query_id};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    #[sharded(index)]
    instrument_type: String,
    timestamp: FirestoreTimestamp,
}

// A cursor is named by its query's name; a position is not a query.
async fn resume(db: &FirestoreDb, by_name: Cursor<Instrument, { query_id("exchange") }>, by_position: Cursor<Instrument, 0>) {
    let _ = Instrument::query().exchange("EXCHG1").after(by_name).fetch(db).await;
    let _ = Instrument::query().exchange("EXCHG1").after(by_position).fetch(db).await;
}

fn main() {
    let _ = resume;
}
