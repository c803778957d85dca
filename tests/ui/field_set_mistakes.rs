use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp")]
#[sharded(index(exchange))]
#[sharded(index(exchange, exchnge_id))]
#[sharded(index(exchange, exchange))]
#[sharded(index(exchange, timestamp))]
#[sharded(index(exchange, instrument_type))]
#[sharded(index(instrument_type, exchange))]
struct Instrument {
    exchange: String,
    exchange_id: String,
    instrument_type: String,
    timestamp: FirestoreTimestamp,
}

fn main() {}
