//! A part's lease: taken by writing the part's document on a precondition (created if
//! absent, else unchanged since read), kept by heartbeats written on the precondition of the
//! holder's own last write, so an attempt that lost the part learns it at its next heartbeat.

use std::time::Duration;

use firestore::FirestoreDb;
use firestore::gcloud_sdk::prost_types::Timestamp;
use rand::Rng as _;

use super::counted;
use super::state::{self, Conflict, PartRecord, Phase};
use super::status::PartStatus;
use crate::retry::Backoff;
use crate::{Progress, Result};

/// A random token naming one attempt.
pub(super) fn token() -> String {
    rand::rng()
        .sample_iter(rand::distr::Alphanumeric)
        .take(16)
        .map(char::from)
        .collect()
}

pub(super) enum Outcome {
    Held(Held),
    Done(PartStatus),
    Elsewhere(PartStatus),
}

/// This attempt's hold on a part.
pub(super) struct Held {
    name: String,
    index: u32,
    /// The part as it stood when this attempt took it: the counts its progress adds to.
    pub(super) record: PartRecord,
    /// This attempt's last write: the precondition of its next.
    update_time: Timestamp,
    /// How its state reads and writes are retried.
    backoff: Backoff,
}

pub(super) async fn acquire(
    db: &FirestoreDb,
    collection: &str,
    job: &str,
    index: u32,
    lease_timeout: Duration,
    backoff: Backoff,
) -> Result<Outcome> {
    let name = state::part_name(db, collection, job, index);
    let owner = token();
    loop {
        let read = state::read::<PartRecord>(db, &name, &backoff).await?;
        let (record, after) = match (read.record, read.update_time) {
            (None, _) => (
                PartRecord {
                    phase: Phase::Running,
                    attempt: 1,
                    owner: owner.clone(),
                    checkpoint: None,
                    scanned: 0,
                    updated: 0,
                    unchanged: 0,
                    conflicts: 0,
                    deleted: 0,
                    swept: 0,
                    seconds: 0.0,
                    rate: 0.0,
                    error: None,
                    lease_seconds: lease_timeout.as_secs_f64(),
                    writes: 0,
                },
                None,
            ),
            (Some(stored), update_time) => {
                let age = state::age(update_time.as_ref(), read.read_time.as_ref());
                let status = PartStatus::from_record(index, &stored, age);
                match stored.phase {
                    Phase::Done => return Ok(Outcome::Done(status)),
                    // Judged by the lease its holder took.
                    Phase::Running if state::holder_live(age, stored.lease_seconds) => {
                        return Ok(Outcome::Elsewhere(status));
                    }
                    // Failed, or running with a heartbeat older than the lease.
                    Phase::Running | Phase::Failed => (
                        PartRecord {
                            phase: Phase::Running,
                            attempt: stored.attempt + 1,
                            owner: owner.clone(),
                            error: None,
                            lease_seconds: lease_timeout.as_secs_f64(),
                            ..stored
                        },
                        update_time,
                    ),
                }
            }
        };
        let mut record = record;
        match state::write(db, &name, &mut record, after, &backoff).await? {
            Ok(update_time) => {
                return Ok(Outcome::Held(Held {
                    name,
                    index,
                    record,
                    update_time,
                    backoff,
                }));
            }
            // Another attempt wrote the part between our read and our write: read again.
            Err(Conflict) => continue,
        }
    }
}

impl Held {
    /// Writes the heartbeat with `progress`'s checkpoint and counts; `false` when the part
    /// was taken over.
    pub(super) async fn beat(
        &mut self,
        db: &FirestoreDb,
        progress: Option<&Progress>,
        elapsed: Duration,
    ) -> Result<bool> {
        let mut record = counted(&self.record, progress, elapsed.as_secs_f64());
        Ok(self.store(db, &mut record).await?.is_ok())
    }

    /// Writes `record` as the part on the precondition of this attempt's last write, which
    /// it then is; the conflict when another attempt took the part over.
    async fn store(
        &mut self,
        db: &FirestoreDb,
        record: &mut PartRecord,
    ) -> Result<std::result::Result<(), Conflict>> {
        let written = state::write(
            db,
            &self.name,
            record,
            Some(self.update_time),
            &self.backoff,
        )
        .await?;
        Ok(written.map(|update_time| {
            self.update_time = update_time;
            self.record.writes = record.writes;
        }))
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
        match self.store(db, &mut record).await? {
            Ok(()) => Ok(PartStatus::from_record(self.index, &record, Some(0.0))),
            Err(Conflict) => Err(crate::Error::JobLeaseLost {
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
        error: &crate::Error,
    ) -> Result<()> {
        let mut record = counted(&self.record, progress, elapsed.as_secs_f64());
        record.phase = Phase::Failed;
        record.error = Some(error.to_string());
        // A conflict: another attempt holds the part already, and its record stands.
        let _taken_over = self.store(db, &mut record).await?;
        Ok(())
    }
}

/// The job id in a part's document name, `.../{job}/_sharded_parts/{index}`.
fn job_of(name: &str) -> String {
    name.rsplit('/').nth(2).unwrap_or_default().to_owned()
}
