use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp", index(exchange, lot))]
struct Instrument {
    exchange: String,
    lot: i64,
    timestamp: FirestoreTimestamp,
}

fn main() {
    let _ = Instrument::query().exchange_and_lot("EXCHG1", "100");
}
