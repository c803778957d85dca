//! The purge on the handles: one process over every shard value, a resumption from a
//! checkpoint, and one task's share of a job run by Cloud Run or a Kubernetes Indexed Job,
//! its checkpoint kept in Firestore.

use firestore::gcloud_sdk::google::firestore::v1::{Document, Value, value::ValueType};

use futures::future::BoxFuture;

use super::{PurgeOptions, PurgeProgress, Report, check_checkpoint, purge, purge_time, start};
use crate::error::{Error, Result};
use crate::job::stored_checkpoint::{CheckpointStore, Latest, part_id, store_while};
use crate::job::task_part::TaskPart;
use crate::model::expiry::Expiring;
use crate::model::handle::{Scope, ShardedCollection, ShardedCollectionGroup};
use crate::model::order_key::OrderBound;

/// The collection a tracked purge keeps each part's checkpoint in, one document per part
/// (`<job>-<index>-of-<count>`).
pub const PURGE_STATE_COLLECTION: &str = "_sharded_purges";

impl<'db, T: Expiring> ShardedCollection<'db, T> {
    /// Deletes every document of this collection whose expiry is at or before `now`, as the
    /// Datastore best-practices page prescribes: one query per shard value, run side by side
    /// (`options.concurrency` at a time), each reading keys in expiry order and going on
    /// after the last key it handled; the deletes at the bulk writer's 500/50/5 ramp. A
    /// document written since it was read (its expiry pushed back, say) is left, and counted
    /// in [`changed`](PurgeProgress::changed). `progress` hears of each page with the whole
    /// state, which is also the checkpoint [`resume_purge`](Self::resume_purge) goes on from;
    /// memory stays within `page_size` keys per shard value at work.
    ///
    /// Firestore's TTL policy (which the plan declares on the field) deletes expired documents
    /// too, within about a day; this is for what must go sooner, or in Datastore mode without
    /// a policy. A failed read (after its retries) or delete is an error; what was deleted
    /// before it is in the last progress reported. Dropping the future stops the purge:
    /// nothing more is sent (deletes already sent may still land), and a resume from the last
    /// progress reported is correct either way, as a tracked part's retry is (tested).
    pub async fn purge_expired(
        &self,
        now: impl OrderBound<T::Expiry>,
        options: PurgeOptions,
        mut progress: impl FnMut(&PurgeProgress) + Send,
    ) -> Result<PurgeProgress> {
        let (values, start) = start::<T>(now)?;
        purge::<T>(
            self.db,
            &self.scope,
            &values,
            &options,
            start,
            &mut progress,
        )
        .await
    }

    /// Goes on with a purge from `checkpoint` (the last [`PurgeProgress`] a purge reported),
    /// with its time: the shard values it finished are not read again, the others start after
    /// the last key they handled.
    pub async fn resume_purge(
        &self,
        checkpoint: PurgeProgress,
        options: PurgeOptions,
        mut progress: impl FnMut(&PurgeProgress) + Send,
    ) -> Result<PurgeProgress> {
        let values = T::DESCRIPTION.declared_values();
        check_checkpoint::<T>(&checkpoint, &values)?;
        purge::<T>(
            self.db,
            &self.scope,
            &values,
            &options,
            checkpoint,
            &mut progress,
        )
        .await
    }

    /// This task's share of the purge `job` (every `part.count`-th shard value from
    /// `part.index`), for a Cloud Run job or a Kubernetes Indexed Job: the part's checkpoint
    /// is stored in Firestore ([`PURGE_STATE_COLLECTION`]) every 2 s and at the end, and a
    /// later attempt of the part (a retry) goes on from it, with the time the first attempt
    /// stored; a finished part returns its progress at once. Two attempts at once do no harm:
    /// each delete holds the document as it was read.
    pub async fn purge_expired_part(
        &self,
        job: &str,
        now: impl OrderBound<T::Expiry>,
        part: TaskPart,
        options: PurgeOptions,
        progress: impl FnMut(&PurgeProgress) + Send,
    ) -> Result<PurgeProgress> {
        tracked::<T>(
            self.db,
            &self.scope,
            job,
            purge_time::<T>(now)?,
            part,
            options,
            progress,
        )
        .await
    }
}

impl<'db, T: Expiring + crate::model::sharded::CollectionGroup> ShardedCollectionGroup<'db, T> {
    /// [`ShardedCollection::purge_expired`] over every parent's collection at once, served by
    /// the plan's `COLLECTION_GROUP` indexes.
    pub async fn purge_expired(
        &self,
        now: impl OrderBound<T::Expiry>,
        options: PurgeOptions,
        mut progress: impl FnMut(&PurgeProgress) + Send,
    ) -> Result<PurgeProgress> {
        let (values, start) = start::<T>(now)?;
        purge::<T>(
            self.db,
            &Scope::Group,
            &values,
            &options,
            start,
            &mut progress,
        )
        .await
    }

    /// [`ShardedCollection::purge_expired_part`] over every parent's collection at once.
    pub async fn purge_expired_part(
        &self,
        job: &str,
        now: impl OrderBound<T::Expiry>,
        part: TaskPart,
        options: PurgeOptions,
        progress: impl FnMut(&PurgeProgress) + Send,
    ) -> Result<PurgeProgress> {
        tracked::<T>(
            self.db,
            &Scope::Group,
            job,
            purge_time::<T>(now)?,
            part,
            options,
            progress,
        )
        .await
    }
}

/// The shard values of part `part` of `values`: every `count`-th from `index`.
fn share(values: &[&'static str], part: &TaskPart) -> Vec<&'static str> {
    values
        .iter()
        .copied()
        .enumerate()
        .filter(|(i, _)| *i as u32 % part.count == part.index)
        .map(|(_, value)| value)
        .collect()
}

/// What a tracked purge part runs on: where it keeps its checkpoint, by the part's id
/// (`<job>-<index>-of-<count>`: a Firestore document, or a Datastore entity), and the purge
/// of some shard values from a checkpoint.
pub(crate) trait PurgePart: CheckpointStore<PurgeProgress> {
    fn run<'a>(
        &'a self,
        values: &'a [&'static str],
        start: PurgeProgress,
        report: Report<'a>,
    ) -> BoxFuture<'a, Result<PurgeProgress>>;
}

/// A Native-mode part: its checkpoints in [`PURGE_STATE_COLLECTION`].
struct Native<'a, T> {
    db: &'a firestore::FirestoreDb,
    scope: &'a Scope,
    options: &'a PurgeOptions,
    marker: std::marker::PhantomData<fn() -> T>,
}

impl<T: Expiring> CheckpointStore<PurgeProgress> for Native<'_, T> {
    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<PurgeProgress>>> {
        Box::pin(read_state(self.db, id))
    }
    fn write<'a>(&'a self, id: &'a str, state: &'a PurgeProgress) -> BoxFuture<'a, Result<()>> {
        Box::pin(write_state(self.db, id, state))
    }
}

impl<T: Expiring> PurgePart for Native<'_, T> {
    fn run<'a>(
        &'a self,
        values: &'a [&'static str],
        start: PurgeProgress,
        report: Report<'a>,
    ) -> BoxFuture<'a, Result<PurgeProgress>> {
        Box::pin(purge::<T>(
            self.db,
            self.scope,
            values,
            self.options,
            start,
            report,
        ))
    }
}

async fn tracked<T: Expiring>(
    db: &firestore::FirestoreDb,
    scope: &Scope,
    job: &str,
    now: super::PurgeTime,
    part: TaskPart,
    options: PurgeOptions,
    progress: impl FnMut(&PurgeProgress) + Send,
) -> Result<PurgeProgress> {
    let native = Native::<T> {
        db,
        scope,
        options: &options,
        marker: std::marker::PhantomData,
    };
    tracked_part::<T>(&native, job, now, part, &options, progress).await
}

/// Part `part` of the purge `job`: its share of the shard values, from the checkpoint `store`
/// holds (or from the start, at `now`), run by `runner`, the checkpoint stored every
/// [`STORE_EVERY`](crate::job::stored_checkpoint::STORE_EVERY) while it runs and at its end
/// (after a failure too).
pub(crate) async fn tracked_part<T: Expiring>(
    runner: &dyn PurgePart,
    job: &str,
    now: super::PurgeTime,
    part: TaskPart,
    options: &PurgeOptions,
    mut progress: impl FnMut(&PurgeProgress) + Send,
) -> Result<PurgeProgress> {
    options.validate()?;
    let id = part_id(job, &part)?;
    let values = share(&T::DESCRIPTION.declared_values(), &part);
    let start = match runner.read(&id).await? {
        Some(stored) => {
            check_checkpoint::<T>(&stored, &values)?;
            stored
        }
        None => PurgeProgress::new(now, values.len()),
    };
    if start.is_done() {
        progress(&start);
        return Ok(start);
    }
    let latest = Latest::new();
    let mut report = |state: &PurgeProgress| {
        latest.set(state);
        progress(state);
    };
    let running = runner.run(&values, start, &mut report);
    store_while(runner, &id, &latest, running).await
}

const PROGRESS_FIELD: &str = "progress";

async fn read_state(db: &firestore::FirestoreDb, id: &str) -> Result<Option<PurgeProgress>> {
    let document: Option<Document> =
        crate::wire::retry::retry_reads(&crate::wire::retry::Backoff::default(), || {
            db.fluent()
                .select()
                .by_id_in(PURGE_STATE_COLLECTION)
                .one(id)
        })
        .await?;
    let Some(document) = document else {
        return Ok(None);
    };
    match document
        .fields
        .get(PROGRESS_FIELD)
        .and_then(|value| value.value_type.as_ref())
    {
        Some(ValueType::StringValue(json)) => serde_json::from_str(json)
            .map(Some)
            .map_err(|err| Error::InvalidCheckpoint(format!("{id}: {err}"))),
        _ => Err(Error::InvalidCheckpoint(format!(
            "{PURGE_STATE_COLLECTION}/{id} holds no `{PROGRESS_FIELD}`"
        ))),
    }
}

async fn write_state(db: &firestore::FirestoreDb, id: &str, state: &PurgeProgress) -> Result<()> {
    let json =
        serde_json::to_string(state).map_err(|err| Error::InvalidCheckpoint(err.to_string()))?;
    let name = format!("{}/{PURGE_STATE_COLLECTION}/{id}", db.get_documents_path());
    let document = Document {
        name,
        fields: [(
            PROGRESS_FIELD.to_owned(),
            Value {
                value_type: Some(ValueType::StringValue(json)),
            },
        )]
        .into(),
        ..Document::default()
    };
    crate::wire::retry::retry_reads(&crate::wire::retry::Backoff::default(), || {
        db.fluent()
            .update()
            .in_col(PURGE_STATE_COLLECTION)
            .document(document.clone())
            .execute()
    })
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shard_value_falls_to_one_part() {
        let values: Vec<&'static str> = vec!["0", "1", "2", "3", "4", "5", "6"];
        for count in 1..=9u32 {
            let mut seen: Vec<&str> = (0..count)
                .flat_map(|index| share(&values, &TaskPart::new(index, count).unwrap()))
                .collect();
            seen.sort();
            assert_eq!(seen, values, "count {count}");
        }
    }
}
