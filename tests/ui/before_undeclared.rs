use serde::{Deserialize, Serialize};
use sharded_runtime::{Cursor, Sharded, WholeCollection, reads::Windowed};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Log {
    #[sharded(index)]
    level: u32,
    at: i64,
}

fn back(
    cursor: Cursor<Log, { sharded_runtime::reads::WHOLE_COLLECTION }>,
) -> WholeCollection<Log, sharded_runtime::reads::InCollection, Windowed> {
    Log::query().all().before(cursor)
}

fn main() {}
