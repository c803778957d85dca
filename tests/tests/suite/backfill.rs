//! Backfill on the emulator: a collection written before it was sharded gets a shard on
//! every document, through dropped connections, beside a concurrent writer, across an
//! interruption; nothing else changes, and sharded queries then equal unsharded ones.

use std::time::Duration;

use serde::Serialize;
use sharded_runtime::bulk::{BulkWriter, BulkWriterOptions, Throttling};
use sharded_runtime::firestore::FirestoreValue;
use sharded_runtime::{Sharded, jobs::ShardCensus};
use sharded_tests::equivalence::{check_query, unsharded_ids};
use sharded_tests::migration::{
    concurrent_writer, expected_state, fast_retries, faulty_client, run_interrupted, run_to_end,
    stored_state, unthrottled,
};
use sharded_tests::models::{Instrument, Price};
use sharded_tests::test_db;

const DOCUMENTS: u32 = 10_000;
const EXCHANGES: [&str; 4] = ["EX0", "EX1", "EX2", "EX3"];

fn instrument(n: u32) -> Instrument {
    Instrument {
        symbol: format!("S{n}"),
        price: Price {
            currency: ["USD", "JPY", "EUR"][n as usize % 3].into(),
            micros: i64::from(n) * 7,
        },
        exchange: EXCHANGES[n as usize % 4].into(),
        instrument_type: "commonstock".into(),
        // Ties: about three documents per second of time.
        timestamp: sharded_examples::at(&format!(
            "2026-11-22T{:02}:{:02}:{:02}Z",
            (n / 3600) % 24,
            (n / 60) % 60,
            n % 60
        )),
    }
}

/// Writes `instrument(n)` under the `n`-th of `ids` without a shard, as a collection written
/// before sharded holds it.
async fn write_unsharded(db: &sharded_runtime::firestore::FirestoreDb, ids: &[String]) {
    let seed = BulkWriter::new(db, unthrottled()).unwrap();
    for (n, id) in ids.iter().enumerate() {
        drop(
            seed.set(Instrument::COLLECTION, id, &instrument(n as u32))
                .await
                .unwrap(),
        );
    }
    seed.close().await.unwrap();
}

/// A document an older writer stored with a shard value the set does not have.
#[derive(Serialize)]
struct WithStrayShard<'a> {
    #[serde(flatten)]
    instrument: &'a Instrument,
    shard: i64,
}

#[tokio::test]
async fn backfill_gives_every_document_a_shard_and_changes_nothing_else() {
    let test = test_db("backfill").await;
    let db = &test.db;

    // The collection before sharded: plain documents under random ids, a few with a stray
    // shard value.
    let seed = BulkWriter::new(
        db,
        BulkWriterOptions::default().with_throttling(Throttling::Off),
    )
    .unwrap();
    let mut ids = Vec::new();
    for n in 0..DOCUMENTS {
        let id = format!("{:016x}", rand::random::<u64>());
        let written = if n % 100 == 0 {
            let stray = WithStrayShard {
                instrument: &instrument(n),
                shard: 7,
            };
            seed.set(Instrument::COLLECTION, &id, &stray).await.unwrap()
        } else {
            seed.set(Instrument::COLLECTION, &id, &instrument(n))
                .await
                .unwrap()
        };
        drop(written);
        ids.push(id);
    }
    seed.close().await.unwrap();
    let before = stored_state(db, Instrument::COLLECTION, Instrument::SHARD_FIELD).await;
    assert_eq!(before.len(), DOCUMENTS as usize);
    let census = Instrument::collection(db).verify().await.unwrap();
    assert_eq!(
        census,
        ShardCensus {
            scanned: 10_000,
            current: 0,
            retired: 0,
            missing: 10_000,
            missing_ids: census.missing_ids.clone(),
        }
    );
    // The first of them by name, as paths below the database root.
    let mut first: Vec<String> = ids
        .iter()
        .map(|id| format!("{}/{id}", Instrument::COLLECTION))
        .collect();
    first.sort();
    first.truncate(sharded_runtime::jobs::MAX_LISTED);
    assert_eq!(census.missing_ids, first);
    // Unsharded documents are invisible to sharded queries.
    assert!(
        Instrument::query()
            .exchange("EX0")
            .fetch(db)
            .await
            .unwrap()
            .is_empty()
    );

    // The job runs through a proxy that drops connections; a writer works beside it.
    let (proxy, faulty) = faulty_client(&test, 11).await;
    let writer = unthrottled;
    let touched: Vec<String> = ids.iter().step_by(10).cloned().collect();
    let concurrent =
        concurrent_writer(db.clone(), touched, instrument, Instrument::fields().symbol);

    let collection = Instrument::collection(&faulty);
    let checkpoint =
        run_interrupted(collection.backfill().page_size(500).writer(writer()), 4).await;
    assert!(checkpoint.last_id() < ids.iter().max().unwrap().as_str());
    let resumed = run_to_end(
        collection
            .backfill()
            .page_size(500)
            .writer(writer())
            .resume_from(checkpoint),
    )
    .await
    .unwrap();
    assert!(
        resumed.scanned < u64::from(DOCUMENTS),
        "the resumed run starts at the checkpoint"
    );
    let changes = concurrent.await.unwrap();
    proxy.set_faults(false);
    assert!(proxy.dropped() > 0, "the proxy dropped no connection");

    // The concurrent writer's changes landed after parts of the scan: a second run picks up
    // whatever it left unsharded (field-masked updates keep "no shard"), then a third changes
    // nothing: the job is idempotent.
    let second = run_to_end(collection.backfill().writer(writer()))
        .await
        .unwrap();
    let third = run_to_end(collection.backfill().writer(writer()))
        .await
        .unwrap();
    assert_eq!(third.updated, 0, "{third:?} after {second:?}");
    assert_eq!(third.unchanged, third.scanned);

    // Every document present once, its fields as written, now with a current shard.
    let after = stored_state(db, Instrument::COLLECTION, Instrument::SHARD_FIELD).await;
    let expected = expected_state(&before, &changes);
    assert_eq!(after.len(), expected.len());
    for (id, (fields, shard)) in &after {
        assert_eq!(Some(fields), expected.get(id), "document {id}");
        let shard = shard.clone().map(|v| FirestoreValue { value: v });
        let shard: Option<String> = shard.and_then(|v| match v.value.value_type {
            Some(sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::value::ValueType::StringValue(s)) => Some(s),
            _ => None,
        });
        assert!(
            shard
                .as_deref()
                .is_some_and(|s| Instrument::SHARD_VALUES.contains(&s)),
            "document {id} has shard {shard:?}"
        );
    }
    let census = Instrument::collection(db).verify().await.unwrap();
    assert_eq!(census.outstanding(), 0);
    assert_eq!(census.current, expected.len() as u64);

    // Every sharded query equals the unsharded one.
    for exchange in EXCHANGES {
        let expected = unsharded_ids::<Instrument>(db, "exchange", exchange).await;
        assert!(expected.len() > 2_000);
        check_query(
            db,
            Instrument::query().exchange(exchange),
            Ok(expected),
            1_000,
            exchange,
        )
        .await;
    }
}

/// A document changed between the scan and the job's write is never overwritten: the write's
/// update-time precondition fails, the job reads the document again and writes the shard
/// onto the new version. Made certain here by a ramp so slow that every change lands first.
#[tokio::test]
async fn a_change_after_the_scan_wins_and_the_document_is_sharded_anyway() {
    let test = test_db("backfill-conflicts").await;
    let db = &test.db;
    let ids: Vec<String> = (0..40)
        .map(|n| format!("{:016x}", rand::random::<u64>() ^ n))
        .collect();
    write_unsharded(db, &ids).await;

    let slow = BulkWriterOptions::default()
        .with_throttling(Throttling::Ramp {
            initial: 20.0,
            growth: 1.5,
            interval: Duration::from_secs(300),
            maximum: 20.0,
        })
        .with_backoff(fast_retries());
    let job = Instrument::collection(db)
        .backfill()
        .page_size(60)
        .writer(slow);
    let changed = async {
        // The ramp lets 20 writes through a second. Once the first 20 have landed, the scan is
        // done and the other 20 wait a second for tokens: change every document now, so their
        // preconditions fail whatever the machine's load.
        while Instrument::collection(db).verify().await.unwrap().current == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let fields = Instrument::fields();
        for (n, id) in ids.iter().enumerate() {
            let mut renamed = instrument(n as u32);
            renamed.symbol = format!("renamed-{n}");
            Instrument::collection(db)
                .update_fields(id, &renamed, &[fields.symbol])
                .await
                .unwrap();
        }
    };
    let (progress, ()) = tokio::join!(job.run(|_| {}), changed);
    let progress = progress.unwrap();
    assert!(progress.conflicts > 0, "{progress:?}");
    assert_eq!(progress.updated, 40, "{progress:?}");
    for (n, id) in ids.iter().enumerate() {
        let stored = Instrument::collection(db)
            .get_stored(id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            stored.document.symbol,
            format!("renamed-{n}"),
            "the change was kept"
        );
        assert!(Instrument::SHARD_VALUES.contains(&stored.shard.as_str()));
    }
}

/// A shard field whose name needs quoting, 40 shard values (two chunk queries), ids with
/// spaces and non-ASCII, an empty collection, and a checkpoint at a document deleted since.
#[tokio::test]
async fn backfill_handles_quoted_shard_fields_many_shards_and_odd_ids() {
    use sharded_runtime::jobs::Checkpoint;
    use sharded_tests::models::Tick;

    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, Sharded)]
    #[sharded(
        shards = 5,
        shard_field = "shard-id",
        order_by = "at",
        collection = "quoted"
    )]
    struct Quoted {
        #[sharded(index)]
        venue: String,
        at: sharded_runtime::firestore::FirestoreTimestamp,
    }

    let test = test_db("backfill-odd").await;
    let db = &test.db;
    // Nothing to do in an empty collection.
    let empty = run_to_end(Quoted::collection(db).backfill()).await.unwrap();
    assert_eq!((empty.scanned, empty.updated), (0, 0));
    assert_eq!(
        Quoted::collection(db).verify().await.unwrap(),
        ShardCensus::default()
    );

    let seed = BulkWriter::new(db, unthrottled()).unwrap();
    let ids: Vec<String> = (0..120).map(|n| format!("doc {n:03} é✓")).collect();
    for (n, id) in ids.iter().enumerate() {
        let at = sharded_examples::at(&format!("2026-11-22T19:00:{:02}Z", n % 7));
        let quoted = Quoted {
            venue: format!("v{}", n % 2),
            at,
        };
        drop(seed.set(Quoted::COLLECTION, id, &quoted).await.unwrap());
        let tick = Tick {
            venue: format!("v{}", n % 2),
            at,
            seq: n as i64,
        };
        drop(seed.set(Tick::COLLECTION, id, &tick).await.unwrap());
    }
    seed.close().await.unwrap();

    // A checkpoint no document could have is refused before anything is sent.
    let refused = Quoted::collection(db)
        .backfill()
        .resume_from(Checkpoint::after("a/b"))
        .run(|_| {})
        .await;
    assert!(
        matches!(refused, Err(sharded_runtime::Error::InvalidCursor(_))),
        "{refused:?}"
    );

    // Resume after a document that has been deleted since: the scan goes on after its name.
    Quoted::collection(db).delete(&ids[49]).await.unwrap();
    let resumed = run_to_end(
        Quoted::collection(db)
            .backfill()
            .page_size(16)
            .writer(unthrottled())
            .resume_from(Checkpoint::after(ids[49].clone())),
    )
    .await
    .unwrap();
    assert_eq!(resumed.updated, 70, "{resumed:?}");
    let census = Quoted::collection(db).verify().await.unwrap();
    assert_eq!((census.current, census.missing), (70, 49));
    run_to_end(Quoted::collection(db).backfill().writer(unthrottled()))
        .await
        .unwrap();
    let ticks = run_to_end(
        Tick::collection(db)
            .backfill()
            .page_size(7)
            .writer(unthrottled()),
    )
    .await
    .unwrap();
    assert_eq!(ticks.updated, 120);

    for venue in ["v0", "v1"] {
        let expected = unsharded_ids::<Quoted>(db, "venue", venue).await;
        assert_eq!(
            expected.len(),
            if venue == "v0" { 60 } else { 59 },
            "{venue}"
        );
        check_query(db, Quoted::query().venue(venue), Ok(expected), 13, venue).await;
        let expected = unsharded_ids::<Tick>(db, "venue", venue).await;
        check_query(db, Tick::query().venue(venue), Ok(expected), 13, venue).await;
    }
    let stored = Quoted::collection(db)
        .get_stored(&ids[0])
        .await
        .unwrap()
        .unwrap();
    assert!(Quoted::SHARD_VALUES.contains(&stored.shard.as_str()));
}

/// A shard write whose answer is lost after it landed is retried, fails its update-time
/// precondition on its own earlier write, and is read back: it counts as updated, not as a
/// conflict. Through lost answers and no other writer, every document is updated once.
#[tokio::test]
async fn writes_that_landed_count_as_updated_through_lost_answers() {
    use sharded_emulator::fault_proxy::{FaultProxy, Faults};
    let test = test_db("backfill-lost").await;
    let ids: Vec<String> = (0..600)
        .map(|_| format!("{:016x}", rand::random::<u64>()))
        .collect();
    write_unsharded(&test.db, &ids).await;
    let proxy = FaultProxy::start(
        test.emulator.host(),
        Faults {
            seed: 11,
            lost_answer_chance: 0.15,
            ..Faults::NONE
        },
    )
    .await
    .unwrap();
    let db = sharded_tests::same_project_via(&test.db, &proxy.host()).await;
    let progress = Instrument::collection(&db)
        .backfill()
        .page_size(50)
        .writer(unthrottled().with_batch_size(10))
        .run(|_| {})
        .await
        .unwrap();
    assert!(proxy.dropped() > 0, "no answer was lost");
    assert_eq!(progress.scanned, 600, "{progress:?}");
    assert_eq!(progress.updated, 600, "{progress:?}");
    assert_eq!(
        (progress.conflicts, progress.unchanged),
        (0, 0),
        "{progress:?}"
    );
    let census = Instrument::collection(&test.db).verify().await.unwrap();
    assert_eq!(census.current, 600);
}

/// A read-write transaction holds what it reads (measured in `server_batch_write.rs`): a
/// write to it waits, then fails ABORTED. When that outlasts the writer's retries, the job
/// reads the document again and writes it once the lock is gone, slower, instead of failing.
/// The lock is taken from the progress callback after page 1, on a document of page 2,
/// which the job has scanned already and writes next. One document only: with several
/// locked, how many outlast the writer's retries before the lock goes depends on timing (a
/// CI run saw 2 of 3); one lock timeout (~2 s) twice fits well inside the 12 s hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contention_slows_the_job_down_instead_of_failing_it() {
    use sharded_runtime::bulk::Backoff;
    use sharded_runtime::firestore::{
        FirestoreConsistencySelector, FirestoreTransactionMode, FirestoreTransactionOptions,
    };
    let test = test_db("backfill-contention").await;
    let ids: Vec<String> = (0..30).map(|n| format!("d{n:02}")).collect();
    write_unsharded(&test.db, &ids).await;

    let (lock, locked) = (
        tokio::sync::oneshot::channel::<()>(),
        std::sync::mpsc::channel::<()>(),
    );
    let (take_lock, lock_requested) = lock;
    let (lock_taken, wait_for_lock) = locked;
    let db = test.db.clone();
    let held: Vec<String> = ids[10..11].to_vec();
    let holder = tokio::spawn(async move {
        lock_requested.await.unwrap();
        let options =
            FirestoreTransactionOptions::new().with_mode(FirestoreTransactionMode::ReadWrite);
        let transaction = db.begin_transaction_with_options(options).await.unwrap();
        let holding = db.clone_with_consistency_selector(
            FirestoreConsistencySelector::Transaction(transaction.transaction_id().clone()),
        );
        for id in &held {
            let read: Option<Instrument> = holding
                .fluent()
                .select()
                .by_id_in(Instrument::COLLECTION)
                .obj()
                .one(id)
                .await
                .unwrap();
            assert!(read.is_some());
        }
        lock_taken.send(()).unwrap();
        // Longer than the writer's two attempts, each of which waits out a lock timeout.
        tokio::time::sleep(Duration::from_secs(12)).await;
        transaction.rollback().await.unwrap();
    });
    let impatient = unthrottled().with_backoff(Backoff {
        max_attempts: 2,
        ..sharded_tests::migration::fast_retries()
    });
    let mut take_lock = Some(take_lock);
    let progress = Instrument::collection(&test.db)
        .backfill()
        .page_size(10)
        .writer(impatient)
        .run(move |_| {
            // After page 1: page 2 is scanned, its writes not yet queued.
            if let Some(take_lock) = take_lock.take() {
                take_lock.send(()).unwrap();
                wait_for_lock
                    .recv_timeout(Duration::from_secs(60))
                    .expect("the lock is taken");
            }
        })
        .await
        .expect("contention slowed the job, and did not fail it");
    holder.await.unwrap();
    assert_eq!(progress.updated, 30, "{progress:?}");
    assert!(progress.conflicts >= 1, "{progress:?}");
    assert_eq!(
        Instrument::collection(&test.db)
            .verify()
            .await
            .unwrap()
            .current,
        30
    );
}
