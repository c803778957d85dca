use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Log {
    #[sharded(index)]
    level: u32,
    at: i64,
}

// Not declared `reversible`: the index file holds no index in the other direction.
impl sharded_runtime::bounds::Reversible for Log {}

fn main() {
    let _ = Log::query().level(3).reversed();
}
