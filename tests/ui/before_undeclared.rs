use serde::{Deserialize, Serialize};
use sharded_runtime::{Cursor, Sharded, WholeCollection, Windowed};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Log {
    #[sharded(index)]
    level: u32,
    at: i64,
}

fn back(
    cursor: Cursor<Log, { sharded_runtime::WHOLE_COLLECTION }>,
) -> WholeCollection<Log, sharded_runtime::InCollection, Windowed> {
    Log::query().all().before(cursor)
}

fn main() {}
