use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Log {
    level: u32,
    at: i64,
}

// No field of `Log` is `#[sharded(range)]`.
impl sharded_runtime::bounds::HasRanges for Log {
    fn fields() -> <Log as Sharded>::RangeFields {
        unimplemented!()
    }
}

fn main() {
    let _ = Log::ranges();
}
