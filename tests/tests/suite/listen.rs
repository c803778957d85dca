//! Live sharded queries on the emulator: concurrent writers overwrite documents (which re-draws
//! their shard, moving them between chunk targets), delete them and push them in and out of a
//! limited top N, while a listener collects snapshots. Every snapshot is in order with no
//! duplicate, the changes applied to one snapshot give the next, and once the writes settle
//! the last snapshot equals `fetch()`. For 3 shard values (one target) and 64 (three targets
//! on one stream), and through a proxy that drops connections (the listener resumes).

use std::time::Duration;

use futures::StreamExt;
use sharded_runtime::{Cursor, Error, Sharded, listen::ListenOptions};
use sharded_tests::live::{Reading, SixtyFour, Three, listen_while_writing};
use sharded_tests::test_db;

async fn every_shape<T: Reading>(name: &str, seed: u64) {
    let test = test_db(name).await;
    let db = &test.db;
    let top = listen_while_writing(db, db, T::all().limit(5), Some(5), seed).await;
    let venue = listen_while_writing(db, db, T::venue("XNAS"), None, seed + 1).await;
    let ranged = T::venue("XLON").range(10_i64..40).limit(7);
    let range = listen_while_writing(db, db, ranged, Some(7), seed + 2).await;
    // After a cursor: every target starts after (25, "r15").
    let after = Cursor::at(&25, "r15").unwrap();
    let cursor =
        listen_while_writing(db, db, T::all().after(after).limit(6), Some(6), seed + 3).await;
    // A test that saw one snapshot would prove nothing about changes.
    assert!(
        top > 1 && venue > 1 && range > 1 && cursor > 1,
        "{top} {venue} {range} {cursor}"
    );
}

sharded_tests::live_readings!(
    #[sharded(
        shards = 40,
        order_by = "at",
        direction = "desc",
        collection = "live40r",
        reversible
    )]
    Forty
);

/// A reversed query (oldest first on a newest-first type) and an OR, live over two targets:
/// every snapshot in the query's order, its changes true, the last one what `fetch` returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reversed_and_or_queries_listen_exactly() {
    let test = test_db("listen-reversed-or").await;
    let db = &test.db;
    let oldest = listen_while_writing(db, db, Forty::all().reversed().limit(5), Some(5), 31).await;
    let venue = Forty::venue("XNAS").reversed();
    let reversed = listen_while_writing(db, db, venue, None, 32).await;
    let either = Forty::venue("XNAS").or(Forty::venue("XLON")).limit(6);
    let or = listen_while_writing(db, db, either, Some(6), 33).await;
    assert!(
        oldest > 1 && reversed > 1 && or > 1,
        "{oldest} {reversed} {or}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_shards_one_target() {
    every_shape::<Three>("listen-3", 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_shards_three_targets_on_one_stream() {
    every_shape::<SixtyFour>("listen-64", 2).await;
}

/// A client through a proxy that drops the connection at its first chunk of bytes either
/// way: no Listen stream can open until its faults are turned off.
async fn through_a_dead_network(
    test: &sharded_tests::TestDb,
) -> (
    sharded_emulator::fault_proxy::FaultProxy,
    sharded_runtime::firestore::FirestoreDb,
) {
    use sharded_emulator::fault_proxy::{FaultProxy, Faults};
    let faults = Faults {
        seed: 1,
        drop_chance: 1.0,
        ..Faults::NONE
    };
    let proxy = FaultProxy::start(test.emulator.host(), faults)
        .await
        .unwrap();
    let db = sharded_tests::same_project_via(&test.db, &proxy.host()).await;
    (proxy, db)
}

#[tokio::test]
async fn connections_that_keep_failing_end_the_stream_with_a_typed_error() {
    let test = test_db("listen-down").await;
    let (proxy, db) = through_a_dead_network(&test).await;
    let options = ListenOptions::default()
        .with_reconnects(Some(3))
        .with_first_retry(Duration::from_millis(10))
        .with_max_retry(Duration::from_millis(50));
    let mut stream = Three::all().listen_with(&db, options).unwrap();
    let first = tokio::time::timeout(Duration::from_secs(60), stream.next())
        .await
        .expect("the stream ends within a minute");
    // The cause beneath the status ("connection error: ... broken pipe"), not only its code.
    assert!(
        matches!(&first, Some(Err(Error::Listen { message, .. })) if message.contains("connection")),
        "{first:?}"
    );
    assert!(stream.next().await.is_none(), "an error ends the stream");
    assert!(proxy.dropped() > 0);
}

/// By default a listener keeps reconnecting through transient failures, however many, as
/// the Firebase SDKs do: once the network is back, the snapshots come.
#[tokio::test]
async fn by_default_a_listener_outlasts_any_run_of_transient_failures() {
    let test = test_db("listen-outlasts").await;
    let (proxy, db) = through_a_dead_network(&test).await;
    let options = ListenOptions::default()
        .with_first_retry(Duration::from_millis(5))
        .with_max_retry(Duration::from_millis(20));
    assert_eq!(options.reconnects, None);
    let mut stream = Three::all().listen_with(&db, options).unwrap();
    let watched = tokio::spawn(async move { stream.next().await.map(|first| (first, stream)) });
    // More failures in a row than the old fixed cap of 10.
    while proxy.connections() < 25 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(!watched.is_finished(), "the stream gave up");
    proxy.set_faults(false);
    let (first, _stream) = tokio::time::timeout(Duration::from_secs(60), watched)
        .await
        .expect("a snapshot within a minute of the network's return")
        .unwrap()
        .expect("the stream goes on");
    assert!(first.unwrap().documents.is_empty());
}

/// Options out of range are refused before anything is sent.
#[tokio::test]
async fn listen_options_out_of_range_are_refused() {
    let test = test_db("listen-options").await;
    let options = ListenOptions::default()
        .with_first_retry(Duration::from_secs(20))
        .with_max_retry(Duration::from_secs(10));
    assert!(matches!(
        Three::all().listen_with(&test.db, options),
        Err(Error::InvalidOptions {
            option: "first_retry",
            ..
        })
    ));
    let options = ListenOptions::default()
        .with_max_retry(Duration::MAX)
        .with_first_retry(Duration::ZERO);
    assert!(matches!(
        Three::all().listen_with(&test.db, options),
        Err(Error::InvalidOptions {
            option: "max_retry",
            ..
        })
    ));
    // With reconnects unlimited, a zero first wait retried a failing connection in a loop.
    let options = ListenOptions::default().with_first_retry(Duration::ZERO);
    assert!(matches!(
        Three::all().listen_with(&test.db, options),
        Err(Error::InvalidOptions {
            option: "first_retry",
            ..
        })
    ));
    for idle in [Duration::ZERO, Duration::MAX] {
        let options = ListenOptions::default().with_idle_timeout(Some(idle));
        assert!(matches!(
            Three::all().listen_with(&test.db, options),
            Err(Error::InvalidOptions {
                option: "idle_timeout",
                ..
            })
        ));
    }
}

#[tokio::test]
async fn an_invalid_query_is_refused_before_listening() {
    let test = test_db("listen-invalid").await;
    // Invalid before anything is sent.
    assert!(matches!(
        Three::query().all().limit(0).listen(&test.db),
        Err(Error::InvalidQuery(_))
    ));
}

/// A type without `Clone`: listening needs none, since snapshots share documents.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize, Sharded)]
#[sharded(shards = 40, order_by = "at", collection = "shared_readings")]
struct Unclonable {
    at: i64,
    text: String,
}

/// Consecutive snapshots share the documents that did not change (the same allocation, no
/// copy); a changed one is new, and its change carries the very document the snapshot holds.
#[tokio::test]
async fn snapshots_share_the_documents_that_did_not_change() {
    use std::sync::Arc;
    let test = test_db("listen-shared").await;
    let db = &test.db;
    let readings = Unclonable::collection(db);
    for at in 0..5 {
        let text = format!("r{at}");
        readings
            .upsert(
                &text,
                &Unclonable {
                    at,
                    text: text.clone(),
                },
            )
            .await
            .unwrap();
    }
    let mut stream = Unclonable::query().all().listen(db).unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first.documents.len(), 5);
    readings
        .upsert(
            "r2",
            &Unclonable {
                at: 2,
                text: "changed".into(),
            },
        )
        .await
        .unwrap();
    let next = stream.next().await.unwrap().unwrap();
    assert_eq!(next.documents.len(), 5);
    for (before, after) in first.documents.iter().zip(&next.documents) {
        assert_eq!(before.id, after.id);
        assert_eq!(Arc::ptr_eq(before, after), after.id != "r2", "{}", after.id);
    }
    assert_eq!(next.changes.len(), 1);
    assert_eq!(next.changes[0].document.document.text, "changed");
    assert!(Arc::ptr_eq(&next.changes[0].document, &next.documents[2]));
}
