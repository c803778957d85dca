//! Deleting what expired (`#[sharded(expire_at = "...")]`), as the Datastore best-practices
//! page prescribes: one query per shard value, run side by side (its "split queries"), each
//! reading keys (and the expiry, which its cursor needs: nothing else) in expiry order and
//! going on after the last key it handled, never from the start, which would walk the index
//! entries of what it just deleted; the deletes at the bulk writer's 500/50/5 ramp. A document changed since it was read (its expiry pushed back)
//! is left: each delete holds the update time it was read at.

use std::collections::BTreeMap;
use std::sync::Mutex;

use firestore::gcloud_sdk::google::firestore::v1::{
    Document, Precondition, Value, Write, precondition::ConditionType, value::ValueType,
    write::Operation,
};
use firestore::{
    FirestoreDb, FirestoreQueryCursor, FirestoreQueryFilter, FirestoreQueryFilterCompare,
    FirestoreQueryFilterComposite, FirestoreQueryFilterCompositeOperator, FirestoreValue,
};
use futures::TryStreamExt;
use serde::{Deserialize, Serialize};

mod handles;

pub use handles::PURGE_STATE_COLLECTION;
#[cfg(feature = "datastore")]
pub(crate) use handles::{PurgePart, tracked_part};

use crate::error::{Error, Result};
use crate::model::expiry::Expiring;
use crate::model::handle::Scope;
use crate::model::order_key::OrderBound;
use crate::wire::retry::{Backoff, retry_reads};
use crate::wire::status::StatusCode;
use crate::write::bulk::{BulkWriter, BulkWriterOptions};

/// How a purge runs.
#[derive(Debug, Clone)]
pub struct PurgeOptions {
    /// Keys read per query: 1 to [`MAX_LIMIT`](crate::query::MAX_LIMIT). 500 by default. A
    /// purge holds at most `page_size` keys per shard value it purges at once.
    pub page_size: u32,
    /// Shard values purged side by side, at least 1. 8 by default.
    pub concurrency: usize,
    /// The deletes' writer: [`BulkWriterOptions::for_type`] by default, the 500/50/5 ramp up
    /// to the rate the type's shards were sized for.
    pub writer: Option<BulkWriterOptions>,
    /// The reads' retries.
    pub backoff: Backoff,
}

impl Default for PurgeOptions {
    fn default() -> Self {
        PurgeOptions {
            page_size: 500,
            concurrency: 8,
            writer: None,
            backoff: Backoff::default(),
        }
    }
}

impl PurgeOptions {
    /// [`Error::InvalidOptions`] for a value out of range.
    pub fn validate(&self) -> Result<()> {
        if self.page_size == 0 || self.page_size > crate::query::MAX_LIMIT {
            return Err(Error::InvalidOptions {
                option: "page_size",
                expected: "1 to MAX_LIMIT keys per query",
            });
        }
        if self.concurrency == 0 {
            return Err(Error::InvalidOptions {
                option: "concurrency",
                expected: "at least 1 shard value purged at a time",
            });
        }
        self.backoff.validate()?;
        if let Some(writer) = &self.writer {
            writer.validate()?;
        }
        Ok(())
    }
}

/// What hears of a purge's progress, page by page.
pub(crate) type Report<'r> = &'r mut (dyn FnMut(&PurgeProgress) + Send);

/// A time to the microsecond, as Firestore stores one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PurgeTime {
    /// Seconds since the Unix epoch.
    pub seconds: i64,
    /// Nanoseconds within the second (whole microseconds).
    pub nanos: i32,
}

impl PurgeTime {
    pub(crate) fn value(self) -> Value {
        Value {
            value_type: Some(ValueType::TimestampValue(
                firestore::gcloud_sdk::prost_types::Timestamp {
                    seconds: self.seconds,
                    nanos: self.nanos,
                },
            )),
        }
    }
}

/// Where one shard value's query stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ShardPurge {
    /// Every key up to this one (by expiry, then name) was handled.
    After {
        /// The key's expiry.
        expiry: PurgeTime,
        /// The document's full name.
        name: String,
    },
    /// In Datastore mode: every key before this query cursor (Datastore's own, base64) was
    /// handled.
    Cursor {
        /// The cursor after the last key handled.
        cursor: String,
    },
    /// Nothing expired at the purge's time is left under this value.
    Done,
}

/// What a purge has done, and where it stands: its checkpoint, which
/// [`resume_purge`](crate::ShardedCollection::resume_purge) goes on from. Counts add up across
/// resumptions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PurgeProgress {
    /// The time documents expired by: those whose expiry is at or before it are deleted.
    pub now: PurgeTime,
    /// Documents deleted.
    pub deleted: u64,
    /// Documents read expired but changed before their delete (a new expiry, say): left.
    pub changed: u64,
    /// Queries sent (pages read).
    pub queries: u64,
    /// Keys read.
    pub read: u64,
    /// Each shard value's position, for those started.
    pub shards: BTreeMap<String, ShardPurge>,
    /// Shard values the purge reads, all together.
    pub shard_count: usize,
}

impl PurgeProgress {
    pub(crate) fn new(now: PurgeTime, shard_count: usize) -> Self {
        PurgeProgress {
            now,
            deleted: 0,
            changed: 0,
            queries: 0,
            read: 0,
            shards: BTreeMap::new(),
            shard_count,
        }
    }

    /// Shard values with nothing left to delete.
    pub fn shards_done(&self) -> usize {
        self.shards
            .values()
            .filter(|shard| **shard == ShardPurge::Done)
            .count()
    }

    /// Whether every shard value is done.
    pub fn is_done(&self) -> bool {
        self.shards_done() == self.shard_count
    }

    /// Keys read per document deleted (1.0 when every key read was deleted).
    pub fn reads_per_delete(&self) -> f64 {
        self.read as f64 / self.deleted.max(1) as f64
    }
}

/// A purge's progress, shared by its shard values' queries, with what hears of it.
pub(crate) struct Shared<'r>(Mutex<(PurgeProgress, Report<'r>)>);

impl<'r> Shared<'r> {
    pub(crate) fn new(progress: PurgeProgress, report: Report<'r>) -> Self {
        Shared(Mutex::new((progress, report)))
    }

    /// The purge's time and where `value`'s query stands.
    pub(crate) fn position(&self, value: &str) -> (PurgeTime, Option<ShardPurge>) {
        let guard = self.0.lock().unwrap_or_else(|poison| poison.into_inner());
        (guard.0.now, guard.0.shards.get(value).cloned())
    }

    /// One page of `value`'s query: `read` keys, of which `deleted` were deleted and the rest
    /// found changed; its query now stands at `position`. Reported.
    pub(crate) fn record(&self, value: &str, read: u64, deleted: u64, position: &ShardPurge) {
        let mut guard = self.0.lock().unwrap_or_else(|poison| poison.into_inner());
        let (progress, report) = &mut *guard;
        progress.queries += 1;
        progress.read += read;
        progress.deleted += deleted;
        progress.changed += read - deleted;
        progress.shards.insert(value.to_owned(), position.clone());
        report(progress);
    }

    pub(crate) fn into_progress(self) -> PurgeProgress {
        self.0
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner())
            .0
    }
}

/// The shard values a purge of `T` reads, and its progress before the first page, at `now`.
pub(crate) fn start<T: Expiring>(
    now: impl OrderBound<T::Expiry>,
) -> Result<(Vec<&'static str>, PurgeProgress)> {
    let values = T::DESCRIPTION.declared_values();
    let progress = PurgeProgress::new(purge_time::<T>(now)?, values.len());
    Ok((values, progress))
}

/// `now` as the expiry field stores it: a timestamp, or [`Error::InvalidQuery`].
pub(crate) fn purge_time<T: Expiring>(now: impl OrderBound<T::Expiry>) -> Result<PurgeTime> {
    let now = now.into_order_value();
    match <FirestoreValue as From<&T::Expiry>>::from(&now)
        .value
        .value_type
    {
        Some(ValueType::TimestampValue(time)) => Ok(PurgeTime {
            seconds: time.seconds,
            nanos: time.nanos / 1000 * 1000,
        }),
        other => Err(Error::InvalidQuery(format!(
            "the purge's time is stored as {other:?}, not as a timestamp"
        ))),
    }
}

/// The purge of `T`'s documents in `scope` whose expiry is at or before `progress.now`, from
/// where `progress` stands, over `values` (every shard value the collection may hold, or a
/// task's share of them); `report` hears of each page.
pub(crate) async fn purge<T: Expiring>(
    db: &FirestoreDb,
    scope: &Scope,
    values: &[&'static str],
    options: &PurgeOptions,
    progress: PurgeProgress,
    report: Report<'_>,
) -> Result<PurgeProgress> {
    options.validate()?;
    let writer_options = options
        .writer
        .clone()
        .unwrap_or_else(BulkWriterOptions::for_type::<T>);
    let writer = BulkWriter::new(db, writer_options)?;
    let shared = Shared::new(progress, report);
    let result = futures::stream::iter(values.iter().copied().map(Ok))
        .try_for_each_concurrent(options.concurrency, |value| {
            purge_shard::<T>(db, scope, &writer, options, value, &shared)
        })
        .await;
    let closed = writer.close().await;
    result?;
    closed?;
    Ok(shared.into_progress())
}

/// One shard value's query, page after page, from its position in the checkpoint.
async fn purge_shard<T: Expiring>(
    db: &FirestoreDb,
    scope: &Scope,
    writer: &BulkWriter,
    options: &PurgeOptions,
    value: &'static str,
    shared: &Shared<'_>,
) -> Result<()> {
    let (now, mut position) = shared.position(value);
    loop {
        let after = match &position {
            Some(ShardPurge::Done) => return Ok(()),
            Some(ShardPurge::After { expiry, name }) => Some((*expiry, name.clone())),
            Some(ShardPurge::Cursor { .. }) => {
                return Err(Error::InvalidCheckpoint(format!(
                    "shard value `{value}`'s position is a Datastore mode cursor: resume it with `Kind::resume_purge`"
                )));
            }
            None => None,
        };
        let page = expired_page::<T>(db, scope, options, value, now, after.as_ref()).await?;
        let mut pending = Vec::with_capacity(page.len());
        for document in &page {
            pending.push(writer.queue(delete_as_read(document)).await?);
        }
        let mut deleted = 0;
        let mut failures = Vec::new();
        for outcome in futures::future::join_all(pending).await {
            match outcome {
                Ok(_) => deleted += 1,
                // Written since it was read: a new expiry, or anything else; left for the
                // next purge to judge.
                Err(failure)
                    if failure.code == StatusCode::FailedPrecondition && !failure.maybe_applied => {
                }
                Err(failure) => failures.push(failure),
            }
        }
        if !failures.is_empty() {
            return Err(Error::BulkWrite { failures });
        }
        let last = page.last().map(|document| ShardPurge::After {
            expiry: expiry_of::<T>(document).unwrap_or(now),
            name: document.name.clone(),
        });
        let next = match (page.len() < options.page_size as usize, last) {
            (false, Some(last)) => last,
            _ => ShardPurge::Done,
        };
        shared.record(value, page.len() as u64, deleted, &next);
        position = Some(next);
    }
}

/// What a purge's query of `value` asks, in either mode: `shard == value AND expiry <= now`.
pub(crate) fn expired_filter<T: Expiring>(value: &str, now: PurgeTime) -> FirestoreQueryFilter {
    let shard = FirestoreValue::from(Value {
        value_type: Some(ValueType::StringValue(value.to_owned())),
    });
    FirestoreQueryFilter::Composite(FirestoreQueryFilterComposite::new(
        vec![
            FirestoreQueryFilter::Compare(Some(FirestoreQueryFilterCompare::Equal(
                T::DESCRIPTION.shard_field.to_owned(),
                shard,
            ))),
            FirestoreQueryFilter::Compare(Some(FirestoreQueryFilterCompare::LessThanOrEqual(
                T::EXPIRY_FIELD.to_owned(),
                FirestoreValue::from(now.value()),
            ))),
        ],
        FirestoreQueryFilterCompositeOperator::And,
    ))
}

/// The next page of expired keys under `value`: `shard == value AND expiry <= now ORDER BY
/// expiry, __name__`, after `after`, served by the plan's (shard, expiry) index.
async fn expired_page<T: Expiring>(
    db: &FirestoreDb,
    scope: &Scope,
    options: &PurgeOptions,
    value: &str,
    now: PurgeTime,
    after: Option<&(PurgeTime, String)>,
) -> Result<Vec<Document>> {
    let filter = || expired_filter::<T>(value, now);
    retry_reads(&options.backoff, || {
        let select = scope
            .select(
                db,
                db.fluent()
                    .select()
                    .fields([T::EXPIRY_FIELD])
                    .from(T::COLLECTION),
            )
            .filter(|_| Some(filter()))
            .order(|o| o.fields([o.field(T::EXPIRY_FIELD).asc(), o.field("__name__").asc()]))
            .limit(options.page_size);
        let select = match after {
            Some((expiry, name)) => select.start_at(FirestoreQueryCursor::AfterValue(vec![
                FirestoreValue::from(expiry.value()),
                FirestoreValue::from(Value {
                    value_type: Some(ValueType::ReferenceValue(name.clone())),
                }),
            ])),
            None => select,
        };
        select.query()
    })
    .await
}

/// The expiry a key was read with, which the next page's cursor starts after.
fn expiry_of<T: Expiring>(document: &Document) -> Option<PurgeTime> {
    match document
        .fields
        .get(sharded_indexes::field_path::unquoted_segment(
            T::EXPIRY_FIELD,
        ))?
        .value_type
        .as_ref()?
    {
        ValueType::TimestampValue(time) => Some(PurgeTime {
            seconds: time.seconds,
            nanos: time.nanos,
        }),
        _ => None,
    }
}

/// A delete of `document` that holds only while it is as it was read.
fn delete_as_read(document: &Document) -> Write {
    Write {
        operation: Some(Operation::Delete(document.name.clone())),
        current_document: Some(Precondition {
            condition_type: Some(match &document.update_time {
                Some(time) => ConditionType::UpdateTime(*time),
                None => ConditionType::Exists(true),
            }),
        }),
        ..Write::default()
    }
}

/// A checkpoint names only shard values the type reads, and counts them as it does.
pub(crate) fn check_checkpoint<T: Expiring>(
    checkpoint: &PurgeProgress,
    values: &[&str],
) -> Result<()> {
    if let Some(value) = checkpoint
        .shards
        .keys()
        .find(|value| !values.contains(&value.as_str()))
    {
        return Err(Error::InvalidCheckpoint(format!(
            "the purge checkpoint names shard value `{value}`, which `{}` does not hold",
            T::COLLECTION
        )));
    }
    Ok(())
}
