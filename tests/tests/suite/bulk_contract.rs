//! The bulk writer's contract (Google's BulkWriter's), each clause proven on the emulator
//! through a proxy that drops connections before and after the server applies a request:
//! writes to one document apply in the order queued, every outcome reaches the caller and
//! is true, a write that landed is never reported failed, `flush` waits only for what came
//! before it, and dropping the writer stops it.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_emulator::fault_proxy::{FaultProxy, Faults};
use sharded_runtime::bulk::{
    Backoff, BulkWriter, BulkWriterOptions, PendingWrite, Throttling, WriteFailure,
};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::writes::StatusCode as Code;
use sharded_runtime::{Error, Parent, Sharded};
use sharded_tests::migration::fast_retries;
use sharded_tests::models::{Instrument, Price};
use sharded_tests::{TestDb, all_documents, id_of, same_project_via, test_db};

fn instrument(n: u64) -> Instrument {
    Instrument {
        symbol: format!("S{n}"),
        price: Price {
            currency: "USD".into(),
            micros: n as i64,
        },
        exchange: format!("EX{}", n % 4),
        instrument_type: "commonstock".into(),
        timestamp: sharded_examples::at("2026-11-23T08:00:00Z"),
    }
}

/// A subcollection type: its writes go to `rooms/{room}/notes/{id}`, with ids the top-level
/// documents use too, so order is kept per full document name, not per id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", parent = "rooms", collection = "notes")]
struct Note {
    n: u64,
    at: i64,
}

/// Where a scripted document lives: the top-level `Instrument` collection, or a room's notes.
#[derive(Debug, Clone)]
struct Place {
    room: Option<Parent<Note>>,
    id: String,
}

impl Place {
    /// The document's path below the database root.
    fn path(&self) -> String {
        match &self.room {
            Some(room) => format!("{}/notes/{}", room.path(), self.id),
            None => format!("{}/{}", Instrument::COLLECTION, self.id),
        }
    }
}

async fn proxied(test: &TestDb, faults: Faults) -> (FaultProxy, FirestoreDb) {
    let proxy = FaultProxy::start(test.emulator.host(), faults)
        .await
        .unwrap();
    let db = same_project_via(&test.db, &proxy.host()).await;
    (proxy, db)
}

fn writer(db: &FirestoreDb) -> BulkWriter {
    BulkWriter::new(
        db,
        BulkWriterOptions::default()
            .with_throttling(Throttling::Off)
            .with_backoff(fast_retries()),
    )
    .unwrap()
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Upsert(u64),
    Update(u64),
    Create(u64),
    Delete,
}

/// What `op` does to a document that holds `state` when it runs alone, in order: its
/// outcome (`None` for success) and the document after it.
fn model(op: Op, state: Option<u64>) -> (Option<Code>, Option<u64>) {
    match op {
        Op::Upsert(n) => (None, Some(n)),
        Op::Update(n) if state.is_some() => (None, Some(n)),
        Op::Update(_) => (Some(Code::NotFound), state),
        Op::Create(n) if state.is_none() => (None, Some(n)),
        Op::Create(_) => (Some(Code::AlreadyExists), state),
        Op::Delete => (None, None),
    }
}

async fn queue(writer: &BulkWriter, place: &Place, op: Op) -> PendingWrite {
    let id = place.id.as_str();
    if let Some(room) = &place.room {
        let notes = writer.in_parent(room);
        let note = |n| Note { n, at: n as i64 };
        return match op {
            Op::Upsert(n) => notes.upsert(id, &note(n)).await,
            Op::Update(n) => notes.update(id, &note(n)).await,
            Op::Create(n) => notes.create(id, &note(n)).await,
            Op::Delete => notes.delete(id).await,
        }
        .unwrap();
    }
    match op {
        Op::Upsert(n) => writer.upsert(id, &instrument(n)).await,
        Op::Update(n) => writer.update(id, &instrument(n)).await,
        Op::Create(n) => writer.create(id, &instrument(n)).await,
        Op::Delete => writer.delete::<Instrument>(id).await,
    }
    .unwrap()
}

/// The property the issue asks for: many documents, each written a random sequence of
/// upserts, updates, deletes and creates, all interleaved, through a proxy that loses
/// requests and answers. Afterwards every document is what its writes, run one after the
/// other in the order queued, leave; and every outcome the caller received is the one that
/// order gives. A third of the documents are top-level, the rest under two parents, with
/// the same ids in all three places.
#[tokio::test]
async fn writes_to_each_document_apply_in_the_order_queued_and_every_outcome_is_true() {
    // A document's next write waits out a lost request's deadline: a short request timeout
    // keeps the test short.
    let options = BulkWriterOptions::default()
        .with_throttling(Throttling::Off)
        .with_backoff(Backoff {
            initial: Duration::from_millis(250),
            ..fast_retries()
        })
        .with_request_timeout(Duration::from_secs(4));
    order_and_outcomes_hold(&[1, 2, 3], options).await;
}

/// The same with a first retry wait (20 ms) far shorter than a lost request may linger on
/// the server (applied up to 4.6 s after later writes to its document, measured with a 50 ms
/// wait): the document's next write waits out the lost request's deadline instead, so the
/// order does not rest on the backoff. A short request timeout keeps those waits short.
#[tokio::test]
async fn the_order_per_document_does_not_rest_on_the_retry_wait() {
    let options = BulkWriterOptions::default()
        .with_throttling(Throttling::Off)
        .with_backoff(fast_retries())
        .with_request_timeout(Duration::from_secs(4));
    order_and_outcomes_hold(&[4, 5, 6], options).await;
}

/// Each of `seeds` a run of the scripted writes through a faulty proxy, with `options`; then
/// further seeds while the proxy has dropped nothing or no write was retried. The proxy draws
/// a fault per chunk of bytes, and a loaded machine coalesces a run's requests into few chunks
/// (a CI run drew no drop in three seeds): the property is checked on every seed run, and
/// the faults it must hold under are made to happen rather than assumed.
async fn order_and_outcomes_hold(seeds: &[u64], options: BulkWriterOptions) {
    const MORE_SEEDS: u64 = 8;
    let (mut retried_in_all, mut read_back_in_all, mut dropped_in_all) = (0, 0, 0);
    let last = seeds.iter().max().copied().unwrap_or(0);
    let mut extra = (last + 1..=last + MORE_SEEDS).map(|seed| seed * 1_000);
    let mut listed = seeds.iter().copied();
    loop {
        let seed = match listed.next() {
            Some(seed) => seed,
            None if dropped_in_all == 0 || retried_in_all == 0 => match extra.next() {
                Some(seed) => seed,
                None => break,
            },
            None => break,
        };
        let test = test_db("bulk-order").await;
        let (proxy, db) = proxied(
            &test,
            Faults {
                seed,
                drop_chance: 0.02,
                lost_answer_chance: 0.05,
                delay_chance: 0.05,
                max_delay: Duration::from_millis(5),
                ..Faults::NONE
            },
        )
        .await;
        let mut rng = StdRng::seed_from_u64(seed);
        let rooms = ["a", "b"].map(|room| Parent::<Note>::new(&[room]).unwrap());
        let ids: Vec<Place> = (0..240)
            .map(|k| Place {
                room: (k % 3 > 0).then(|| rooms[k % 3 - 1].clone()),
                id: format!("d{seed}-{:03}", k / 3),
            })
            .collect();
        let mut script: Vec<(usize, Op)> = Vec::new();
        let mut n = 0;
        for (k, _) in ids.iter().enumerate() {
            for _ in 0..rng.random_range(1..=6) {
                n += 1;
                let op = match rng.random_range(0..4) {
                    0 => Op::Upsert(n),
                    1 => Op::Update(n),
                    2 => Op::Create(n),
                    _ => Op::Delete,
                };
                script.push((k, op));
            }
        }
        // Interleaved at random, each document's writes keeping their order.
        let mut by_document: Vec<VecDeque<Op>> = vec![Default::default(); ids.len()];
        for (k, op) in script {
            by_document[k].push_back(op);
        }
        let writer = BulkWriter::new(&db, options.clone()).unwrap();
        // A subcollection type's write without its parent does not compile
        // (ui/bulk_write_of_a_subcollection_type.rs).
        let mut pending = Vec::new();
        loop {
            let left: Vec<usize> = (0..ids.len())
                .filter(|&k| !by_document[k].is_empty())
                .collect();
            if left.is_empty() {
                break;
            }
            let k = left[rng.random_range(0..left.len())];
            let op = by_document[k].pop_front().unwrap();
            pending.push((k, op, queue(&writer, &ids[k], op).await));
        }
        // The handles are held but not yet awaited: `flush` reports their failures too (and
        // `close` any it did not). Read after the flush, when every write has its outcome, the
        // stats count every retry, also those still in flight when the last write was queued.
        let failures_of = |result: Result<_, Error>| match result {
            Ok(_) => 0,
            Err(Error::BulkWrite { failures }) => failures.len(),
            Err(other) => panic!("seed {seed}: {other}"),
        };
        let mut reported = failures_of(writer.flush().await);
        retried_in_all += writer.stats().retried;
        read_back_in_all += writer.stats().read_back;
        reported += failures_of(writer.close().await);
        dropped_in_all += proxy.dropped();

        let mut state: Vec<Option<u64>> = vec![None; ids.len()];
        let mut mismatches = Vec::new();
        let mut failed = 0;
        for (k, op, write) in pending {
            let (expected, after) = model(op, state[k]);
            let outcome = write.await;
            let got = outcome.as_ref().err().map(|failure| failure.code);
            failed += usize::from(got.is_some());
            if got != expected {
                mismatches.push(format!(
                    "{} {op:?}: expected {expected:?}, got {outcome:?}",
                    ids[k].path()
                ));
            }
            state[k] = after;
        }
        assert!(
            mismatches.is_empty(),
            "seed {seed}: {} outcomes untrue: {mismatches:#?}",
            mismatches.len()
        );
        assert_eq!(
            reported, failed,
            "seed {seed}: close reported another set of failures"
        );

        // What each place holds: the number its last applied write carried.
        let mut stored: HashMap<String, u64> = HashMap::new();
        for document in all_documents(&test.db, Instrument::COLLECTION).await {
            let instrument: Instrument = FirestoreDb::deserialize_doc_to(&document).unwrap();
            assert_eq!(instrument, self::instrument(instrument.price.micros as u64));
            let path = format!("{}/{}", Instrument::COLLECTION, id_of(&document));
            stored.insert(path, instrument.price.micros as u64);
        }
        let notes = test.db.fluent().select().from("notes").all_descendants();
        for document in notes.query().await.unwrap() {
            let note: Note = FirestoreDb::deserialize_doc_to(&document).unwrap();
            let path = document
                .name
                .split_once("/documents/")
                .unwrap()
                .1
                .to_owned();
            stored.insert(path, note.n);
        }
        assert!(stored.keys().any(|path| path.starts_with("rooms/")));
        let wrong: Vec<String> = ids
            .iter()
            .zip(&state)
            .filter(|(place, expected)| stored.get(&place.path()) != expected.as_ref())
            .map(|(place, expected)| {
                let path = place.path();
                format!(
                    "{path}: expected {expected:?}, stored {:?}",
                    stored.get(&path)
                )
            })
            .collect();
        assert!(
            wrong.is_empty(),
            "seed {seed}: {} documents wrong: {wrong:#?}",
            wrong.len()
        );
    }
    assert!(dropped_in_all > 0, "the proxy dropped nothing");
    assert!(retried_in_all > 0, "no write was retried");
    eprintln!("retried {retried_in_all}, settled by reading back {read_back_in_all}");
}

/// A `create` whose answer is lost after the server applied it is retried, meets
/// ALREADY_EXISTS from itself, and is reported as the success it was. Rounds of creates go
/// until some answer was lost that way (how bytes chunk decides which answers the proxy
/// drops), every outcome checked in each.
#[tokio::test]
async fn a_create_that_landed_is_never_reported_failed() {
    let test = test_db("bulk-create-lost").await;
    let (proxy, db) = proxied(
        &test,
        Faults {
            seed: 5,
            lost_answer_chance: 0.2,
            ..Faults::NONE
        },
    )
    .await;
    let writer = writer(&db);
    let mut n = 0;
    for _round in 0..20 {
        let mut pending = Vec::new();
        for _ in 0..50 {
            n += 1;
            let (id, write) = writer.insert(&instrument(n)).await.unwrap();
            pending.push((id, n, write));
            let id = format!("c{n:04}");
            let create = writer.create(&id, &instrument(n)).await.unwrap();
            pending.push((id, n, create));
        }
        writer.flush().await.expect("no create failed");
        for (id, n, write) in pending {
            let outcome = write
                .await
                .unwrap_or_else(|failure| panic!("{id}: {failure}"));
            assert!(outcome.update_time.is_some());
            let stored = Instrument::collection(&test.db).get(&id).await.unwrap();
            assert_eq!(stored, Some(instrument(n)));
        }
        if writer.stats().read_back > 0 {
            break;
        }
    }
    let stats = writer.close().await.unwrap();
    assert!(proxy.dropped() > 0, "no answer was lost");
    assert!(
        stats.read_back > 0,
        "no create met ALREADY_EXISTS from its own first attempt in 20 rounds"
    );
}

/// Failures reach the caller however the handles are used: awaited, dropped before `close`,
/// or kept past `close` and dropped unawaited.
#[tokio::test]
async fn no_failure_is_lost_whatever_becomes_of_its_handle() {
    let test = test_db("bulk-claims").await;
    let writer = writer(&test.db);
    writer
        .create("taken", &instrument(0))
        .await
        .unwrap()
        .await
        .unwrap();

    // Kept past `close`, never awaited: `close` reports it.
    let kept = writer.create("taken", &instrument(1)).await.unwrap();
    let fine = writer.upsert("free", &instrument(2)).await.unwrap();
    let failures = match writer.close().await {
        Err(Error::BulkWrite { failures }) => failures,
        other => panic!("close reported nothing: {other:?}"),
    };
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].code, Code::AlreadyExists);
    assert!(failures[0].document.ends_with("/taken"));
    assert!(!failures[0].maybe_applied);
    // Awaiting it afterwards still gives it.
    assert_eq!(kept.await.unwrap_err().code, Code::AlreadyExists);
    fine.await.unwrap();

    // Awaited: reported there, and not again.
    let writer = self::writer(&test.db);
    let failure = writer
        .create("taken", &instrument(3))
        .await
        .unwrap()
        .await
        .unwrap_err();
    assert_eq!(failure.code, Code::AlreadyExists);
    // Dropped: the next flush reports it, once.
    drop(writer.create("taken", &instrument(4)).await.unwrap());
    match writer.flush().await {
        Err(Error::BulkWrite { failures }) => assert_eq!(failures.len(), 1),
        other => panic!("flush reported nothing: {other:?}"),
    }
    writer.close().await.expect("nothing left to report");
}

/// `flush` resolves once the writes queued before it have outcomes, while another task
/// keeps writing through the same writer.
#[tokio::test]
async fn flush_waits_only_for_the_writes_before_it() {
    let test = test_db("bulk-flush").await;
    let writer = Arc::new(writer(&test.db));
    for n in 0..50 {
        drop(
            writer
                .upsert(&format!("before-{n}"), &instrument(n))
                .await
                .unwrap(),
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let background = tokio::spawn({
        let (writer, stop, written) = (writer.clone(), stop.clone(), written.clone());
        async move {
            // Bounded, so that a flush that waited for every write would still end, late.
            for n in 0..20_000 {
                if stop.load(Ordering::Relaxed) {
                    return false;
                }
                drop(
                    writer
                        .upsert(&format!("during-{}", n % 500), &instrument(n))
                        .await
                        .unwrap(),
                );
                written.fetch_add(1, Ordering::Relaxed);
            }
            true
        }
    });
    while written.load(Ordering::Relaxed) < 100 {
        tokio::task::yield_now().await;
    }
    writer.flush().await.unwrap();
    stop.store(true, Ordering::Relaxed);
    let ran_out = background.await.unwrap();
    assert!(
        !ran_out,
        "flush waited for every one of 20,000 later writes"
    );
    for n in 0..50 {
        assert!(
            Instrument::collection(&test.db)
                .get(&format!("before-{n}"))
                .await
                .unwrap()
                .is_some()
        );
    }
    Arc::into_inner(writer).unwrap().close().await.unwrap();
}

/// Dropping the writer stops it at once: writes waiting out a backoff resolve as cancelled,
/// and none of them is sent afterwards, even once the connection is healthy again.
#[tokio::test]
async fn a_dropped_writer_sends_nothing_more_and_answers_every_handle() {
    let test = test_db("bulk-drop").await;
    let (proxy, db) = proxied(
        &test,
        Faults {
            seed: 3,
            drop_chance: 1.0,
            ..Faults::NONE
        },
    )
    .await;
    let writer = BulkWriter::new(
        &db,
        BulkWriterOptions::default()
            .with_throttling(Throttling::Off)
            .with_backoff(Backoff {
                initial: Duration::from_millis(300),
                ..fast_retries()
            }),
    )
    .unwrap();
    let mut pending = Vec::new();
    for n in 0..30 {
        pending.push(
            writer
                .upsert(&format!("d{n}"), &instrument(n))
                .await
                .unwrap(),
        );
    }
    while writer.stats().retried < 30 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(writer);
    proxy.set_faults(false);
    for write in pending {
        let failure: WriteFailure = write.await.unwrap_err();
        assert_eq!(failure.code, Code::Cancelled);
        assert!(failure.maybe_applied, "its requests' answers were lost");
    }
    // Longer than every backoff the writer would have waited.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        all_documents(&test.db, Instrument::COLLECTION)
            .await
            .is_empty(),
        "a dropped writer went on writing"
    );
}

#[derive(Serialize)]
struct Plain {
    text: String,
}

#[derive(Serialize)]
struct Reserved {
    #[serde(rename = "__reserved__")]
    text: String,
}

/// A write Firestore refuses in a way that fails its whole request does not take its
/// neighbours down; one the writer can see is refused before it is queued.
#[tokio::test]
async fn one_invalid_write_fails_alone() {
    let test = test_db("bulk-invalid").await;
    let writer = BulkWriter::new(
        &test.db,
        BulkWriterOptions::default()
            .with_throttling(Throttling::Off)
            .with_batch_size(20),
    )
    .unwrap();
    let refused = writer
        .set("plain", "r", &Reserved { text: "x".into() })
        .await;
    assert!(
        matches!(&refused, Err(Error::InvalidFieldName { field, .. }) if field == "__reserved__"),
        "{refused:?}"
    );
    let mut pending = Vec::new();
    for n in 0..20 {
        let text = if n == 7 {
            "x".repeat(1_100_000)
        } else {
            format!("t{n}")
        };
        pending.push((
            n,
            writer
                .set("plain", &format!("p{n}"), &Plain { text })
                .await
                .unwrap(),
        ));
    }
    match writer.close().await {
        Err(Error::BulkWrite { failures }) => {
            assert_eq!(failures.len(), 1, "{failures:?}");
            assert!(failures[0].document.ends_with("/plain/p7"));
        }
        other => panic!("close did not report the invalid write: {other:?}"),
    }
    for (n, write) in pending {
        match write.await {
            Ok(_) => assert_ne!(n, 7),
            Err(failure) => {
                assert_eq!(n, 7, "{failure}");
                assert_eq!(failure.code, Code::InvalidArgument);
                assert!(!failure.maybe_applied);
            }
        }
    }
    assert_eq!(all_documents(&test.db, "plain").await.len(), 19);
}

/// Options out of range are a typed error when the writer is built; none reaches its task.
#[tokio::test]
async fn options_out_of_range_are_refused_when_the_writer_is_built() {
    let test = test_db("bulk-options").await;
    let ramp = |initial: f64, interval: Duration| Throttling::Ramp {
        initial,
        growth: 1.5,
        interval,
        maximum: 1_000.0,
    };
    let base = BulkWriterOptions::default;
    let cases: Vec<(&str, BulkWriterOptions)> = vec![
        (
            "throttling.initial",
            base().with_throttling(ramp(0.0, Duration::from_secs(1))),
        ),
        (
            "throttling.initial",
            base().with_throttling(ramp(-5.0, Duration::from_secs(1))),
        ),
        (
            "throttling.initial",
            base().with_throttling(ramp(f64::NAN, Duration::from_secs(1))),
        ),
        (
            "throttling.interval",
            base().with_throttling(ramp(10.0, Duration::MAX)),
        ),
        (
            "throttling.interval",
            base().with_throttling(ramp(10.0, Duration::ZERO)),
        ),
        ("linger", base().with_linger(Duration::MAX)),
        (
            "request_timeout",
            base().with_request_timeout(Duration::MAX),
        ),
        (
            "request_timeout",
            base().with_request_timeout(Duration::ZERO),
        ),
        (
            "backoff.jitter",
            base().with_backoff(Backoff {
                jitter: 5.0,
                ..Backoff::default()
            }),
        ),
        (
            "backoff.factor",
            base().with_backoff(Backoff {
                factor: 1e300 * 1e300,
                ..Backoff::default()
            }),
        ),
        (
            "backoff.initial",
            base().with_backoff(Backoff {
                initial: Duration::MAX,
                ..Backoff::default()
            }),
        ),
        (
            "backoff.max_attempts",
            base().with_backoff(Backoff {
                max_attempts: 0,
                ..Backoff::default()
            }),
        ),
        ("max_pending", base().with_max_pending(0)),
        // Once accepted, and then the writer's task overflowed adding a batch to it.
        ("max_pending", base().with_max_pending(usize::MAX)),
        (
            "max_pending",
            base().with_max_pending(sharded_runtime::bulk::MAX_PENDING + 1),
        ),
        ("batch_size", base().with_batch_size(0)),
        ("batch_size", base().with_batch_size(501)),
        ("retry_batch_size", base().with_retry_batch_size(0)),
    ];
    for (option, options) in cases {
        match BulkWriter::new(&test.db, options) {
            Err(Error::InvalidOptions { option: named, .. }) => assert_eq!(named, option),
            other => panic!("{option}: {other:?}"),
        }
    }
    // A huge but finite factor is in range: its waits stop at the maximum.
    let writer = BulkWriter::new(
        &test.db,
        base()
            .with_throttling(Throttling::Off)
            .with_backoff(Backoff {
                factor: 1e300,
                ..fast_retries()
            }),
    )
    .unwrap();
    writer
        .upsert("ok", &instrument(1))
        .await
        .unwrap()
        .await
        .unwrap();
    writer.close().await.unwrap();
}

/// Many versions of each document queued at once through a proxy that, now and then, closes
/// a connection on the client at once and hands what the client sent on it to the server
/// 1.5 s later: a request the client saw fail is applied after its retry (20 ms later) and,
/// on the previous writer, after the writes queued behind it too, leaving documents on an
/// earlier version. The next write to a document now waits out a lost request's deadline (a
/// 1 s request timeout here): each document ends on its last version.
#[tokio::test]
async fn each_document_ends_on_its_last_version_when_lost_requests_land_late() {
    let test = test_db("bulk-last-version").await;
    let (proxy, db) = proxied(
        &test,
        Faults {
            seed: 7,
            late_chance: 0.1,
            late_by: Duration::from_millis(1500),
            ..Faults::NONE
        },
    )
    .await;
    let writer = BulkWriter::new(
        &db,
        BulkWriterOptions::default()
            .with_throttling(Throttling::Off)
            .with_backoff(fast_retries())
            .with_request_timeout(Duration::from_secs(1)),
    )
    .unwrap();
    const DOCUMENTS: u64 = 300;
    // Five versions, and more while no request has landed late yet: the proxy draws its
    // faults per chunk it reads, and a loaded machine reads fewer, larger chunks.
    let mut last = 0;
    while last < 5 || (proxy.late() == 0 && last < 30) {
        last += 1;
        for d in 0..DOCUMENTS {
            drop(
                writer
                    .upsert(&format!("v{d:03}"), &instrument(last * 1000 + d))
                    .await
                    .unwrap(),
            );
        }
        if last >= 5 {
            // Let what is queued go out, so that its chunks are drawn before deciding.
            writer.flush().await.unwrap();
        }
    }
    writer.close().await.unwrap();
    assert!(proxy.late() > 0, "no request reached the server late");
    // Every late request has landed by now.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut wrong = Vec::new();
    for document in all_documents(&test.db, Instrument::COLLECTION).await {
        let stored: Instrument = FirestoreDb::deserialize_doc_to(&document).unwrap();
        let d: u64 = id_of(&document)[1..].parse().unwrap();
        if stored.price.micros as u64 != last * 1000 + d {
            wrong.push((d, stored.price.micros / 1000));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} documents on an earlier version: {wrong:?}",
        wrong.len()
    );
}
