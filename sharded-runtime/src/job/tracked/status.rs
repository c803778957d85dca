//! The whole tracked job at a glance, read from any machine: each part's phase, counts and
//! heartbeat, and their sums.

use std::time::Duration;

use firestore::FirestoreDb;

use super::JOB_STATE_COLLECTION;
use super::state::{self, JobRecord, PartRecord, Phase};
use crate::error::{Error, Result};
use crate::wire::retry::Backoff;

/// Where a part of a tracked job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PartPhase {
    /// No task has started it.
    Pending,
    /// An attempt holds it, with a heartbeat younger than the lease.
    Running,
    /// An attempt held it, and its heartbeat is older than the lease: the next attempt
    /// takes it over.
    Stale,
    /// Done: every document of its range has a current shard value.
    Done,
    /// The last attempt failed (see [`PartStatus::error`]); the next goes on from the
    /// checkpoint.
    Failed,
}

/// One part of a tracked job, as stored.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PartStatus {
    /// The part's index.
    pub index: u32,
    /// Where it stands.
    pub phase: PartPhase,
    /// Attempts so far.
    pub attempt: u32,
    /// Every document of the part up to this id is done.
    pub checkpoint: Option<String>,
    /// Documents scanned, over every attempt (each once: an attempt resumes after the stored
    /// checkpoint, stored with the counts that reach it).
    pub scanned: u64,
    /// Documents given a current shard value, by every attempt: an attempt that lost the
    /// part stores what it did after its last heartbeat apart, and it counts here too (the
    /// attempt that took over finds those documents done, and counts them `unchanged`).
    pub updated: u64,
    /// Documents that had one already.
    pub unchanged: u64,
    /// Documents deleted between the scan and the write.
    pub deleted: u64,
    /// A rename's documents holding both names with different values, left as they are for
    /// you to decide ([`BothNames::Leave`](crate::job::shard_job::BothNames::Leave)).
    pub both_names: u64,
    /// The first of them (up to [`MAX_LISTED`](crate::job::shard_job::MAX_LISTED)), by id.
    pub both_names_ids: Vec<String>,
    /// Documents scanned per second by the holding attempt, at its last heartbeat.
    pub rate: f64,
    /// Time the part's attempts have run.
    pub elapsed: Duration,
    /// Time since the last heartbeat, on the server's clock.
    pub heartbeat_age: Option<Duration>,
    /// Why the last attempt failed.
    pub error: Option<String>,
    /// Writes of the part's state document: every attempt's lease, heartbeats and outcome.
    pub state_writes: u64,
}

impl PartStatus {
    /// The part as stored; a running part whose heartbeat is as old as its holder's lease is
    /// stale.
    pub(super) fn from_record(
        index: u32,
        record: &PartRecord,
        age_seconds: Option<f64>,
    ) -> PartStatus {
        let heartbeat_age = age_seconds.map(|age| Duration::from_secs_f64(age.max(0.0)));
        let phase = match record.phase {
            Phase::Pending => PartPhase::Pending,
            Phase::Done => PartPhase::Done,
            Phase::Failed => PartPhase::Failed,
            Phase::Running if !state::holder_live(age_seconds, record.lease_seconds) => {
                PartPhase::Stale
            }
            Phase::Running => PartPhase::Running,
        };
        PartStatus {
            index,
            phase,
            attempt: record.attempt,
            checkpoint: record.checkpoint.clone(),
            scanned: record.scanned,
            updated: record.updated,
            unchanged: record.unchanged,
            deleted: record.deleted,
            both_names: record.both_names,
            both_names_ids: record.both_names_ids.clone(),
            rate: record.rate,
            elapsed: Duration::from_secs_f64(record.seconds.max(0.0)),
            heartbeat_age,
            error: record.error.clone(),
            state_writes: record.writes,
        }
    }

    fn pending(index: u32) -> PartStatus {
        PartStatus {
            index,
            phase: PartPhase::Pending,
            attempt: 0,
            checkpoint: None,
            scanned: 0,
            updated: 0,
            unchanged: 0,
            deleted: 0,
            both_names: 0,
            both_names_ids: Vec::new(),
            rate: 0.0,
            elapsed: Duration::ZERO,
            heartbeat_age: None,
            error: None,
            state_writes: 0,
        }
    }
}

/// A tracked job's closing step, run once after every part is done: the sweep of documents
/// written behind the scans with a value the current set dropped (not for a rename), then the
/// count of documents that still need the job's change.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct JobClosing {
    /// How many times it ran to its end: 1 once closed.
    pub runs: u32,
    /// Documents the sweep fixed.
    pub swept: u64,
    /// Documents that still need the job's change after it (without a current shard value;
    /// for a rename, still under the old name); `None` while it runs.
    pub outstanding: Option<u64>,
    /// The part whose task claimed it (a later attempt of that task takes it over at once).
    pub claimed_by: Option<u32>,
    /// For a rename closed already: whether, when the status was read, a document still
    /// held the old name (left with both names for you to decide, or written after the
    /// closing step by a process still on the old version). The job is not done while one
    /// does: decide those left ([`PartStatus::both_names_ids`]), and run any task again to
    /// sweep those written since (it closes the job again). Looked for with one query of
    /// the old name's single-field index, for a job over one collection; `None` for other
    /// jobs, and over a group, whose single-field indexes Firestore does not keep by default
    /// (the closing step's count stands).
    pub still_needed: Option<bool>,
}

/// A tracked job's state: every part's, and the collection's size when it started.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct JobStatus {
    /// The job's id.
    pub job: String,
    /// Each part, by index (pending ones included).
    pub parts: Vec<PartStatus>,
    /// The collection's size when the job started.
    pub total: u64,
    /// The closing step, once claimed.
    pub closing: Option<JobClosing>,
    /// Writes of the job's own state document: its start and the closing step's claim,
    /// heartbeats and outcome.
    pub job_state_writes: u64,
}

impl JobStatus {
    /// The job `job`'s state from [`JOB_STATE_COLLECTION`]; a part whose holder's heartbeat
    /// is older than the lease that holder took (stored with the part) is
    /// [`PartPhase::Stale`]. [`Error::NoSuchJob`] when no such job was started.
    pub async fn read(db: &FirestoreDb, job: &str) -> Result<JobStatus> {
        JobStatus::read_from(db, JOB_STATE_COLLECTION, job).await
    }

    /// [`read`](Self::read) from the state collection `collection`.
    pub async fn read_from(db: &FirestoreDb, collection: &str, job: &str) -> Result<JobStatus> {
        let record = state::read::<JobRecord>(
            db,
            &state::job_name(db, collection, job),
            &Backoff::default(),
        )
        .await?
        .record
        .ok_or_else(|| Error::NoSuchJob {
            job: job.to_owned(),
            collection: collection.to_owned(),
        })?;
        let (stored, read_time) =
            state::read_parts(db, collection, job, &Backoff::default()).await?;
        let mut parts: Vec<PartStatus> = (0..record.parts).map(PartStatus::pending).collect();
        for (index, part, update_time) in stored {
            let age = state::age(update_time.as_ref(), read_time.as_ref());
            if let Some(slot) = parts.get_mut(index as usize) {
                *slot = PartStatus::from_record(index, &part, age);
            }
        }
        for lost in state::read_lost(db, collection, job, &Backoff::default()).await? {
            if let Some(part) = parts.get_mut(lost.part as usize) {
                part.updated += lost.updated;
                part.deleted += lost.deleted;
            }
        }
        let closed = record
            .closing
            .as_ref()
            .is_some_and(|c| c.outstanding.is_some());
        let still_needed = match (&record.renamed_from, closed) {
            (Some(from), true) => {
                state::holds_field(
                    db,
                    &record.collection,
                    &record.scope,
                    from,
                    &Backoff::default(),
                )
                .await?
            }
            _ => None,
        };
        Ok(JobStatus {
            job: job.to_owned(),
            parts,
            total: record.total,
            closing: record.closing.map(|closing| JobClosing {
                runs: closing.runs,
                swept: closing.swept,
                outstanding: closing.outstanding,
                claimed_by: closing.holder.map(|holder| holder.index),
                still_needed,
            }),
            job_state_writes: record.writes,
        })
    }

    /// How many parts are in `phase`.
    pub fn count(&self, phase: PartPhase) -> usize {
        self.parts.iter().filter(|part| part.phase == phase).count()
    }

    /// Whether the job is done: every part done, the closing step run, and no document
    /// needing the job's change: none counted by the closing step
    /// ([`JobClosing::outstanding`]), or, for a rename over one collection, none holding the
    /// old name when the status was read ([`JobClosing::still_needed`]: a document left
    /// with both names, or one written under the old name after the closing step).
    pub fn is_done(&self) -> bool {
        self.parts.iter().all(|part| part.phase == PartPhase::Done)
            && self.closing.as_ref().is_some_and(|closing| {
                closing.outstanding.is_some()
                    && match closing.still_needed {
                        Some(needed) => !needed,
                        None => closing.outstanding == Some(0),
                    }
            })
    }

    /// A rename's documents left with both names, by every part.
    pub fn both_names(&self) -> u64 {
        self.parts.iter().map(|part| part.both_names).sum()
    }

    /// Documents scanned by every part.
    pub fn scanned(&self) -> u64 {
        self.parts.iter().map(|part| part.scanned).sum()
    }

    /// Documents given a current shard value by every part.
    pub fn updated(&self) -> u64 {
        self.parts.iter().map(|part| part.updated).sum()
    }

    /// Writes of the job's state so far (its document's and every part's): what tracking
    /// the job costs, beside the job's own writes.
    pub fn state_writes(&self) -> u64 {
        self.job_state_writes + self.parts.iter().map(|part| part.state_writes).sum::<u64>()
    }

    /// Documents scanned per second by the running parts together.
    pub fn rate(&self) -> f64 {
        self.parts
            .iter()
            .filter(|part| part.phase == PartPhase::Running)
            .map(|part| part.rate)
            .sum()
    }

    /// The time left at the running parts' combined rate, from the collection's size.
    pub fn eta(&self) -> Option<Duration> {
        let rate = self.rate();
        let left = self.total.saturating_sub(self.scanned());
        // A rate stored by hand can make the time more than a `Duration` holds: none then.
        Duration::try_from_secs_f64(left as f64 / rate)
            .ok()
            .filter(|_| rate > 0.0)
    }
}
