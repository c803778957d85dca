//! `server_timestamp`: the order field filled by the server (Firestore's `REQUEST_TIME`
//! transform) on every write path, the value the server stored returned to single writes, and
//! queries over server-filled times (millisecond ties across shards) equal to the unsharded
//! query on the same documents, at 3, 40 and 61 shard values.

use std::time::{Duration, SystemTime};

use futures::FutureExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::bulk::BulkWriter;
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::{
    AtomicBatch, Sharded, ShardedQuery, WholeCollection,
    reads::query_id,
    writes::{OrderStamp, transaction_error},
};
use sharded_tests::equivalence::{Unsharded, check_query};
use sharded_tests::migration::unthrottled;
use sharded_tests::test_db;

macro_rules! event_type {
    ($name:ident, $collection:literal, $shards:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[serde(rename_all = "camelCase")]
        #[sharded(shards = $shards, order_by = "created_at", server_timestamp, collection = $collection)]
        struct $name {
            #[sharded(index)]
            room: String,
            text: String,
            created_at: FirestoreTimestamp,
        }

        impl Event for $name {
            fn new(room: &str, text: &str) -> Self {
                $name {
                    room: room.to_owned(),
                    text: text.to_owned(),
                    created_at: placeholder(),
                }
            }
            fn created_at(&self) -> SystemTime {
                self.created_at.0.into()
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

event_type!(Event3, "events3", 3);
event_type!(Event40, "events40", 40);
event_type!(Event61, "events61", 61);

/// A type whose server fills its order field, stored as `SystemTime`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "at",
    server_timestamp,
    collection = "system_time_events"
)]
struct AtSystemTime {
    #[sharded(index)]
    room: String,
    at: SystemTime,
}

trait Event:
    Sharded<OrderValue = FirestoreTimestamp>
    + sharded_runtime::bounds::TopLevel
    + Clone
    + PartialEq
    + std::fmt::Debug
{
    fn new(room: &str, text: &str) -> Self;
    fn created_at(&self) -> SystemTime;
    fn in_room(room: &str) -> ShardedQuery<Self, { query_id("room") }>;
    fn all() -> WholeCollection<Self>;
}

/// What the struct holds when written: never stored, since the server fills the field.
fn placeholder() -> FirestoreTimestamp {
    FirestoreTimestamp(sharded_runtime::firestore::jiff::Timestamp::from_second(1).unwrap())
}

/// Whether `at` is a time the server set during a write made between `before` and `after`
/// (one clock: the emulator runs on this machine; its times are whole milliseconds).
fn set_during(at: SystemTime, before: SystemTime, after: SystemTime) -> bool {
    let slack = Duration::from_secs(5);
    let nanos = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    nanos.is_multiple_of(1_000_000) && at + slack >= before && at <= after + slack
}

/// Measured on the emulator: the value `REQUEST_TIME` stores is the one a `Commit` answers with
/// as the transform's result, a whole millisecond, the same for every write of one commit, and
/// taken as the request arrived: up to tens of milliseconds before the commit time.
///
/// By default (`OrderStamp::OnCreate`) every path stamps a document when it creates it and
/// keeps the stored time when it replaces it; a batch, bulk or transaction `upsert`, which
/// cannot tell the two apart, is refused before anything is queued.
#[tokio::test]
async fn every_write_path_stamps_on_create_and_keeps_the_time_on_replace() {
    let test = test_db("server-timestamp").await;
    let db = &test.db;
    let events = Event3::collection(db);
    let before = SystemTime::now();

    let mut created = Vec::new();
    let inserted = events.insert(&Event3::new("a", "insert")).await.unwrap();
    created.push(inserted.clone());
    created.push(
        events
            .insert_with_id("with-id", &Event3::new("a", "insert_with_id"))
            .await
            .unwrap(),
    );
    // An upsert of a document that does not exist creates it, stamped.
    created.push(
        events
            .upsert("upsert", &Event3::new("a", "upsert"))
            .await
            .unwrap(),
    );
    for written in &created {
        let stored = events.get(&written.id).await.unwrap().unwrap();
        let returned = written.server_timestamp.expect("the stored time");
        assert_eq!(stored.created_at, returned, "{}", written.id);
        assert_ne!(stored.created_at, placeholder(), "{}", written.id);
        assert!(
            set_during(stored.created_at(), before, SystemTime::now()),
            "{stored:?}"
        );
        // The request's time, taken as it arrived: not after the commit's (the update time).
        assert!(stored.created_at() <= written.update_time, "{}", written.id);
    }
    assert_eq!(
        inserted.id.len(),
        20,
        "drawn as Firestore's clients draw ids"
    );

    // A replace keeps the stored time and writes every other field: `update`, and `upsert`
    // of a document that exists.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let kept = events.get("upsert").await.unwrap().unwrap();
    for (how, text) in [("update", "edited"), ("upsert", "edited again")] {
        let written = match how {
            "update" => events.update("upsert", &Event3::new("c", text)).await,
            _ => events.upsert("upsert", &Event3::new("c", text)).await,
        }
        .unwrap();
        assert_eq!(written.server_timestamp, None, "{how}");
        let stored = events.get_stored("upsert").await.unwrap().unwrap();
        assert_eq!(stored.document.created_at, kept.created_at, "{how}");
        assert_eq!(
            (stored.document.room.as_str(), stored.document.text.as_str()),
            ("c", text)
        );
        assert!(Event3::SHARD_VALUES.contains(&stored.shard.as_str()));
    }

    // update_fields: the order field in the mask takes the server's time; without it, the
    // stored time stays.
    let fields = Event3::fields();
    let kept = events.get("upsert").await.unwrap().unwrap();
    let masked = events
        .update_fields("upsert", &Event3::new("b", "moved"), &[fields.room])
        .await
        .unwrap();
    assert_eq!(masked.server_timestamp, None);
    let stored = events.get("upsert").await.unwrap().unwrap();
    assert_eq!(
        (stored.room.as_str(), &stored.created_at),
        ("b", &kept.created_at)
    );
    tokio::time::sleep(Duration::from_millis(5)).await;
    let refilled = events
        .update_fields("upsert", &Event3::new("b", "moved"), &[fields.created_at])
        .await
        .unwrap();
    let stored = events.get("upsert").await.unwrap().unwrap();
    assert_eq!(Some(stored.created_at), refilled.server_timestamp);
    assert!(stored.created_at() > kept.created_at());

    // The batch writer, the bulk writer, an atomic batch and a transaction: creates stamped,
    // replaces kept, upserts refused before anything is queued.
    let refused = |result: sharded_runtime::Result<()>, how: &str| match result {
        Err(sharded_runtime::Error::InvalidUpdate(message)) => {
            assert!(message.contains("OrderStamp"), "{how}: {message}")
        }
        other => panic!("{how}: {other:?}"),
    };
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    refused(
        events.upsert_in(&mut batch, "batch", &Event3::new("a", "batch")),
        "upsert_in",
    );
    Event3::collection(db)
        .order_stamp(OrderStamp::Always)
        .upsert_in(&mut batch, "batch", &Event3::new("a", "batch"))
        .unwrap();
    batch.write().await.unwrap();
    let bulk = BulkWriter::new(db, unthrottled()).unwrap();
    refused(
        bulk.upsert("bulk-upsert", &Event3::new("a", "bulk"))
            .await
            .map(drop),
        "bulk upsert",
    );
    let before_replace = events.get("with-id").await.unwrap().unwrap();
    let pending = [
        bulk.create("bulk-create", &Event3::new("a", "bulk"))
            .await
            .unwrap(),
        bulk.update("with-id", &Event3::new("a", "bulk"))
            .await
            .unwrap(),
    ];
    for pending in pending {
        pending.await.unwrap();
    }
    let (bulk_id, pending) = bulk.insert(&Event3::new("a", "bulk")).await.unwrap();
    pending.await.unwrap();
    bulk.close().await.unwrap();
    let replaced = events.get("with-id").await.unwrap().unwrap();
    assert_eq!(
        (replaced.created_at, replaced.text.as_str()),
        (before_replace.created_at, "bulk")
    );
    let mut atomic = AtomicBatch::new(db);
    refused(
        atomic
            .upsert("atomic-1", &Event3::new("a", "atomic"))
            .map(drop),
        "atomic upsert",
    );
    atomic
        .insert("atomic-1", &Event3::new("a", "atomic"))
        .unwrap();
    atomic
        .insert("atomic-2", &Event3::new("a", "atomic"))
        .unwrap();
    let commit_time = atomic.commit().await.unwrap();
    db.run_transaction(|db, transaction| {
        async move {
            let mut events = Event3::collection(&db).in_transaction(transaction);
            match events.upsert("transaction", &Event3::new("a", "transaction")) {
                Err(sharded_runtime::Error::InvalidUpdate(_)) => {}
                other => panic!("a transaction's upsert: {other:?}"),
            }
            events
                .insert("transaction", &Event3::new("a", "transaction"))
                .map_err(transaction_error)?;
            Ok::<_, sharded_runtime::writes::TransactionError>(())
        }
        .boxed()
    })
    .await
    .unwrap();
    let after = SystemTime::now();
    let ids = [
        "batch",
        "bulk-create",
        &bulk_id,
        "atomic-1",
        "atomic-2",
        "transaction",
    ];
    for id in ids {
        let stored = events.get_stored(id).await.unwrap().expect(id);
        assert!(
            set_during(stored.document.created_at(), before, after),
            "{id}: {stored:?}"
        );
        assert!(
            Event3::SHARD_VALUES.contains(&stored.shard.as_str()),
            "{id}"
        );
    }
    // One commit, one request time, not after the commit's.
    let atomic_1 = events.get("atomic-1").await.unwrap().unwrap().created_at;
    assert_eq!(
        atomic_1,
        events.get("atomic-2").await.unwrap().unwrap().created_at
    );
    assert!(SystemTime::from(atomic_1.0) <= commit_time);
    // A transaction's and an atomic batch's replace keep the time too.
    let kept = events.get("atomic-1").await.unwrap().unwrap();
    let mut atomic = AtomicBatch::new(db);
    atomic
        .update("atomic-1", &Event3::new("z", "atomic edit"))
        .unwrap();
    atomic.commit().await.unwrap();
    db.run_transaction(|db, transaction| {
        async move {
            Event3::collection(&db)
                .in_transaction(transaction)
                .update("transaction", &Event3::new("z", "transaction edit"))
                .map_err(transaction_error)?;
            Ok::<_, sharded_runtime::writes::TransactionError>(())
        }
        .boxed()
    })
    .await
    .unwrap();
    let edited = events.get("atomic-1").await.unwrap().unwrap();
    assert_eq!(
        (edited.created_at, edited.room.as_str()),
        (kept.created_at, "z")
    );
    let edited = events.get("transaction").await.unwrap().unwrap();
    assert_eq!(edited.room, "z");
    assert!(set_during(edited.created_at(), before, after));

    // Asked for, every whole write stamps: a replace moves the document to now.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let moved = Event3::collection(db)
        .order_stamp(OrderStamp::Always)
        .update("atomic-1", &Event3::new("z", "moved"))
        .await
        .unwrap();
    let stored = events.get("atomic-1").await.unwrap().unwrap();
    assert_eq!(Some(stored.created_at), moved.server_timestamp);
    assert!(stored.created_at() > kept.created_at());

    // An order field of another type the server can fill: `SystemTime`.
    let written = AtSystemTime::collection(db)
        .upsert(
            "s",
            &AtSystemTime {
                room: "a".into(),
                at: SystemTime::UNIX_EPOCH,
            },
        )
        .await
        .unwrap();
    let stored = AtSystemTime::collection(db)
        .get("s")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(Some(stored.at), written.server_timestamp);
    assert!(set_during(stored.at, before, SystemTime::now()));
}

/// An import writes each document's own time (`OrderStamp::FromDocument`): historical
/// orders keep when they were placed, through the bulk writer and single writes alike, with
/// no second type; and a query over them equals the unsharded one.
#[tokio::test]
async fn an_import_writes_each_documents_own_time() {
    let test = test_db("server-timestamp-import").await;
    let db = &test.db;
    let at = |n: i64| {
        FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(1_600_000_000 + n * 3_600)
                .unwrap(),
        )
    };
    let import =
        BulkWriter::new(db, unthrottled().with_order_stamp(OrderStamp::FromDocument)).unwrap();
    for n in 0..200i64 {
        let event = Event40 {
            room: ["a", "b"][n as usize % 2].into(),
            text: format!("order {n}"),
            created_at: at(n % 50),
        };
        // Upserts too: the document's own time needs no telling create from replace.
        // Each outcome reaches `close`.
        drop(import.upsert(&format!("o{n:03}"), &event).await.unwrap());
    }
    import.close().await.unwrap();
    let single = Event40::collection(db).order_stamp(OrderStamp::FromDocument);
    single
        .upsert(
            "o200",
            &Event40 {
                room: "a".into(),
                text: "late".into(),
                created_at: at(7),
            },
        )
        .await
        .unwrap();
    for n in [0i64, 49, 117, 199] {
        let stored = Event40::collection(db)
            .get(&format!("o{n:03}"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.created_at, at(n % 50), "o{n:03}");
    }
    assert_eq!(
        Event40::collection(db)
            .get("o200")
            .await
            .unwrap()
            .unwrap()
            .created_at,
        at(7)
    );
    let expected = Unsharded::default()
        .equal("room", "a")
        .ids::<Event40>(db, Event40::COLLECTION)
        .await;
    check_query(db, Event40::query().room("a"), expected, 9, "imported").await;
}

/// Pages walked while their documents are edited: with the stored time kept on replace, an
/// edit does not move a document, so the walk returns every document once, in order, and
/// equal to the unsharded walk after the edits. (Stamping every write moved each edited
/// document to the front of a newest-first feed: pages repeated or skipped them.)
#[tokio::test]
async fn edits_do_not_move_documents_between_pages() {
    let test = test_db("server-timestamp-edits").await;
    let db = &test.db;
    let seed = sharded_tests::seed("edits_do_not_move_documents_between_pages");
    let mut rng = StdRng::seed_from_u64(seed);
    for n in 0..60 {
        Event40::collection(db)
            .insert_with_id(&format!("m{n:02}"), &Event40::new("lobby", "hello"))
            .await
            .unwrap();
    }
    let query = Event40::query().room("lobby");
    let mut seen: Vec<String> = Vec::new();
    let mut after = None;
    loop {
        let page = query.clone().after(after).page(db, 7).await.unwrap();
        seen.extend(page.items.iter().map(|item| item.id.clone()));
        // Edit a few documents anywhere in the feed, as a chat's users edit messages.
        for _ in 0..3 {
            let id = format!("m{:02}", rng.random_range(0..60));
            Event40::collection(db)
                .update(&id, &Event40::new("lobby", "edited"))
                .await
                .unwrap();
        }
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    let expected = Unsharded::default()
        .equal("room", "lobby")
        .ids::<Event40>(db, Event40::COLLECTION)
        .await
        .unwrap();
    assert_eq!(seen, expected, "every message once, in the feed's order");
}

/// Many writers at once give many documents the same millisecond, in different shards: a
/// sharded query over server-filled times returns exactly the unsharded query on the same
/// documents, every page, in both cases of ties.
#[tokio::test]
async fn queries_over_server_times_equal_the_unsharded_query() {
    let test = test_db("server-timestamp-queries").await;
    let seed = sharded_tests::seed("queries_over_server_times_equal_the_unsharded_query");
    let mut rng = StdRng::seed_from_u64(seed);
    check_server_times::<Event3>(&test.db, &mut rng).await;
    check_server_times::<Event40>(&test.db, &mut rng).await;
    check_server_times::<Event61>(&test.db, &mut rng).await;
}

async fn check_server_times<T: Event>(db: &FirestoreDb, rng: &mut StdRng) {
    let rooms = ["lobby", "ops", "dev"];
    // Written in waves, alternately one atomic batch (every document at one request time)
    // and concurrent single writes (landing within a few milliseconds).
    let mut written: usize = 0;
    for wave in 0..6 {
        let size = rng.random_range(10..40);
        let events: Vec<(String, T)> = (0..size)
            .map(|i| {
                let room = rooms[rng.random_range(0..rooms.len())];
                let id = format!("w{wave}-{i:02}");
                let event = T::new(room, &id);
                (id, event)
            })
            .collect();
        written += events.len();
        if wave % 2 == 0 {
            // One commit: one request time for every document, whatever its shard.
            let mut batch = AtomicBatch::new(db);
            for (id, event) in &events {
                batch.insert(id, event).unwrap();
            }
            batch.commit().await.unwrap();
        } else {
            let writes = events.iter().map(|(id, event)| async move {
                T::collection(db).upsert(id, event).await.unwrap()
            });
            futures::future::join_all(writes).await;
        }
    }
    let stored = T::all().fetch_stored(db).await.unwrap();
    assert_eq!(stored.len(), written);
    let mut times: Vec<SystemTime> = stored.iter().map(|s| s.document.created_at()).collect();
    times.dedup();
    assert!(
        times.len() <= written - 9,
        "ties: each atomic wave shares one time"
    );
    for room in rooms {
        let limit = rng.random_range(1..15);
        let reference = Unsharded::default().equal("room", room);
        let expected = reference.ids::<T>(db, T::COLLECTION).await;
        let what = format!("{} room {room} limit {limit}", T::COLLECTION);
        check_query(db, T::in_room(room), expected, limit, &what).await;
    }
    let expected = Unsharded::default().ids::<T>(db, T::COLLECTION).await;
    let what = format!("{} all", T::COLLECTION);
    check_query(db, T::all(), expected, 7, &what).await;
}
