use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Clone, Serialize, Deserialize)]
struct Stored {
    venue: String,
    at: FirestoreTimestamp,
}

#[derive(Clone, Serialize, Deserialize, Sharded)]
#[serde(into = "Stored")]
#[sharded(shards = 3, order_by = "timestamp")]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    timestamp: FirestoreTimestamp,
}

impl From<Instrument> for Stored {
    fn from(instrument: Instrument) -> Stored {
        Stored {
            venue: instrument.exchange,
            at: instrument.timestamp,
        }
    }
}

fn main() {}
