use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    symbol: String,
    timestamp: FirestoreTimestamp,
}

fn main() {
    let _ = Instrument::query().exchange("XNAS");
    let _ = Instrument::query().symbol("AAPL");
}
