use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Passage {
    #[sharded(vector(dimension = 3))]
    embedding: Vec<f64>,
    at: i64,
}

fn main() {}
