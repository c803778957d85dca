//! A tracked job of 1,000 and 3,844 parts (the most a job may have) on the emulator, its
//! tasks run in-process: what the job's start, each part's completion and the status cost at
//! that size, the stored heartbeat and lease, and the completion check against the one it
//! replaced (reading every part's document), measured in the same run. The "Tracked jobs at
//! scale" section of BENCHMARKS.md.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use sharded_emulator::emulator::Emulator;
use sharded_runtime::bulk::{BulkWriterOptions, Throttling};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::value::ValueType;
use sharded_runtime::{
    Sharded,
    jobs::{JOB_STATE_COLLECTION, JobStatus, PartPhase, PartRun, TaskPart},
};

use crate::Sharded3;
use crate::bulk::legacy_instruments;

type Failure = Box<dyn std::error::Error>;

const JOB: &str = "bench-scale";
/// The parts subcollection of a job's document (the runtime's own name for it).
const PARTS: &str = "_sharded_parts";
const PART_COUNTS: [u32; 2] = [1_000, sharded_runtime::jobs::MAX_PARTS];
/// Documents per part: enough that every part scans some.
const DOCUMENTS_PER_PART: usize = 3;
/// Parts run at once, as tasks of an engine whose parallelism is limited.
const AT_ONCE: usize = 100;
/// Repetitions of each completion check, for a median.
const RUNS: usize = 15;

/// Runs the section's measurements and returns it as markdown.
pub async fn section() -> Result<String, Failure> {
    let mut report = String::new();
    writeln!(
        report,
        "### Tracked jobs at scale\n\n\
         A tracked backfill split into 1,000 and {} parts (`MAX_PARTS`), {DOCUMENTS_PER_PART}\n\
         legacy documents per part, every part run in this process as a task would run it\n\
         (`TaskPart::new(i, n)`, default heartbeat and lease, an unthrottled writer), {AT_ONCE}\n\
         at a time. The completion check each part makes once done is one count of the done\n\
         parts (a billed read per 1,000 index entries); the check it replaced read every part's\n\
         document. Both are run here on the finished job's state, {RUNS} times each (median).\n\n\
         | parts | whole job | state writes | per part | job's start (documents in one commit) | status read (`JobStatus::read`) | stored heartbeat / lease | completion check: count | reading every part (before) | ratio | billed reads per job: count | before |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|",
        sharded_runtime::jobs::MAX_PARTS
    )?;
    let emulator = Emulator::start_with_heap("3g").await?;
    // `SHARDED_BENCH_SCALE_PARTS=200` measures that part count alone.
    let counts = match std::env::var("SHARDED_BENCH_SCALE_PARTS") {
        Ok(parts) => vec![parts.parse::<u32>()?],
        Err(_) => PART_COUNTS.to_vec(),
    };
    for parts in counts {
        eprintln!(
            "{parts} parts: writing {} documents",
            parts as usize * DOCUMENTS_PER_PART
        );
        let db = emulator.db(&format!("bench-scale-{parts}")).await?;
        legacy_instruments(&db, parts as usize * DOCUMENTS_PER_PART, 17).await?;
        let started = Instant::now();
        let runs: Vec<Result<PartRun, sharded_runtime::Error>> = futures::stream::iter(0..parts)
            .map(|index| {
                let db = db.clone();
                async move {
                    Sharded3::collection(&db)
                        .backfill()
                        .writer(BulkWriterOptions::default().with_throttling(Throttling::Off))
                        .tracked(JOB, TaskPart::new(index, parts)?)
                        .run(|_| {})
                        .await
                }
            })
            .buffer_unordered(AT_ONCE)
            .collect()
            .await;
        let whole = started.elapsed();
        eprintln!("{parts} parts: ran in {whole:?}");
        for run in runs {
            match run? {
                PartRun::Finished { .. } | PartRun::AlreadyDone(_) => {}
                other => return Err(format!("a part did not run: {other:?}").into()),
            }
        }
        let status_started = Instant::now();
        let status = JobStatus::read(&db, JOB).await?;
        let status_read = status_started.elapsed();
        if !status.is_done() || status.count(PartPhase::Done) != parts as usize {
            return Err(format!("the job of {parts} parts is not done").into());
        }
        let (heartbeat, lease) = stored_timing(&db).await?;
        let count = median_of(|| count_done(&db)).await?;
        let read_all = median_of(|| read_every_part(&db, parts)).await?;
        let billed_count = u64::from(parts) * u64::from(parts).div_ceil(1_000);
        let billed_before = u64::from(parts) * u64::from(parts);
        writeln!(
            report,
            "| {parts} | {:.1} s | {} | {:.2} | {} | {:.0} ms | {heartbeat:.0} s / {lease:.0} s | {:.1} ms | {:.1} ms | {:.1}× faster | {billed_count} | {billed_before} |",
            whole.as_secs_f64(),
            status.state_writes(),
            status.state_writes() as f64 / f64::from(parts),
            parts + 1,
            status_read.as_secs_f64() * 1000.0,
            count.as_secs_f64() * 1000.0,
            read_all.as_secs_f64() * 1000.0,
            read_all.as_secs_f64() / count.as_secs_f64(),
        )?;
    }
    writeln!(
        report,
        "\nA part's tracking writes its document three times when no heartbeat falls due (with\n\
         the job's start, its lease, its outcome), the job's document four times (the claim on\n\
         its start, the start, the closing step's claim and outcome). The stored heartbeat is the one past 300 parts (at most\n\
         a minute, so a checkpoint is stored at least that often) and the lease six of them (a\n\
         silent holder is taken over within six minutes; a later attempt of its own task, at\n\
         once). Billed reads per job are one completion check per part: the count's, a read per\n\
         1,000 parts matched; before, every part's document. The emulator's latencies say little\n\
         of production's; compare the ratios.\n"
    )?;
    Ok(report)
}

/// The heartbeat and lease a part stored: its lease, and the heartbeat as a sixth of it.
async fn stored_timing(db: &FirestoreDb) -> Result<(f64, f64), Failure> {
    let parent = db.parent_path(JOB_STATE_COLLECTION, JOB)?;
    let part = db
        .fluent()
        .select()
        .by_id_in(PARTS)
        .parent(parent)
        .one("00000")
        .await?
        .ok_or("part 0 is stored")?;
    let lease = match part
        .fields
        .get("lease_seconds")
        .and_then(|v| v.value_type.clone())
    {
        Some(ValueType::DoubleValue(lease)) => lease,
        other => return Err(format!("a lease in seconds: {other:?}").into()),
    };
    Ok((lease / 6.0, lease))
}

/// The completion check: one count of the done parts.
async fn count_done(db: &FirestoreDb) -> Result<(), Failure> {
    let rows = db
        .fluent()
        .select()
        .from(PARTS)
        .parent(db.parent_path(JOB_STATE_COLLECTION, JOB)?)
        .filter(|q| q.for_all([q.field("phase").eq("done")]))
        .aggregate(|a| a.fields([a.field("count").count()]))
        .query()
        .await?;
    if rows.is_empty() {
        return Err("no count".into());
    }
    Ok(())
}

/// The check it replaced: every part's document read, as it read them (one `RunQuery` of the
/// parts' collection under the job's document).
async fn read_every_part(db: &FirestoreDb, parts: u32) -> Result<(), Failure> {
    use futures::TryStreamExt as _;
    use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
        RunQueryRequest, StructuredQuery, run_query_request, structured_query,
    };
    let query = StructuredQuery {
        from: vec![structured_query::CollectionSelector {
            collection_id: PARTS.to_owned(),
            all_descendants: false,
        }],
        ..Default::default()
    };
    let request = RunQueryRequest {
        parent: format!("{}/{JOB_STATE_COLLECTION}/{JOB}", db.get_documents_path()),
        query_type: Some(run_query_request::QueryType::StructuredQuery(query)),
        ..Default::default()
    };
    let responses: Vec<_> = db
        .client()
        .get()
        .run_query(request)
        .await?
        .into_inner()
        .try_collect()
        .await?;
    let documents = responses.iter().filter(|r| r.document.is_some()).count();
    if documents != parts as usize {
        return Err(format!("{documents} of {parts} parts read").into());
    }
    Ok(())
}

/// The median time of `RUNS` runs of `run`, after one to warm up.
async fn median_of<F>(run: impl Fn() -> F) -> Result<Duration, Failure>
where
    F: std::future::Future<Output = Result<(), Failure>>,
{
    run().await?;
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        run().await?;
        times.push(started.elapsed());
    }
    times.sort();
    Ok(times[RUNS / 2])
}
