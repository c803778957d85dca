use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Session {
    at: FirestoreTimestamp,
    expires: FirestoreTimestamp,
}

fn main() {
    let now = FirestoreTimestamp(sharded_runtime::firestore::jiff::Timestamp::now());
    let _ = Session::query().all().unexpired(now);
}
