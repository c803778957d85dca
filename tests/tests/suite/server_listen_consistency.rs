//! Measured on the emulator, for the live counter (`listen_counter`): whether the Listen
//! stream's consistent points (a target-less `NO_CHANGE` with a read time, the target
//! `CURRENT`) hold every change committed at or before their read time, with several writers
//! committing at once. A raw Listen stream, no library code between it and the server: each
//! consistent point's sum of the shard documents is compared with a query pinned at its read
//! time.
//!
//! What it shows (kept as the test's assertions): with several writers, the emulator marks
//! points consistent at a read time whose commits it has not all sent yet (a point's sum is
//! lower than the pinned read's): 33 of 161 with four writers when first measured. With one
//! writer, none of 41 alone, and 1 of 41 beside another test's 16 writers. So the stream
//! alone cannot guarantee a value exact at its read time, and the live counter reads each
//! value it shows at that read time (`counter/listen.rs`). The emulator's stream also failed
//! once under that load with INTERNAL ("failed to decode Protobuf message"): a run whose
//! stream fails is run again.

use std::time::{Duration, SystemTime};

use futures::StreamExt as _;
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::listen_response::ResponseType;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::structured_query::CollectionSelector;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::target_change::TargetChangeType;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    ListenRequest, StructuredQuery, Target, listen_request, target, value::ValueType,
};
use sharded_runtime::firestore::gcloud_sdk::tonic;
use sharded_tests::test_db;

const COLLECTION: &str = "shards";

/// The points a raw Listen stream marks consistent while `writers` tasks each add 1 to a
/// random one of 8 documents under `parent` 40 times: (read time, sum then) per point.
async fn consistent_points(
    db: &FirestoreDb,
    parent: &str,
    writers: u64,
) -> Result<Vec<(SystemTime, i64)>, tonic::Status> {
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let query = StructuredQuery {
        from: vec![CollectionSelector {
            collection_id: COLLECTION.into(),
            all_descendants: false,
        }],
        ..Default::default()
    };
    sender
        .send(ListenRequest {
            database: db.get_database_path().to_string(),
            target_change: Some(listen_request::TargetChange::AddTarget(Target {
                target_id: 1,
                target_type: Some(target::TargetType::Query(target::QueryTarget {
                    parent: parent.to_owned(),
                    query_type: Some(target::query_target::QueryType::StructuredQuery(query)),
                })),
                ..Default::default()
            })),
            ..Default::default()
        })
        .unwrap();
    let requests = futures::stream::poll_fn(move |cx| receiver.poll_recv(cx));
    let mut responses = db
        .client()
        .get()
        .listen(tonic::Request::new(requests))
        .await
        .unwrap()
        .into_inner();
    let expected = (writers * 40) as i64;
    let tasks: Vec<_> = (0..writers)
        .map(|task| {
            let db = db.clone();
            let parent = parent.to_owned();
            tokio::spawn(async move {
                for n in 0..40u64 {
                    let shard = (task * 7 + n * 3) % 8;
                    add_one(&db, &format!("{parent}/{COLLECTION}/{shard}")).await;
                }
            })
        })
        .collect();
    let mut values = std::collections::HashMap::<String, i64>::new();
    let (mut current, mut points) = (false, Vec::new());
    while points.last().map(|(_, sum)| *sum) != Some(expected) {
        let response = tokio::time::timeout(Duration::from_secs(30), responses.next())
            .await
            .expect("a response within 30 s")
            .expect("the stream goes on")?;
        match response.response_type {
            Some(ResponseType::DocumentChange(change)) => {
                let document = change.document.unwrap();
                let value = match document.fields["value"].value_type {
                    Some(ValueType::IntegerValue(n)) => n,
                    ref other => panic!("{other:?}"),
                };
                values.insert(document.name, value);
            }
            Some(ResponseType::TargetChange(change)) => {
                match TargetChangeType::try_from(change.target_change_type).unwrap() {
                    TargetChangeType::Current => current = true,
                    TargetChangeType::NoChange if change.target_ids.is_empty() && current => {
                        let read_time = change.read_time.unwrap();
                        let read_time = SystemTime::UNIX_EPOCH
                            + Duration::new(read_time.seconds as u64, read_time.nanos as u32);
                        points.push((read_time, values.values().sum()));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    for task in tasks {
        task.await.unwrap();
    }
    Ok(points)
}

/// Adds 1 to the `value` of the document `name` (created if need be), as an increment does;
/// the commit's time.
async fn add_one(db: &FirestoreDb, name: &str) -> SystemTime {
    let (_, time) = crate::server_increments::add(db, name, 1).await;
    SystemTime::UNIX_EPOCH + Duration::new(time.seconds as u64, time.nanos as u32)
}

/// The sum of `value` over the documents under `parent`, read at `read_time`.
async fn sum_at(db: &FirestoreDb, parent: &str, read_time: SystemTime) -> i64 {
    use sharded_runtime::firestore::FirestoreConsistencySelector;
    let at = sharded_runtime::firestore::jiff::Timestamp::try_from(read_time).unwrap();
    let then = db.clone_with_consistency_selector(FirestoreConsistencySelector::ReadTime(at));
    let documents: Vec<serde_json::Value> = then
        .fluent()
        .select()
        .from(COLLECTION)
        .parent(parent)
        .obj()
        .query()
        .await
        .unwrap();
    documents.iter().map(|d| d["value"].as_i64().unwrap()).sum()
}

/// How many of a stream's consistent points are below the sum read at their read time (and
/// asserts none is above it: a point never shows a commit from after its read time).
async fn points_behind(db: &FirestoreDb, parent: &str, writers: u64) -> (usize, usize) {
    let mut run = 0;
    let points = loop {
        match consistent_points(db, &format!("{parent}-{run}"), writers).await {
            Ok(points) => break points,
            Err(status) if run < 3 => eprintln!("the stream failed ({status}); run again"),
            Err(status) => panic!("the stream failed in 4 runs: {status}"),
        }
        run += 1;
    };
    let parent = &format!("{parent}-{run}");
    let mut behind = 0;
    for (read_time, sum) in &points {
        let truth = sum_at(db, parent, *read_time).await;
        assert!(
            *sum <= truth,
            "a point ahead of its read time: {sum} > {truth}"
        );
        behind += usize::from(*sum < truth);
    }
    (behind, points.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_emulators_consistent_points_lag_behind_their_read_time_with_several_writers() {
    let test = test_db("server-listen-consistency").await;
    let db = &test.db;
    let parent = |name: &str| format!("{}/counted/{name}", db.get_documents_path());
    let (alone, alone_points) = points_behind(db, &parent("one"), 1).await;
    let mut several = Vec::new();
    for attempt in 0..5 {
        let (behind, points) = points_behind(db, &parent(&format!("four-{attempt}")), 4).await;
        several.push((behind, points));
        if behind > 0 {
            break;
        }
    }
    // One writer: printed, not asserted (see above).
    eprintln!("one writer: {alone} of {alone_points} behind; four writers: {several:?}");
    assert!(
        several.iter().any(|(behind, _)| *behind > 0),
        "with four writers no point lagged in 5 runs: {several:?}; if the emulator now keeps \
         its points exact, the live counter's check is a cost without a cause"
    );
}

/// A commit's time is given before its answer, and between the two the commit is not yet
/// seen by every read: with 16 writers at once, how long after its commit time each answer
/// came (printed; 68 ms at most when measured, which the live counter's settling time
/// covers). Each commit time lies between the request's sending and its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_is_answered_after_its_commit_time() {
    let test = test_db("server-commit-latency").await;
    let db = &test.db;
    let parent = format!("{}/counted/x", db.get_documents_path());
    let tasks: Vec<_> = (0..16u64)
        .map(|task| {
            let db = db.clone();
            let parent = parent.clone();
            tokio::spawn(async move {
                let mut after = Vec::new();
                for n in 0..40u64 {
                    let shard = (task * 7 + n * 3) % 8;
                    let sent = SystemTime::now();
                    let time = add_one(&db, &format!("{parent}/{COLLECTION}/{shard}")).await;
                    let answered = SystemTime::now();
                    // Microseconds: the server's times are truncated to them.
                    let floor = |t: SystemTime| {
                        let since = t.duration_since(SystemTime::UNIX_EPOCH).unwrap();
                        SystemTime::UNIX_EPOCH + Duration::from_micros(since.as_micros() as u64)
                    };
                    assert!(
                        floor(sent) <= time && time <= answered,
                        "{sent:?} {time:?} {answered:?}"
                    );
                    after.push(answered.duration_since(time).unwrap());
                }
                after
            })
        })
        .collect();
    let mut after = Vec::new();
    for task in tasks {
        after.extend(task.await.unwrap());
    }
    after.sort();
    eprintln!(
        "answers after their commit time: median {:?}, 99th percentile {:?}, most {:?}",
        after[after.len() / 2],
        after[after.len() * 99 / 100],
        after.last().unwrap()
    );
}
