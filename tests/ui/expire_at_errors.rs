use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;

// Each `expire_at` mistake is one error, on its own token.

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", expire_at = "expiress")]
struct Misspelt {
    at: FirestoreTimestamp,
    expires: FirestoreTimestamp,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", expire_at = "at")]
struct OrderField {
    at: FirestoreTimestamp,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", expire_at = "expires")]
struct Optional {
    at: FirestoreTimestamp,
    expires: Option<FirestoreTimestamp>,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", expire_at = "expires")]
struct RangedForSomeQueries {
    #[sharded(index)]
    venue: String,
    at: FirestoreTimestamp,
    #[sharded(range(venue))]
    expires: FirestoreTimestamp,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", expire_at = "expires")]
struct Skipped {
    at: FirestoreTimestamp,
    #[serde(skip)]
    expires: FirestoreTimestamp,
}

fn main() {}
