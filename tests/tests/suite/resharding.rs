//! Resharding on the emulator: while the previous set is declared, queries read both sets and
//! no document drops out; rebalance moves every document out of the retired values through
//! dropped connections, beside a concurrent writer, across an interruption; and new values
//! take writes gradually, by the 500/50/5 schedule in virtual time.

use std::collections::BTreeMap;
use std::time::Duration;

use sharded_runtime::bulk::BulkWriter;
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};
use sharded_runtime::reshard::{draw_at, new_values_share};
use sharded_runtime::{Sharded, jobs::ShardCensus};
use sharded_tests::equivalence::{check_query, unsharded_ids};
use sharded_tests::migration::{
    assert_nothing_outstanding, concurrent_writer, expected_state, faulty_client, run_interrupted,
    run_to_end, stored_state, unthrottled,
};
use sharded_tests::models::growing::{Six, Thirty, Three};
use sharded_tests::models::moving::{After, Before, During};
use sharded_tests::test_db;

const VENUES: [&str; 3] = ["v0", "v1", "v2"];

macro_rules! reading {
    ($name:ident: $ty:ty) => {
        fn $name(n: u32) -> $ty {
            <$ty>::new_reading(n)
        }
    };
}

trait Reading {
    fn new_reading(n: u32) -> Self;
}

macro_rules! impl_reading {
    ($($ty:ty),*) => {$(
        impl Reading for $ty {
            fn new_reading(n: u32) -> Self {
                Self {
                    venue: VENUES[n as usize % 3].into(),
                    at: sharded_examples::at(&format!(
                        "2026-11-22T{:02}:{:02}:{:02}Z",
                        (n / 3600) % 24,
                        (n / 60) % 60,
                        n % 60
                    )),
                    seq: i64::from(n),
                }
            }
        }
    )*};
}

impl_reading!(Before, During, Three, Six);
reading!(before: Before);
reading!(during: During);
reading!(three: Three);

/// Every venue query of `T` equals the unsharded query over the whole collection.
async fn queries_equal_unsharded<T: Sharded + HasVenueQuery>(db: &FirestoreDb, what: &str) {
    for venue in VENUES {
        let expected = unsharded_ids::<T>(db, "venue", venue).await;
        T::check_venue(db, venue, expected, &format!("{what}: {venue}")).await;
    }
}

trait HasVenueQuery {
    async fn check_venue(db: &FirestoreDb, venue: &str, expected: Vec<String>, what: &str);
}

macro_rules! impl_venue_query {
    ($($ty:ty),*) => {$(
        impl HasVenueQuery for $ty {
            async fn check_venue(db: &FirestoreDb, venue: &str, expected: Vec<String>, what: &str) {
                check_query(db, <$ty>::query().venue(venue), Ok(expected), 1_000, what).await;
            }
        }
    )*};
}

impl_venue_query!(Before, During, After, Six);

fn shard_counts(
    state: &BTreeMap<
        String,
        (
            sharded_tests::migration::Fields,
            Option<sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::Value>,
        ),
    >,
) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for (_, shard) in state.values() {
        let shard = match shard.as_ref().and_then(|v| v.value_type.as_ref()) {
            Some(ValueType::StringValue(shard)) => shard.clone(),
            other => format!("{other:?}"),
        };
        *counts.entry(shard).or_default() += 1;
    }
    counts
}

#[tokio::test]
async fn rebalance_moves_every_document_out_of_retired_values_and_none_drops_out() {
    assert_eq!(During::READ_SHARD_VALUES, ["c", "d", "a", "b"]);
    assert_eq!(During::DESCRIPTION.previous_shard_values, ["a", "b", "c"]);
    let test = test_db("rebalance").await;
    let db = &test.db;

    // 10,000 documents written over ["a", "b", "c"].
    let seed = BulkWriter::new(db, unthrottled()).unwrap();
    let mut ids = Vec::new();
    for n in 0..10_000 {
        let id = format!("{:016x}", rand::random::<u64>());
        drop(seed.upsert(&id, &before(n)).await.unwrap());
        ids.push(id);
    }
    seed.close().await.unwrap();
    let before_state = stored_state(db, Before::COLLECTION, Before::SHARD_FIELD).await;
    assert_eq!(before_state.len(), 10_000);

    // Declaring the new set with the previous one: nothing has moved, and every query
    // already equals the unsharded one, since it reads both sets.
    let census = During::collection(db).verify().await.unwrap();
    assert_eq!(census.scanned, 10_000);
    assert!(
        census.retired > 6_000 && census.current > 3_000,
        "{census:?}"
    );
    queries_equal_unsharded::<During>(db, "declared").await;

    let (proxy, faulty) = faulty_client(&test, 23).await;
    let collection = During::collection(&faulty);
    let touched: Vec<String> = ids.iter().step_by(10).cloned().collect();
    let (first_half, second_half) = touched.split_at(touched.len() / 2);
    let seq = During::fields().seq;

    // Interrupted part-way, with a writer beside it.
    let writer = concurrent_writer(db.clone(), first_half.to_vec(), during, seq);
    let checkpoint = run_interrupted(
        collection.rebalance().page_size(500).writer(unthrottled()),
        5,
    )
    .await;
    let mut changes = writer.await.unwrap();

    // Half moved: every document still in exactly one query result.
    proxy.set_faults(false);
    queries_equal_unsharded::<During>(db, "half moved").await;
    proxy.set_faults(true);

    // Resumed, with a writer beside it again.
    let writer = concurrent_writer(db.clone(), second_half.to_vec(), during, seq);
    let resumed = run_to_end(
        collection
            .rebalance()
            .page_size(500)
            .writer(unthrottled())
            .resume_from(checkpoint),
    )
    .await
    .unwrap();
    changes.extend(writer.await.unwrap());
    assert!(resumed.updated > 0);
    proxy.set_faults(false);
    assert!(proxy.dropped() > 0, "the proxy dropped no connection");

    // The writers' own writes draw from the new set, so nothing is left to move; a second
    // rebalance changes nothing.
    let again = run_to_end(During::collection(db).rebalance())
        .await
        .unwrap();
    assert_eq!(again.updated, 0, "{again:?}");
    let census = During::collection(db).verify().await.unwrap();
    assert_eq!(
        census,
        ShardCensus {
            scanned: census.scanned,
            current: census.scanned,
            retired: 0,
            missing: 0,
            missing_ids: Vec::new(),
        }
    );

    // Every document once, its fields as written, now in "c" or "d".
    let after_state = stored_state(db, During::COLLECTION, During::SHARD_FIELD).await;
    let expected = expected_state(&before_state, &changes);
    assert_eq!(after_state.len(), expected.len());
    for (id, (fields, _)) in &after_state {
        assert_eq!(Some(fields), expected.get(id), "document {id}");
    }
    let counts = shard_counts(&after_state);
    assert_eq!(counts.keys().collect::<Vec<_>>(), ["c", "d"], "{counts:?}");

    // With the declaration dropped, queries over ["c", "d"] alone equal the unsharded ones.
    queries_equal_unsharded::<During>(db, "moved").await;
    queries_equal_unsharded::<After>(db, "declaration dropped").await;
}

/// `retired(...)` is the proof, taken in the database, that the rebalance ran: before it has,
/// every read of the type after the change (fetch, count, stream, listen) fails with
/// `NotRebalanced` naming a document still in a retired value, instead of a result missing
/// it; `rebalance()` with that same type moves them, and then its queries equal the
/// unsharded ones.
#[tokio::test]
async fn reads_of_retired_values_refuse_until_the_rebalance_ran() {
    use futures::StreamExt;
    use sharded_runtime::Error;
    assert_eq!(After::READ_SHARD_VALUES, ["c", "d"]);
    assert_eq!(After::DESCRIPTION.retired_shard_values, ["a", "b"]);
    let test = test_db("retired").await;
    let db = &test.db;
    let seed = BulkWriter::new(db, unthrottled()).unwrap();
    for n in 0..60 {
        drop(seed.upsert(&format!("r{n:03}"), &before(n)).await.unwrap());
    }
    seed.close().await.unwrap();
    let state = stored_state(db, Before::COLLECTION, Before::SHARD_FIELD).await;
    let in_retired = shard_counts(&state)
        .iter()
        .filter(|(shard, _)| ["a", "b"].contains(&shard.as_str()))
        .map(|(_, count)| *count as u64)
        .sum::<u64>();
    assert!(in_retired > 0);

    let not_rebalanced = |error: Error| match error {
        Error::NotRebalanced {
            collection,
            document,
            value,
        } => {
            assert_eq!(collection, "moving");
            assert!(["a", "b"].contains(&value.as_str()), "{value}");
            let id = document.rsplit('/').next().unwrap();
            assert_eq!(
                state[id].1.as_ref().and_then(|v| v.value_type.clone()),
                Some(ValueType::StringValue(value)),
                "{document}"
            );
        }
        other => panic!("expected NotRebalanced, got {other}"),
    };
    let query = After::query().venue("v0");
    not_rebalanced(query.fetch(db).await.unwrap_err());
    not_rebalanced(query.count(db).await.unwrap_err());
    not_rebalanced(After::query().all().fetch(db).await.unwrap_err());
    not_rebalanced(query.stream(db).await.err().expect("refused"));
    let mut snapshots = query.listen(db).unwrap();
    not_rebalanced(snapshots.next().await.unwrap().unwrap_err());
    assert!(snapshots.next().await.is_none(), "the stream ends");
    // The census counts them as retired; the job with the same type moves them.
    let census = After::collection(db).verify().await.unwrap();
    assert_eq!(
        (census.retired, census.outstanding()),
        (in_retired, in_retired)
    );
    let done = run_to_end(After::collection(db).rebalance()).await.unwrap();
    assert_eq!(done.updated, in_retired, "{done:?}");
    assert_nothing_outstanding::<After>(db).await;
    queries_equal_unsharded::<After>(db, "rebalanced").await;
    let first = snapshots_of(After::query().venue("v1").listen(db).unwrap()).await;
    assert_eq!(first, unsharded_ids::<After>(db, "venue", "v1").await);
}

/// The ids of a live query's first snapshot.
async fn snapshots_of(
    mut snapshots: sharded_runtime::listen::SnapshotStream<After>,
) -> Vec<String> {
    use futures::StreamExt;
    let snapshot = snapshots.next().await.unwrap().unwrap();
    snapshot.documents.iter().map(|d| d.id.clone()).collect()
}

/// Growing from 3 to 6 keeps "0" to "2": every document is current already, nothing moves,
/// and queries over the six values equal the unsharded ones at once.
#[tokio::test]
async fn growing_keeps_the_old_values_so_nothing_moves() {
    let test = test_db("growing").await;
    let db = &test.db;
    let seed = BulkWriter::new(db, unthrottled()).unwrap();
    for n in 0..600 {
        drop(
            seed.upsert(&format!("{:016x}", rand::random::<u64>()), &three(n))
                .await
                .unwrap(),
        );
    }
    seed.close().await.unwrap();
    let census = Six::collection(db).verify().await.unwrap();
    assert_eq!(
        census,
        ShardCensus {
            scanned: 600,
            current: 600,
            retired: 0,
            missing: 0,
            missing_ids: Vec::new(),
        }
    );
    let moved = run_to_end(Six::collection(db).rebalance()).await.unwrap();
    assert_eq!((moved.scanned, moved.updated), (600, 0));
    queries_equal_unsharded::<Six>(db, "grown").await;
    for n in 0..300 {
        Six::collection(db)
            .upsert(&format!("six{n:03}"), &Six::new_reading(n))
            .await
            .unwrap();
    }
    queries_equal_unsharded::<Six>(db, "grown and written").await;
}

/// The share of writes new values take follows 500/50/5 in virtual time, up to their full
/// share: 3 → 6 gives the new three 1/3 for five minutes, then 1/2; 3 → 30 gives the new 27
/// 1/3, 1/2, 3/4 and then 9/10.
#[test]
fn new_values_take_writes_by_the_ramp() {
    const MINUTE: Duration = Duration::from_secs(60);
    assert_eq!(Six::NEW_SHARD_VALUES, ["3", "4", "5"]);
    assert_eq!(Six::KEPT_SHARD_VALUES, ["0", "1", "2"]);
    assert_eq!(
        Six::DESCRIPTION.reshard_since,
        Some(1_795_374_000),
        "2026-11-22T19:00:00Z"
    );
    let schedule = |at: &[u64], share: fn(Duration) -> f64| -> Vec<f64> {
        at.iter().map(|&m| share(MINUTE * m as u32)).collect()
    };
    assert_eq!(
        schedule(&[0, 4, 5, 60], new_values_share::<Six>),
        [1.0 / 3.0, 1.0 / 3.0, 0.5, 0.5]
    );
    assert_eq!(
        schedule(&[0, 5, 10, 15, 600], new_values_share::<Thirty>),
        [1.0 / 3.0, 0.5, 0.75, 0.9, 0.9]
    );
    // ["a", "b", "c"] → ["c", "d"]: "d" is new and starts with 500 of the 1,500 writes/s the
    // previous set was sized for.
    assert_eq!(
        schedule(&[0, 5], new_values_share::<During>),
        [1.0 / 3.0, 0.5]
    );

    // The draws follow the share, and stay in the current set.
    for (minutes, expected) in [(0u32, 1.0 / 3.0), (7, 0.5)] {
        let draws = 60_000;
        let mut new = 0;
        for _ in 0..draws {
            let shard = draw_at::<Six>(Some(MINUTE * minutes));
            assert!(Six::SHARD_VALUES.contains(&shard));
            new += usize::from(Six::NEW_SHARD_VALUES.contains(&shard));
        }
        let share = new as f64 / draws as f64;
        assert!(
            (share - expected).abs() < 0.015,
            "at {minutes} min: {share}"
        );
    }
    for _ in 0..1_000 {
        assert!(["c", "d"].contains(&draw_at::<During>(Some(Duration::ZERO))));
    }
}

/// Before the declared `since`, writes draw only previous values (what a process still on
/// the old type reads), on every write path; a rebalance then has nothing to move to and is
/// refused with nothing sent. From `since` on, new values take their share.
#[tokio::test]
async fn before_since_writes_draw_only_values_old_readers_know() {
    use sharded_runtime::reshard::elapsed_at;
    use sharded_tests::models::scheduled::Later;
    use std::time::UNIX_EPOCH;
    const MINUTE: Duration = Duration::from_secs(60);
    let since = UNIX_EPOCH + Duration::from_secs(4_070_908_800); // 2099-01-01T00:00:00Z
    let before = since - Duration::from_secs(1);
    assert_eq!(elapsed_at::<Later>(before), None);
    assert_eq!(elapsed_at::<Later>(since + MINUTE * 7), Some(MINUTE * 7));
    for _ in 0..1_000 {
        let shard = draw_at::<Later>(elapsed_at::<Later>(before));
        assert!(
            Later::DESCRIPTION.previous_shard_values.contains(&shard),
            "{shard}"
        );
    }
    let after: usize = (0..3_000)
        .map(|_| draw_at::<Later>(elapsed_at::<Later>(since)))
        .filter(|shard| Later::NEW_SHARD_VALUES.contains(shard))
        .count();
    assert!(
        (800..1_200).contains(&after),
        "{after} of 3,000 on new values at `since`"
    );

    // Today is before 2099: every write path draws previous values.
    let test = test_db("reshard-scheduled").await;
    let collection = Later::collection(&test.db);
    let writer = BulkWriter::new(&test.db, unthrottled()).unwrap();
    for n in 0..60u32 {
        let reading = Later {
            venue: VENUES[n as usize % 3].into(),
            at: sharded_examples::at("2026-11-23T08:00:00Z"),
            seq: i64::from(n),
        };
        if n % 2 == 0 {
            collection.upsert(&format!("c{n}"), &reading).await.unwrap();
        } else {
            drop(writer.upsert(&format!("b{n}"), &reading).await.unwrap());
        }
    }
    writer.close().await.unwrap();
    let shards: Vec<String> = sharded_tests::all_documents(&test.db, Later::COLLECTION)
        .await
        .iter()
        .map(|document| {
            sharded_tests::string_field(document, "shard")
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(shards.len(), 60);
    for shard in &shards {
        assert!(
            Later::DESCRIPTION
                .previous_shard_values
                .contains(&shard.as_str()),
            "{shard}"
        );
    }
    let refused = collection.rebalance().run(|_| {}).await;
    assert!(
        matches!(refused, Err(sharded_runtime::Error::ReshardingNotStarted { since: at }) if at == since),
        "{refused:?}"
    );
}

mod first_draws {
    use serde::{Deserialize, Serialize};
    use sharded_runtime::Sharded;

    #[derive(Serialize, Deserialize, Sharded)]
    #[sharded(
        shards = 6,
        previous(shards = 3),
        order_by = "at",
        collection = "first"
    )]
    pub struct First {
        pub at: i64,
    }

    #[derive(Serialize, Deserialize, Sharded)]
    #[sharded(
        shards = 6,
        previous(shards = 3),
        order_by = "at",
        collection = "second"
    )]
    pub struct Second {
        pub at: i64,
    }
}

/// Without `since`, each type's schedule starts when this process first draws for it: a
/// second type resharding later starts at its own beginning, not with the first's clock.
#[test]
fn each_type_keeps_its_own_schedule() {
    use first_draws::{First, Second};
    use sharded_runtime::reshard::elapsed;
    let first = elapsed::<First>().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let second = elapsed::<Second>().unwrap();
    let first_now = elapsed::<First>().unwrap();
    assert!(first_now >= first + Duration::from_millis(50));
    assert!(
        second < first_now,
        "the second type's schedule started with the first's: {second:?} vs {first_now:?}"
    );
}

/// A process still on the type before the change writes retired values behind the scan (a
/// rolling deploy): the job finds them after its scan, by `shard in [retired]`, and fixes
/// them, so it does not report success with documents left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebalance_sweeps_up_what_old_writers_left_behind_its_scan() {
    #[derive(serde::Serialize)]
    struct OldWrite {
        #[serde(flatten)]
        reading: Before,
        shard: &'static str,
    }
    let test = test_db("rebalance-sweep").await;
    let seed = BulkWriter::new(&test.db, unthrottled()).unwrap();
    for n in 0..200 {
        drop(seed.upsert(&format!("m{n:03}"), &before(n)).await.unwrap());
    }
    seed.close().await.unwrap();

    let (go, write_behind) = tokio::sync::oneshot::channel::<()>();
    let (written, wait_for_writes) = std::sync::mpsc::channel::<()>();
    let db = test.db.clone();
    let old_process = tokio::spawn(async move {
        write_behind.await.unwrap();
        // Ids sorting before every scanned one: behind the scan, with a retired value.
        let old = BulkWriter::new(&db, unthrottled()).unwrap();
        for n in 0..40 {
            let write = OldWrite {
                reading: before(1_000 + n),
                shard: ["a", "b"][n as usize % 2],
            };
            drop(
                old.set(During::COLLECTION, &format!("a{n:03}"), &write)
                    .await
                    .unwrap(),
            );
        }
        old.close().await.unwrap();
        written.send(()).unwrap();
    });
    let mut go = Some(go);
    let progress = During::collection(&test.db)
        .rebalance()
        .page_size(50)
        .writer(unthrottled())
        .run(move |_| {
            if let Some(go) = go.take() {
                go.send(()).unwrap();
                wait_for_writes
                    .recv_timeout(Duration::from_secs(60))
                    .expect("the old process wrote");
            }
        })
        .await
        .unwrap();
    old_process.await.unwrap();
    assert_eq!(progress.swept, 40, "{progress:?}");
    let census = During::collection(&test.db).verify().await.unwrap();
    assert_eq!((census.retired, census.missing), (0, 0), "{census:?}");
    assert_eq!(census.scanned, 240);
}

/// A rebalance split into parts (`IdRange::part`) sweeps its own range only: documents of
/// other parts that still hold a retired value are left to their own parts, so parts never
/// race each other for a document, and each part ends with its own range current.
#[tokio::test]
async fn each_part_of_a_rebalance_sweeps_its_own_range_only() {
    use sharded_runtime::jobs::IdRange;
    let test = test_db("rebalance-part-sweep").await;
    let db = &test.db;
    let mut rng = rand::rng();
    let seed = BulkWriter::new(db, unthrottled()).unwrap();
    for n in 0..120 {
        let id = sharded_tests::generated_id(&mut rng);
        drop(seed.upsert(&id, &before(n)).await.unwrap());
    }
    seed.close().await.unwrap();
    let retired = |shard: &Option<Value>| {
        matches!(
            shard.as_ref().and_then(|v| v.value_type.as_ref()),
            Some(ValueType::StringValue(s)) if s == "a" || s == "b"
        )
    };
    let parts = 4;
    for part in 0..parts {
        let range = IdRange::part(part, parts).unwrap();
        let before_run = stored_state(db, During::COLLECTION, During::SHARD_FIELD).await;
        let progress = During::collection(db)
            .rebalance()
            .ids(range.clone())
            .page_size(7)
            .writer(unthrottled())
            .run(|_| {})
            .await
            .unwrap();
        assert_eq!(progress.swept, 0, "part {part}: {progress:?}");
        let after_run = stored_state(db, During::COLLECTION, During::SHARD_FIELD).await;
        for (id, (_, shard)) in &after_run {
            match range.contains(id) {
                true => assert!(!retired(shard), "part {part}: {id} still retired"),
                false => assert_eq!(shard, &before_run[id].1, "part {part} wrote {id}"),
            }
        }
        assert!(
            part + 1 == parts || after_run.values().any(|(_, shard)| retired(shard)),
            "later parts still have retired values to move"
        );
    }
    let census = During::collection(db).verify().await.unwrap();
    assert_eq!(
        (census.retired, census.missing, census.scanned),
        (0, 0, 120)
    );
}
