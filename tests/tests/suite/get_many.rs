//! `get_many(ids)` on the emulator: every id answered (found, in the order given, or missing),
//! an id given twice read once, past one request's 300 ids too, per parent; misuse refused
//! before anything is sent.

use futures::TryStreamExt as _;
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{Error, Parent, Sharded};
use sharded_tests::models::Tick;
use sharded_tests::test_db;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "at",
    parent = "devices",
    collection = "samples"
)]
struct Sample {
    #[sharded(index)]
    kind: u32,
    at: i64,
}

fn tick(seq: u64) -> Tick {
    Tick {
        venue: format!("V{}", seq % 3),
        at: sharded_runtime::firestore::FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(seq as i64).unwrap(),
        ),
        seq: seq as i64,
    }
}

async fn write_ticks(db: &FirestoreDb, count: u64) {
    let writer = db.create_simple_batch_writer().await.unwrap();
    for chunk in (0..count).collect::<Vec<_>>().chunks(400) {
        let mut batch = writer.new_batch();
        for &seq in chunk {
            Tick::collection(db)
                .upsert_in(&mut batch, &format!("t{seq:04}"), &tick(seq))
                .unwrap();
        }
        batch.write().await.unwrap();
    }
}

#[tokio::test]
async fn every_id_is_found_in_order_or_reported_missing() {
    let test = test_db("get-many").await;
    let db = &test.db;
    write_ticks(db, 700).await;
    // 650 ids over three requests: present ones out of order, missing ones among them, and
    // ids given twice.
    let mut ids: Vec<String> = Vec::new();
    for i in 0..650u64 {
        let seq = (i * 7919) % 1_000;
        ids.push(format!("t{seq:04}"));
        if i % 50 == 0 {
            ids.push(format!("t{seq:04}"));
        }
    }
    let many = Tick::collection(db).get_many(&ids).await.unwrap();
    let mut first = Vec::new();
    for id in &ids {
        if !first.contains(id) {
            first.push(id.clone());
        }
    }
    let (present, absent): (Vec<String>, Vec<String>) = first
        .iter()
        .cloned()
        .partition(|id| id[1..].parse::<u64>().unwrap() < 700);
    assert!(!absent.is_empty() && present.len() > 300, "the test's ids");
    let found: Vec<String> = many.found.iter().map(|s| s.id.clone()).collect();
    assert_eq!(found, present, "found, in the order given, each once");
    assert_eq!(many.missing, absent, "missing, in the order given");
    for stored in &many.found {
        assert_eq!(stored.document, tick(stored.id[1..].parse().unwrap()));
        assert!(Tick::SHARD_VALUES.contains(&stored.shard.as_str()));
    }
    let empty = Tick::collection(db)
        .get_many(Vec::<String>::new())
        .await
        .unwrap();
    assert!(empty.found.is_empty() && empty.missing.is_empty());
}

/// Measured: the emulator answers a BatchGetDocuments that names one document twice once
/// (2 answers for 3 names). Sharded asks for each id once, so nothing rests on that.
#[tokio::test]
async fn the_server_answers_each_name_given() {
    let test = test_db("get-many-twice").await;
    let db = &test.db;
    write_ticks(db, 2).await;
    let answers: Vec<_> = db
        .fluent()
        .select()
        .by_id_in(Tick::COLLECTION)
        .batch_with_errors(["t0000", "t0000", "t0001"])
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(answers.len(), ANSWERS_TO_A_REPEATED_NAME);
    let many = Tick::collection(db)
        .get_many(["t0000", "t0000", "t0001"])
        .await
        .unwrap();
    assert_eq!(many.found.len(), 2);
}

const ANSWERS_TO_A_REPEATED_NAME: usize = 2;

#[tokio::test]
async fn per_parent_and_refused_before_sending() {
    let test = test_db("get-many-parent").await;
    let db = &test.db;
    let (a, b) = (
        Parent::<Sample>::new(&["a"]).unwrap(),
        Parent::<Sample>::new(&["b"]).unwrap(),
    );
    for i in 0..5 {
        Sample::collection_in(db, &a)
            .upsert(&format!("s{i}"), &Sample { kind: i, at: 1 })
            .await
            .unwrap();
    }
    let under_a = Sample::collection_in(db, &a)
        .get_many(["s4", "s0", "s9"])
        .await
        .unwrap();
    let found: Vec<(Option<String>, String)> = under_a
        .found
        .iter()
        .map(|s| (s.parent.clone(), s.id.clone()))
        .collect();
    assert_eq!(
        found,
        [
            (Some("devices/a".to_owned()), "s4".to_owned()),
            (Some("devices/a".to_owned()), "s0".to_owned())
        ]
    );
    assert_eq!(under_a.missing, ["s9"]);
    let under_b = Sample::collection_in(db, &b)
        .get_many(["s4", "s0"])
        .await
        .unwrap();
    assert!(under_b.found.is_empty());
    assert_eq!(under_b.missing, ["s4", "s0"]);
    assert!(matches!(
        Sample::collection_in(db, &a).get_many(["s0", "a/b"]).await,
        Err(Error::InvalidDocumentId { .. })
    ));
}
