//! Distributed counters on the emulator: the commit an increment is (measured: sent again
//! after it landed, it is refused whole), concurrent increments summing exactly, increments
//! through a proxy that loses requests and answers counting once, increments in atomic
//! batches and transactions, reads at a read time and across a change of shard count.

use std::collections::BTreeMap;

use futures::FutureExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_emulator::fault_proxy::{FaultProxy, Faults};
use sharded_runtime::counters::{
    COUNTER_COLLECTION_PREFIX, INCREMENTS_COLLECTION, Increment, SHARD_VALUE_FIELD,
};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::CommitRequest;
use sharded_runtime::firestore::gcloud_sdk::tonic::Code;
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::{AtomicBatch, Error, Sharded, writes::transaction_error};
use sharded_tests::test_db;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "posted_at", collection = "counted_posts")]
struct Post {
    #[sharded(index)]
    author: String,
    #[sharded(counter(shards = 20))]
    likes: i64,
    #[sharded(counter(writes_per_second = 3))]
    views: Option<u32>,
    posted_at: FirestoreTimestamp,
}

/// The same collection and counter over fewer shard documents: a counter resized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "posted_at", collection = "counted_posts")]
struct PostResized {
    #[sharded(index)]
    author: String,
    #[sharded(counter(shards = 5))]
    likes: i64,
    #[sharded(counter(shards = 1))]
    views: Option<u32>,
    posted_at: FirestoreTimestamp,
}

fn post(author: &str) -> Post {
    Post {
        author: author.into(),
        likes: 0,
        views: None,
        posted_at: FirestoreTimestamp::now(),
    }
}

fn document_name(db: &FirestoreDb, id: &str) -> String {
    format!("{}/counted_posts/{id}", db.get_documents_path())
}

/// Measured: an increment's commit (its marker created on `exists: false`, its shard added to
/// by a transform under an empty mask, which creates the shard document) sent a second time
/// after it landed is refused whole with ALREADY_EXISTS: the shard is not added to again.
/// The shard's value is read back as an integer sum.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_increment_sent_again_after_it_landed_is_refused_whole() {
    let test = test_db("counter-commit").await;
    let db = &test.db;
    let increment = Increment::new(Post::counters().likes, 7);
    let shard_names = |db: &FirestoreDb| {
        (0..20)
            .map(|k| {
                format!(
                    "{}/{COUNTER_COLLECTION_PREFIX}likes/{k}",
                    document_name(db, "p1")
                )
            })
            .collect::<Vec<_>>()
    };
    // The writes the library sends, sent by hand twice.
    let writes = raw_increment_writes(db, "p1", 7, increment.id());
    let commit = |writes| CommitRequest {
        database: db.get_database_path().clone(),
        writes,
        ..Default::default()
    };
    db.client()
        .get()
        .commit(commit(writes.clone()))
        .await
        .unwrap();
    let again = db.client().get().commit(commit(writes)).await.unwrap_err();
    assert_eq!(again.code(), Code::AlreadyExists, "{again}");
    let mut total = 0;
    for name in shard_names(db) {
        if let Ok(shard) = db
            .client()
            .get()
            .get_document(
                sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::GetDocumentRequest {
                    name,
                    ..Default::default()
                },
            )
            .await
        {
            let value = shard.into_inner().fields[SHARD_VALUE_FIELD].clone();
            match value.value_type {
                Some(sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::value::ValueType::IntegerValue(n)) => total += n,
                other => panic!("a shard holds {other:?}"),
            }
        }
    }
    assert_eq!(total, 7, "the second commit added again");
    let posts = Post::collection(db);
    assert_eq!(
        posts.counter("p1", Post::counters().likes).await.unwrap(),
        7
    );
    assert!(posts.was_applied("p1", &increment).await.unwrap());
    let other = Increment::new(Post::counters().likes, 1);
    assert!(!posts.was_applied("p1", &other).await.unwrap());
    // Applied through the library again, it counts nothing more.
    posts.apply("p1", &increment).await.unwrap();
    assert_eq!(
        posts.counter("p1", Post::counters().likes).await.unwrap(),
        7
    );
}

/// The two writes of an increment, built by hand as the library documents them: the marker
/// under `_sharded_increments` created on `exists: false`, and shard 0 added to under an
/// empty mask.
fn raw_increment_writes(
    db: &FirestoreDb,
    id: &str,
    by: i64,
    increment: &str,
) -> Vec<sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::Write> {
    use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::document_transform::FieldTransform;
    use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::document_transform::field_transform::TransformType;
    use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
        Document, DocumentMask, Precondition, Value, Write, precondition, value::ValueType,
        write::Operation,
    };
    let document = document_name(db, id);
    vec![
        Write {
            operation: Some(Operation::Update(Document {
                name: format!("{document}/{INCREMENTS_COLLECTION}/{increment}"),
                ..Document::default()
            })),
            current_document: Some(Precondition {
                condition_type: Some(precondition::ConditionType::Exists(false)),
            }),
            ..Write::default()
        },
        Write {
            operation: Some(Operation::Update(Document {
                name: format!("{document}/{COUNTER_COLLECTION_PREFIX}likes/0"),
                ..Document::default()
            })),
            update_mask: Some(DocumentMask::default()),
            update_transforms: vec![FieldTransform {
                field_path: SHARD_VALUE_FIELD.into(),
                transform_type: Some(TransformType::Increment(Value {
                    value_type: Some(ValueType::IntegerValue(by)),
                })),
            }],
            ..Write::default()
        },
    ]
}

/// Many tasks adding random amounts (negative ones too) to counters of three documents at
/// once: every counter's exact value is the sum of what was added, read alone, many at once
/// and inside a transaction; the shard documents used are at most the declared 20.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_increments_sum_exactly() {
    let test = test_db("counter-concurrent").await;
    let db = test.db.clone();
    let ids = ["a", "b", "c"];
    let tasks = (0..12u64).map(|task| {
        let db = db.clone();
        tokio::spawn(async move {
            let mut rng = StdRng::seed_from_u64(task);
            let mut added: BTreeMap<(&str, &str), i64> = BTreeMap::new();
            for _ in 0..20 {
                let id = ids[rng.random_range(0..ids.len())];
                let by = rng.random_range(-3..10);
                let (field, name) = match rng.random_bool(0.7) {
                    true => (Post::counters().likes, "likes"),
                    false => (Post::counters().views, "views"),
                };
                Post::collection(&db)
                    .increment(id, field, by)
                    .await
                    .unwrap();
                *added.entry((id, name)).or_default() += by;
            }
            added
        })
    });
    let mut expected: BTreeMap<(&str, &str), i64> = BTreeMap::new();
    for added in futures::future::try_join_all(tasks).await.unwrap() {
        for (key, by) in added {
            *expected.entry(key).or_default() += by;
        }
    }
    let posts = Post::collection(&db);
    let value =
        |id: &'static str, name: &'static str| expected.get(&(id, name)).copied().unwrap_or(0);
    for id in ids {
        assert_eq!(
            posts.counter(id, Post::counters().likes).await.unwrap(),
            value(id, "likes"),
            "{id}"
        );
        assert_eq!(
            posts.counter(id, Post::counters().views).await.unwrap(),
            value(id, "views"),
            "{id}"
        );
    }
    let many = posts.counters(ids, Post::counters().likes).await.unwrap();
    assert_eq!(many, ids.map(|id| value(id, "likes")).to_vec());
    let in_transaction = db
        .run_transaction(|db, transaction| {
            async move {
                let posts = Post::collection(&db).in_transaction(transaction);
                let mut values = Vec::new();
                for id in ["a", "b", "c"] {
                    values.push(
                        posts
                            .counter(id, Post::counters().likes)
                            .await
                            .map_err(transaction_error)?,
                    );
                }
                Ok::<_, sharded_runtime::writes::TransactionError>(values)
            }
            .boxed()
        })
        .await
        .unwrap();
    assert_eq!(in_transaction, many);
    // At most the declared shard documents hold each counter.
    for id in ids {
        let shards: Vec<sharded_runtime::firestore::FirestoreDocument> = db
            .fluent()
            .select()
            .from(format!("{COUNTER_COLLECTION_PREFIX}likes").as_str())
            .parent(document_name(&db, id).as_str())
            .query()
            .await
            .unwrap();
        assert!(!shards.is_empty() && shards.len() <= 20, "{}", shards.len());
    }
    // A document never counted is 0.
    assert_eq!(
        posts
            .counter("never", Post::counters().likes)
            .await
            .unwrap(),
        0
    );
}

/// A proxy in front of `test`'s emulator that drops 3 % of the chunks it forwards and loses
/// 10 % of the answers after the server applied the request, and a client of the same
/// project through it.
async fn losing_proxy(test: &sharded_tests::TestDb, seed: &str) -> (FaultProxy, FirestoreDb) {
    let proxy = FaultProxy::start(
        test.emulator.host(),
        Faults {
            seed: sharded_tests::seed(seed),
            drop_chance: 0.03,
            lost_answer_chance: 0.1,
            ..Faults::NONE
        },
    )
    .await
    .unwrap();
    let faulty = sharded_tests::same_project_via(&test.db, &proxy.host()).await;
    (proxy, faulty)
}

/// Through a proxy that drops connections and loses answers after the server applied the
/// commit, every increment counts once: those acknowledged, plus those reported unsettled and
/// applied again once the network is back (each of which may have landed the first time).
/// The sum equals every increment's amount added once; none is lost, none counted twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn increments_through_lost_answers_count_once() {
    let test = test_db("counter-faults").await;
    let (proxy, faulty) = losing_proxy(&test, "counter-faults").await;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("counter-faults-amounts"));
    let mut total = 0;
    let mut unsettled = Vec::new();
    for n in 0..40 {
        let increment = Increment::new(Post::counters().likes, rng.random_range(1..100));
        total += increment.by();
        match Post::collection(&faulty).apply("p", &increment).await {
            Ok(()) => {}
            Err(Error::IncrementUnsettled { increment: id, .. }) => {
                assert_eq!(id, increment.id());
                unsettled.push(increment);
            }
            Err(other) => panic!("increment {n}: {other:?}"),
        }
    }
    assert!(proxy.dropped() > 0, "no connection was dropped");
    // Settled through the faultless client: each counts once, whether or not it had landed.
    let posts = Post::collection(&test.db);
    for increment in &unsettled {
        posts.apply("p", increment).await.unwrap();
    }
    assert_eq!(
        posts.counter("p", Post::counters().likes).await.unwrap(),
        total
    );
}

/// Increments through the bulk writer, through a proxy that drops connections and loses
/// answers after the server applied them: each is one Commit of its marker and its shard's
/// addition, so an attempt refused by its own marker had landed before and succeeds (read
/// back); a failure that may have been applied is applied again through a working network
/// and counts once. Every document's counter then equals what was added to it. The same
/// increments queued again through another writer, and one applied again directly, add
/// nothing: one marker, whichever path applied it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bulk_increments_count_once_through_lost_answers() {
    use sharded_runtime::bulk::BulkWriter;
    let test = test_db("counter-bulk").await;
    let (proxy, faulty) = losing_proxy(&test, "counter-bulk").await;
    let likes = Post::counters().likes;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("counter-bulk-amounts"));
    let writer = BulkWriter::new(&faulty, sharded_tests::migration::unthrottled()).unwrap();
    let mut increments: Vec<(String, Increment<Post>)> = Vec::new();
    let mut outcomes = Vec::new();
    // Rounds of 150 until a connection was dropped and a lost answer settled by its marker:
    // the proxy draws a fault per chunk of bytes, and a loaded machine may coalesce a
    // round's requests into too few chunks for either.
    for _round in 0..10 {
        let mut pending = Vec::new();
        for n in 0..150 {
            let id = format!("b{}", n % 3);
            let increment = Increment::new(likes, rng.random_range(-50..100));
            let write = writer.increment(&id, &increment).await.unwrap();
            assert_eq!(
                write.document(),
                format!(
                    "{}/{INCREMENTS_COLLECTION}/{}",
                    document_name(&test.db, &id),
                    increment.id()
                ),
                "a bulk increment is known by its marker"
            );
            pending.push(write);
            increments.push((id, increment));
        }
        outcomes.extend(futures::future::join_all(pending).await);
        if proxy.dropped() > 0 && writer.stats().read_back > 0 {
            break;
        }
    }
    let stats = writer.stats();
    drop(writer);
    assert!(
        proxy.dropped() > 0,
        "no connection was dropped in 10 rounds"
    );
    assert!(
        stats.read_back > 0,
        "no lost answer was settled by its marker in 10 rounds: {stats:?}"
    );
    let mut expected = BTreeMap::<&str, i64>::new();
    for (id, increment) in &increments {
        *expected.entry(id.as_str()).or_default() += increment.by();
    }
    let posts = Post::collection(&test.db);
    for ((id, increment), outcome) in increments.iter().zip(outcomes) {
        if let Err(failure) = outcome {
            posts.apply(id, increment).await.unwrap();
            assert!(failure.document.ends_with(increment.id()), "{failure}");
        }
    }
    for (id, total) in &expected {
        assert_eq!(posts.counter(id, likes).await.unwrap(), *total, "{id}");
    }

    // Once more, through a writer without faults and directly: every one succeeds, and
    // nothing more is counted.
    let again = BulkWriter::new(&test.db, sharded_tests::migration::unthrottled()).unwrap();
    for (id, increment) in &increments {
        drop(again.increment(id, increment).await.unwrap());
    }
    again.close().await.unwrap();
    let (id, increment) = &increments[0];
    posts.apply(id, increment).await.unwrap();
    assert!(posts.was_applied(id, increment).await.unwrap());
    for (id, total) in &expected {
        assert_eq!(posts.counter(id, likes).await.unwrap(), *total, "{id}");
    }
}

/// The two ends of an unsettled increment, each forced: every request dropped before the
/// server saw it (never applied), and every answer lost after the server applied it (applied
/// by the first attempt, each later one refused by its marker). Both are reported
/// `IncrementUnsettled` with the increment's id after the last attempt; `was_applied` tells
/// them apart, and applying the same increment again through a working network leaves
/// each counted once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsettled_increment_is_reported_and_settles_once() {
    let test = test_db("counter-unsettled").await;
    let posts = Post::collection(&test.db);
    let likes = Post::counters().likes;
    let mut expected = 0;
    for (faults, landed) in [
        (
            Faults {
                drop_chance: 1.0,
                ..Faults::NONE
            },
            false,
        ),
        (
            Faults {
                lost_answer_chance: 1.0,
                ..Faults::NONE
            },
            true,
        ),
    ] {
        let proxy = FaultProxy::start(test.emulator.host(), faults)
            .await
            .unwrap();
        let faulty = sharded_tests::same_project_via(&test.db, &proxy.host()).await;
        let increment = Increment::new(likes, 10);
        match Post::collection(&faulty).apply("p", &increment).await {
            Err(Error::IncrementUnsettled {
                increment: id,
                document,
                ..
            }) => {
                assert_eq!(id, increment.id());
                assert_eq!(document, document_name(&test.db, "p"));
            }
            other => panic!("{faults:?}: {other:?}"),
        }
        assert_eq!(
            posts.was_applied("p", &increment).await.unwrap(),
            landed,
            "{faults:?}"
        );
        if landed {
            expected += 10;
        }
        assert_eq!(
            posts.counter("p", likes).await.unwrap(),
            expected,
            "{faults:?}"
        );
        posts.apply("p", &increment).await.unwrap();
        expected += if landed { 0 } else { 10 };
        assert_eq!(
            posts.counter("p", likes).await.unwrap(),
            expected,
            "{faults:?}"
        );
    }
}

/// An atomic batch holding an increment is idempotent whole: committed, then the same batch
/// built again (the same increment, the same write beside it) committed again, the document
/// write and the increment both apply once, and the second commit answers with the first's
/// time; the same increment beside another write is another commit, refused whole
/// (`IncrementAlreadyApplied`, naming it), which applies nothing. Inside a transaction, the
/// increment commits with it, and the value read there is the value before; a transaction
/// run again with an increment that landed succeeds and adds nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn increments_in_batches_and_transactions_count_once() {
    let test = test_db("counter-atomic").await;
    let db = &test.db;
    let likes = Post::counters().likes;
    let increment = Increment::with_id(likes, 5, "request-17").unwrap();
    let batch = |author: &str| {
        let mut batch = AtomicBatch::new(db);
        batch.upsert("p", &post(author)).unwrap();
        batch.increment("p", &increment).unwrap();
        batch
    };
    let first_post = post("first");
    let same = || {
        let mut batch = AtomicBatch::new(db);
        batch.upsert("p", &first_post).unwrap();
        batch.increment("p", &increment).unwrap();
        batch
    };
    let first = same().commit().await.unwrap();
    let again = same().commit().await.unwrap();
    assert_eq!(
        first, again,
        "the batch that landed before answers with its own time"
    );
    match batch("second").commit().await {
        Err(Error::IncrementAlreadyApplied {
            increment: id,
            document,
        }) => {
            assert_eq!(id, "request-17");
            assert_eq!(document, document_name(db, "p"));
        }
        other => panic!("another batch holding the increment: {other:?}"),
    }
    let posts = Post::collection(db);
    assert_eq!(posts.get("p").await.unwrap().unwrap().author, "first");
    assert_eq!(posts.counter("p", likes).await.unwrap(), 5);

    let seen = db
        .run_transaction(|db, transaction| {
            async move {
                let mut posts = Post::collection(&db).in_transaction(transaction);
                let before = posts.counter("p", likes).await.map_err(transaction_error)?;
                posts
                    .increment("p", &Increment::new(likes, before))
                    .await
                    .map_err(transaction_error)?;
                Ok::<_, sharded_runtime::writes::TransactionError>(before)
            }
            .boxed()
        })
        .await
        .unwrap();
    assert_eq!(seen, 5);
    assert_eq!(
        posts.counter("p", likes).await.unwrap(),
        10,
        "doubled in the transaction"
    );
    // A transaction that landed, run again with the same increment (what `run_transaction`
    // does when a commit's answer is lost): the second run finds the marker, queues nothing,
    // and succeeds; the increment counts once.
    let once = Increment::new(likes, 7);
    for run in 0..2 {
        let once = &once;
        let queued = db
            .run_transaction(|db, transaction| {
                let once = once.clone();
                async move {
                    let mut posts = Post::collection(&db).in_transaction(transaction);
                    posts.increment("p", &once).await.map_err(transaction_error)
                }
                .boxed()
            })
            .await
            .unwrap();
        assert_eq!(queued, run == 0, "run {run}");
    }
    assert_eq!(posts.counter("p", likes).await.unwrap(), 17);
    // An id is checked as a document id before anything is sent.
    assert!(matches!(
        Increment::with_id(likes, 1, "a/b"),
        Err(Error::InvalidDocumentId { .. })
    ));
}

/// A counter's value at a read time is the sum then; and a counter declared over fewer shard
/// documents (resized from 20 to 5) reads the same value, since a read sums every shard
/// document there is, and its increments land in its own 5.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counter_reads_at_a_read_time_and_across_a_resize() {
    use sharded_runtime::firestore::FirestoreConsistencySelector;
    let test = test_db("counter-resize").await;
    let db = &test.db;
    let posts = Post::collection(db);
    for by in 1..=30 {
        posts
            .increment("p", Post::counters().likes, by)
            .await
            .unwrap();
    }
    let before = 465;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let then = std::time::SystemTime::now();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let resized = PostResized::collection(db);
    assert_eq!(
        resized
            .counter("p", PostResized::counters().likes)
            .await
            .unwrap(),
        before
    );
    for _ in 0..10 {
        resized
            .increment("p", PostResized::counters().likes, 2)
            .await
            .unwrap();
    }
    assert_eq!(
        posts.counter("p", Post::counters().likes).await.unwrap(),
        before + 20
    );
    assert_eq!(
        resized
            .counter("p", PostResized::counters().likes)
            .await
            .unwrap(),
        before + 20
    );
    // Firestore takes read times to the microsecond.
    let then = sharded_runtime::firestore::jiff::Timestamp::try_from(then)
        .unwrap()
        .round(sharded_runtime::firestore::jiff::Unit::Millisecond)
        .unwrap();
    let past = db.clone_with_consistency_selector(FirestoreConsistencySelector::ReadTime(then));
    assert_eq!(
        Post::collection(&past)
            .counter("p", Post::counters().likes)
            .await
            .unwrap(),
        before
    );
    assert_eq!(
        Post::collection(&past)
            .counters(["p", "q"], Post::counters().likes)
            .await
            .unwrap(),
        vec![before, 0]
    );
}

/// Folding while increments land: each fold writes the value the counter had at its commit
/// (a read at that read time sums to it, and the document's field there holds it), never an
/// older value over a newer, and only the counter's field (the author stays). After the
/// increments stop, one more fold leaves the field equal to their total.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fold_writes_the_value_at_its_commit_while_increments_land() {
    use sharded_runtime::firestore::FirestoreConsistencySelector;
    let test = test_db("counter-fold").await;
    let db = test.db.clone();
    let posts = Post::collection(&db);
    posts.upsert("p", &post("ada")).await.unwrap();
    let likes = Post::counters().likes;
    let writers = (0..4u64).map(|task| {
        let db = db.clone();
        tokio::spawn(async move {
            let mut added = 0;
            for n in 0..15 {
                let by = (task as i64 + 1) * (n + 1);
                Post::collection(&db)
                    .increment("p", likes, by)
                    .await
                    .unwrap();
                added += by;
            }
            added
        })
    });
    let writers = futures::future::try_join_all(writers);
    let folds = async {
        let mut folded = Vec::new();
        for _ in 0..6 {
            folded.push(Post::collection(&db).fold("p", likes).await.unwrap());
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        folded
    };
    let (added, folded) = tokio::join!(writers, folds);
    let total: i64 = added.unwrap().iter().sum();
    let mut last = i64::MIN;
    for fold in &folded {
        let at = sharded_runtime::firestore::jiff::Timestamp::try_from(fold.at).unwrap();
        let then = db.clone_with_consistency_selector(FirestoreConsistencySelector::ReadTime(at));
        let there = Post::collection(&then);
        assert_eq!(
            there.counter("p", likes).await.unwrap(),
            fold.value,
            "{fold:?}"
        );
        let document = there.get("p").await.unwrap().unwrap();
        assert_eq!(
            (document.likes, document.author.as_str()),
            (fold.value, "ada")
        );
        // Every increment adds a positive amount: a later fold never writes less.
        assert!(fold.value >= last, "{folded:?}");
        last = fold.value;
    }
    let final_fold = posts.fold("p", likes).await.unwrap();
    assert_eq!(final_fold.value, total);
    assert_eq!(posts.get("p").await.unwrap().unwrap().likes, total);
    // A document that does not exist is not created by a fold.
    assert!(posts.fold("absent", likes).await.is_err());
    assert!(posts.get("absent").await.unwrap().is_none());
}

/// A fold writes only what the field's Rust type holds. Measured first: a document whose
/// `Option<u32>` field holds a negative integer does not read back as the type. A counter
/// of that field brought below zero, or past `u32::MAX`, is `InvalidUpdate` on a fold, which
/// writes nothing (the document reads as before, and a kept-folded stream ends with the
/// error); its value is still exact, and a fold once it fits again writes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fold_writes_only_what_the_fields_type_holds() {
    use futures::StreamExt as _;
    let test = test_db("counter-fold-range").await;
    let posts = Post::collection(&test.db);
    let views = Post::counters().views;

    posts.upsert("raw", &post("ada")).await.unwrap();
    #[derive(Debug, Serialize, Deserialize)]
    struct RawViews {
        views: i64,
    }
    let _: RawViews = test
        .db
        .fluent()
        .update()
        .fields(["views"])
        .in_col("counted_posts")
        .document_id("raw")
        .object(&RawViews { views: -1 })
        .execute()
        .await
        .unwrap();
    assert!(
        posts.get("raw").await.is_err(),
        "a negative integer read back as an Option<u32>"
    );

    posts.upsert("p", &post("ada")).await.unwrap();
    posts.increment("p", views, 7).await.unwrap();
    assert_eq!(posts.fold("p", views).await.unwrap().value, 7);
    for (by, value) in [(-12, -5), (i64::from(u32::MAX), i64::from(u32::MAX) + 7)] {
        posts.increment("p", views, by).await.unwrap();
        assert_eq!(posts.counter("p", views).await.unwrap(), value);
        match posts.fold("p", views).await {
            Err(Error::InvalidUpdate(why)) => {
                assert!(why.contains("u32"), "{why}");
            }
            other => panic!("{by}: {other:?}"),
        }
        assert_eq!(
            posts.get("p").await.unwrap().unwrap().views,
            Some(7),
            "{by}: the refused fold wrote"
        );
        let mut kept = posts
            .keep_folded("p", views, std::time::Duration::from_secs(1))
            .unwrap();
        assert!(
            matches!(kept.next().await, Some(Err(Error::InvalidUpdate(_)))),
            "{by}"
        );
        assert!(
            kept.next().await.is_none(),
            "{by}: the error is the last item"
        );
        // Back within the type: the next fold writes the exact value.
        posts.increment("p", views, -by).await.unwrap();
        assert_eq!(posts.counter("p", views).await.unwrap(), 7);
    }
    posts.increment("p", views, 3).await.unwrap();
    assert_eq!(posts.fold("p", views).await.unwrap().value, 10);
    assert_eq!(posts.get("p").await.unwrap().unwrap().views, Some(10));
}

// A counter sized by a `macro_rules!` literal, which arrives in an invisible group.
macro_rules! counted {
    ($name:ident, $shards:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = 3, order_by = "at", collection = "counted_by_macro")]
        struct $name {
            #[sharded(counter(shards = $shards))]
            likes: i64,
            at: i64,
        }
    };
}

counted!(CountedByMacro, 12);

/// A counter resized from 20 shard documents to 5, its undeclared ones merged while
/// increments land through the new declaration: the value is exact before, during and after,
/// only the 5 declared shard documents are left, and merging again merges nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shrunk_counter_merges_its_undeclared_shards_while_increments_land() {
    let test = test_db("counter-shrink").await;
    let db = test.db.clone();
    let old = Post::collection(&db);
    for by in 1..=60 {
        old.increment("s", Post::counters().likes, by)
            .await
            .unwrap();
    }
    let before: i64 = (1..=60).sum();
    let likes = PostResized::counters().likes;
    let shards = |db: FirestoreDb| async move {
        let names: Vec<sharded_runtime::firestore::FirestoreDocument> = db
            .fluent()
            .select()
            .from(format!("{COUNTER_COLLECTION_PREFIX}likes").as_str())
            .parent(document_name(&db, "s").as_str())
            .query()
            .await
            .unwrap();
        names.len()
    };
    let spread = shards(db.clone()).await;
    assert!(
        spread > 5,
        "60 increments over 20 shard documents took {spread}"
    );
    let writer = {
        let db = db.clone();
        tokio::spawn(async move {
            for _ in 0..30 {
                PostResized::collection(&db)
                    .increment("s", likes, 2)
                    .await
                    .unwrap();
            }
        })
    };
    let resized = PostResized::collection(&db);
    let merged = resized.merge_undeclared_shards("s", likes).await.unwrap();
    let during = resized.counter("s", likes).await.unwrap();
    assert!(
        (before..=before + 60).contains(&during) && during % 2 == before % 2,
        "{during}"
    );
    writer.await.unwrap();
    assert!(merged > 0);
    assert_eq!(resized.counter("s", likes).await.unwrap(), before + 60);
    // Increments through the new declaration only reach 0..5; a merge after them leaves
    // exactly the declared documents.
    resized.merge_undeclared_shards("s", likes).await.unwrap();
    assert!(shards(db.clone()).await <= 5);
    assert_eq!(
        resized.merge_undeclared_shards("s", likes).await.unwrap(),
        0
    );
    assert_eq!(resized.counter("s", likes).await.unwrap(), before + 60);
}

/// Counters against a model, for random sequences of every way to change or read one: new
/// increments and ones applied before, each through a single write, an atomic batch, a
/// transaction or the bulk writer, under the declared 20 shard documents or the resized 5,
/// with merges of undeclared shard documents and folds between them. After every step, the
/// value read alone, many at once and inside a transaction equals the model's: the sum of
/// the distinct increments of each document (any amount, negatives included).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counters_equal_the_sum_of_distinct_increments_for_random_sequences() {
    use sharded_runtime::bulk::BulkWriter;
    let test = test_db("counter-model").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("counter-model"));
    let ids = ["m0", "m1", "m2"];
    for id in ids {
        Post::collection(db).upsert(id, &post("ada")).await.unwrap();
    }
    // Each applied increment, by document; the model is their sum.
    let mut applied: Vec<(usize, Increment<Post>)> = Vec::new();
    let mut model = [0i64; 3];
    let writer = BulkWriter::new(db, sharded_tests::migration::unthrottled()).unwrap();
    let likes = Post::counters().likes;
    let resized = PostResized::counters().likes;
    for step in 0..40 {
        let doc = rng.random_range(0..ids.len());
        // An increment applied before (to its own document), or a new one.
        let (doc, increment, new) = if !applied.is_empty() && rng.random_bool(0.3) {
            let (doc, increment) = applied[rng.random_range(0..applied.len())].clone();
            (doc, increment, false)
        } else {
            let by = rng.random_range(-1_000..1_000);
            (doc, Increment::new(likes, by), true)
        };
        let id = ids[doc];
        let path = rng.random_range(0..6);
        let what = match path {
            0 => {
                Post::collection(db).apply(id, &increment).await.unwrap();
                "a single write"
            }
            1 => {
                let mut batch = AtomicBatch::new(db);
                batch.increment(id, &increment).unwrap();
                batch.commit().await.unwrap();
                "an atomic batch"
            }
            2 => {
                let increment = &increment;
                db.run_transaction(|db, transaction| {
                    let increment = increment.clone();
                    async move {
                        let mut posts = Post::collection(&db).in_transaction(transaction);
                        posts
                            .increment(id, &increment)
                            .await
                            .map_err(transaction_error)
                    }
                    .boxed()
                })
                .await
                .unwrap();
                "a transaction"
            }
            3 => {
                writer
                    .increment(id, &increment)
                    .await
                    .unwrap()
                    .await
                    .unwrap();
                "the bulk writer"
            }
            4 => {
                // The same increment under the resized declaration: its id and amount.
                let again = Increment::with_id(resized, increment.by(), increment.id()).unwrap();
                PostResized::collection(db).apply(id, &again).await.unwrap();
                "a single write, resized"
            }
            _ => {
                PostResized::collection(db)
                    .merge_undeclared_shards(id, resized)
                    .await
                    .unwrap();
                Post::collection(db).fold(id, likes).await.unwrap();
                "a merge and a fold"
            }
        };
        if path < 5 && new {
            model[doc] += increment.by();
            applied.push((doc, increment));
        }
        let posts = Post::collection(db);
        let context = format!("step {step}: {what}, {}", if new { "new" } else { "again" });
        assert_eq!(
            posts.counters(ids, likes).await.unwrap(),
            model.to_vec(),
            "{context}"
        );
        assert_eq!(
            posts.counter(id, likes).await.unwrap(),
            model[doc],
            "{context}"
        );
        let inside = db
            .run_transaction(|db, transaction| {
                async move {
                    let posts = Post::collection(&db).in_transaction(transaction);
                    posts.counter(id, likes).await.map_err(transaction_error)
                }
                .boxed()
            })
            .await
            .unwrap();
        assert_eq!(inside, model[doc], "{context}: inside a transaction");
    }
    writer.close().await.unwrap();
}

/// A counter kept folded: while 3 tasks increment, the stream folds at most once a period,
/// each fold the counter's value at its commit (a read pinned there sums to it, and the
/// document holds it), and once increments stop a fold writes the total. A period without
/// increments makes no fold; dropping the stream stops it (a later increment leaves the field
/// as it was). A period under a second or over a day is refused, and a document that does not
/// exist ends the stream with the fold's error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counter_kept_folded_folds_at_most_once_a_period() {
    use futures::StreamExt;
    use sharded_runtime::firestore::FirestoreConsistencySelector;
    use std::time::Duration;
    let test = test_db("counter-keep-folded").await;
    let db = test.db.clone();
    let posts = Post::collection(&db);
    posts.upsert("k", &post("ada")).await.unwrap();
    let likes = Post::counters().likes;
    for every in [Duration::from_millis(500), Duration::MAX] {
        assert!(
            matches!(
                posts.keep_folded("k", likes, every),
                Err(Error::InvalidOptions {
                    option: "every",
                    ..
                })
            ),
            "{every:?}"
        );
    }
    let every = Duration::from_secs(1);
    let patience = Duration::from_secs(30);
    let mut folds = posts.keep_folded("k", likes, every).unwrap();
    let first = tokio::time::timeout(patience, folds.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.value, 0, "the first value is folded at once");

    // The writers run in tasks of their own while this one polls the stream, which folds
    // only as it is polled.
    let writers = tokio::spawn(futures::future::try_join_all((0..3i64).map(|task| {
        let db = db.clone();
        tokio::spawn(async move {
            let mut added = 0;
            for n in 0..15 {
                let by = task * 100 + n + 1;
                Post::collection(&db)
                    .increment("k", likes, by)
                    .await
                    .unwrap();
                added += by;
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            added
        })
    })));
    let started = std::time::Instant::now();
    let mut writers = Some(writers);
    let mut made = vec![first];
    let mut total: Option<i64> = None;
    loop {
        if let Ok(fold) = tokio::time::timeout(every * 2, folds.next()).await {
            made.push(fold.unwrap().unwrap());
        }
        if writers.as_ref().is_some_and(|w| w.is_finished()) {
            let added = writers.take().unwrap().await.unwrap().unwrap();
            total = Some(added.iter().sum());
        }
        if total.is_some_and(|total| made.last().unwrap().value == total) {
            break;
        }
        assert!(
            started.elapsed() < patience,
            "no fold reached {total:?}: {made:?}"
        );
    }
    let total = total.unwrap();
    assert!(made.len() >= 3, "folds while increments landed: {made:?}");
    for pair in made.windows(2) {
        let apart = pair[1].at.duration_since(pair[0].at).unwrap();
        assert!(
            apart + Duration::from_millis(200) >= every,
            "two folds {apart:?} apart: {made:?}"
        );
    }
    for fold in &made {
        let at = sharded_runtime::firestore::jiff::Timestamp::try_from(fold.at).unwrap();
        let then = db.clone_with_consistency_selector(FirestoreConsistencySelector::ReadTime(at));
        let there = Post::collection(&then);
        assert_eq!(there.counter("k", likes).await.unwrap(), fold.value);
        assert_eq!(there.get("k").await.unwrap().unwrap().likes, fold.value);
    }
    // Nothing changes: no fold.
    assert!(
        tokio::time::timeout(every * 2, folds.next()).await.is_err(),
        "a fold without a change"
    );
    // Dropped, it folds no more.
    drop(folds);
    posts.increment("k", likes, 1_000).await.unwrap();
    tokio::time::sleep(every * 2).await;
    assert_eq!(posts.get("k").await.unwrap().unwrap().likes, total);
    assert_eq!(posts.counter("k", likes).await.unwrap(), total + 1_000);

    // A document that does not exist: the fold's error, then the end.
    let mut absent = posts.keep_folded("absent", likes, every).unwrap();
    let error = tokio::time::timeout(patience, absent.next()).await.unwrap();
    assert!(matches!(error, Some(Err(_))), "{error:?}");
    assert!(absent.next().await.is_none());
    assert!(posts.get("absent").await.unwrap().is_none());
}

#[test]
fn a_counter_sized_inside_a_macro_keeps_its_size() {
    assert_eq!(CountedByMacro::counters().likes.shards(), 12);
    assert_eq!(CountedByMacro::counters().likes.path(), "likes");
    assert_eq!(
        CountedByMacro::DESCRIPTION.counter_fields,
        &[sharded_runtime::__private::Counter {
            field: "likes",
            shards: 12
        }]
    );
}
