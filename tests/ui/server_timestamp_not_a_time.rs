use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "seq", server_timestamp)]
struct Entry {
    #[sharded(index)]
    room: String,
    seq: i64,
}

fn main() {}
