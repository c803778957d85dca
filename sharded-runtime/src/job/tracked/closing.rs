//! A tracked job's closing step, once every part is done: the sweep of documents written
//! behind the scans with a value the current set dropped, then the census; run once, by the
//! task that claims it (the job's document written on the precondition of its read), kept by
//! heartbeats. A later attempt of the claiming task takes it over at once (its engine retried
//! it after a crash); another attempt of the same part waits out the claim's lease first; a
//! task of another part leaves it to the claiming task, whose engine retries it.

use crate::error::{Error, Result};
use crate::job::shard_job::ShardJob;
use crate::job::task_part::TaskPart;
use crate::model::handle::Scope;
use crate::model::sharded::Sharded;

use super::Timing;
use super::state::{self, Closing, Conflict, JobRecord};

/// What the job's closing step needs: where its state is, and how to sweep and count.
pub(super) struct Closer<'db> {
    pub(super) db: &'db firestore::FirestoreDb,
    pub(super) scope: Scope,
    pub(super) writer: crate::write::bulk::BulkWriterOptions,
    pub(super) page_size: u32,
    pub(super) change: crate::job::shard_job::Change,
    pub(super) collection: String,
    pub(super) id: String,
    pub(super) timing: Timing,
    pub(super) backoff: crate::wire::retry::Backoff,
}

impl Closer<'_> {
    /// The closing step, if every part is done and it has not run: claimed and run by this
    /// task (`part`), taken over from an earlier attempt of it, or left to the live task of
    /// another part that claimed it.
    pub(super) async fn close_if_last<T: Sharded>(&self, part: &TaskPart) -> Result<()> {
        let name = state::job_name(self.db, &self.collection, &self.id);
        let owner = super::lease::token();
        loop {
            let read = state::read::<JobRecord>(self.db, &name, &self.backoff).await?;
            let Some(mut record) = read.record else {
                return Ok(());
            };
            if let Some(closing) = &record.closing {
                // Closed, unless a rename's old name is stored again (written since, or left
                // with both names): then this task closes the job again, sweeping it.
                let finished = closing.outstanding.is_some();
                if finished && !self.still_needed(&record).await? {
                    return Ok(());
                }
                let age = state::age(read.update_time.as_ref(), read.read_time.as_ref());
                let ours = closing
                    .holder
                    .as_ref()
                    .is_some_and(|h| h.index == part.index);
                let followed = closing.holder.as_ref().is_some_and(|h| part.supersedes(h));
                // A finished step has no holder to wait for.
                if !finished && state::holder_live(age, closing.lease_seconds) && !followed {
                    if !ours {
                        // Another part's live task closes; its engine retries it if it dies.
                        return Ok(());
                    }
                    // An attempt of this very part that the engine does not say is over:
                    // wait out its lease, then take the step over.
                    let left = state::lease_left(age, closing.lease_seconds);
                    tokio::time::sleep(left.min(self.timing.heartbeat_every).max(POLL)).await;
                    continue;
                }
            }
            if state::done_parts(self.db, &self.collection, &self.id, &self.backoff).await?
                < u64::from(record.parts)
            {
                return Ok(());
            }
            let runs = record.closing.as_ref().map_or(0, |closing| closing.runs);
            record.closing = Some(self.claim(&owner, runs, part, 0, None));
            let claimed =
                match state::write(self.db, &name, &mut record, read.update_time, &self.backoff)
                    .await?
                {
                    Ok(update_time) => update_time,
                    Err(Conflict) => continue,
                };
            return self
                .run::<T>(&name, record, claimed, &owner, runs, part)
                .await;
        }
    }

    /// Whether a document of a closed rename holds the old name.
    async fn still_needed(&self, record: &JobRecord) -> Result<bool> {
        let Some(from) = &record.renamed_from else {
            return Ok(false);
        };
        let found = state::holds_field(
            self.db,
            &record.collection,
            &record.scope,
            from,
            &self.backoff,
        )
        .await?;
        Ok(found.unwrap_or(false))
    }

    /// The closing step's record: claimed by `owner`, this task's attempt, with what it
    /// found once it is done.
    fn claim(
        &self,
        owner: &str,
        runs: u32,
        part: &TaskPart,
        swept: u64,
        outstanding: Option<u64>,
    ) -> Closing {
        Closing {
            owner: owner.to_owned(),
            runs,
            swept,
            outstanding,
            lease_seconds: self.timing.lease_timeout.as_secs_f64(),
            holder: Some(part.holder()),
        }
    }

    /// Runs the claimed step with heartbeats and stores its outcome.
    async fn run<T: Sharded>(
        &self,
        name: &str,
        mut record: JobRecord,
        mut claimed: firestore::gcloud_sdk::prost_types::Timestamp,
        owner: &str,
        runs: u32,
        part: &TaskPart,
    ) -> Result<()> {
        let mut job = ShardJob::<T>::new(self.db, self.scope.clone())
            .writer(self.writer.clone())
            .page_size(self.page_size);
        job.change = self.change.clone();
        let work = async {
            // A rename sweeps by running once more over the whole collection: documents a
            // process on the old version wrote under the old name behind the parts' scans
            // (the old name has no index a group could query). Its census counts the old
            // name, documents left with both names among them.
            let swept = match &job.change {
                crate::job::shard_job::Change::Shard => job.sweep_alone().await?,
                crate::job::shard_job::Change::Rename { .. } => {
                    let mut sweep = ShardJob::<T>::new(self.db, self.scope.clone())
                        .writer(self.writer.clone())
                        .page_size(self.page_size);
                    sweep.change = self.change.clone();
                    sweep.run(|_| {}).await?.updated
                }
            };
            Ok::<_, Error>((swept, job.outstanding().await?))
        };
        tokio::pin!(work);
        let mut beat = tokio::time::interval(self.timing.heartbeat_every);
        beat.tick().await;
        let (swept, outstanding) = loop {
            tokio::select! {
                outcome = &mut work => break outcome?,
                _ = beat.tick() => {
                    match state::write(self.db, name, &mut record, Some(claimed), &self.backoff).await? {
                        Ok(update_time) => claimed = update_time,
                        // Taken over after this task went silent: the other closes.
                        Err(Conflict) => return Ok(()),
                    }
                }
            }
        };
        record.closing = Some(self.claim(owner, runs + 1, part, swept, Some(outstanding)));
        let _taken_over =
            state::write(self.db, name, &mut record, Some(claimed), &self.backoff).await?;
        Ok(())
    }
}

/// The shortest wait between two looks at a claim whose lease has run out already.
const POLL: std::time::Duration = std::time::Duration::from_millis(100);
