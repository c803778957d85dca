//! The bulk writer on the emulator: every write lands or is reported, retries survive dropped
//! connections, and the ramp holds in virtual time.

use std::collections::BTreeSet;
use std::time::Duration;

use sharded_emulator::fault_proxy::{FaultProxy, Faults};
use sharded_runtime::bulk::{BulkWriter, BulkWriterOptions, Clock, Throttling, VirtualClock};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::writes::StatusCode as Code;
use sharded_runtime::{Error, Sharded};
use sharded_tests::migration::fast_retries;
use sharded_tests::models::{Instrument, Price};
use sharded_tests::{all_documents, id_of, same_project_via, string_field, test_db};

fn instrument(n: u32) -> Instrument {
    Instrument {
        symbol: format!("S{n}"),
        price: Price {
            currency: ["USD", "JPY", "EUR"][n as usize % 3].into(),
            micros: i64::from(n) * 1_000,
        },
        exchange: format!("EX{}", n % 4),
        instrument_type: "commonstock".into(),
        timestamp: sharded_examples::at("2026-11-22T19:00:00Z"),
    }
}

fn random_id() -> String {
    format!("{:016x}", rand::random::<u64>())
}

async fn stored_shards(db: &FirestoreDb) -> Vec<String> {
    all_documents(db, Instrument::COLLECTION)
        .await
        .iter()
        .map(|document| string_field(document, "shard").unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn every_write_lands_with_a_shard_and_its_outcome() {
    let test = test_db("bulk-all").await;
    // A part-full batch would go out after its linger, so on a loaded machine the count of
    // requests would depend on timing: with a linger longer than the test, only full
    // batches go out.
    let writer = BulkWriter::new(
        &test.db,
        BulkWriterOptions::default()
            .with_throttling(Throttling::Off)
            .with_linger(Duration::from_secs(600)),
    )
    .unwrap();
    let mut pending = Vec::new();
    for n in 0..1_000 {
        pending.push(writer.upsert(&random_id(), &instrument(n)).await.unwrap());
    }
    let stats = writer.close().await.unwrap();
    for write in pending {
        assert_eq!(write.await.unwrap().attempts, 1);
    }
    assert_eq!(stats.written, 1_000);
    assert_eq!(stats.failed, 0);
    assert_eq!(stats.requests, 50, "20 writes per request");
    let shards = stored_shards(&test.db).await;
    assert_eq!(shards.len(), 1_000);
    let used: BTreeSet<&str> = shards.iter().map(String::as_str).collect();
    assert_eq!(used, BTreeSet::from(["x", "y", "z"]));

    // Deletes, of documents that exist and of one that does not.
    let writer = BulkWriter::new(&test.db, BulkWriterOptions::unthrottled()).unwrap();
    let ids: Vec<String> = all_documents(&test.db, Instrument::COLLECTION)
        .await
        .iter()
        .take(10)
        .map(|document| id_of(document).to_owned())
        .collect();
    for id in ids.iter().map(String::as_str).chain(["never-written"]) {
        drop(writer.delete::<Instrument>(id).await.unwrap());
    }
    assert_eq!(writer.close().await.unwrap().written, 11);
    assert_eq!(stored_shards(&test.db).await.len(), 990);
    for id in &ids {
        assert_eq!(
            Instrument::collection(&test.db).get(id).await.unwrap(),
            None
        );
    }
}

#[tokio::test]
async fn a_failure_reaches_its_handle_or_else_flush() {
    let test = test_db("bulk-failures").await;
    let writer = BulkWriter::new(
        &test.db,
        BulkWriterOptions::default().with_throttling(Throttling::Off),
    )
    .unwrap();
    writer
        .create("taken", &instrument(1))
        .await
        .unwrap()
        .await
        .unwrap();

    // Awaited: the failure comes back in the handle, and flush has nothing left to report.
    let failure = writer
        .create("taken", &instrument(2))
        .await
        .unwrap()
        .await
        .unwrap_err();
    assert_eq!(failure.code, Code::AlreadyExists);
    assert_eq!(failure.attempts, 1, "ALREADY_EXISTS is not retried");
    assert!(failure.document.ends_with("/instruments/taken"));
    writer.flush().await.unwrap();

    // Dropped: flush reports it, with the writes around it done.
    drop(writer.create("taken", &instrument(3)).await.unwrap());
    drop(writer.upsert("free", &instrument(4)).await.unwrap());
    match writer.close().await {
        Err(Error::BulkWrite { failures }) => {
            assert_eq!(failures.len(), 1);
            assert_eq!(failures[0].code, Code::AlreadyExists);
        }
        other => panic!("expected the dropped failure, got {other:?}"),
    }
    let kept = Instrument::collection(&test.db).get("taken").await.unwrap();
    assert_eq!(
        kept,
        Some(instrument(1)),
        "the failed creates changed nothing"
    );
    assert!(
        Instrument::collection(&test.db)
            .get("free")
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn writes_to_one_document_go_in_separate_requests() {
    let test = test_db("bulk-same-doc").await;
    let writer = BulkWriter::new(
        &test.db,
        BulkWriterOptions::default().with_throttling(Throttling::Off),
    )
    .unwrap();
    let mut pending = Vec::new();
    for n in 0..3 {
        pending.push(writer.upsert("same", &instrument(n)).await.unwrap());
    }
    let stats = writer.close().await.unwrap();
    for write in pending {
        write
            .await
            .expect("BatchWrite takes one write per document per request");
    }
    assert_eq!(stats.requests, 3);
}

#[tokio::test]
async fn sequential_ids_are_noticed_and_generated_ids_are_not() {
    let test = test_db("bulk-ids").await;
    let options = || BulkWriterOptions::default().with_throttling(Throttling::Off);
    let writer = BulkWriter::new(&test.db, options()).unwrap();
    for n in 0..40 {
        drop(
            writer
                .upsert(&format!("gen-{n:04}"), &instrument(n))
                .await
                .unwrap(),
        );
    }
    assert!(writer.close().await.unwrap().sequential_ids);

    let writer = BulkWriter::new(&test.db, options()).unwrap();
    let mut ids = BTreeSet::new();
    for n in 0..200 {
        let (id, pending) = writer.insert(&instrument(n)).await.unwrap();
        assert_eq!(id.len(), 20);
        ids.insert(id);
        drop(pending);
    }
    let stats = writer.close().await.unwrap();
    assert!(!stats.sequential_ids);
    assert_eq!(ids.len(), 200);
    assert_eq!(stats.written, 200);
}

#[tokio::test]
async fn every_write_lands_through_dropped_connections() {
    let test = test_db("bulk-faults").await;
    let proxy = FaultProxy::start(
        test.emulator.host(),
        Faults {
            seed: 7,
            drop_chance: 0.02,
            lost_answer_chance: 0.0,
            delay_chance: 0.05,
            max_delay: Duration::from_millis(20),
            ..Faults::NONE
        },
    )
    .await
    .unwrap();
    let faulty = same_project_via(&test.db, &proxy.host()).await;
    let writer = BulkWriter::new(
        &faulty,
        BulkWriterOptions::default()
            .with_throttling(Throttling::Off)
            .with_backoff(fast_retries()),
    )
    .unwrap();
    let mut ids = BTreeSet::new();
    // Rounds of 3,000 until the proxy has dropped a connection: it draws a fault per chunk of
    // bytes, and a loaded machine may coalesce one round's requests into too few chunks.
    for round in 0..4 {
        for n in 0..3_000 {
            let id = random_id();
            drop(
                writer
                    .upsert(&id, &instrument(round * 3_000 + n))
                    .await
                    .unwrap(),
            );
            ids.insert(id);
        }
        writer.flush().await.unwrap();
        if proxy.dropped() > 0 {
            break;
        }
    }
    let stats = writer.close().await.unwrap();
    assert!(proxy.dropped() > 0, "the proxy dropped no connection");
    assert!(stats.retried > 0, "no write was retried");
    assert_eq!(stats.failed, 0);
    let stored: BTreeSet<String> = all_documents(&test.db, Instrument::COLLECTION)
        .await
        .iter()
        .map(|document| id_of(document).to_owned())
        .collect();
    assert_eq!(stored, ids);
}

/// Google's ramp, in virtual time, as the writer asks the limiter: 20 operations at a time,
/// as soon as it allows. In every 5-minute window the operations issued stay within the
/// window's budget and use at least 95 % of it.
#[test]
fn the_ramp_keeps_to_its_budget_in_every_window() {
    for shards in [3usize, 30] {
        let clock = VirtualClock::new();
        let throttling = Throttling::ramp().with_maximum(500.0 * shards as f64);
        let limiter = sharded_runtime::bulk::RateLimiter::new(throttling, clock.now(), 20);
        let window = Duration::from_secs(300);
        let windows = 12;
        let mut issued = vec![0u64; windows];
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            while clock.now() < window * windows as u32 {
                match limiter.try_acquire(20, clock.now()) {
                    Ok(()) => issued[(clock.now().as_secs() / 300) as usize] += 20,
                    Err(wait) => clock.sleep(wait).await,
                }
            }
        });
        for (k, issued) in issued.iter().enumerate() {
            let rate = throttling.rate_at(window * k as u32).unwrap();
            let budget = rate * 300.0;
            assert!(
                *issued as f64 <= budget,
                "{shards} shards, window {k}: {issued} > {budget}"
            );
            assert!(
                *issued as f64 >= 0.95 * budget,
                "{shards} shards, window {k}: {issued} < 95 % of {budget}"
            );
        }
        let rates: Vec<f64> = (0..5)
            .map(|k| throttling.rate_at(window * k).unwrap())
            .collect();
        if shards == 3 {
            assert_eq!(rates, [500.0, 750.0, 1125.0, 1500.0, 1500.0]);
            assert_eq!(
                throttling.time_to_reach(1500.0),
                Duration::from_secs(15 * 60)
            );
        } else {
            assert_eq!(
                throttling.time_to_reach(15_000.0),
                Duration::from_secs(45 * 60)
            );
        }
    }
}

/// The writer itself follows the ramp: on a virtual clock at 10 writes/s doubling every 10 s,
/// the first two windows' budgets (100 + 200) cannot hold 640 writes, and the third window's
/// (400 more) can, less at most a batch lost at each window's edge.
#[tokio::test]
async fn the_writer_follows_the_ramp_in_virtual_time() {
    let test = test_db("bulk-ramp").await;
    let clock = VirtualClock::new();
    let writer = BulkWriter::new(
        &test.db,
        BulkWriterOptions::default()
            .with_throttling(Throttling::Ramp {
                initial: 10.0,
                growth: 2.0,
                interval: Duration::from_secs(10),
                maximum: 1_000.0,
            })
            .with_clock(clock.clone()),
    )
    .unwrap();
    for n in 0..640 {
        drop(writer.upsert(&random_id(), &instrument(n)).await.unwrap());
    }
    let stats = writer.close().await.unwrap();
    assert_eq!(stats.written, 640);
    let finished = clock.now();
    assert!(
        (Duration::from_secs(20)..Duration::from_secs(30)).contains(&finished),
        "finished at {finished:?} of virtual time"
    );
    assert_eq!(
        all_documents(&test.db, Instrument::COLLECTION).await.len(),
        640
    );
}
