//! Every live stream of the library through connections that fall silent (a proxy that lets
//! each connection work for 2 s, then keeps it open and forwards nothing either way, as a NAT
//! that dropped its state does), while writes keep landing: a live counter, a counter kept
//! folded and a live query each notice the silence by their idle timeout (3 s), whether it
//! meets their stream or a read or fold beside it, go on over a fresh connection, and end at
//! the total. And the rate a live counter shows values at, under 25 and 250 increments a
//! second: never two values within a quarter of a second.

use std::time::Duration;

use futures::StreamExt as _;
use serde::{Deserialize, Serialize};
use sharded_emulator::fault_proxy::{FaultProxy, Faults};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::{FirestoreConsistencySelector, FirestoreDb, FirestoreTimestamp};
use sharded_runtime::listen::ListenOptions;
use sharded_tests::live::{Reading as _, next_counter_value};
use sharded_tests::test_db;

sharded_tests::live_readings!(Feed, 3, "asc", "live_silent_feed");

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "posted_at", collection = "live_silent_counted")]
struct Post {
    #[sharded(counter(shards = 5))]
    likes: i64,
    posted_at: FirestoreTimestamp,
}

/// Increments of 1 to `id`'s likes through `db`, `count` of them, one every `every`.
async fn paced_increments(db: FirestoreDb, id: &'static str, count: u32, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    for _ in 0..count {
        ticks.tick().await;
        Post::collection(&db)
            .increment(id, Post::counters().likes, 1)
            .await
            .unwrap();
    }
}

/// The counter's value at `read_time`, read directly.
async fn value_at(db: &FirestoreDb, id: &str, read_time: std::time::SystemTime) -> i64 {
    let at = sharded_runtime::firestore::jiff::Timestamp::try_from(read_time).unwrap();
    let then = db.clone_with_consistency_selector(FirestoreConsistencySelector::ReadTime(at));
    Post::collection(&then)
        .counter(id, Post::counters().likes)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_live_stream_goes_on_over_connections_that_fall_silent() {
    let test = test_db("live-silent-connections").await;
    let db = test.db.clone();
    let proxy = FaultProxy::start(test.emulator.host(), Faults::NONE)
        .await
        .unwrap();
    proxy.set_silent_after(Some(Duration::from_secs(2)));
    let via = sharded_tests::same_project_via(&db, &proxy.host()).await;
    let options = ListenOptions::default()
        .with_idle_timeout(Some(Duration::from_secs(3)))
        .with_first_retry(Duration::from_millis(50));
    let likes = Post::counters().likes;
    Post::collection(&db)
        .upsert(
            "p",
            &Post {
                likes: 0,
                posted_at: FirestoreTimestamp::now(),
            },
        )
        .await
        .unwrap();
    const INCREMENTS: u32 = 200;
    const READINGS: u32 = 40;

    let counter = Post::collection(&via)
        .listen_counter_with("p", likes, options)
        .unwrap();
    let folds = Post::collection(&via)
        .keep_folded_with("p", likes, Duration::from_secs(1), options)
        .unwrap();
    let feed = Feed::all().listen_with(&via, options).unwrap();

    // 8 s of writes, straight to the emulator: an increment every 40 ms, a reading every 200.
    let increments = tokio::spawn(paced_increments(
        db.clone(),
        "p",
        INCREMENTS,
        Duration::from_millis(40),
    ));
    let readings = tokio::spawn({
        let db = db.clone();
        async move {
            let mut ticks = tokio::time::interval(Duration::from_millis(200));
            for seq in 0..READINGS {
                ticks.tick().await;
                Feed::collection(&db)
                    .upsert(
                        &format!("r{seq}"),
                        &Feed::new("XNAS", seq.into(), seq.into()),
                    )
                    .await
                    .unwrap();
            }
        }
    });

    // Well under the two minutes gRPC's keepalive takes to give up on a dead connection
    // (which is how a read without the idle timeout came back, in 126 s).
    let within = Duration::from_secs(45);
    let counter = tokio::spawn(async move {
        let mut counter = counter;
        let mut seen = Vec::new();
        while seen
            .last()
            .is_none_or(|last: &sharded_runtime::counters::CounterSnapshot| {
                last.value != i64::from(INCREMENTS)
            })
        {
            seen.push(counter.next().await.expect("the stream goes on").unwrap());
        }
        seen
    });
    let folds = tokio::spawn(async move {
        let mut folds = folds;
        let mut last = None;
        while last != Some(i64::from(INCREMENTS)) {
            last = Some(folds.next().await.expect("the folds go on").unwrap().value);
        }
    });
    let feed = tokio::spawn(async move {
        let mut feed = feed;
        loop {
            let snapshot = feed.next().await.expect("the stream goes on").unwrap();
            if snapshot.documents.len() == READINGS as usize {
                return snapshot;
            }
        }
    });
    increments.await.unwrap();
    readings.await.unwrap();
    let seen = tokio::time::timeout(within, counter)
        .await
        .expect("the live counter reached the total")
        .unwrap();
    tokio::time::timeout(within, folds)
        .await
        .expect("the kept fold reached the total")
        .unwrap();
    let last = tokio::time::timeout(within, feed)
        .await
        .expect("the live query reached every reading")
        .unwrap();

    for snapshot in seen.iter().step_by(seen.len().div_ceil(10)) {
        assert_eq!(
            value_at(&db, "p", snapshot.read_time).await,
            snapshot.value,
            "{snapshot:?}"
        );
    }
    assert_eq!(
        sharded_tests::live::shown(&last.documents),
        sharded_tests::live::shown(&Feed::all().fetch_stored(&db).await.unwrap())
    );
    assert!(
        proxy.connections() >= 4,
        "only {} connections: the silences were not met",
        proxy.connections()
    );
}

/// The emission rule the README states: a value at most every 250 ms, the last change always
/// shown. Under 25 and 250 increments a second, no two values come within 200 ms of each
/// other (250 ms less room for the scheduler between the stream and this test), and the
/// last is the total. Before, 25 a second gave 31 values within one second, 0 ms apart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_counter_shows_a_value_at_most_every_quarter_second() {
    let test = test_db("live-counter-rate").await;
    let db = &test.db;
    for (id, writers) in [("slow", 1), ("fast", 10)] {
        // Each writer adds 25 a second for 3 s.
        let per_writer = 75;
        let mut live = Post::collection(db)
            .listen_counter(id, Post::counters().likes)
            .unwrap();
        // The first value (0) before any writer starts, so that a stream slow to open under
        // load cannot pass over the increments and show only the total.
        let first = next_counter_value(&mut live).await;
        assert_eq!(first.value, 0, "{id}");
        let mut shown = vec![(first.value, tokio::time::Instant::now())];
        let tasks: Vec<_> = (0..writers)
            .map(|_| {
                tokio::spawn(paced_increments(
                    db.clone(),
                    id,
                    per_writer,
                    Duration::from_millis(40),
                ))
            })
            .collect();
        let total = i64::from(writers * per_writer);
        while shown.last().is_none_or(|(value, _)| *value != total) {
            let snapshot = next_counter_value(&mut live).await;
            shown.push((snapshot.value, tokio::time::Instant::now()));
        }
        for task in tasks {
            task.await.unwrap();
        }
        let gaps: Vec<Duration> = shown.windows(2).map(|pair| pair[1].1 - pair[0].1).collect();
        assert!(shown.len() >= 3, "{id}: only {} values", shown.len());
        assert!(
            gaps.iter().all(|gap| *gap >= Duration::from_millis(200)),
            "{id}: values {:?} apart",
            gaps
        );
    }
}
