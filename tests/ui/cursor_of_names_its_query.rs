use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::{CursorOf, InGroup, Sharded};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "timestamp", parent = "venues", collection_group)]
struct Instrument {
    #[sharded(index)]
    exchange: String,
    #[sharded(index)]
    instrument_type: String,
    timestamp: FirestoreTimestamp,
}

// A query's cursor, named from the query's alias, fits that query and no other: not another
// field's, and not the same query over the collection group.
async fn resume(
    db: &FirestoreDb,
    own: CursorOf<InstrumentExchangeQuery>,
    other: CursorOf<InstrumentInstrumentTypeQuery>,
    group: CursorOf<InstrumentExchangeQuery<InGroup>>,
) {
    let _ = Instrument::query().exchange("EXCHG1").after(own).fetch(db).await;
    let _ = Instrument::query().exchange("EXCHG1").after(other).fetch(db).await;
    let _ = Instrument::query().exchange("EXCHG1").after(group).fetch(db).await;
}

fn main() {
    let _ = resume;
}
