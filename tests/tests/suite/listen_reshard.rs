//! Live queries while a rebalance moves every document out of retired shard values, through
//! a proxy that drops connections and loses answers: the documents a query matches do not
//! change, so every snapshot holds the full top 40, and the last equals `fetch()`. The
//! failure this guards against (a resumed target taking a partial resend for its whole
//! result: 35 of 40) needs a drop in the middle of a resend that the resumed stream does not
//! repeat; the protocol tests in `listen/targets.rs` script it exactly, and this test did not
//! provoke it on the emulator even before the fix: it checks the whole path end to end.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use sharded_emulator::fault_proxy::{FaultProxy, Faults};
use sharded_runtime::bounds::Window;
use sharded_runtime::{Sharded, ShardedQuery, listen::QuerySnapshot, reads::InCollection};
use sharded_tests::live::{check_snapshots, shown};
use sharded_tests::migration::unthrottled;
use sharded_tests::{same_project_via, test_db};

/// The type before: six shard values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 6,
    order_by = "at",
    direction = "desc",
    collection = "moving_live"
)]
struct Six {
    #[sharded(index)]
    venue: String,
    at: i64,
    seq: i64,
}

// The type while the set shrinks to three: queries read all six.
sharded_tests::live_readings!(
    #[sharded(
        shards = 3,
        previous(shards = 6),
        order_by = "at",
        direction = "desc",
        collection = "moving_live"
    )]
    Shrinking
);

type Collected = Arc<Mutex<Vec<QuerySnapshot<Shrinking>>>>;

fn collect<const Q: u64, W: Window>(
    query: &ShardedQuery<Shrinking, Q, InCollection, W>,
    db: &sharded_runtime::firestore::FirestoreDb,
) -> (Collected, tokio::task::JoinHandle<()>) {
    let snapshots: Collected = Arc::default();
    let mut stream = query.listen(db).unwrap();
    let collected = snapshots.clone();
    let task = tokio::spawn(async move {
        while let Some(snapshot) = stream.next().await {
            collected
                .lock()
                .unwrap()
                .push(snapshot.expect("no listen error"));
        }
    });
    (snapshots, task)
}

async fn settle<const Q: u64, W: Window>(
    snapshots: &Collected,
    query: &ShardedQuery<Shrinking, Q, InCollection, W>,
    db: &sharded_runtime::firestore::FirestoreDb,
) {
    let expected = shown(&query.fetch_stored(db).await.unwrap());
    for _ in 0..600 {
        let last = snapshots
            .lock()
            .unwrap()
            .last()
            .map(|s| shown(&s.documents));
        if last.as_ref() == Some(&expected) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the last snapshot never equalled fetch()");
}

/// It failed about one run in six inside the whole suite before the listener checked reset
/// targets, on the emulator's protocol, not the listener's state. Traced (a limited target
/// after a reconnect): RESET, 21 documents, RESET again, 19 documents, then CURRENT and a
/// global NO_CHANGE, so the server declared the target consistent with 19 of its 40
/// documents and sent the other 21 after. A target sent afresh is now counted at the read
/// time of that point and read again when short (`listen/verify.rs`, whose test provokes the
/// correction deterministically); run alone, this test rarely meets the emulator's race.
#[tokio::test]
async fn live_queries_keep_every_document_while_a_rebalance_moves_them() {
    for seed in [1u64, 2, 3] {
        let test = test_db("listen-reshard").await;
        let old = Six::collection(&test.db);
        let writer = sharded_runtime::bulk::BulkWriter::new(&test.db, unthrottled()).unwrap();
        for n in 0..1_000i64 {
            let six = Six {
                venue: ["XNAS", "XLON"][(n % 2) as usize].into(),
                at: n % 200,
                seq: n,
            };
            drop(writer.upsert(&format!("r{n:03}"), &six).await.unwrap());
        }
        writer.close().await.unwrap();
        assert_eq!(old.verify().await.unwrap().current, 1_000);

        // Drops often enough that some land in the middle of a target's resend.
        let proxy = FaultProxy::start(
            test.emulator.host(),
            Faults {
                seed,
                drop_chance: 0.05,
                lost_answer_chance: 0.02,
                delay_chance: 0.05,
                max_delay: Duration::from_millis(10),
                ..Faults::NONE
            },
        )
        .await
        .unwrap();
        let listener_db = same_project_via(&test.db, &proxy.host()).await;
        let feed = Shrinking::query().all().limit(40);
        let venue = Shrinking::query().venue("XNAS").limit(40);
        let (feed_snapshots, feed_task) = collect(&feed, &listener_db);
        let (venue_snapshots, venue_task) = collect(&venue, &listener_db);
        for _ in 0..600 {
            if !feed_snapshots.lock().unwrap().is_empty()
                && !venue_snapshots.lock().unwrap().is_empty()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let progress = Shrinking::collection(&test.db)
            .rebalance()
            .page_size(50)
            .writer(unthrottled())
            .run(|_| {})
            .await
            .unwrap();
        assert!(progress.updated > 100, "{progress:?}");
        settle(&feed_snapshots, &feed, &test.db).await;
        settle(&venue_snapshots, &venue, &test.db).await;
        feed_task.abort();
        venue_task.abort();
        assert!(
            proxy.dropped() > 0,
            "seed {seed}: the proxy dropped nothing"
        );
        for (name, snapshots) in [("feed", &feed_snapshots), ("venue", &venue_snapshots)] {
            let snapshots = snapshots.lock().unwrap();
            let short: Vec<usize> = snapshots
                .iter()
                .map(|s| s.documents.len())
                .filter(|&len| len != 40)
                .collect();
            assert!(
                short.is_empty(),
                "seed {seed} {name}: snapshots of {short:?} documents, not 40"
            );
            check_snapshots(&snapshots, Some(40));
        }
        assert_eq!(
            Shrinking::collection(&test.db)
                .verify()
                .await
                .unwrap()
                .retired,
            0
        );
    }
}
