use serde::{Deserialize, Serialize};
use sharded_runtime::bulk::BulkWriter;
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms")]
struct Message {
    text: String,
    at: i64,
}

async fn write(writer: &BulkWriter, message: &Message) {
    let _ = writer.upsert("m1", message).await;
}

fn main() {}
