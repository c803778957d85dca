use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Log {
    #[sharded(index)]
    level: u32,
    at: i64,
}

fn main() {
    let _ = Log::query().level(1).reversed();
}
