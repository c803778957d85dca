//! The rename job: documents that store a field under its old name (before a serde rename)
//! get it under the new one, resumably, part by part, and never over a concurrent change.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::Value;
use sharded_runtime::{
    Error, Sharded,
    jobs::{IdRange, JobStatus, PartRun, TaskPart},
};
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

/// A document holding both names with different values (an old-version instance wrote the
/// old name after the new version wrote the new one) is a conflict: left as it is, counted
/// and listed by id, and counted as still under the old name, until you decide
/// (`on_both_names`). Both names holding the same value is no conflict: the old one goes.
#[tokio::test]
async fn a_document_holding_both_names_is_left_counted_and_listed_until_decided() {
    use sharded_runtime::jobs::BothNames;
    let test = test_db("rename-both-names").await;
    let db = &test.db;
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    // 30 under the old name only, 10 with both names disagreeing, 10 agreeing.
    for i in 0..50usize {
        let mut row = serde_json::json!({
            OLD: format!("old{i}"),
            "at": i,
            "n": i,
            "shard": Trade::SHARD_VALUES[i % Trade::SHARD_VALUES.len()],
        });
        match i / 10 {
            3 => row["venue"] = serde_json::json!(format!("new{i}")),
            4 => row["venue"] = serde_json::json!(format!("old{i}")),
            _ => {}
        }
        batch
            .update_object(
                Trade::COLLECTION,
                format!("d{i:02}"),
                &row,
                None,
                None,
                Vec::new(),
            )
            .unwrap();
    }
    batch.write().await.unwrap();
    let rename = || {
        Trade::collection(db)
            .rename_field(OLD, Trade::fields().venue)
            .unwrap()
            .writer(unthrottled())
            .page_size(7)
    };
    let done = run_to_end(rename()).await.unwrap();
    let conflicts: Vec<String> = (30..40).map(|i| format!("d{i:02}")).collect();
    assert_eq!(done.both_names, 10);
    assert_eq!(done.both_names_ids, conflicts);
    assert_eq!(
        done.updated, 40,
        "30 moved, 10 that agreed lost the old name"
    );
    let after = stored(db).await;
    for (id, fields) in &after {
        let i: usize = id[1..].parse().unwrap();
        let value = |name: &str| {
            match &fields[name].value_type {
            Some(sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::value::ValueType::StringValue(s)) => s.clone(),
            other => panic!("{other:?}"),
        }
        };
        match i / 10 {
            // Left as they were: both names, both values.
            3 => assert_eq!(
                (value(OLD), value("venue")),
                (format!("old{i}"), format!("new{i}"))
            ),
            _ => {
                assert!(!fields.contains_key(OLD), "{id}");
                assert_eq!(value("venue"), format!("old{i}"), "{id}");
            }
        }
    }
    // Decided: half keep the new name's value, half the old one's.
    let keep_new = rename()
        .ids(IdRange::new(None, Some("d35")).unwrap())
        .on_both_names(BothNames::KeepNew);
    let keep_old = rename()
        .ids(IdRange::new(Some("d35"), None).unwrap())
        .on_both_names(BothNames::KeepOld);
    let (kept_new, kept_old) = (
        run_to_end(keep_new).await.unwrap(),
        run_to_end(keep_old).await.unwrap(),
    );
    assert_eq!((kept_new.both_names, kept_old.both_names), (0, 0));
    assert_eq!((kept_new.updated, kept_old.updated), (5, 5));
    for i in 30..40 {
        let read = Trade::collection(db)
            .get(&format!("d{i}"))
            .await
            .unwrap()
            .unwrap();
        let expected = if i < 35 {
            format!("new{i}")
        } else {
            format!("old{i}")
        };
        assert_eq!(read.venue, expected);
    }
    assert!(
        stored(db)
            .await
            .values()
            .all(|fields| !fields.contains_key(OLD))
    );
}

/// A tracked rename counts and lists the documents it left with both names (its closing
/// step counts them as still under the old name), and a document written under the old name
/// after its closing step (by a process still on the old version) makes the job not done
/// until a task run again sweeps it.
#[tokio::test]
async fn a_tracked_rename_reports_what_it_left_and_what_was_written_after_it() {
    let test = test_db("rename-tracked-late").await;
    let db = &test.db;
    stored_before(db, 60).await;
    // Two documents the new version wrote and an old-version instance wrote again.
    for id in ["10000", "x0002"] {
        db.fluent()
            .update()
            .fields(["venue"])
            .in_col(Trade::COLLECTION)
            .document_id(id)
            .object(&serde_json::json!({ "venue": "newer" }))
            .execute::<serde_json::Value>()
            .await
            .unwrap();
    }
    let task = |index: u32| async move {
        Trade::collection(db)
            .rename_field(OLD, Trade::fields().venue)
            .unwrap()
            .writer(unthrottled())
            .tracked("rename-late", TaskPart::new(index, 2).unwrap())
            .run(|_| {})
            .await
            .unwrap()
    };
    task(0).await;
    task(1).await;
    let status = JobStatus::read(db, "rename-late").await.unwrap();
    assert_eq!(status.both_names(), 2);
    let mut listed: Vec<String> = status
        .parts
        .iter()
        .flat_map(|part| part.both_names_ids.clone())
        .collect();
    listed.sort();
    assert_eq!(listed, ["10000", "x0002"]);
    let closing = status.closing.clone().unwrap();
    assert_eq!(closing.outstanding, Some(2), "left under the old name");
    assert_eq!(closing.still_needed, Some(true));
    assert!(!status.is_done(), "two documents are yours to decide");
    // Decided by hand: the old name dropped where both are.
    for id in ["10000", "x0002"] {
        db.fluent()
            .update()
            .fields([OLD])
            .in_col(Trade::COLLECTION)
            .document_id(id)
            .object(&serde_json::json!({}))
            .execute::<serde_json::Value>()
            .await
            .unwrap();
    }
    // Decided, no document holds the old name: done.
    assert!(JobStatus::read(db, "rename-late").await.unwrap().is_done());
    // An old-version instance writes the old name after the closing step.
    db.fluent()
        .update()
        .in_col(Trade::COLLECTION)
        .document_id("late")
        .object(&serde_json::json!({ OLD: "v9", "at": 1, "n": 1, "shard": Trade::SHARD_VALUES[0] }))
        .execute::<serde_json::Value>()
        .await
        .unwrap();
    let status = JobStatus::read(db, "rename-late").await.unwrap();
    assert_eq!(status.closing.as_ref().unwrap().still_needed, Some(true));
    assert!(!status.is_done(), "a document is under the old name again");
    // Any task run again closes the job again, sweeping it.
    assert!(matches!(task(1).await, PartRun::AlreadyDone(_)));
    let status = JobStatus::read(db, "rename-late").await.unwrap();
    let closing = status.closing.clone().unwrap();
    assert_eq!((closing.runs, closing.outstanding), (2, Some(0)));
    assert_eq!(closing.still_needed, Some(false));
    assert!(status.is_done());
    assert_eq!(
        Trade::collection(db)
            .get("late")
            .await
            .unwrap()
            .unwrap()
            .venue,
        "v9"
    );
}
