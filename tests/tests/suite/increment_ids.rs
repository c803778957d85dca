//! What an increment id covers, on the emulator, through every write path (alone, an atomic
//! batch, a transaction, the bulk writer): the id is bound to its counter and amount, so the
//! same id again with the same payload counts nothing more and succeeds, and with another
//! counter or amount is `IncrementConflict` with nothing written; a batch holding an increment
//! that another commit applied is refused whole, naming it (`IncrementAlreadyApplied`), and
//! its other writes then land when sent without it; an amount the counter's type cannot take
//! is refused before anything is sent; a shard at the end of Firestore's integers never
//! swallows an increment (`CounterSaturated`, undone, at both ends); a marker records its
//! increment and expires a lifetime after the server's time.

use futures::FutureExt as _;
use serde::{Deserialize, Serialize};
use sharded_emulator::fault_proxy::{FaultProxy, Faults, RequestFault};
use sharded_runtime::bulk::BulkWriter;
use sharded_runtime::counters::{
    INCREMENTS_COLLECTION, Increment, MARKER_AMOUNT_FIELD, MARKER_COMMIT_FIELD,
    MARKER_COUNTER_FIELD, MARKER_EXPIRY_FIELD, MARKER_LIFETIME, MARKER_SHARD_FIELD,
};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::value::ValueType;
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::writes::transaction_error;
use sharded_runtime::{AtomicBatch, Error, Sharded};
use sharded_tests::test_db;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", collection = "keyed_posts")]
struct Post {
    #[sharded(index)]
    author: String,
    #[sharded(counter(shards = 4))]
    likes: i64,
    #[sharded(counter(shards = 2))]
    stock: i32,
    #[sharded(counter(shards = 1))]
    visits: Option<u32>,
    at: FirestoreTimestamp,
}

/// One shard document each: an addition always lands on the same shard, to reach its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", collection = "saturated_posts")]
struct Edge {
    #[sharded(counter(shards = 1))]
    total: i64,
    at: FirestoreTimestamp,
}

fn post(author: &str) -> Post {
    Post {
        author: author.into(),
        likes: 0,
        stock: 0,
        visits: None,
        at: FirestoreTimestamp::now(),
    }
}

fn conflict(result: sharded_runtime::Result<impl std::fmt::Debug>) -> (String, String, String) {
    match result {
        Err(Error::IncrementConflict {
            increment,
            recorded,
            attempted,
            ..
        }) => (increment, recorded, attempted),
        other => panic!("expected IncrementConflict, got {other:?}"),
    }
}

/// The same id with another amount, or on another counter, is a conflict on every path; with
/// the same payload, a success that adds nothing. `was_applied` says which.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_increment_id_is_bound_to_its_counter_and_amount() {
    let test = test_db("increment-ids").await;
    let db = &test.db;
    let posts = Post::collection(db);
    let (likes, stock) = (Post::counters().likes, Post::counters().stock);
    let five = Increment::with_id(likes, 5, "r").unwrap();
    posts.apply("p", &five).await.unwrap();
    posts.apply("p", &five).await.unwrap();
    assert!(posts.was_applied("p", &five).await.unwrap());

    let seven = Increment::with_id(likes, 7, "r").unwrap();
    let elsewhere = Increment::with_id(stock, 5, "r").unwrap();
    for other in [&seven, &elsewhere] {
        let (id, recorded, attempted) = conflict(posts.apply("p", other).await);
        assert_eq!((id.as_str(), recorded.as_str()), ("r", "`likes` +5"));
        assert_eq!(
            attempted,
            format!("`{}` {:+}", other.field().path(), other.by())
        );
        conflict(posts.was_applied("p", other).await);
        // In an atomic batch: nothing of it lands.
        let mut batch = AtomicBatch::new(db);
        batch.upsert("p", &post("batched")).unwrap();
        batch.increment("p", other).unwrap();
        conflict(batch.commit().await);
        assert!(posts.get("p").await.unwrap().is_none(), "the batch wrote");
        // In a transaction: refused as it is queued.
        let other = other.clone();
        let refused = db
            .run_transaction(move |db, transaction| {
                let other = other.clone();
                async move {
                    let mut posts = Post::collection(&db).in_transaction(transaction);
                    posts
                        .upsert("p", &post("transaction"))
                        .map_err(transaction_error)?;
                    posts
                        .increment("p", &other)
                        .await
                        .map_err(transaction_error)
                }
                .boxed()
            })
            .await;
        assert!(
            format!("{refused:?}").contains("IncrementConflict"),
            "{refused:?}"
        );
        assert!(
            posts.get("p").await.unwrap().is_none(),
            "the transaction wrote"
        );
    }
    // Through the bulk writer: the write fails, naming both.
    let writer = BulkWriter::new(db, sharded_tests::migration::unthrottled()).unwrap();
    let failure = writer
        .increment("p", &seven)
        .await
        .unwrap()
        .await
        .unwrap_err();
    assert!(
        failure.message.contains("`likes` +5") && failure.message.contains("`likes` +7"),
        "{failure}"
    );
    assert!(writer.increment("p", &five).await.unwrap().await.is_ok());
    writer.close().await.unwrap();

    assert_eq!(posts.counter("p", likes).await.unwrap(), 5);
    assert_eq!(
        posts.counter("p", stock).await.unwrap(),
        0,
        "stock stayed 0"
    );
    // The same id on another document is another increment.
    posts.apply("q", &seven).await.unwrap();
    assert_eq!(posts.counter("q", likes).await.unwrap(), 7);
}

/// The issue's batch: an increment applied alone, then sent again in a new batch beside a new
/// increment and an insert. The batch is refused whole, naming the old increment, in either
/// order, and nothing of it lands; sent without it, the rest lands. The very batch built
/// again, and an increment queued twice in one batch, are the other cases.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_holding_an_increment_applied_elsewhere_loses_nothing() {
    let test = test_db("increment-batches").await;
    let db = &test.db;
    let posts = Post::collection(db);
    let likes = Post::counters().likes;
    let old = Increment::new(likes, 1);
    posts.apply("p", &old).await.unwrap();
    let new = Increment::new(likes, 100);
    for old_first in [true, false] {
        let mut batch = AtomicBatch::new(db);
        if old_first {
            batch.increment("p", &old).unwrap();
        }
        batch.increment("p", &new).unwrap();
        batch.insert("n", &post("inserted")).unwrap();
        if !old_first {
            batch.increment("p", &old).unwrap();
        }
        match batch.commit().await {
            Err(Error::IncrementAlreadyApplied { increment, .. }) => {
                assert_eq!(increment, old.id(), "old first: {old_first}")
            }
            other => panic!("old first: {old_first}: {other:?}"),
        }
        assert_eq!(posts.counter("p", likes).await.unwrap(), 1);
        assert!(posts.get("n").await.unwrap().is_none());
        assert!(!posts.was_applied("p", &new).await.unwrap());
    }
    // The rest, without the old increment.
    let mut rest = AtomicBatch::new(db);
    rest.increment("p", &new).unwrap();
    rest.insert("n", &post("inserted")).unwrap();
    let landed = rest.commit().await.unwrap();
    assert_eq!(posts.counter("p", likes).await.unwrap(), 101);
    assert_eq!(posts.get("n").await.unwrap().unwrap().author, "inserted");

    // The same batch built again (a caller's retry after IncrementUnsettled): it landed, so
    // it answers with the time it did, and nothing applies twice.
    let mut again = AtomicBatch::new(db);
    again.increment("p", &new).unwrap();
    let inserted = posts.get("n").await.unwrap().unwrap();
    again.insert("n", &inserted).unwrap();
    assert_eq!(again.commit().await.unwrap(), landed);
    assert_eq!(posts.counter("p", likes).await.unwrap(), 101);

    // One id twice in one batch is refused as it is queued.
    let mut twice = AtomicBatch::new(db);
    twice
        .increment("p", &Increment::with_id(likes, 1, "x").unwrap())
        .unwrap();
    assert!(matches!(
        twice.increment("p", &Increment::with_id(likes, 1, "x").unwrap()),
        Err(Error::InvalidUpdate(_))
    ));
    assert_eq!(twice.len(), 2);
}

/// An amount the counter's Rust type cannot take as a change is refused before anything is
/// sent: `i32::MAX + 1` on an `i32`, `u32::MAX + 1` on a `u32` (which takes a decrement),
/// `i64::MIN` on an `i64`. An amount of 0 takes its id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_amount_the_counters_type_cannot_take_is_refused() {
    let test = test_db("increment-amounts").await;
    let posts = Post::collection(&test.db);
    let counters = Post::counters();
    let db = &test.db;
    let refused = |result: sharded_runtime::Result<()>| matches!(result, Err(Error::InvalidUpdate(message)) if message.contains("cannot fit"));
    let writer = BulkWriter::new(db, sharded_tests::migration::unthrottled()).unwrap();
    for (field, by) in [
        (counters.stock, i64::from(i32::MAX) + 1),
        (counters.stock, i64::from(i32::MIN)),
        (counters.visits, i64::from(u32::MAX) + 1),
        (counters.likes, i64::MIN),
    ] {
        let past = Increment::new(field, by);
        // Every path refuses it before sending: alone, in a batch, in a transaction, in bulk.
        assert!(refused(posts.apply("p", &past).await), "{by}");
        assert!(refused(posts.increment("p", field, by).await), "{by}");
        let mut batch = AtomicBatch::new(db);
        assert!(refused(batch.increment("p", &past).map(drop)), "{by}");
        assert!(batch.is_empty());
        let in_transaction = db
            .run_transaction(|db, transaction| {
                let past = past.clone();
                async move {
                    let mut posts = Post::collection(&db).in_transaction(transaction);
                    posts.increment("p", &past).await.map_err(transaction_error)
                }
                .boxed()
            })
            .await;
        assert!(
            format!("{in_transaction:?}").contains("cannot fit"),
            "{in_transaction:?}"
        );
        assert!(
            refused(writer.increment("p", &past).await.map(drop)),
            "{by}"
        );
        assert!(matches!(
            Increment::with_id(field, by, "w"),
            Err(Error::InvalidUpdate(_))
        ));
    }
    writer.close().await.unwrap();
    posts
        .increment("p", counters.stock, i64::from(i32::MAX))
        .await
        .unwrap();
    posts.increment("p", counters.visits, 3).await.unwrap();
    posts.increment("p", counters.visits, -2).await.unwrap();
    posts
        .increment("p", counters.likes, -i64::MAX)
        .await
        .unwrap();
    assert_eq!(
        posts.counter("p", counters.stock).await.unwrap(),
        i64::from(i32::MAX)
    );
    assert_eq!(posts.counter("p", counters.visits).await.unwrap(), 1);
    let zero = Increment::with_id(counters.likes, 0, "z").unwrap();
    posts.apply("p", &zero).await.unwrap();
    assert!(posts.was_applied("p", &zero).await.unwrap());
    conflict(
        posts
            .apply("p", &Increment::with_id(counters.likes, 1, "z").unwrap())
            .await,
    );
}

/// Firestore's `increment` stops at `i64::MAX` and `i64::MIN` without an error. An increment
/// it cut is undone and reported on every path, at both ends: the value stays what it was, the
/// increment is not applied (its marker gone), and reaching an end exactly is no cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saturated_shard_never_swallows_an_increment() {
    let test = test_db("increment-saturation").await;
    let db = &test.db;
    let edges = Edge::collection(db);
    let total = Edge::counters().total;
    for (id, end, toward) in [("top", i64::MAX, 1), ("bottom", i64::MIN, -1)] {
        // To the end exactly: no cut.
        edges.increment(id, total, end - toward).await.unwrap();
        edges.increment(id, total, toward).await.unwrap();
        assert_eq!(edges.counter(id, total).await.unwrap(), end, "{id}");
        // Alone.
        let past = Increment::new(total, toward * 7);
        saturated(edges.apply(id, &past).await);
        assert!(!edges.was_applied(id, &past).await.unwrap(), "{id}");
        // In an atomic batch: undone, the batch's other write landed.
        saturated(beside_an_upsert(db, id, &past).await);
        assert!(edges.get(id).await.unwrap().is_some(), "{id}: the upsert");
        // In a transaction: refused before it is queued.
        let refused = db
            .run_transaction(|db, transaction| {
                async move {
                    let mut edges = Edge::collection(&db).in_transaction(transaction);
                    let past = Increment::new(total, toward);
                    edges.increment(id, &past).await.map_err(transaction_error)
                }
                .boxed()
            })
            .await;
        assert!(
            format!("{refused:?}").contains("CounterSaturated"),
            "{refused:?}"
        );
        // Through the bulk writer: the write fails, applied nothing.
        let writer = BulkWriter::new(db, sharded_tests::migration::unthrottled()).unwrap();
        let failure = writer
            .increment(id, &past)
            .await
            .unwrap()
            .await
            .unwrap_err();
        assert!(failure.message.contains("undone"), "{failure}");
        assert!(
            !failure.maybe_applied,
            "undone, it applied nothing: {failure}"
        );
        writer.close().await.ok();
        assert_eq!(edges.counter(id, total).await.unwrap(), end, "{id}");
        assert!(!edges.was_applied(id, &past).await.unwrap(), "{id}");
        // Back from the end, an increment lands again.
        edges.increment(id, total, -toward).await.unwrap();
        assert_eq!(edges.counter(id, total).await.unwrap(), end - toward);
    }
}

/// The answer of a commit that Firestore cut is lost (a proxy lets the request through and
/// drops its answer), so the next attempt is refused for the marker and learns from it that
/// the commit landed: the cut is still found (from the shard's value before the commit),
/// undone and reported, alone, in an atomic batch and through the bulk writer (which says it
/// applied nothing), at both ends. Before, it was reported a success, the cut part counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_increment_whose_answer_was_lost_is_undone_all_the_same() {
    let test = test_db("increment-saturation-lost").await;
    let (proxy, via) = through_a_proxy(&test).await;
    let edges = Edge::collection(&test.db);
    let total = Edge::counters().total;
    for (id, end, toward) in [("top", i64::MAX, 1), ("bottom", i64::MIN, -1)] {
        let short = end - 2 * toward;
        edges.increment(id, total, short).await.unwrap();
        let lost = |path: &str| {
            let past = Increment::with_id(total, 7 * toward, &format!("{path}-{id}")).unwrap();
            proxy.aim(past.id(), 0, 1, RequestFault::AnswerLost);
            past
        };
        let dropped_before = proxy.dropped();
        // Alone.
        let past = lost("alone");
        saturated(Edge::collection(&via).apply(id, &past).await);
        assert!(!edges.was_applied(id, &past).await.unwrap(), "{id}");
        assert_eq!(edges.counter(id, total).await.unwrap(), short, "{id}");
        // In an atomic batch beside an upsert, which lands.
        let past = lost("batch");
        saturated(beside_an_upsert(&via, id, &past).await);
        assert!(!edges.was_applied(id, &past).await.unwrap(), "{id}");
        assert!(edges.get(id).await.unwrap().is_some(), "{id}: the upsert");
        assert_eq!(edges.counter(id, total).await.unwrap(), short, "{id}");
        // Through the bulk writer.
        let past = lost("bulk");
        let writer = BulkWriter::new(&via, sharded_tests::migration::unthrottled()).unwrap();
        let failure = writer
            .increment(id, &past)
            .await
            .unwrap()
            .await
            .unwrap_err();
        writer.close().await.ok();
        assert!(failure.message.contains("undone"), "{failure}");
        assert!(
            !failure.maybe_applied,
            "undone, it applied nothing: {failure}"
        );
        assert!(!edges.was_applied(id, &past).await.unwrap(), "{id}");
        assert_eq!(edges.counter(id, total).await.unwrap(), short, "{id}");
        assert_eq!(proxy.dropped() - dropped_before, 3, "each answer was lost");
    }
}

/// An undo that fails (the proxy lets the commit through, then drops every request of its
/// undo) is `CounterUndoFailed`, naming the increment and what stays of it; the marker stays,
/// so `was_applied` says so, and applying the same increment again undoes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_undo_is_reported_and_undone_when_applied_again() {
    let test = test_db("increment-undo-failed").await;
    let (proxy, via) = through_a_proxy(&test).await;
    let edges = Edge::collection(&test.db);
    let total = Edge::counters().total;
    edges.increment("e", total, i64::MAX - 2).await.unwrap();
    let past = Increment::with_id(total, 7, "undo-fails").unwrap();
    proxy.aim(past.id(), 1, u32::MAX, RequestFault::Dropped);
    match Edge::collection(&via).apply("e", &past).await {
        Err(Error::CounterUndoFailed {
            increment,
            field,
            shard,
            added,
            ..
        }) => assert_eq!(
            (increment.as_str(), field.as_str(), shard, added),
            ("undo-fails", "total", 0, 2)
        ),
        other => panic!("expected CounterUndoFailed, got {other:?}"),
    }
    assert!(proxy.dropped() > 0);
    assert!(edges.was_applied("e", &past).await.unwrap());
    assert_eq!(edges.counter("e", total).await.unwrap(), i64::MAX);
    saturated(edges.apply("e", &past).await);
    assert!(!edges.was_applied("e", &past).await.unwrap());
    assert_eq!(edges.counter("e", total).await.unwrap(), i64::MAX - 2);
}

/// A proxy to `test`'s emulator, forwarding faithfully until a fault is aimed, and a client
/// through it that has read the server's clock (an increment reads it once per client,
/// before its first commit), so that the requests a test aims at are its increments'.
async fn through_a_proxy(test: &sharded_tests::TestDb) -> (FaultProxy, FirestoreDb) {
    let proxy = FaultProxy::start(test.emulator.host(), Faults::NONE)
        .await
        .unwrap();
    let via = sharded_tests::same_project_via(&test.db, &proxy.host()).await;
    Edge::collection(&via)
        .increment("warm", Edge::counters().total, 1)
        .await
        .unwrap();
    (proxy, via)
}

/// Commits `increment` to `id` in an atomic batch beside an upsert of the document.
async fn beside_an_upsert(
    db: &FirestoreDb,
    id: &str,
    increment: &Increment<Edge>,
) -> sharded_runtime::Result<()> {
    let mut batch = AtomicBatch::new(db);
    batch.upsert(
        id,
        &Edge {
            total: 0,
            at: FirestoreTimestamp::now(),
        },
    )?;
    batch.increment(id, increment)?;
    batch.commit().await.map(drop)
}

/// `CounterSaturated` on the one-shard counter `total`.
fn saturated(result: sharded_runtime::Result<()>) {
    match result {
        Err(Error::CounterSaturated { field, shard, .. }) => {
            assert_eq!((field.as_str(), shard), ("total", 0))
        }
        other => panic!("expected CounterSaturated, got {other:?}"),
    }
}

/// A marker records its increment (counter, shard, amount, the commit's digest) and expires
/// `MARKER_LIFETIME` after its creation as the server timed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_marker_records_its_increment_and_expires_a_lifetime_after_the_server_time() {
    let test = test_db("increment-marker").await;
    let db = &test.db;
    let increment = Increment::with_id(Post::counters().likes, -3, "m").unwrap();
    Post::collection(db).apply("p", &increment).await.unwrap();
    let marker = marker(db, "p", "m").await;
    let text = |field: &str| match &marker.fields[field].value_type {
        Some(ValueType::StringValue(s)) => s.clone(),
        other => panic!("{field}: {other:?}"),
    };
    assert_eq!(text(MARKER_COUNTER_FIELD), "likes");
    let shard: u32 = text(MARKER_SHARD_FIELD).parse().unwrap();
    assert!(shard < 4);
    assert_eq!(text(MARKER_COMMIT_FIELD).len(), 64);
    assert!(matches!(
        marker.fields[MARKER_AMOUNT_FIELD].value_type,
        Some(ValueType::IntegerValue(-3))
    ));
    let Some(ValueType::TimestampValue(expire_at)) = &marker.fields[MARKER_EXPIRY_FIELD].value_type
    else {
        panic!("{marker:?}")
    };
    let created = marker.create_time.unwrap();
    let lifetime = expire_at.seconds - created.seconds;
    let wanted = MARKER_LIFETIME.as_secs() as i64;
    assert!(
        (wanted - 5..=wanted + 5).contains(&lifetime),
        "expires {lifetime} s after its creation"
    );
}

async fn marker(
    db: &FirestoreDb,
    id: &str,
    increment: &str,
) -> sharded_runtime::firestore::FirestoreDocument {
    let parent = format!("{}/keyed_posts/{id}", db.get_documents_path());
    db.fluent()
        .select()
        .by_id_in(INCREMENTS_COLLECTION)
        .parent(parent.as_str())
        .one(increment)
        .await
        .unwrap()
        .expect("the marker")
}
