//! One task of a tracked adoption job, as Cloud Run jobs and Kubernetes Indexed Jobs run it
//! (`examples/deploy/` has both), and the whole job's status.
//!
//! ```text
//! adopt_job run <job-id>       # this task's part: CLOUD_RUN_TASK_INDEX/COUNT, or
//!                              # JOB_COMPLETION_INDEX with SHARDED_TASK_COUNT
//! adopt_job status <job-id>    # every part, with progress bars, until the job is done
//! ```
//!
//! The database: `FIRESTORE_EMULATOR_HOST` and `GOOGLE_CLOUD_PROJECT` (the emulator), or the
//! project `GOOGLE_CLOUD_PROJECT` with the task's own credentials. `run` exits 0 when its part
//! is done (now or before). A retry of a task that crashed takes its part over at once (the
//! engine says it is a later attempt: Cloud Run's `CLOUD_RUN_EXECUTION` and
//! `CLOUD_RUN_TASK_ATTEMPT`, an Indexed Job's new pod of the same Job, named by
//! `SHARDED_JOB_NAME`, `SHARDED_JOB_UID` and `SHARDED_POD_NAME` from the manifest's downward
//! API); a task whose part another live attempt holds waits until that attempt is done or
//! silent past its lease. The one that
//! finishes the last part runs the job's closing step; a retry of it after a crash takes the
//! step over.

use std::error::Error;
use std::process::ExitCode;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use sharded_examples::Instrument;
use sharded_runtime::firestore::{FirestoreDb, FirestoreDbOptions};
use sharded_runtime::{
    Sharded,
    jobs::{JobStatus, PartPhase, PartRun, TaskPart},
};

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(code) => code,
        Err(error) => {
            eprintln!("adopt_job: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<ExitCode, Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [command, job] = args.as_slice() else {
        return Err("usage: adopt_job run|status <job-id>".into());
    };
    let db = connect().await?;
    match command.as_str() {
        "run" => task(&db, job).await,
        "status" => {
            watch(&db, job).await?;
            Ok(ExitCode::SUCCESS)
        }
        other => Err(format!("unknown command `{other}`: run or status").into()),
    }
}

async fn connect() -> Result<FirestoreDb, Box<dyn Error>> {
    let project = std::env::var("GOOGLE_CLOUD_PROJECT")
        .map_err(|_| "set GOOGLE_CLOUD_PROJECT to the project of the database")?;
    if let Ok(host) = std::env::var("FIRESTORE_EMULATOR_HOST") {
        return Ok(sharded_emulator::emulator::connect(&host, &project).await?);
    }
    Ok(FirestoreDb::with_options(FirestoreDbOptions::new(project)).await?)
}

/// This task's part of the job.
async fn task(db: &FirestoreDb, job: &str) -> Result<ExitCode, Box<dyn Error>> {
    let part = TaskPart::from_env()?;
    eprintln!(
        "job {job}: part {} of {}, attempt {} ({:?})",
        part.index, part.count, part.attempt, part.engine
    );
    let run = Instrument::collection(db)
        .backfill()
        .tracked(job, part)
        .run(|progress| {
            eprintln!(
                "{} scanned, {} updated, {:.0} docs/s",
                progress.scanned,
                progress.updated,
                progress.rate()
            )
        })
        .await?;
    Ok(match run {
        PartRun::Finished { part, .. } => {
            eprintln!(
                "part {} done: {} scanned over {} attempts",
                part.index, part.scanned, part.attempt
            );
            ExitCode::SUCCESS
        }
        PartRun::AlreadyDone(part) => {
            eprintln!("part {} was done already", part.index);
            ExitCode::SUCCESS
        }
        // Only with `leave_if_held`, which this task does not set: it waits instead.
        PartRun::HeldElsewhere(part) => {
            eprintln!(
                "part {} is held by a live attempt ({}); retry later",
                part.index, part.attempt
            );
            ExitCode::from(75)
        }
        other => {
            eprintln!("{other:?}");
            ExitCode::FAILURE
        }
    })
}

/// The whole job, a bar per part and one for the total, until every part is done.
async fn watch(db: &FirestoreDb, job: &str) -> Result<(), Box<dyn Error>> {
    let bars = MultiProgress::new();
    let style = ProgressStyle::with_template("{prefix:>8} [{bar:40}] {pos}/{len} {msg}")?
        .progress_chars("=> ");
    let total = bars.add(
        ProgressBar::new(0)
            .with_style(style.clone())
            .with_prefix("job"),
    );
    let mut parts: Vec<ProgressBar> = Vec::new();
    loop {
        let status = JobStatus::read(db, job).await?;
        while parts.len() < status.parts.len() {
            let bar = ProgressBar::new(0).with_style(style.clone());
            parts.push(bars.add(bar.with_prefix(format!("part {}", parts.len()))));
        }
        let share = status.total.div_ceil(status.parts.len().max(1) as u64);
        for (bar, part) in parts.iter().zip(&status.parts) {
            bar.set_length(share.max(part.scanned));
            bar.set_position(part.scanned);
            bar.set_message(format!(
                "{:?}, attempt {}, {:.0}/s",
                part.phase, part.attempt, part.rate
            ));
        }
        total.set_length(status.total.max(status.scanned()));
        total.set_position(status.scanned());
        total.set_message(format!(
            "{}/{} parts done, {:.0}/s, ETA {:?}",
            status.count(PartPhase::Done),
            status.parts.len(),
            status.rate(),
            status.eta().map(|eta| Duration::from_secs(eta.as_secs()))
        ));
        if status.is_done() {
            total.finish();
            let closing = status.closing.as_ref().and_then(|c| c.outstanding);
            println!(
                "job {job}: {} updated, {} left, {} writes of the job's state",
                status.updated(),
                closing.unwrap_or_default(),
                status.state_writes()
            );
            return Ok(());
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}
