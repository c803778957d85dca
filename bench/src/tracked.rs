//! A tracked job's tasks as processes, with the default writer (the ramp): the whole job's rate
//! against one job's ramp budget and what tracking costs in writes, on the emulator; and the
//! same tasks' ramps over an hour in virtual time. The "Tracked jobs" section of BENCHMARKS.md.

use std::fmt::Write as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

use sharded_emulator::emulator::Emulator;
use sharded_runtime::bulk::{BulkWriterOptions, Throttling};
use sharded_runtime::{
    Sharded,
    jobs::{JobStatus, PartRun, TaskPart},
};

use crate::Sharded3;
use crate::bulk::{issued_per_window, legacy_instruments};

type Failure = Box<dyn std::error::Error>;

/// The benchmarks binary's argument that makes it one task of the job.
pub const TASK_ARG: &str = "--tracked-task";
const HOST_ENV: &str = "SHARDED_BENCH_HOST";
const PROJECT_ENV: &str = "SHARDED_BENCH_PROJECT";
const JOB: &str = "bench-adopt";
const DOCUMENTS: usize = 20_000;
const TASKS: [u32; 4] = [1, 2, 4, 8];
/// How long the virtual-time comparison runs the ramps.
const VIRTUAL_RUN: Duration = Duration::from_secs(3600);
/// When each task's writer starts after the one before, in virtual time: engines start tasks
/// one after another.
const VIRTUAL_STAGGER: Duration = Duration::from_secs(3);
/// A part's heartbeat by default (`TrackedPart::heartbeat_every`).
const HEARTBEAT: Duration = Duration::from_secs(10);

/// One task of the job, as a Cloud Run task runs it: its part from `CLOUD_RUN_TASK_INDEX` and
/// `CLOUD_RUN_TASK_COUNT`, every option the default (so the writer ramps, at the part's share).
pub async fn task() -> Result<(), Failure> {
    let db = sharded_emulator::emulator::connect(
        &std::env::var(HOST_ENV)?,
        &std::env::var(PROJECT_ENV)?,
    )
    .await?;
    let run = Sharded3::collection(&db)
        .backfill()
        .tracked(JOB, TaskPart::from_env()?)
        .run(|_| {})
        .await?;
    match run {
        PartRun::Finished { .. } => Ok(()),
        other => Err(format!("the part did not run: {other:?}").into()),
    }
}

/// Runs every measurement of the section and returns it as markdown.
pub async fn section() -> Result<String, Failure> {
    let whole = BulkWriterOptions::for_type::<Sharded3>().throttling;
    let Throttling::Ramp {
        initial, interval, ..
    } = whole
    else {
        return Err("the default writer ramps".into());
    };
    let mut report = String::new();
    writeln!(
        report,
        "### Tracked jobs\n\n\
         {DOCUMENTS} documents with generated-style ids written without a shard, then adopted by\n\
         a tracked backfill (`.tracked(job, TaskPart::from_env()?)`) of 1, 2, 4 and 8 tasks, each a\n\
         process of its own started with Cloud Run's variables, all options the defaults: the\n\
         writer ramps (`for_type`, {initial:.0} writes/s for the first {} minutes) and each part\n\
         writes at its share of it; heartbeats every 10 s. A fresh database each time. The\n\
         job's rate is the documents updated over the longest part's run; the state writes are\n\
         the job's own count of its state documents' writes (every lease, heartbeat, outcome and\n\
         the closing step's), against the documents the job wrote.\n\n\
         | tasks | documents updated | longest part | job's rate | vs one job's budget ({initial:.0}/s) | whole job, closing included | state writes | share of the job's writes | left without a shard |\n\
         |---|---|---|---|---|---|---|---|---|",
        interval.as_secs() / 60
    )?;
    let emulator = Emulator::start_with_heap("3g").await?;
    let mut worst_share: f64 = 0.0;
    let mut worst_ratio: f64 = 0.0;
    for tasks in TASKS {
        let project = format!("bench-tracked-{tasks}");
        let db = emulator.db(&project).await?;
        legacy_instruments(&db, DOCUMENTS, 11).await?;
        let started = Instant::now();
        let mut children = Vec::new();
        for index in 0..tasks {
            children.push(
                tokio::process::Command::new(std::env::current_exe()?)
                    .arg(TASK_ARG)
                    .env(HOST_ENV, emulator.host())
                    .env(PROJECT_ENV, &project)
                    .env("CLOUD_RUN_TASK_INDEX", index.to_string())
                    .env("CLOUD_RUN_TASK_COUNT", tasks.to_string())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()?,
            );
        }
        for child in children {
            let out = child.wait_with_output().await?;
            if !out.status.success() {
                return Err(format!(
                    "a task of {tasks} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
                .into());
            }
        }
        let wall = started.elapsed();
        let status = JobStatus::read(&db, JOB).await?;
        let closing = status.closing.clone().filter(|_| status.is_done());
        let Some(closing) = closing else {
            return Err(format!("the job of {tasks} tasks did not close: {status:?}").into());
        };
        let longest = status
            .parts
            .iter()
            .map(|part| part.elapsed)
            .max()
            .unwrap_or_default();
        if longest >= interval {
            return Err("the run outlasted the ramp's first interval: the budget changed".into());
        }
        let rate = status.updated() as f64 / longest.as_secs_f64();
        let job_writes = status.updated() + closing.swept;
        let share = status.state_writes() as f64 / job_writes as f64;
        worst_share = worst_share.max(share);
        worst_ratio = worst_ratio.max(rate / initial);
        writeln!(
            report,
            "| {tasks} | {} | {:.1} s | {rate:.0}/s | {:.3}× | {:.1} s | {} | {:.3} % | {} |",
            status.updated(),
            longest.as_secs_f64(),
            rate / initial,
            wall.as_secs_f64(),
            status.state_writes(),
            share * 100.0,
            closing.outstanding.unwrap_or_default(),
        )?;
    }
    writeln!(
        report,
        "\nHighest rate of the whole against one job's budget: **{worst_ratio:.3}×**; highest share\n\
         of state writes: **{:.3} %**. A part's tracking writes its document with the job's start,\n\
         its lease, a heartbeat each 10 s and its outcome; the job's document the claim on its\n\
         start, its start and the closing step's claim and outcome. The whole job's time adds\n\
         process start-up, the job's start (its parts and the collection's count) and the\n\
         closing step (one sweep and one census of the collection).\n",
        worst_share * 100.0
    )?;
    ramps(&mut report, whole)?;
    Ok(report)
}

/// Each task's writer share of the ramp (`share_of(tasks)`, as `tracked` applies it), started
/// one after another and kept busy, against one job's writer started with the first, per
/// interval of the ramp over an hour in virtual time; and the heartbeats' share of the writes
/// at those rates.
fn ramps(report: &mut String, whole: Throttling) -> Result<(), Failure> {
    let Throttling::Ramp { interval, .. } = whole else {
        return Err("the default writer ramps".into());
    };
    let windows = (VIRTUAL_RUN.as_secs() / interval.as_secs()) as usize;
    let one_job = issued_per_window(&[(whole, Duration::ZERO)], interval, windows);
    let mut rows = String::new();
    for tasks in TASKS {
        let share = BulkWriterOptions::for_type::<Sharded3>()
            .share_of(tasks)?
            .throttling;
        let writers: Vec<(Throttling, Duration)> =
            (0..tasks).map(|i| (share, VIRTUAL_STAGGER * i)).collect();
        let together = issued_per_window(&writers, interval, windows);
        let worst = together
            .iter()
            .zip(&one_job)
            .map(|(&tasks, &one)| tasks as f64 / one as f64)
            .fold(0.0, f64::max);
        let heartbeats_per_window =
            f64::from(tasks) * interval.as_secs_f64() / HEARTBEAT.as_secs_f64();
        let heartbeat_share = together
            .iter()
            .map(|&issued| heartbeats_per_window / issued as f64)
            .fold(0.0, f64::max);
        writeln!(
            rows,
            "| {tasks} | {} | {} | {worst:.3}× | {:.3}× | {:.3} % |",
            one_job.iter().sum::<u64>(),
            together.iter().sum::<u64>(),
            together.iter().sum::<u64>() as f64 / one_job.iter().sum::<u64>() as f64,
            heartbeat_share * 100.0,
        )?;
    }
    writeln!(
        report,
        "#### The ramp over an hour (virtual clock)\n\n\
         Each task's writer limiter at its share of the ramp (`share_of(tasks)`, what `tracked`\n\
         applies), the tasks' writers started {} s apart, against one job's writer started with\n\
         the first; every writer always has work, and a virtual clock moves to the next moment\n\
         one may write. Writes issued per {}-minute interval of the ramp, compared interval by\n\
         interval; heartbeats are one per task per 10 s.\n\n\
         | tasks | one job's writes in the hour | the tasks' writes | highest interval, tasks vs one job | hour, tasks vs one job | heartbeats' highest share |\n\
         |---|---|---|---|---|---|\n\
         {rows}\n\
         No interval of the tasks together issues more than one job's writer does. Later\n\
         starts only lower a task's rate (a ramp is at its lowest when it starts), so a task\n\
         retried on a fresh container cannot push the whole over the budget either. The\n\
         heartbeats' share is highest in the first interval, when the rate is lowest.",
        VIRTUAL_STAGGER.as_secs(),
        interval.as_secs() / 60,
    )?;
    Ok(())
}
