use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::{FirestoreDb, FirestoreFindNearestDistanceMeasure, FirestoreVector};
use sharded_runtime::Sharded;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at")]
struct Passage {
    #[sharded(vector(dimension = 3))]
    embedding: FirestoreVector,
    title: String,
    at: i64,
}

async fn search(db: &FirestoreDb) {
    let title = Passage::fields().title;
    let measure = FirestoreFindNearestDistanceMeasure::Euclidean;
    let _ = Passage::query().all().find_nearest(db, title, &[0.0, 1.0, 0.0], 5, measure).await;
}

fn main() {}
