//! A part's lease: taken by writing the part's document on the precondition of its read,
//! kept by heartbeats written on the precondition of the holder's own last write, so an
//! attempt that lost the part learns it at its next heartbeat. A holder is taken over when
//! its heartbeat is older than its lease, or at once by a later attempt of the same task, as
//! the engine running it numbers its attempts.

use std::time::Duration;

use firestore::FirestoreDb;
use firestore::gcloud_sdk::prost_types::Timestamp;
use rand::Rng as _;

use super::counted;
use super::state::{self, Conflict, LostRecord, PartRecord, Phase};
use super::status::PartStatus;
use crate::error::Result;
use crate::job::shard_job::Progress;
use crate::job::task_part::TaskPart;
use crate::wire::retry::Backoff;

/// A random token naming one attempt.
pub(crate) fn token() -> String {
    rand::rng()
        .sample_iter(rand::distr::Alphanumeric)
        .take(16)
        .map(char::from)
        .collect()
}

pub(super) enum Outcome {
    Held(Box<Held>),
    Done(PartStatus),
    /// A live attempt holds the part: how long until its lease runs out, if nothing is heard
    /// of it.
    Elsewhere(PartStatus, Duration),
}

/// This attempt's hold on a part.
pub(super) struct Held {
    name: String,
    index: u32,
    /// The part as it stood when this attempt took it: the counts its progress adds to.
    pub(super) record: PartRecord,
    /// This attempt's last write: the precondition of its next.
    update_time: Timestamp,
    /// The progress its last write stored: what it did since is lost with a lost lease.
    stored: Option<Progress>,
    /// How its state reads and writes are retried.
    backoff: Backoff,
}

/// Takes part `part.index` of the job: a pending part, a failed one, one whose holder's
/// heartbeat is older than its lease, or one held by an earlier attempt of this very task
/// ([`TaskPart::supersedes`]).
pub(super) async fn acquire(
    db: &FirestoreDb,
    collection: &str,
    job: &str,
    part: &TaskPart,
    lease_timeout: Duration,
    backoff: Backoff,
) -> Result<Outcome> {
    let index = part.index;
    let name = state::part_name(db, collection, job, index);
    let owner = token();
    loop {
        let read = state::read::<PartRecord>(db, &name, &backoff).await?;
        let Some(stored) = read.record else {
            return Err(crate::error::Error::JobMismatch {
                job: job.to_owned(),
                reason: format!("it has no part {index}: its parts were written when it started"),
            });
        };
        let age = state::age(read.update_time.as_ref(), read.read_time.as_ref());
        let status = PartStatus::from_record(index, &stored, age);
        match stored.phase {
            Phase::Done => return Ok(Outcome::Done(status)),
            // Judged by the lease its holder took, unless this attempt comes after it.
            Phase::Running
                if state::holder_live(age, stored.lease_seconds)
                    && !stored
                        .holder
                        .as_ref()
                        .is_some_and(|holder| part.supersedes(holder)) =>
            {
                let left = state::lease_left(age, stored.lease_seconds);
                return Ok(Outcome::Elsewhere(status, left));
            }
            // Pending, failed, running with a heartbeat older than the lease, or held by an
            // attempt this one follows.
            Phase::Pending | Phase::Running | Phase::Failed => {}
        }
        let mut record = PartRecord {
            phase: Phase::Running,
            attempt: stored.attempt + 1,
            owner: owner.clone(),
            holder: Some(part.holder()),
            error: None,
            lease_seconds: lease_timeout.as_secs_f64(),
            ..stored
        };
        match state::write(db, &name, &mut record, read.update_time, &backoff).await? {
            Ok(update_time) => {
                return Ok(Outcome::Held(Box::new(Held {
                    name,
                    index,
                    record,
                    update_time,
                    stored: None,
                    backoff,
                })));
            }
            // Another attempt wrote the part between our read and our write: read again.
            Err(Conflict) => continue,
        }
    }
}

impl Held {
    /// Writes the heartbeat with `progress`'s checkpoint and counts; `false` when the part
    /// was taken over (what this attempt did since its last heartbeat is then stored apart).
    pub(super) async fn beat(
        &mut self,
        db: &FirestoreDb,
        progress: Option<&Progress>,
        elapsed: Duration,
    ) -> Result<bool> {
        let mut record = counted(&self.record, progress, elapsed.as_secs_f64());
        Ok(self.store(db, &mut record, progress).await?.is_ok())
    }

    /// Writes `record` (with `progress`) as the part on the precondition of this attempt's
    /// last write, which it then is; the conflict when another attempt took the part over,
    /// after storing what `progress` did since the last write.
    async fn store(
        &mut self,
        db: &FirestoreDb,
        record: &mut PartRecord,
        progress: Option<&Progress>,
    ) -> Result<std::result::Result<(), Conflict>> {
        let written = state::write(
            db,
            &self.name,
            record,
            Some(self.update_time),
            &self.backoff,
        )
        .await?;
        match written {
            Ok(update_time) => {
                self.update_time = update_time;
                self.record.writes = record.writes;
                self.stored = progress.cloned();
                Ok(Ok(()))
            }
            Err(Conflict) => {
                self.store_lost(db, progress).await?;
                Ok(Err(Conflict))
            }
        }
    }

    /// Stores what this attempt did after its last stored write, once another took the part
    /// over: the documents it updated meanwhile were updated, though the attempt that took
    /// over finds them done and counts them unchanged.
    async fn store_lost(&self, db: &FirestoreDb, progress: Option<&Progress>) -> Result<()> {
        let (Some(now), before) = (progress, self.stored.as_ref()) else {
            return Ok(());
        };
        let since =
            |field: fn(&Progress) -> u64| field(now).saturating_sub(before.map_or(0, field));
        let mut lost = LostRecord {
            part: self.index,
            attempt: self.record.attempt,
            scanned: since(|p| p.scanned),
            updated: since(|p| p.updated),
            deleted: since(|p| p.deleted),
            swept: since(|p| p.swept),
            writes: 0,
        };
        if lost.scanned + lost.updated + lost.deleted + lost.swept == 0 {
            return Ok(());
        }
        let name = format!(
            "{}/{}/{:05}-{}",
            self.name
                .rsplitn(3, '/')
                .nth(2)
                .expect("a part's name is under its job's"),
            state::LOST_COLLECTION,
            self.index,
            self.record.owner
        );
        // Created once: a retry whose first attempt landed conflicts with itself.
        let _landed = state::write(db, &name, &mut lost, None, &self.backoff).await?;
        Ok(())
    }

    /// Stores the part as done with `progress`'s counts.
    pub(super) async fn finish(
        mut self,
        db: &FirestoreDb,
        progress: &Progress,
        elapsed: Option<Duration>,
    ) -> Result<PartStatus> {
        let mut record = counted(
            &self.record,
            Some(progress),
            elapsed.unwrap_or_default().as_secs_f64(),
        );
        record.phase = Phase::Done;
        match self.store(db, &mut record, Some(progress)).await? {
            Ok(()) => Ok(PartStatus::from_record(self.index, &record, Some(0.0))),
            Err(Conflict) => Err(crate::error::Error::JobLeaseLost {
                job: job_of(&self.name),
                part: self.index,
            }),
        }
    }

    /// Stores the part as failed, with the error and the last progress.
    pub(super) async fn fail(
        mut self,
        db: &FirestoreDb,
        progress: Option<&Progress>,
        elapsed: Duration,
        error: &crate::error::Error,
    ) -> Result<()> {
        let mut record = counted(&self.record, progress, elapsed.as_secs_f64());
        record.phase = Phase::Failed;
        record.error = Some(error.to_string());
        // A conflict: another attempt holds the part already, and its record stands.
        let _taken_over = self.store(db, &mut record, progress).await?;
        Ok(())
    }
}

/// The job id in a part's document name, `.../{job}/_sharded_parts/{index}`.
fn job_of(name: &str) -> String {
    name.rsplit('/').nth(2).unwrap_or_default().to_owned()
}
