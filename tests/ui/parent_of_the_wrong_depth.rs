use serde::{Deserialize, Serialize};
use sharded_runtime::{Parent, Sharded};

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "users/devices")]
struct Reading {
    value: f64,
    at: i64,
}

fn main() {
    let _ = Parent::<Reading>::new(&["ann", "dev-7"]);
    let _ = Parent::<Reading>::new(&["dev-7"]);
}
