//! Live counters on the emulator (`listen_counter`): each value shown is the counter's exact
//! value at its read time (a read pinned there sums to it), with one writer and with several
//! at once; through proxies that drop every connection for a while, drop chunks at random,
//! go silent, or go away for good, the stream reconnects without a panic and ends at the
//! total, or ends with `Error::Listen` once its reconnections are spent.

use std::time::Duration;

use futures::StreamExt as _;
use serde::{Deserialize, Serialize};
use sharded_emulator::fault_proxy::{FaultProxy, Faults};
use sharded_runtime::counters::CounterSnapshot;
use sharded_runtime::firestore::{FirestoreConsistencySelector, FirestoreDb, FirestoreTimestamp};
use sharded_runtime::listen::ListenOptions;
use sharded_runtime::{Error, Sharded};
use sharded_tests::live::{LiveCounter, next_counter_value};
use sharded_tests::test_db;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "posted_at", collection = "live_counted")]
struct Post {
    #[sharded(index)]
    author: String,
    #[sharded(counter(shards = 20))]
    likes: i64,
    posted_at: FirestoreTimestamp,
}

/// Asserts that each of `seen` is the counter's value read at its read time.
async fn assert_exact_at_read_times(db: &FirestoreDb, id: &str, seen: &[CounterSnapshot]) {
    for snapshot in seen {
        let at = sharded_runtime::firestore::jiff::Timestamp::try_from(snapshot.read_time).unwrap();
        let then = db.clone_with_consistency_selector(FirestoreConsistencySelector::ReadTime(at));
        assert_eq!(
            Post::collection(&then)
                .counter(id, Post::counters().likes)
                .await
                .unwrap(),
            snapshot.value,
            "{id}: {snapshot:?} of {seen:?}"
        );
    }
}

/// `writers` tasks, each adding 1 `per_writer` times to the counter of `id` through `db`.
fn writers(
    db: &FirestoreDb,
    id: &'static str,
    writers: usize,
    per_writer: usize,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..writers)
        .map(|_| {
            let db = db.clone();
            tokio::spawn(async move {
                for _ in 0..per_writer {
                    Post::collection(&db)
                        .increment(id, Post::counters().likes, 1)
                        .await
                        .unwrap();
                }
            })
        })
        .collect()
}

/// The values of `live` until one is `total`, each above the last.
async fn values_until(live: &mut LiveCounter, total: i64) -> Vec<CounterSnapshot> {
    let mut seen: Vec<CounterSnapshot> = Vec::new();
    while seen.last().is_none_or(|last| last.value != total) {
        let snapshot = next_counter_value(live).await;
        if let Some(last) = seen.last() {
            assert!(snapshot.value > last.value, "{seen:?} then {snapshot:?}");
            assert!(
                snapshot.read_time > last.read_time,
                "{seen:?} then {snapshot:?}"
            );
        }
        seen.push(snapshot);
    }
    seen
}

/// With 2 and 4 writers at once, every value shown is the value at its read time. The
/// emulator's stream alone was short of it at 37 of 182 and 41 of 135 points
/// (`server_listen_consistency.rs`); the counter reads each value at its read time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_counter_is_exact_at_its_read_time_with_concurrent_writers() {
    let test = test_db("live-counter-writers").await;
    let db = &test.db;
    for (id, count) in [("two", 2), ("four", 4)] {
        let mut live = Post::collection(db)
            .listen_counter(id, Post::counters().likes)
            .unwrap();
        // The first value before any writer starts, so that the writes land after it: a
        // stream slow to open under load (CI) once showed the total as its first value.
        let mut seen = vec![next_counter_value(&mut live).await];
        assert_eq!(seen[0].value, 0, "{id}: {seen:?}");
        let tasks = writers(db, id, count, 40);
        seen.extend(values_until(&mut live, count as i64 * 40).await);
        for task in tasks {
            task.await.unwrap();
        }
        assert!(seen.len() >= 2, "{id}: only {} values", seen.len());
        assert_exact_at_read_times(db, id, &seen).await;
    }
}

/// Through a proxy that drops 1 % of the chunks it forwards, either way, while 3 writers
/// increment: the stream reconnects (a reconnection that fails leaves it without a stream,
/// which panicked before) and retries its reads, every value is exact at its read time, and
/// the last is the total.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_counter_goes_on_through_a_proxy_that_drops_chunks() {
    let test = test_db("live-counter-chunks").await;
    let proxy = FaultProxy::start(
        test.emulator.host(),
        Faults {
            seed: sharded_tests::seed("live-counter-chunks"),
            drop_chance: 0.01,
            ..Faults::NONE
        },
    )
    .await
    .unwrap();
    let via = sharded_tests::same_project_via(&test.db, &proxy.host()).await;
    let options = ListenOptions::default().with_idle_timeout(Some(Duration::from_secs(5)));
    let mut live = Post::collection(&via)
        .listen_counter_with("p", Post::counters().likes, options)
        .unwrap();
    let mut seen = Vec::new();
    // Rounds go on until connections were dropped: how many chunks carry the answers (so how
    // many the proxy may drop) depends on the machine's load, and a loaded run of the whole
    // suite once saw none dropped in 10 rounds.
    for round in 0..30 {
        let tasks = writers(&test.db, "p", 3, 20);
        seen.extend(values_until(&mut live, (round + 1) * 60).await);
        for task in tasks {
            task.await.unwrap();
        }
        if proxy.dropped() >= 3 {
            break;
        }
    }
    assert!(
        proxy.dropped() > 0,
        "no connection was dropped in 30 rounds"
    );
    assert_exact_at_read_times(&test.db, "p", &seen).await;
}

/// A proxy that goes away for good: each reconnection fails at once (refused), which left the
/// stream without a stream to read and panicked; now the stream ends with `Error::Listen` once
/// `reconnects` failures in a row are spent, and then has no more items.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_counter_whose_server_goes_away_ends_with_an_error() {
    let test = test_db("live-counter-gone").await;
    let proxy = FaultProxy::start(test.emulator.host(), Faults::NONE)
        .await
        .unwrap();
    let via = sharded_tests::same_project_via(&test.db, &proxy.host()).await;
    Post::collection(&test.db)
        .increment("p", Post::counters().likes, 3)
        .await
        .unwrap();
    let options = ListenOptions::default()
        .with_reconnects(Some(2))
        .with_first_retry(Duration::from_millis(50))
        .with_max_retry(Duration::from_millis(100));
    let mut live = Post::collection(&via)
        .listen_counter_with("p", Post::counters().likes, options)
        .unwrap();
    assert_eq!(next_counter_value(&mut live).await.value, 3);
    drop(proxy);
    let ended = tokio::time::timeout(Duration::from_secs(30), live.next())
        .await
        .expect("an answer within 30 s")
        .expect("an error, not the end");
    assert!(matches!(ended, Err(Error::Listen { .. })), "{ended:?}");
    assert!(live.next().await.is_none(), "the error is the last item");
}

/// A live counter: each value it shows is the counter's exact value at its read time (a read
/// pinned there sums to it), the values only grow while positive increments land from another
/// task, and the last is their total; through a proxy that drops every connection for a
/// while as increments land, the stream reconnects, resumes from its token and still ends at
/// the total.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_counter_shows_exact_values_as_increments_land() {
    let test = test_db("counter-listen").await;
    let proxy = FaultProxy::start(
        test.emulator.host(),
        Faults {
            drop_chance: 1.0,
            ..Faults::NONE
        },
    )
    .await
    .unwrap();
    // Faithful until the listener has shown its first value.
    proxy.set_faults(false);
    let db = test.db.clone();
    let likes = Post::counters().likes;
    for (id, via) in [
        ("clean", test.db.clone()),
        (
            "faulty",
            sharded_tests::same_project_via(&test.db, &proxy.host()).await,
        ),
    ] {
        Post::collection(&db).increment(id, likes, 5).await.unwrap();
        let mut live = Post::collection(&via).listen_counter(id, likes).unwrap();
        let first = next_counter_value(&mut live).await;
        assert_eq!(first.value, 5, "{id}");
        let writer = {
            let db = db.clone();
            tokio::spawn(async move {
                for by in 1..=20 {
                    Post::collection(&db)
                        .increment(id, likes, by)
                        .await
                        .unwrap();
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
            })
        };
        if id == "faulty" {
            // Every connection through the proxy drops while increments land: the listener's
            // too, and each reconnection, until the network is back.
            proxy.set_faults(true);
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            proxy.set_faults(false);
        }
        let mut seen = vec![first];
        while seen.last().unwrap().value != 215 {
            let snapshot = next_counter_value(&mut live).await;
            assert!(
                snapshot.value > seen.last().unwrap().value,
                "{id}: {seen:?} then {snapshot:?}"
            );
            seen.push(snapshot);
        }
        writer.await.unwrap();
        for snapshot in &seen {
            let at =
                sharded_runtime::firestore::jiff::Timestamp::try_from(snapshot.read_time).unwrap();
            let then =
                db.clone_with_consistency_selector(FirestoreConsistencySelector::ReadTime(at));
            assert_eq!(
                Post::collection(&then).counter(id, likes).await.unwrap(),
                snapshot.value,
                "{id}: {snapshot:?}"
            );
        }
    }
    assert!(proxy.dropped() > 0, "no connection was dropped");
    // A pinned client has no present to show.
    let past = db.clone_with_consistency_selector(FirestoreConsistencySelector::ReadTime(
        sharded_runtime::firestore::jiff::Timestamp::now()
            .round(sharded_runtime::firestore::jiff::Unit::Second)
            .unwrap(),
    ));
    assert!(matches!(
        Post::collection(&past).listen_counter("clean", likes),
        Err(Error::InvalidQuery(_))
    ));
}

/// A live counter whose connection dies without closing (a NAT that dropped its state): with
/// an idle timeout it opens a fresh connection after the silence, resumes, and ends at the
/// total of the increments that landed meanwhile. Options out of range are refused first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_counter_recovers_from_a_silent_connection_after_its_idle_timeout() {
    let test = test_db("counter-listen-silent").await;
    let proxy = FaultProxy::start(test.emulator.host(), Faults::NONE)
        .await
        .unwrap();
    let via = sharded_tests::same_project_via(&test.db, &proxy.host()).await;
    let likes = Post::counters().likes;
    let posts = Post::collection(&test.db);
    posts.increment("p", likes, 1).await.unwrap();
    let options =
        ListenOptions::default().with_idle_timeout(Some(std::time::Duration::from_secs(2)));
    let mut live = Post::collection(&via)
        .listen_counter_with("p", likes, options)
        .unwrap();
    assert_eq!(next_counter_value(&mut live).await.value, 1);
    proxy.kill_open_connections_silently();
    for by in 1..=10 {
        posts.increment("p", likes, by).await.unwrap();
    }
    let mut last = 1;
    while last != 56 {
        let snapshot = next_counter_value(&mut live).await;
        assert!(snapshot.value > last, "{snapshot:?} after {last}");
        last = snapshot.value;
    }
    assert!(
        proxy.connections() >= 2,
        "the listener did not open a fresh connection"
    );
    assert!(matches!(
        Post::collection(&via).listen_counter_with(
            "p",
            likes,
            ListenOptions::default().with_idle_timeout(Some(std::time::Duration::ZERO))
        ),
        Err(Error::InvalidOptions { .. })
    ));
}
