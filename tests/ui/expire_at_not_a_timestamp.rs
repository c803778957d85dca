use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", expire_at = "expires")]
struct Session {
    at: FirestoreTimestamp,
    expires: i64,
}

fn main() {}
