//! A collection other clients also write: documents written differently (a double where the
//! struct has an integer, a missing field, a number where a timestamp is expected) fail the
//! strict reads, and the `*_with_errors` reads report each of them in its place beside every
//! other document, in the unsharded query's order, at 3 and 40 shard values.

use std::collections::{HashMap, HashSet};

use futures::TryStreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    CommitRequest, Document, DocumentMask, Value, Write, value::ValueType, write::Operation,
};
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::{Decoded, Sharded, ShardedQuery, WholeCollection, reads::query_id};
use sharded_tests::equivalence::{Unsharded, write_both};
use sharded_tests::test_db;

macro_rules! note_type {
    ($name:ident, $shards:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", collection = $collection)]
        struct $name {
            #[sharded(index)]
            room: String,
            count: i64,
            text: String,
            at: FirestoreTimestamp,
        }

        impl Note for $name {
            fn new(room: &str, count: i64, at: FirestoreTimestamp) -> Self {
                $name {
                    room: room.to_owned(),
                    count,
                    text: format!("{count}"),
                    at,
                }
            }
            fn in_room(room: &str) -> ShardedQuery<Self, { query_id("room") }> {
                $name::query().room(room)
            }
            fn all() -> WholeCollection<Self> {
                $name::query().all()
            }
        }
    };
}

trait Note:
    Sharded<OrderValue = FirestoreTimestamp> + sharded_runtime::bounds::TopLevel + Clone
{
    fn new(room: &str, count: i64, at: FirestoreTimestamp) -> Self;
    fn in_room(room: &str) -> ShardedQuery<Self, { query_id("room") }>;
    fn all() -> WholeCollection<Self>;
}

note_type!(Note3, 3, "notes3");
note_type!(Note40, 40, "notes40");

const ROOMS: [&str; 3] = ["lobby", "ops", "dev"];

fn at(second: i64) -> FirestoreTimestamp {
    FirestoreTimestamp(sharded_runtime::firestore::jiff::Timestamp::from_second(second).unwrap())
}

/// Sets (or, with `None`, deletes) `field` of `collection/id` as another client would.
async fn rewrite(db: &FirestoreDb, collection: &str, id: &str, field: &str, value: Option<Value>) {
    let write = Write {
        operation: Some(Operation::Update(Document {
            name: format!("{}/{collection}/{id}", db.get_documents_path()),
            fields: value
                .into_iter()
                .map(|value| (field.to_owned(), value))
                .collect(),
            ..Document::default()
        })),
        update_mask: Some(DocumentMask {
            field_paths: vec![field.to_owned()],
        }),
        ..Write::default()
    };
    let request = CommitRequest {
        database: db.get_database_path().clone(),
        writes: vec![write],
        ..CommitRequest::default()
    };
    db.client().get().commit(request).await.unwrap();
}

fn value(value_type: ValueType) -> Option<Value> {
    Some(Value {
        value_type: Some(value_type),
    })
}

fn id_of<T>(decoded: &Decoded<T>) -> &str {
    match decoded {
        Ok(stored) => &stored.id,
        Err(undecodable) => &undecodable.id,
    }
}

#[tokio::test]
async fn reads_with_errors_report_each_document_another_client_wrote_differently() {
    let test = test_db("other-clients").await;
    let seed = sharded_tests::seed("reads_with_errors_report_each_document");
    let mut rng = StdRng::seed_from_u64(seed);
    check::<Note3>(&test.db, &mut rng, "plain_notes3").await;
    check::<Note40>(&test.db, &mut rng, "plain_notes40").await;
}

async fn check<T: Note>(db: &FirestoreDb, rng: &mut StdRng, plain: &str) {
    let documents: Vec<(String, T)> = (0..80)
        .map(|n| {
            let room = ROOMS[rng.random_range(0..ROOMS.len())];
            // Ties on the order field, across shards.
            let note = T::new(room, n, at(1_700_000_000 + rng.random_range(0..30)));
            (format!("n{n:02}"), note)
        })
        .collect();
    write_both(db, plain, &documents).await;
    // What other clients wrote: each mistake on a few documents, in both collections.
    let mut bad = HashSet::new();
    for (i, (id, _)) in documents
        .iter()
        .enumerate()
        .filter(|_| rng.random_bool(0.2))
    {
        let (field, stored) = match i % 3 {
            0 => ("count", value(ValueType::DoubleValue(1.5))),
            1 => ("text", None),
            _ => ("at", value(ValueType::IntegerValue(7))),
        };
        for collection in [T::COLLECTION, plain] {
            rewrite(db, collection, id, field, stored.clone()).await;
        }
        bad.insert(id.clone());
    }
    assert!(!bad.is_empty());
    let mut queries: Vec<(String, Unsharded, ShardedQuery<T, { query_id("room") }>)> = ROOMS
        .iter()
        .map(|room| {
            let reference = Unsharded::default().equal("room", *room);
            (format!("room {room}"), reference, T::in_room(room))
        })
        .collect();
    let range = (
        std::ops::Bound::Included(at(1_700_000_005)),
        std::ops::Bound::Excluded(at(1_700_000_025)),
    );
    queries.push((
        "lobby, a range of times".into(),
        Unsharded::default().equal("room", "lobby").range(&range),
        T::in_room("lobby").range(range),
    ));
    let mut reasons = HashMap::new();
    for (what, reference, query) in queries {
        let expected = reference.ids::<T>(db, plain).await.unwrap();
        let what = format!("{} {what}", T::COLLECTION);
        check_query(db, &query, &expected, &bad, rng, &what, &mut reasons).await;
    }
    let expected = Unsharded::default().ids::<T>(db, plain).await.unwrap();
    let what = format!("{} all", T::COLLECTION);
    check_query(db, &T::all(), &expected, &bad, rng, &what, &mut reasons).await;
    // Every mistake was met, and said why.
    assert_eq!(reasons.keys().collect::<HashSet<_>>(), bad.iter().collect());
    assert!(reasons.values().all(|reason: &String| !reason.is_empty()));
}

async fn check_query<T: Note, const Q: u64>(
    db: &FirestoreDb,
    query: &ShardedQuery<T, Q>,
    expected: &[String],
    bad: &HashSet<String>,
    rng: &mut StdRng,
    what: &str,
    reasons: &mut HashMap<String, String>,
) {
    let matched_bad = expected.iter().any(|id| bad.contains(id));
    assert_eq!(
        query.fetch_stored(db).await.is_err(),
        matched_bad,
        "{what}: strict"
    );
    // Fetch and stream: every document in place, each undecodable one where it is.
    let fetched = query.fetch_with_errors(db).await.unwrap();
    let streamed: Vec<Decoded<T>> = query
        .stream_with_errors(db)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    for (how, decoded) in [("fetch", &fetched), ("stream", &streamed)] {
        let ids: Vec<&str> = decoded.iter().map(id_of).collect();
        assert_eq!(ids, expected, "{what}: {how}");
        for item in decoded {
            match item {
                Ok(stored) => assert!(!bad.contains(&stored.id), "{what}: {how}"),
                Err(undecodable) => {
                    assert!(
                        bad.contains(&undecodable.id),
                        "{what}: {how}: {undecodable}"
                    );
                    assert!(undecodable.name.ends_with(&format!("/{}", undecodable.id)));
                    reasons.insert(undecodable.id.clone(), undecodable.reason.clone());
                }
            }
        }
    }
    // Pages, through the cursor values: the good documents in order, the others apart, none
    // skipped and none repeated.
    let limit = rng.random_range(1..12);
    let (mut good, mut undecodable) = (Vec::new(), Vec::new());
    let mut page_query = query.clone().after(None);
    loop {
        let (page, errors) = page_query.page_with_errors(db, limit).await.unwrap();
        assert!(page.items.len() + errors.len() <= limit as usize, "{what}");
        good.extend(page.items.iter().map(|stored| stored.id.clone()));
        undecodable.extend(errors.into_iter().map(|error| error.id));
        match page.next {
            Some(next) => page_query = query.clone().after(next),
            None => break,
        }
    }
    let expected_good: Vec<String> = expected
        .iter()
        .filter(|id| !bad.contains(*id))
        .cloned()
        .collect();
    assert_eq!(good, expected_good, "{what}: pages");
    let mut expected_bad: Vec<&String> = expected.iter().filter(|id| bad.contains(*id)).collect();
    let mut undecodable: Vec<&String> = undecodable.iter().collect();
    expected_bad.sort();
    undecodable.sort();
    assert_eq!(undecodable, expected_bad, "{what}: pages' undecodable");
    assert_eq!(
        query.count(db).await.unwrap(),
        expected.len() as u64,
        "{what}: count"
    );
}
