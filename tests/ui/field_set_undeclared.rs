use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp", index(exchange, instrument_type))]
struct Instrument {
    exchange: String,
    instrument_type: String,
    currency: String,
    timestamp: FirestoreTimestamp,
}

fn main() {
    // Declared: compiles.
    let _ = Instrument::query().exchange_and_instrument_type("EXCHG1", "etf");
    // Not declared: no such query, so no query without its index.
    let _ = Instrument::query().exchange_and_currency("EXCHG1", "USD");
}
