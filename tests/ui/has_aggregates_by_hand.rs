use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Log {
    level: u32,
    at: i64,
}

// No field of `Log` is `#[sharded(aggregate)]`.
impl sharded_runtime::bounds::HasAggregates for Log {
    fn fields() -> <Log as Sharded>::AggregateFields {
        unimplemented!()
    }
}

fn main() {
    let _ = Log::aggregates();
}
