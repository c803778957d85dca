//! The rename job: documents that store a field under its old name (before a serde rename)
//! get it under the new one, resumably, part by part, and never over a concurrent change.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::Value;
use sharded_runtime::{Error, IdRange, JobStatus, PartRun, Sharded, TaskPart};
use sharded_tests::migration::{run_interrupted, run_to_end, unthrottled};
use sharded_tests::{all_documents, id_of, test_db};

/// The type after the rename: its field was stored as `venueName` before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 4, order_by = "at", collection = "renamed")]
struct Trade {
    #[sharded(index)]
    venue: String,
    at: i64,
    n: i64,
}

const OLD: &str = "venueName";

/// `count` documents as the type before the rename stored them: sharded, the venue under
/// its old name.
async fn stored_before(db: &FirestoreDb, count: usize) -> Vec<String> {
    let writer = db.create_simple_batch_writer().await.unwrap();
    let ids: Vec<String> = (0..count)
        .map(|i| format!("{}{i:04}", ['1', 'M', 'x'][i % 3]))
        .collect();
    let mut batch = writer.new_batch();
    for (i, id) in ids.iter().enumerate() {
        let row = serde_json::json!({
            OLD: format!("v{}", i % 3),
            "at": i,
            "n": i,
            "shard": Trade::SHARD_VALUES[i % Trade::SHARD_VALUES.len()],
        });
        batch
            .update_object(Trade::COLLECTION, id, &row, None, None, Vec::new())
            .unwrap();
    }
    batch.write().await.unwrap();
    ids
}

/// Each document's fields by id.
async fn stored(db: &FirestoreDb) -> BTreeMap<String, BTreeMap<String, Value>> {
    all_documents(db, Trade::COLLECTION)
        .await
        .into_iter()
        .map(|document| {
            let id = id_of(&document).to_owned();
            (id, document.fields.into_iter().collect())
        })
        .collect()
}

#[tokio::test]
async fn a_rename_moves_the_old_name_to_the_new_interrupted_and_in_parts_beside_an_app() {
    let test = test_db("rename-field").await;
    let db = &test.db;
    let ids = stored_before(db, 300).await;
    assert_eq!(
        Trade::query().venue("v0").count(db).await.unwrap(),
        0,
        "invisible before"
    );
    let before = stored(db).await;
    // The app, already on the new type, rewrites some documents while the job runs.
    let app_ids: Vec<String> = ids.iter().step_by(7).cloned().collect();
    let app = {
        let db = db.clone();
        let app_ids = app_ids.clone();
        tokio::spawn(async move {
            let mut written = BTreeMap::new();
            for (k, id) in app_ids.iter().enumerate() {
                let trade = Trade {
                    venue: "app".into(),
                    at: 1_000 + k as i64,
                    n: -1,
                };
                Trade::collection(&db).upsert(id, &trade).await.unwrap();
                written.insert(id.clone(), trade);
                tokio::time::sleep(Duration::from_millis(3)).await;
            }
            written
        })
    };
    // Part 0 interrupted and resumed from its checkpoint, part 1 in one go.
    let job = |range: IdRange| {
        Trade::collection(db)
            .rename_field(OLD, Trade::fields().venue)
            .unwrap()
            .ids(range)
            .page_size(10)
            .writer(unthrottled())
    };
    let checkpoint = run_interrupted(job(IdRange::part(0, 2).unwrap()), 3).await;
    let resumed = run_to_end(job(IdRange::part(0, 2).unwrap()).resume_from(checkpoint))
        .await
        .unwrap();
    let second = run_to_end(job(IdRange::part(1, 2).unwrap())).await.unwrap();
    assert!(resumed.scanned + second.scanned < ids.len() as u64 + app_ids.len() as u64);
    let written = app.await.unwrap();
    let after = stored(db).await;
    assert_eq!(after.len(), ids.len());
    for (id, fields) in &after {
        assert!(
            !fields.contains_key(OLD),
            "{id} still stores {OLD}: {fields:?}"
        );
        match written.get(id) {
            // The app's write stands as it wrote it.
            Some(trade) => {
                let read = Trade::collection(db).get(id).await.unwrap().unwrap();
                assert_eq!(&read, trade);
            }
            // Every other document holds its old value under the new name, nothing else moved.
            None => {
                let mut expected = before[id].clone();
                let value = expected.remove(OLD).unwrap();
                expected.insert("venue".into(), value);
                assert_eq!(fields, &expected, "{id}");
            }
        }
    }
    // The queries on the new name see every document again.
    let v0 = ids
        .iter()
        .enumerate()
        .filter(|(i, id)| i % 3 == 0 && !written.contains_key(*id))
        .count();
    assert_eq!(
        Trade::query().venue("v0").count(db).await.unwrap(),
        v0 as u64
    );
    // A second run changes nothing.
    let again = run_to_end(
        Trade::collection(db)
            .rename_field(OLD, Trade::fields().venue)
            .unwrap()
            .writer(unthrottled()),
    )
    .await
    .unwrap();
    assert_eq!((again.updated, again.unchanged), (0, ids.len() as u64));
}

#[tokio::test]
async fn a_tracked_rename_closes_with_no_document_left_under_the_old_name() {
    let test = test_db("rename-tracked").await;
    let db = &test.db;
    let ids = stored_before(db, 120).await;
    for index in 0..3 {
        let run = Trade::collection(db)
            .rename_field(OLD, Trade::fields().venue)
            .unwrap()
            .writer(unthrottled())
            .tracked("rename", TaskPart::new(index, 3).unwrap())
            .run(|_| {})
            .await
            .unwrap();
        assert!(matches!(run, PartRun::Finished { .. }), "{run:?}");
    }
    let status = JobStatus::read(db, "rename").await.unwrap();
    assert!(status.is_done());
    assert_eq!(status.updated(), ids.len() as u64);
    let closing = status.closing.unwrap();
    assert_eq!(
        (closing.runs, closing.swept, closing.outstanding),
        (1, 0, Some(0))
    );
}

#[tokio::test]
async fn names_a_rename_cannot_take_are_refused() {
    let test = test_db("rename-refused").await;
    let db = &test.db;
    for from in ["", "venue", "shard", "a`b", "__x__"] {
        assert!(
            matches!(
                Trade::collection(db).rename_field(from, Trade::fields().venue),
                Err(Error::InvalidOptions { .. })
            ),
            "{from:?}"
        );
    }
    assert!(
        Trade::collection(db)
            .rename_field("venue name", Trade::fields().venue)
            .is_ok()
    );
}
