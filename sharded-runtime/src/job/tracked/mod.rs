//! A partitioned job whose state lives in Firestore, so that each task of a Cloud Run job or
//! a Kubernetes Indexed Job runs its part from anywhere: the parts are fixed when the first
//! task starts the job; a task resumes its part from the part's stored checkpoint (no local
//! file); a second live attempt of a part does not run beside the first (a lease taken with a
//! precondition, taken over when its heartbeat stops); a finished part is not run again; and
//! [`JobStatus`] shows the whole job from any machine.

mod closing;
mod lease;
mod records;
mod state;
mod status;

use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::job::shard_job::{Progress, ShardJob};
use crate::job::task_part::TaskPart;
use crate::model::handle::Scope;
use crate::model::sharded::Sharded;

pub use state::JOB_STATE_COLLECTION;
pub use status::{JobClosing, JobStatus, PartPhase, PartStatus};

use closing::Closer;
use lease::Held;
#[cfg(feature = "datastore")]
pub(crate) use lease::token as attempt_token;
use state::{JobRecord, PartRecord};

/// A [`ShardJob`]'s part run as one task of a tracked job; see
/// [`ShardJob::tracked`].
#[must_use = "a tracked part does nothing until it is run"]
pub struct TrackedPart<'db, T> {
    job: ShardJob<'db, T>,
    id: String,
    part: TaskPart,
    collection: String,
    lease_timeout: Option<Duration>,
    heartbeat_every: Option<Duration>,
    /// Whether an attempt whose part a live attempt holds returns at once
    /// ([`PartRun::HeldElsewhere`]) rather than waiting for it to end.
    leave_if_held: bool,
}

/// A part's heartbeat interval by default, at most [`PARTS_PER_HEARTBEAT_SECOND`] parts.
const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(10);
/// The lease by default: six heartbeats, and at least a minute.
const DEFAULT_LEASE: Duration = Duration::from_secs(60);
/// How long a task that claimed a job's start may take to split and count the collection
/// before another takes the start over (a later attempt of its own task does at once).
const START_LEASE: Duration = Duration::from_secs(600);
/// The default heartbeat grows with the job past 50 parts so that the parts together write at
/// most 5 heartbeats a second (1 % of the ramp's first 500 writes/s), up to 300 parts.
const PARTS_PER_HEARTBEAT_SECOND: u32 = 5;
/// The longest default heartbeat: a part's checkpoint is stored at least once a minute, and
/// a silent holder is taken over within six, at any part count (past 300 parts the parts
/// together write more than 5 heartbeats a second: 64 at 3,844).
const MAX_DEFAULT_HEARTBEAT: Duration = Duration::from_secs(60);

/// How often a part's holder writes, and how long it may go silent before it loses the part.
#[derive(Debug, Clone, Copy)]
struct Timing {
    heartbeat_every: Duration,
    lease_timeout: Duration,
}

impl Timing {
    /// For a job of `parts` parts, the heartbeat and the lease each as set, else by default.
    fn of(parts: u32, heartbeat_every: Option<Duration>, lease_timeout: Option<Duration>) -> Self {
        let scaled = DEFAULT_HEARTBEAT
            .max(Duration::from_secs(1) * parts / PARTS_PER_HEARTBEAT_SECOND)
            .min(MAX_DEFAULT_HEARTBEAT);
        let lease_for = |heartbeat: Duration| DEFAULT_LEASE.max(heartbeat.saturating_mul(6));
        let (heartbeat_every, lease_timeout) = match (heartbeat_every, lease_timeout) {
            (Some(heartbeat), Some(lease)) => (heartbeat, lease),
            (Some(heartbeat), None) => (heartbeat, lease_for(heartbeat)),
            (None, Some(lease)) => (scaled.min(lease / 2), lease),
            (None, None) => (scaled, lease_for(scaled)),
        };
        Timing {
            heartbeat_every,
            lease_timeout,
        }
    }
}

impl<T> std::fmt::Debug for TrackedPart<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TrackedPart")
            .field("job", &self.id)
            .field("part", &self.part)
            .field("collection", &self.collection)
            .field("lease_timeout", &self.lease_timeout)
            .field("heartbeat_every", &self.heartbeat_every)
            .field("leave_if_held", &self.leave_if_held)
            .finish_non_exhaustive()
    }
}

/// What a tracked part's run did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum PartRun {
    /// This attempt ran the part to its end: its own progress (resumed after the stored
    /// checkpoint, when an earlier attempt got that far), and the part as stored now.
    Finished {
        /// What this attempt did.
        progress: Progress,
        /// The part's totals over every attempt.
        part: PartStatus,
    },
    /// The part was done already; nothing was run.
    AlreadyDone(PartStatus),
    /// Another attempt holds the part and its heartbeat is fresh, and the part was run with
    /// [`leave_if_held`](TrackedPart::leave_if_held); nothing was run or written. Run again
    /// later: once that attempt's heartbeat is older than the lease, the part is taken over
    /// from its checkpoint.
    HeldElsewhere(PartStatus),
}

impl<'db, T: Sharded> ShardJob<'db, T> {
    /// This job as part `part` of the tracked job `job`, whose state Firestore holds (in
    /// [`JOB_STATE_COLLECTION`] unless [`state_collection`](TrackedPart::state_collection)
    /// says another): run the same in every task with its own [`TaskPart`]
    /// ([`TaskPart::from_env`] reads Cloud Run's or a Kubernetes Indexed Job's variables).
    ///
    /// - The first task to start the job fixes its parts
    ///   ([`ShardedCollection::parts`](crate::model::handle::ShardedCollection::parts): Firestore's split
    ///   where it has one) and the collection's size; every task uses those, and a task with
    ///   another part count is [`Error::JobMismatch`].
    /// - A part is held by one attempt at a time: a lease taken with a precondition and kept
    ///   by a heartbeat (every [`heartbeat_every`](TrackedPart::heartbeat_every), with the
    ///   checkpoint and counts). A later attempt of the same task, as its engine numbers them
    ///   (Cloud Run's next attempt of the execution, another pod of the Indexed Job for the
    ///   index: [`TaskPart::from_env`] reads them), takes the part over at once, since the
    ///   engine starts it only after the last one ended: a task killed and retried within
    ///   seconds goes on from its checkpoint instead of spending its retries. Any other
    ///   attempt whose part a live one holds waits, without writing, until the holder is done
    ///   (then [`PartRun::AlreadyDone`]) or its heartbeat is older than the
    ///   [`lease_timeout`](TrackedPart::lease_timeout) (then it takes the part over and
    ///   resumes from its checkpoint); [`leave_if_held`](TrackedPart::leave_if_held) returns
    ///   [`PartRun::HeldElsewhere`] instead. The attempt that lost a part stops with
    ///   [`Error::JobLeaseLost`] at its next heartbeat, and stores apart what it did since
    ///   its last one (its documents updated count in [`PartStatus::updated`]).
    /// - A done part is [`PartRun::AlreadyDone`]. A failed run stores why and returns the
    ///   error; the next attempt goes on from the checkpoint.
    /// - The job's [`writer`](ShardJob::writer) options are the whole job's write budget:
    ///   each part writes at 1/parts of their ramp
    ///   ([`BulkWriterOptions::share_of`](crate::write::bulk::BulkWriterOptions::share_of), applied
    ///   here: do not share them yourself), so that however many tasks run at once, together
    ///   they write no faster than one job would. The closing step, which runs alone, has
    ///   the whole budget.
    /// - Every write of the job's state is counted where it is stored
    ///   ([`JobStatus::state_writes`]): with the default heartbeat, a part's tracking costs
    ///   one write per 10 s.
    ///
    /// The job's own [`ids`](ShardJob::ids) and [`resume_from`](ShardJob::resume_from) are
    /// replaced by the part's stored range and checkpoint.
    pub fn tracked(self, job: &str, part: TaskPart) -> TrackedPart<'db, T> {
        TrackedPart {
            job: self,
            id: job.to_owned(),
            part,
            collection: JOB_STATE_COLLECTION.to_owned(),
            lease_timeout: None,
            heartbeat_every: None,
            leave_if_held: false,
        }
    }
}

impl<'db, T: Sharded> TrackedPart<'db, T> {
    /// Keeps the job's state in the top-level collection `collection` instead of
    /// [`JOB_STATE_COLLECTION`]: a document per job, with its parts in a subcollection whose
    /// id is reserved. The id starts with
    /// [`RESERVED_COLLECTION_PREFIX`](sharded_indexes::RESERVED_COLLECTION_PREFIX)
    /// (`_sharded_jobs_imports`, say), which the derive refuses for any type's collection, so
    /// that no sharded type's jobs, queries or groups take the state in; another id is
    /// [`Error::InvalidOptions`].
    pub fn state_collection(self, collection: &str) -> Self {
        TrackedPart {
            collection: collection.to_owned(),
            ..self
        }
    }

    /// How long a part's holder may go without a heartbeat before another attempt takes the
    /// part over: at least twice the heartbeat's interval. By default six heartbeats and at
    /// least 60 s (60 s up to 50 parts). The holder stores it with the part, so that every
    /// task and [`JobStatus`] judge its heartbeat by the lease it took.
    pub fn lease_timeout(self, lease_timeout: Duration) -> Self {
        TrackedPart {
            lease_timeout: Some(lease_timeout),
            ..self
        }
    }

    /// How often the holder writes its heartbeat, with the checkpoint and counts. The job's
    /// parts together write parts / `heartbeat_every` state writes a second, so the default
    /// grows with the job: 10 s up to 50 parts, then parts × 200 ms (at most half a lease set
    /// with [`lease_timeout`](Self::lease_timeout)), at most 5 writes a second, 1 % of the
    /// ramp's first 500 writes/s. With 8 parts, 0.16 % (BENCHMARKS.md measures it).
    pub fn heartbeat_every(self, heartbeat_every: Duration) -> Self {
        TrackedPart {
            heartbeat_every: Some(heartbeat_every),
            ..self
        }
    }

    /// Returns [`PartRun::HeldElsewhere`] at once when a live attempt holds the part, instead
    /// of waiting for it to end (done, or silent past its lease): for a task its engine
    /// retries later by itself (exit 75 says so). A later attempt of the holder's own task
    /// takes the part over either way.
    pub fn leave_if_held(self) -> Self {
        TrackedPart {
            leave_if_held: true,
            ..self
        }
    }

    /// The heartbeat and the lease: each as set, else its default for the job's part count.
    fn timing(&self) -> Timing {
        Timing::of(self.part.count, self.heartbeat_every, self.lease_timeout)
    }

    fn check(&self) -> Result<()> {
        for (name, id) in [("job", &self.id), ("state_collection", &self.collection)] {
            crate::model::document_id::check_document_id(id).map_err(|_| {
                Error::InvalidOptions {
                    option: if name == "job" {
                        "tracked job id"
                    } else {
                        "state_collection"
                    },
                    expected: "a document id",
                }
            })?;
        }
        // No sharded type's collection starts so: the job's state is in no job's scan, no
        // query and no collection group.
        if !self
            .collection
            .starts_with(sharded_indexes::RESERVED_COLLECTION_PREFIX)
        {
            return Err(Error::InvalidOptions {
                option: "state_collection",
                expected: "a collection id starting with `_sharded` (RESERVED_COLLECTION_PREFIX), which no sharded type may take",
            });
        }
        let Timing {
            heartbeat_every,
            lease_timeout,
        } = self.timing();
        if lease_timeout > crate::wire::option_check::MAX_DURATION {
            return Err(Error::InvalidOptions {
                option: "lease_timeout",
                expected: "at most a day (MAX_DURATION)",
            });
        }
        if heartbeat_every.is_zero() || heartbeat_every.saturating_mul(2) > lease_timeout {
            return Err(Error::InvalidOptions {
                option: "heartbeat_every",
                expected: "more than zero, and at most half the lease timeout",
            });
        }
        Ok(())
    }

    /// Runs the part: takes its lease (waiting for a live holder to end, unless
    /// [`leave_if_held`](Self::leave_if_held)), runs the job over its range from its
    /// checkpoint, keeps the lease with heartbeats, and stores the outcome; then, if every
    /// part is done, the job's closing step. `progress` is called after each page with this
    /// attempt's progress.
    ///
    /// Dropping the future stops the job at once, as [`ShardJob::run`]'s does; the part's
    /// lease then lapses after the lease timeout (or at once for a later attempt of the task,
    /// as its engine numbers them) and the next attempt takes it over.
    pub async fn run(self, mut progress: impl FnMut(&Progress)) -> Result<PartRun> {
        self.check()?;
        self.job.scope.check::<T>()?;
        let db = self.job.db;
        let record = self.job_record().await?;
        let timing = self.timing();
        let closer = self.closer();
        let held = loop {
            match lease::acquire(
                db,
                &self.collection,
                &self.id,
                &self.part,
                timing.lease_timeout,
                self.job.scan_backoff,
            )
            .await?
            {
                lease::Outcome::Held(held) => break *held,
                lease::Outcome::Done(part) => {
                    closer.close_if_last::<T>(&self.part).await?;
                    return Ok(PartRun::AlreadyDone(part));
                }
                lease::Outcome::Elsewhere(part, _) if self.leave_if_held => {
                    return Ok(PartRun::HeldElsewhere(part));
                }
                // Looked at again each heartbeat, and once its lease runs out.
                lease::Outcome::Elsewhere(_, left) => {
                    let wait = left.min(timing.heartbeat_every);
                    tokio::time::sleep(wait.max(Duration::from_millis(100))).await;
                }
            }
        };
        let Some(range) = held.record.range.clone() else {
            // Firestore split the collection into fewer parts than there are tasks.
            let done = held.finish(db, &Progress::default(), None).await?;
            closer.close_if_last::<T>(&self.part).await?;
            return Ok(PartRun::Finished {
                progress: Progress::default(),
                part: done,
            });
        };
        let lost = Error::JobLeaseLost {
            job: self.id.clone(),
            part: self.part.index,
        };
        let part = self.part.clone();
        let mut job = self.job.ids(range);
        // The job's writer options are the whole job's budget; each part writes at its share.
        job.writer = job.writer.share_of(record.parts)?;
        // The job's closing step sweeps once, after every part's scan.
        job.sweep_after_scan = false;
        if let Some(checkpoint) = &held.record.checkpoint {
            job = job.resume_from(crate::job::shard_job::Checkpoint::after(checkpoint.clone()));
        }
        let (latest, seen) = tokio::sync::watch::channel(None::<Progress>);
        let run = job.run(move |report| {
            progress(report);
            latest.send_replace(Some(report.clone()));
        });
        let outcome = keep_lease(db, held, run, seen, timing.heartbeat_every, lost).await?;
        closer.close_if_last::<T>(&part).await?;
        Ok(outcome)
    }

    /// What the job's closing step needs, taken before the part's job is run (and moved).
    fn closer(&self) -> Closer<'db> {
        Closer {
            db: self.job.db,
            scope: self.job.scope.clone(),
            writer: self.job.writer.clone(),
            page_size: self.job.page_size,
            change: self.job.change.clone(),
            collection: self.collection.clone(),
            id: self.id.clone(),
            timing: self.timing(),
            backoff: self.job.scan_backoff,
        }
    }
}

/// Runs `run` while heartbeats every `heartbeat_every` keep the lease; stores the outcome.
/// A heartbeat that finds the part taken over drops `run` (which stops the job at once) and
/// returns `lost`.
async fn keep_lease(
    db: &firestore::FirestoreDb,
    mut held: Held,
    run: impl std::future::Future<Output = Result<Progress>>,
    seen: tokio::sync::watch::Receiver<Option<Progress>>,
    heartbeat_every: Duration,
    lost: Error,
) -> Result<PartRun> {
    let started = Instant::now();
    let mut beat = tokio::time::interval(heartbeat_every);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    beat.tick().await;
    tokio::pin!(run);
    loop {
        tokio::select! {
            outcome = &mut run => {
                return match outcome {
                    Ok(progress) => {
                        let part = held.finish(db, &progress, Some(started.elapsed())).await?;
                        Ok(PartRun::Finished { progress, part })
                    }
                    Err(error) => {
                        let latest = seen.borrow().clone();
                        // Best effort: the error is what the caller needs.
                        let _ = held.fail(db, latest.as_ref(), started.elapsed(), &error).await;
                        Err(error)
                    }
                };
            }
            _ = beat.tick() => {
                let latest = seen.borrow().clone();
                if !held.beat(db, latest.as_ref(), started.elapsed()).await? {
                    return Err(lost);
                }
            }
        }
    }
}

impl<T: Sharded> TrackedPart<'_, T> {
    /// The job's document, created by the first task with the parts every task then uses.
    async fn job_record(&self) -> Result<JobRecord> {
        let db = self.job.db;
        let name = state::job_name(db, &self.collection, &self.id);
        let scope = match &self.job.scope {
            Scope::Top => String::new(),
            Scope::Under(parent) => parent.clone(),
            Scope::Group => "*".to_owned(),
        };
        let owner = lease::token();
        loop {
            let read = state::read::<JobRecord>(db, &name, &self.job.scan_backoff).await?;
            let Some(record) = read.record else {
                // No task started the job: claim its start with a small document, so that
                // the tasks starting at once do not all split the collection and commit
                // every part.
                let mut claim = JobRecord {
                    collection: T::COLLECTION.to_owned(),
                    scope: scope.clone(),
                    parts: self.part.count,
                    split_by: crate::job::balanced_parts::SplitBy::IdSpace,
                    total: 0,
                    change: self.job.change.describe(),
                    renamed_from: self.job.change.renamed_from(),
                    closing: None,
                    starting: Some(self.starting(&owner)),
                    writes: 0,
                };
                match state::write(db, &name, &mut claim, None, &self.job.scan_backoff).await? {
                    Ok(claimed) => match self.start(claim, claimed).await? {
                        Some(record) => return Ok(record),
                        None => continue,
                    },
                    Err(state::Conflict) => continue,
                }
            };
            self.check_record(&record, &scope)?;
            let Some(starting) = &record.starting else {
                return Ok(record);
            };
            // Another task is starting it: wait for it, unless its claim ran out or this is
            // a later attempt of its very task; then take the start over.
            let age = state::age(read.update_time.as_ref(), read.read_time.as_ref());
            let followed = starting
                .holder
                .as_ref()
                .is_some_and(|h| self.part.supersedes(h));
            if state::holder_live(age, starting.lease_seconds) && !followed {
                let left = state::lease_left(age, starting.lease_seconds);
                tokio::time::sleep(left.clamp(Duration::from_millis(100), Duration::from_secs(1)))
                    .await;
                continue;
            }
            let mut claim = JobRecord {
                starting: Some(self.starting(&owner)),
                ..record
            };
            if let Ok(claimed) = state::write(
                db,
                &name,
                &mut claim,
                read.update_time,
                &self.job.scan_backoff,
            )
            .await?
                && let Some(record) = self.start(claim, claimed).await?
            {
                return Ok(record);
            }
        }
    }

    /// This task's claim on the job's start.
    fn starting(&self, owner: &str) -> state::Starting {
        state::Starting {
            owner: owner.to_owned(),
            lease_seconds: START_LEASE.as_secs_f64(),
            holder: Some(self.part.holder()),
        }
    }

    /// Starts the job whose start this task claimed (`claim`, written at `claimed`): splits
    /// the collection, counts it, and writes every part's document with the job's, started,
    /// in one commit on the claim's precondition. `None` when another task took the start
    /// over meanwhile.
    async fn start(
        &self,
        mut record: JobRecord,
        claimed: firestore::gcloud_sdk::prost_types::Timestamp,
    ) -> Result<Option<JobRecord>> {
        let db = self.job.db;
        let split =
            crate::job::balanced_parts::balanced_parts::<T>(db, &self.job.scope, self.part.count)
                .await?;
        record.split_by = split.by;
        record.total = self.job.clone_for_count().count().await?;
        record.starting = None;
        // Each part's range in its own document: the job's stays small at any part count,
        // and no task reads every part's to run its own.
        let mut ranges = split.ranges.into_iter();
        let mut parts: Vec<PartRecord> = (0..self.part.count)
            .map(|_| PartRecord::pending(ranges.next()))
            .collect();
        let started = state::start(
            db,
            &self.collection,
            &self.id,
            &mut record,
            claimed,
            &mut parts,
            &self.job.scan_backoff,
        )
        .await?;
        Ok(started.ok().map(|()| record))
    }

    /// A stored job this task may run a part of: the same collection, scope, change and part
    /// count, else [`Error::JobMismatch`].
    fn check_record(&self, record: &JobRecord, scope: &str) -> Result<()> {
        let mismatch = |reason: String| Error::JobMismatch {
            job: self.id.clone(),
            reason,
        };
        if record.collection != T::COLLECTION || record.scope != scope {
            return Err(mismatch(format!(
                "it runs over `{}` (scope `{}`), not `{}` (scope `{scope}`)",
                record.collection,
                record.scope,
                T::COLLECTION
            )));
        }
        if record.change != self.job.change.describe() {
            return Err(mismatch(format!(
                "it was started to {}, this task would {}",
                record.change,
                self.job.change.describe()
            )));
        }
        if record.parts != self.part.count {
            return Err(mismatch(format!(
                "it was started with {} parts, this task has {}",
                record.parts, self.part.count
            )));
        }
        Ok(())
    }
}

/// The part's record after `progress` on top of the counts stored before this attempt.
fn counted(base: &PartRecord, progress: Option<&Progress>, seconds: f64) -> PartRecord {
    let mut record = base.clone();
    if let Some(progress) = progress {
        record.checkpoint = progress
            .checkpoint
            .as_ref()
            .map(|checkpoint| checkpoint.last_id().to_owned())
            .or(record.checkpoint);
        record.scanned += progress.scanned;
        record.updated += progress.updated;
        record.unchanged += progress.unchanged;
        record.conflicts += progress.conflicts;
        record.deleted += progress.deleted;
        record.swept += progress.swept;
        record.both_names += progress.both_names;
        let room = crate::job::shard_job::MAX_LISTED.saturating_sub(record.both_names_ids.len());
        record
            .both_names_ids
            .extend(progress.both_names_ids.iter().take(room).cloned());
        record.rate = progress.rate();
    }
    record.seconds += seconds;
    record
}

impl<T: Sharded> ShardJob<'_, T> {
    /// The same job over the whole collection, for the count the job's ETA starts from.
    fn clone_for_count(&self) -> ShardJob<'_, T> {
        ShardJob::new(self.db, self.scope.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(timing: Timing) -> (f64, f64) {
        (
            timing.heartbeat_every.as_secs_f64(),
            timing.lease_timeout.as_secs_f64(),
        )
    }

    /// Up to 300 parts, all parts' heartbeats together stay within 5 writes a second; at
    /// any part count a checkpoint is stored at least once a minute and a silent holder is
    /// taken over within six.
    #[test]
    fn default_heartbeats_stay_within_five_writes_a_second_and_a_minute_apart() {
        assert_eq!(secs(Timing::of(1, None, None)), (10.0, 60.0));
        assert_eq!(secs(Timing::of(50, None, None)), (10.0, 60.0));
        assert_eq!(secs(Timing::of(200, None, None)), (40.0, 240.0));
        assert_eq!(secs(Timing::of(300, None, None)), (60.0, 360.0));
        assert_eq!(secs(Timing::of(3844, None, None)), (60.0, 360.0));
        for parts in 1..=crate::model::partition::MAX_PARTS {
            let timing = Timing::of(parts, None, None);
            let per_second = f64::from(parts) / timing.heartbeat_every.as_secs_f64();
            assert!(
                per_second <= f64::from(parts.max(300)) / 60.0 + 1e-9,
                "{parts}: {per_second}"
            );
            assert!(timing.heartbeat_every <= MAX_DEFAULT_HEARTBEAT);
            assert!(timing.lease_timeout <= Duration::from_secs(360));
            assert!(timing.heartbeat_every * 2 <= timing.lease_timeout);
        }
    }

    #[test]
    fn a_set_heartbeat_or_lease_is_kept_and_the_other_fits_it() {
        let set = Duration::from_secs(2);
        assert_eq!(secs(Timing::of(8, Some(set), None)), (2.0, 60.0));
        assert_eq!(secs(Timing::of(8, None, Some(set))), (1.0, 2.0));
        assert_eq!(secs(Timing::of(3000, None, Some(set * 100))), (60.0, 200.0));
        assert_eq!(secs(Timing::of(8, Some(set), Some(set * 3))), (2.0, 6.0));
    }
}
