//! Tracked jobs: each part's state in Firestore. Parts run once each and their counts add up
//! to the collection; a finished part is not run again; a second attempt of a live part
//! writes nothing; an attempt that stopped without a word (its future dropped, as a killed
//! process's) is taken over after the lease, from its stored checkpoint.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sharded_runtime::bulk::{BulkWriterOptions, Clock, Throttling, VirtualClock};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{
    Error, Sharded,
    jobs::{JobStatus, PartPhase, PartRun, TaskPart},
};
use sharded_tests::migration::{assert_nothing_outstanding, unthrottled};
use sharded_tests::test_db;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 8, order_by = "at", collection = "tracked")]
struct Reading {
    at: i64,
    n: i64,
}

/// `count` documents written before the collection was sharded (no shard field).
async fn legacy(db: &FirestoreDb, count: usize) {
    let writer = db.create_simple_batch_writer().await.unwrap();
    let ids: Vec<String> = (0..count)
        .map(|i| format!("{}{i:05}", ['0', 'K', 'f'][i % 3]))
        .collect();
    for chunk in ids.chunks(500) {
        let mut batch = writer.new_batch();
        for (n, id) in chunk.iter().enumerate() {
            let row = serde_json::json!({ "at": n, "n": n });
            batch
                .update_object(Reading::COLLECTION, id, &row, None, None, Vec::new())
                .unwrap();
        }
        batch.write().await.unwrap();
    }
}

/// Runs parts 0, 1 and 2 of a job at once; each must run to its end, its stored counts its
/// own. The documents they updated.
async fn three_parts_at_once<F: std::future::Future<Output = PartRun>>(
    part: impl Fn(u32) -> F,
) -> u64 {
    let (a, b, c) = tokio::join!(part(0), part(1), part(2));
    let mut updated = 0;
    for run in [a, b, c] {
        match run {
            PartRun::Finished { progress, part } => {
                assert_eq!(part.phase, PartPhase::Done);
                assert_eq!(
                    (part.scanned, part.updated),
                    (progress.scanned, progress.updated)
                );
                updated += progress.updated;
            }
            other => panic!("every part runs once: {other:?}"),
        }
    }
    updated
}

#[tokio::test]
async fn tracked_parts_run_once_each_and_their_counts_add_up_to_the_collection() {
    let test = test_db("tracked-parts").await;
    let db = &test.db;
    legacy(db, 300).await;
    let part = |index: u32| async move {
        Reading::collection(db)
            .backfill()
            .writer(unthrottled())
            .page_size(25)
            .tracked("adopt", TaskPart::new(index, 3).unwrap())
            // No heartbeat falls due in a run this short: the state's writes are exact.
            .lease_timeout(Duration::from_secs(600))
            .heartbeat_every(Duration::from_secs(300))
            .run(|_| {})
            .await
            .unwrap()
    };
    assert_eq!(three_parts_at_once(part).await, 300);
    // A done part is not run again.
    assert!(matches!(part(1).await, PartRun::AlreadyDone(done) if done.scanned > 0));
    let status = JobStatus::read(db, "adopt").await.unwrap();
    assert!(status.is_done());
    assert_eq!(status.count(PartPhase::Done), 3);
    assert_eq!(
        (status.scanned(), status.updated(), status.total),
        (300, 300, 300)
    );
    // The closing step (the job-wide sweep and census) ran once, by the last part to finish.
    let closing = status.closing.clone().expect("closed");
    assert_eq!((closing.runs, closing.outstanding), (1, Some(0)));
    // Tracking wrote each part's document three times (with the job's start, its lease, its
    // outcome) and the job's four times (the claim on its start, its start, the closing
    // step's claim and outcome); the run that found its part done wrote nothing.
    for part in &status.parts {
        assert_eq!(part.state_writes, 3, "{part:?}");
    }
    assert_eq!((status.job_state_writes, status.state_writes()), (4, 13));
    assert_nothing_outstanding::<Reading>(db).await;
    // A task of another shape of the job is refused before it writes.
    let mismatch = Reading::collection(db)
        .backfill()
        .tracked("adopt", TaskPart::new(0, 4).unwrap())
        .run(|_| {})
        .await;
    assert!(
        matches!(mismatch, Err(Error::JobMismatch { .. })),
        "{mismatch:?}"
    );
    // So is a task of another change under the job's id.
    let rename = Reading::collection(db)
        .rename_field("count", Reading::fields().n)
        .unwrap()
        .tracked("adopt", TaskPart::new(0, 3).unwrap())
        .run(|_| {})
        .await;
    assert!(
        matches!(&rename, Err(Error::JobMismatch { reason, .. }) if reason.contains("rename count to n")),
        "{rename:?}"
    );
    // Options that cannot keep a lease are refused.
    let refused = Reading::collection(db)
        .backfill()
        .tracked("other", TaskPart::new(0, 1).unwrap())
        .lease_timeout(Duration::from_secs(10))
        .heartbeat_every(Duration::from_secs(6))
        .run(|_| {})
        .await;
    assert!(
        matches!(
            refused,
            Err(Error::InvalidOptions {
                option: "heartbeat_every",
                ..
            })
        ),
        "{refused:?}"
    );
    let refused = Reading::collection(db)
        .backfill()
        .tracked("other", TaskPart::new(0, 1).unwrap())
        .lease_timeout(Duration::from_secs(2 * 24 * 60 * 60))
        .run(|_| {})
        .await;
    assert!(
        matches!(
            refused,
            Err(Error::InvalidOptions {
                option: "lease_timeout",
                ..
            })
        ),
        "{refused:?}"
    );
    assert!(matches!(
        JobStatus::read(db, "never-started").await,
        Err(Error::NoSuchJob { job, collection })
            if job == "never-started" && collection == sharded_runtime::jobs::JOB_STATE_COLLECTION
    ));
}

/// The job's writer options are the whole job's budget: one task of `parts` writes at
/// 1/`parts` of their ramp. Measured on a virtual clock (the ramp's time, which the writer
/// sleeps on) while the writes land for real.
#[tokio::test]
async fn each_part_writes_at_its_share_of_the_jobs_ramp() {
    for parts in [1u32, 4] {
        let test = test_db(&format!("tracked-share-{parts}")).await;
        let db = &test.db;
        legacy(db, 300).await;
        let clock = VirtualClock::new();
        let whole = BulkWriterOptions::for_type::<Reading>().with_clock(clock.clone());
        let Throttling::Ramp { initial, .. } = whole.throttling else {
            panic!("the default throttling ramps");
        };
        let run = Reading::collection(db)
            .backfill()
            .writer(whole)
            .tracked("share", TaskPart::new(0, parts).unwrap())
            .run(|_| {})
            .await
            .unwrap();
        let PartRun::Finished { progress, .. } = run else {
            panic!("the part runs: {run:?}");
        };
        assert!(progress.updated >= 50, "{progress:?}");
        let rate = progress.updated as f64 / clock.now().as_secs_f64();
        let share = initial / f64::from(parts);
        assert!(
            rate <= share && rate > share * 0.75,
            "{parts} parts: one part wrote {rate:.1}/s, its share is {share:.1}/s"
        );
    }
}

#[tokio::test]
async fn a_live_part_is_not_run_twice_and_a_silent_one_is_taken_over_from_its_checkpoint() {
    let test = test_db("tracked-lease").await;
    let db = &test.db;
    let documents = 600;
    legacy(db, documents).await;
    let lease = Duration::from_secs(2);
    let attempt = || {
        Reading::collection(db)
            .backfill()
            .writer(unthrottled())
            .page_size(10)
            .tracked("adopt", TaskPart::new(0, 1).unwrap())
            .lease_timeout(lease)
            .heartbeat_every(Duration::from_millis(400))
    };
    // The first attempt, slowed to a page per 30 ms, runs until a checkpoint is stored, then
    // stops without a word: its future is dropped, as a killed process's would end.
    let mut first = Box::pin(attempt().run(|_| std::thread::sleep(Duration::from_millis(30))));
    let stored = tokio::select! {
        outcome = &mut first => panic!("the first attempt ended before a checkpoint: {outcome:?}"),
        stored = async {
            loop {
                if let Ok(status) = JobStatus::read(db, "adopt").await
                    && let Some(part) = status.parts.first()
                    && part.checkpoint.is_some()
                {
                    break part.clone();
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        } => stored,
    };
    assert_eq!(stored.phase, PartPhase::Running);
    assert!(
        stored.scanned < documents as u64,
        "stopped before the end: {stored:?}"
    );
    // A second attempt while the first is alive, told to leave a held part, writes nothing
    // and says who holds the part.
    let wrote = Arc::new(AtomicBool::new(false));
    let flag = wrote.clone();
    let second = tokio::select! {
        outcome = &mut first => panic!("the first attempt ended early: {outcome:?}"),
        second = attempt().leave_if_held().run(move |_| flag.store(true, Ordering::SeqCst)) => second.unwrap(),
    };
    assert!(
        matches!(&second, PartRun::HeldElsewhere(part) if part.attempt == 1),
        "{second:?}"
    );
    assert!(!wrote.load(Ordering::SeqCst));
    // By default it waits, writing nothing, while the holder lives.
    let writes_before = JobStatus::read(db, "adopt").await.unwrap().parts[0].state_writes;
    let waiting = tokio::select! {
        outcome = &mut first => panic!("the first attempt ended early: {outcome:?}"),
        outcome = tokio::time::timeout(lease / 2, attempt().run(|_| {})) => outcome,
    };
    assert!(waiting.is_err(), "it waited: {waiting:?}");
    let held = JobStatus::read(db, "adopt").await.unwrap().parts[0].clone();
    assert_eq!(held.attempt, 1, "still the first attempt's: {held:?}");
    assert!(held.state_writes > writes_before, "the holder kept beating");
    drop(first);
    // After the lease, the part is taken over from its stored checkpoint.
    tokio::time::sleep(lease + Duration::from_millis(500)).await;
    // Stale by the lease its holder took (stored with the part): the reader names none.
    let stale = JobStatus::read(db, "adopt").await.unwrap();
    assert_eq!(stale.parts[0].phase, PartPhase::Stale);
    // And taken over by it: an attempt that would itself hold the part for ten minutes
    // waits out the silent holder's two seconds, not its own ten minutes.
    let third = Reading::collection(db)
        .backfill()
        .writer(unthrottled())
        .page_size(10)
        .tracked("adopt", TaskPart::new(0, 1).unwrap())
        .lease_timeout(Duration::from_secs(600))
        .run(|_| {})
        .await
        .unwrap();
    let PartRun::Finished { progress, part } = third else {
        panic!("the stale part is taken over: {third:?}");
    };
    assert_eq!(part.attempt, 2);
    assert!(
        progress.scanned < documents as u64,
        "resumed, not restarted: {progress:?}"
    );
    // Each document counted once over both attempts: the stored counts reach the stored
    // checkpoint, and the next attempt scans on from there.
    assert_eq!(part.scanned, documents as u64);
    assert_eq!(
        part.updated + part.unchanged + part.deleted,
        documents as u64
    );
    let status = JobStatus::read(db, "adopt").await.unwrap();
    assert!(status.is_done());
    assert_nothing_outstanding::<Reading>(db).await;
}

/// A tracked rebalance leaves the sweep to its closing step: a document a process still on
/// the old type writes behind a finished part's scan is found and moved once every part is
/// done, by one sweep over the whole collection.
#[tokio::test]
async fn the_closing_step_sweeps_what_old_writers_left_behind_finished_parts() {
    use sharded_runtime::bulk::BulkWriter;
    use sharded_runtime::firestore::FirestoreTimestamp;
    use sharded_tests::models::moving::{Before, During};
    let test = test_db("tracked-closing").await;
    let db = &test.db;
    let before = |seq: i64| Before {
        venue: "v".into(),
        at: FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(seq).unwrap(),
        ),
        seq,
    };
    // Ids in both halves of the id space: part 0 takes `0…`, part 1 `z…`.
    let seed = BulkWriter::new(db, unthrottled()).unwrap();
    for seq in 0..40 {
        let id = format!("{}{seq:03}", if seq % 2 == 0 { '0' } else { 'z' });
        drop(seed.upsert(&id, &before(seq)).await.unwrap());
    }
    seed.close().await.unwrap();
    let part = |index: u32| {
        During::collection(db)
            .rebalance()
            .writer(unthrottled())
            .tracked("move", TaskPart::new(index, 2).unwrap())
    };
    let first = part(0).run(|_| {}).await.unwrap();
    assert!(matches!(first, PartRun::Finished { .. }));
    // A process still on the old type writes into part 0's range after its scan, a value the
    // new set dropped (it draws `c`, which the new set keeps, one time in three: again then).
    loop {
        Before::collection(db)
            .upsert("0late", &before(99))
            .await
            .unwrap();
        let stored = Before::collection(db)
            .get_stored("0late")
            .await
            .unwrap()
            .unwrap();
        if stored.shard != "c" {
            break;
        }
    }
    let status = JobStatus::read(db, "move").await.unwrap();
    assert!(
        status.closing.is_none(),
        "no closing before every part is done"
    );
    assert!(matches!(
        part(1).run(|_| {}).await.unwrap(),
        PartRun::Finished { .. }
    ));
    let status = JobStatus::read(db, "move").await.unwrap();
    assert!(status.is_done());
    let closing = status.closing.unwrap();
    assert_eq!((closing.runs, closing.outstanding), (1, Some(0)));
    assert_eq!(closing.swept, 1);
    let census = During::collection(db).verify().await.unwrap();
    assert_eq!((census.outstanding(), census.scanned), (0, 41));
}

/// Readings under each room, in collections whose id is `parts`: the id a job's own part
/// documents once had, so that a group scan would have taken in the job's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 5,
    order_by = "at",
    parent = "rooms",
    collection = "parts",
    collection_group
)]
struct RoomReading {
    at: i64,
    n: i64,
}

/// A tracked job over a collection group: three parts run at once over every room's
/// documents (rooms with generated-style ids, and the group's collections under other
/// parents, which sort before and after the rooms). Their counts add up to the group, the
/// closing step finds none outstanding, and the job's own state is not among what it scans.
#[tokio::test]
async fn a_tracked_job_over_a_collection_group_covers_every_parent_once() {
    use rand::{Rng, SeedableRng};
    let test = test_db("tracked-group").await;
    let db = &test.db;
    let mut rng = rand::rngs::StdRng::seed_from_u64(sharded_tests::seed("tracked-group"));
    let mut parents: Vec<(&str, String)> = (0..40)
        .map(|_| ("rooms", sharded_tests::generated_id(&mut rng)))
        .collect();
    parents.extend([("aaa", "x".to_owned()), ("zzz", "x".to_owned())]);
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    let mut total = 0u64;
    for (collection, id) in &parents {
        for m in 0..rng.random_range(1..6) {
            db.fluent()
                .update()
                .in_col(RoomReading::COLLECTION)
                .document_id(format!("m{m}"))
                .parent(db.parent_path(collection, id).unwrap())
                .object(&serde_json::json!({ "at": m, "n": m }))
                .add_to_batch(&mut batch)
                .unwrap();
            total += 1;
        }
    }
    batch.write().await.unwrap();

    let group = RoomReading::collection_group(db);
    let part = |index: u32| async move {
        RoomReading::collection_group(db)
            .backfill()
            .writer(unthrottled())
            .page_size(7)
            .tracked("group-adopt", TaskPart::new(index, 3).unwrap())
            .run(|_| {})
            .await
            .unwrap()
    };
    assert_eq!(three_parts_at_once(part).await, total);
    let status = JobStatus::read(db, "group-adopt").await.unwrap();
    assert!(status.is_done(), "{status:?}");
    assert_eq!((status.total, status.scanned()), (total, total));
    let closing = status.closing.clone().unwrap();
    assert_eq!(
        (closing.runs, closing.swept, closing.outstanding),
        (1, 0, Some(0))
    );
    // The group holds the readings and nothing of the job's state.
    let census = group.verify().await.unwrap();
    assert_eq!((census.current, census.outstanding()), (total, 0));

    // The job's id is the group's: a job over one room is another job.
    let room = sharded_runtime::Parent::<RoomReading>::new(&[parents[0].1.as_str()]).unwrap();
    let mismatch = RoomReading::collection_in(db, &room)
        .backfill()
        .tracked("group-adopt", TaskPart::new(0, 3).unwrap())
        .run(|_| {})
        .await;
    assert!(
        matches!(mismatch, Err(Error::JobMismatch { .. })),
        "{mismatch:?}"
    );
    // State kept in a collection a sharded type may take (the job's own, or any other
    // type's, whose jobs and groups would take it in) is refused: its id starts with the
    // reserved prefix, which no sharded type may take.
    for collection in [RoomReading::COLLECTION, "readings", "jobs"] {
        let refused = group
            .backfill()
            .tracked("other", TaskPart::new(0, 1).unwrap())
            .state_collection(collection)
            .run(|_| {})
            .await;
        assert!(
            matches!(
                refused,
                Err(Error::InvalidOptions {
                    option: "state_collection",
                    ..
                })
            ),
            "{collection}: {refused:?}"
        );
    }
    // One with the prefix keeps the job's state apart from every type's.
    let elsewhere = group
        .backfill()
        .tracked("elsewhere", TaskPart::new(0, 1).unwrap())
        .state_collection("_sharded_imports")
        .run(|_| {})
        .await
        .unwrap();
    assert!(
        matches!(elsewhere, PartRun::Finished { .. }),
        "{elsewhere:?}"
    );
    let status = JobStatus::read_from(db, "_sharded_imports", "elsewhere")
        .await
        .unwrap();
    assert!(status.is_done(), "{status:?}");
}

/// A tracked job through a connection that drops: requests lost on the way, answers lost on
/// the way back (the write applied, the task not told). The job's state reads and writes are
/// retried by the one retry policy, and a retried write whose first attempt landed is known
/// by its content, not taken for a lost lease: every part finishes, the counts add up, and
/// the closing step runs once.
#[tokio::test]
async fn a_tracked_job_survives_dropped_connections() {
    for seed in 0..3 {
        let test = test_db(&format!("tracked-faults-{seed}")).await;
        legacy(&test.db, 300).await;
        let seed = sharded_tests::seed("tracked-faults") + seed;
        let (_proxy, db) = sharded_tests::migration::faulty_client(&test, seed).await;
        let db = &db;
        let part = |index: u32| async move {
            Reading::collection(db)
                .backfill()
                .writer(unthrottled())
                .page_size(10)
                .tracked("adopt", TaskPart::new(index, 3).unwrap())
                // Many state writes, so that faults reach them.
                .heartbeat_every(Duration::from_millis(20))
                .lease_timeout(Duration::from_secs(30))
                .run(|_| std::thread::sleep(Duration::from_millis(5)))
                .await
                .unwrap_or_else(|error| panic!("seed {seed}: {error}"))
        };
        assert_eq!(three_parts_at_once(part).await, 300, "seed {seed}");
        let status = JobStatus::read(&test.db, "adopt").await.unwrap();
        assert!(status.is_done(), "seed {seed}: {status:?}");
        let closing = status.closing.clone().unwrap();
        assert_eq!(
            (closing.runs, closing.outstanding),
            (1, Some(0)),
            "seed {seed}"
        );
        assert!(status.state_writes() > 20, "seed {seed}: {status:?}");
    }
}

/// A state document that holds what no task writes (an infinite or NaN duration or rate,
/// edited by hand or by another program) is a typed error wherever it is read, never a
/// panic where it becomes a `Duration`; nothing is written.
#[tokio::test]
async fn corrupt_numbers_in_a_state_document_are_a_typed_error() {
    let test = test_db("tracked-corrupt").await;
    let db = &test.db;
    legacy(db, 20).await;
    let run = || async {
        Reading::collection(db)
            .backfill()
            .writer(unthrottled())
            .tracked("corrupt", TaskPart::new(0, 1).unwrap())
            .run(|_| {})
            .await
    };
    assert!(matches!(run().await.unwrap(), PartRun::Finished { .. }));
    let job = db
        .parent_path(sharded_runtime::jobs::JOB_STATE_COLLECTION, "corrupt")
        .unwrap();
    let part = format!("{}/_sharded_parts/00000", job);
    for (field, value) in [
        ("seconds", f64::INFINITY),
        ("rate", f64::NAN),
        ("lease_seconds", -1.0),
        ("seconds", 1e300),
    ] {
        // Every measure as a task writes it, but `field`.
        let mut fields: std::collections::BTreeMap<String, f64> =
            [("seconds", 1.0), ("rate", 1.0), ("lease_seconds", 60.0)]
                .map(|(name, value)| (name.to_owned(), value))
                .into();
        fields.insert(field.to_owned(), value);
        db.fluent()
            .update()
            .fields(fields.keys().cloned().collect::<Vec<_>>())
            .in_col("_sharded_parts")
            .document_id("00000")
            .parent(job.clone())
            .object(&fields)
            .execute::<()>()
            .await
            .unwrap();
        let before = JobStatus::read(db, "corrupt").await;
        match before {
            Err(Error::JobStateCorrupt { document, reason }) => {
                assert_eq!(document, part);
                assert!(reason.contains(field), "{reason}");
            }
            other => panic!("{field} = {value}: {other:?}"),
        }
        assert!(
            matches!(run().await, Err(Error::JobStateCorrupt { .. })),
            "{field} = {value}"
        );
    }
}

/// A part taken over from an attempt that is still alive (a later attempt of its task, as
/// its engine numbers them, or a rescheduled pod beside the old one): the old attempt learns
/// it at its next heartbeat, stops with `JobLeaseLost`, and stores apart what it did since
/// its last heartbeat, so the documents it updated meanwhile count as updated (the attempt
/// that took over finds them done); before, they were counted nowhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_attempt_taken_over_keeps_its_updates_counted() {
    use sharded_runtime::jobs::Engine;
    let test = test_db("tracked-lost").await;
    let db = &test.db;
    let documents = 600u64;
    legacy(db, documents as usize).await;
    let engine = Engine::CloudRun {
        execution: "adopt-l0st1".into(),
    };
    let attempt = |n: u32| {
        Reading::collection(db)
            .backfill()
            .writer(unthrottled())
            .page_size(10)
            .tracked(
                "adopt",
                TaskPart::new(0, 1).unwrap().with_attempt(n, engine.clone()),
            )
            .lease_timeout(Duration::from_secs(600))
            .heartbeat_every(Duration::from_millis(500))
    };
    // The first attempt, a page per 20 ms, until a heartbeat stored a checkpoint; then the
    // engine's next attempt takes the part over at once, though the first is alive.
    let first = attempt(0).run(|_| std::thread::sleep(Duration::from_millis(20)));
    let later = async {
        loop {
            if let Ok(status) = JobStatus::read(db, "adopt").await
                && status.parts[0].checkpoint.is_some()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        attempt(1).run(|_| {}).await.unwrap()
    };
    let (lost, second) = tokio::join!(first, later);
    let PartRun::Finished { part, .. } = second else {
        panic!("{second:?}");
    };
    assert_eq!(part.attempt, 2);
    assert!(matches!(lost, Err(Error::JobLeaseLost { .. })), "{lost:?}");
    let status = JobStatus::read(db, "adopt").await.unwrap();
    let counted = &status.parts[0];
    // Every document was updated once, by one attempt or the other; only a page the first
    // attempt had in flight when it stopped may go uncounted.
    assert!(
        counted.updated <= documents && counted.updated + 10 >= documents,
        "{counted:?}"
    );
    assert!(
        counted.updated > part.updated,
        "the first attempt's updates after its last heartbeat count: {counted:?} {part:?}"
    );
}

/// The job's start is claimed with a small document before the collection is split: the
/// tasks starting at once wait for it instead of each splitting, counting and committing
/// every part. A task that died holding the claim is taken over after the claim's lease, or
/// at once by a later attempt of its own task.
#[tokio::test]
async fn a_start_claimed_by_a_task_that_died_is_taken_over() {
    use sharded_runtime::jobs::Engine;
    let test = test_db("tracked-start").await;
    let db = &test.db;
    legacy(db, 120).await;
    // What a task that died after claiming the start left: its claim, and no parts.
    let claim = |job: &str, lease_seconds: f64| {
        let job = job.to_owned();
        async move {
            let claim = serde_json::json!({
                "collection": Reading::COLLECTION,
                "scope": "",
                "parts": 2,
                "split_by": "IdSpace",
                "total": 0,
                "change": "shard",
                "starting": {
                    "owner": "died",
                    "lease_seconds": lease_seconds,
                    "holder": { "index": 0, "attempt": 0, "engine": "cloud_run", "run": "adopt-st4rt" },
                },
                "writes": 1,
            });
            db.fluent()
                .insert()
                .into(sharded_runtime::jobs::JOB_STATE_COLLECTION)
                .document_id(&job)
                .object(&claim)
                .execute::<serde_json::Value>()
                .await
                .unwrap();
        }
    };
    let part = |job: &'static str, task: TaskPart| async move {
        Reading::collection(db)
            .backfill()
            .writer(unthrottled())
            .tracked(job, task)
            .run(|_| {})
            .await
            .unwrap()
    };
    // A claim whose one-second lease runs out: both tasks wait, then one starts the job.
    claim("stale", 1.0).await;
    let (a, b) = tokio::join!(
        part("stale", TaskPart::new(0, 2).unwrap()),
        part("stale", TaskPart::new(1, 2).unwrap())
    );
    assert!(
        matches!(
            (&a, &b),
            (PartRun::Finished { .. }, PartRun::Finished { .. })
        ),
        "{a:?} {b:?}"
    );
    let status = JobStatus::read(db, "stale").await.unwrap();
    assert!(status.is_done(), "{status:?}");
    assert_eq!(status.total, 120);
    // A claim with ten minutes left: the next attempt of the task that claimed it takes it
    // over at once, and the other task waits for the start.
    claim("retried", 600.0).await;
    let engine = Engine::CloudRun {
        execution: "adopt-st4rt".into(),
    };
    let next = TaskPart::new(0, 2).unwrap().with_attempt(1, engine);
    // Bounded: tasks that waited out the ten minutes would fail here.
    let (a, b) = tokio::time::timeout(Duration::from_secs(60), async {
        tokio::join!(
            part("retried", next),
            part("retried", TaskPart::new(1, 2).unwrap())
        )
    })
    .await
    .expect("the start is taken over at once");
    assert!(
        matches!(
            (&a, &b),
            (PartRun::Finished { .. }, PartRun::Finished { .. })
        ),
        "{a:?} {b:?}"
    );
    assert!(JobStatus::read(db, "retried").await.unwrap().is_done());
}
