//! Backfill and rebalance: give every document of a collection a current shard value, by a
//! scan in document-name order that reads only the shard field and writes only it.

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use firestore::gcloud_sdk::google::firestore::v1::{
    Document, DocumentMask, Precondition, Value, Write, precondition, value::ValueType,
    write::Operation,
};
use firestore::{FirestoreDb, FirestoreQueryCursor, FirestoreValue};
use serde::{Deserialize, Serialize};

use crate::bulk::{Backoff, BulkWriter, BulkWriterOptions, PendingWrite, WriteFailure};
use crate::parent::Scope;
use crate::partition::{IdRange, bound_under};
use crate::stored::{container_of, document_id, document_name, relative_path, shard_value};
use crate::{Error, Result, Sharded, StatusCode};

/// How far a [`ShardJob`] got: every document whose id sorts at or before
/// [`last_id`](Self::last_id) has a current shard value (or was deleted). Persist it (it is
/// `Serialize`, or keep [`last_id`](Self::last_id)) and pass it to
/// [`ShardJob::resume_from`] to go on after an interruption.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    last_id: String,
}

impl Checkpoint {
    /// The checkpoint after the document `last_id`.
    pub fn after(last_id: impl Into<String>) -> Self {
        Checkpoint {
            last_id: last_id.into(),
        }
    }

    /// The id of the last document done.
    pub fn last_id(&self) -> &str {
        &self.last_id
    }
}

/// What a [`ShardJob`] has done, reported after each page and returned at the end.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Progress {
    /// Documents read by the scan (one billed read each).
    pub scanned: u64,
    /// Documents given a current shard value.
    pub updated: u64,
    /// Documents that had a current shard value already (also when a concurrent write gave
    /// them one first).
    pub unchanged: u64,
    /// Writes that lost to a concurrent change, or to a transaction holding the document
    /// past the writer's retries, and were read and tried again.
    pub conflicts: u64,
    /// Documents deleted between the scan and the write.
    pub deleted: u64,
    /// Documents the scan had passed that still held a retired value (written meanwhile by
    /// a process still running the type before the change), found and fixed after it.
    pub swept: u64,
    /// The collection's size when the job started (a count query), for the ETA; `None` if
    /// the job was resumed, since the count covers documents before the checkpoint too.
    pub total: Option<u64>,
    /// Time since this run started.
    pub elapsed: Duration,
    /// Where a resumed run would start; `None` until the first page is done.
    pub checkpoint: Option<Checkpoint>,
}

impl Progress {
    /// Documents scanned per second in this run.
    pub fn rate(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.scanned as f64 / secs
        } else {
            0.0
        }
    }

    /// The time left at the current rate, when the collection's size is known.
    pub fn eta(&self) -> Option<Duration> {
        let left = self.total?.saturating_sub(self.scanned);
        let rate = self.rate();
        (rate > 0.0).then(|| Duration::from_secs_f64(left as f64 / rate))
    }
}

/// How a collection's documents stand against its shard set: what [`verify`] counts.
///
/// [`verify`]: crate::ShardedCollection::verify
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShardCensus {
    /// Documents read.
    pub scanned: u64,
    /// Documents with a current shard value.
    pub current: u64,
    /// Documents with a shard value the current set dropped (a `previous(...)` value that is
    /// not current, or a `retired(...)` one): queries read them while `previous(...)`
    /// declares them, and no longer after.
    pub retired: u64,
    /// Documents with no shard field, or a value no set has: invisible to sharded queries.
    pub missing: u64,
}

impl ShardCensus {
    /// Documents a [`ShardJob`] would still update: `missing + retired`. Zero means every
    /// document has a current value, so `previous(...)` can become `retired(...)`.
    pub fn outstanding(&self) -> u64 {
        self.missing + self.retired
    }
}

/// Gives every document of `T`'s collection whose shard value is missing or retired a
/// current one: the backfill of a collection written before it was sharded, and the
/// rebalance after its shard set changed (the same job).
///
/// - **Reads:** a scan in document-name order, a page at a time, with a projection of the
///   shard field alone: memory stays bounded by a page whatever the collection's size.
///   Every document scanned is one billed read.
/// - **Writes:** only the shard field (a field mask), through a [`BulkWriter`] that ramps up
///   as Firestore's best practices ask, each with the update time the scan saw as a
///   precondition: a document changed since it was read is never overwritten. It is read
///   again, and written only if it still needs a shard.
/// - **Behind the scan:** a rebalance then looks for documents that still hold a retired
///   value (a process still running the type before the change wrote them behind the scan)
///   and fixes them too, until none is left ([`Progress::swept`]); if they keep coming it
///   fails with [`Error::RetiredValuesStillWritten`].
/// - **Resuming:** after each page, every document up to it is done; its [`Checkpoint`]
///   comes with the progress. A run started from it goes on from there, and a run over a
///   collection that is done changes nothing.
///
/// Run [`verify`](crate::ShardedCollection::verify) afterwards.
pub struct ShardJob<'db, T> {
    db: &'db FirestoreDb,
    scope: Scope,
    page_size: u32,
    writer: BulkWriterOptions,
    resume: Option<Checkpoint>,
    ids: IdRange,
    max_conflicts: u32,
    scan_backoff: Backoff,
    marker: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for ShardJob<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardJob")
            .field("collection", &std::any::type_name::<T>())
            .field("page_size", &self.page_size)
            .field("resume", &self.resume)
            .finish_non_exhaustive()
    }
}

/// Pages of documents with retired values a job fixes after its scan before it gives up:
/// past that, a process still running the type before the change keeps writing them.
const MAX_SWEEPS: usize = 100;

/// One document's shard write, in flight.
struct Fix {
    /// The document's full name.
    name: String,
    pending: PendingWrite,
    conflicts: u32,
}

impl<'db, T: Sharded> ShardJob<'db, T> {
    pub(crate) fn new(db: &'db FirestoreDb, scope: Scope) -> Self {
        ShardJob {
            db,
            scope,
            page_size: 500,
            writer: BulkWriterOptions::for_type::<T>(),
            resume: None,
            ids: IdRange::all(),
            max_conflicts: 10,
            scan_backoff: Backoff::default(),
            marker: PhantomData,
        }
    }

    /// Starts after `checkpoint`, from an earlier run's [`Progress::checkpoint`].
    pub fn resume_from(self, checkpoint: Checkpoint) -> Self {
        ShardJob {
            resume: Some(checkpoint),
            ..self
        }
    }

    /// Covers only the documents whose ids are in `ids` ([`IdRange::part`] splits a collection
    /// among workers: each runs the job over its part, with its own checkpoint, and together
    /// they cover every document once). Give each worker's writer its share of the write rate
    /// ([`BulkWriterOptions::share_of`]).
    ///
    /// Over a collection group ([`Sharded::collection_group`](crate::Sharded::collection_group))
    /// the range is of the first parents' ids (`rooms/{id}` for `parent = "rooms"`), since a
    /// group's documents sort by path: each part takes whole parents, and the first and last
    /// parts also any collection of the group under other parents. Parts are even when the
    /// parents' ids are Firestore's generated ids.
    pub fn ids(self, ids: IdRange) -> Self {
        ShardJob { ids, ..self }
    }

    /// Documents per scanned page (500 by default): the job holds about two pages at once.
    pub fn page_size(self, page_size: u32) -> Self {
        ShardJob {
            page_size: page_size.clamp(1, crate::MAX_LIMIT),
            ..self
        }
    }

    /// The bulk writer's settings; [`BulkWriterOptions::for_type`] by default. The scan's
    /// retries follow the same backoff.
    pub fn writer(self, writer: BulkWriterOptions) -> Self {
        ShardJob {
            scan_backoff: writer.backoff,
            writer,
            ..self
        }
    }

    /// Runs the job, calling `progress` after each page; returns the final progress.
    ///
    /// On an error (a write given up on, a scan that kept failing) it stops and returns it;
    /// the last progress reported holds the checkpoint to resume from. A checkpoint whose id
    /// no document could have is [`Error::InvalidCursor`], and a type whose resharding onto
    /// new values starts at a `since` still to come is [`Error::ReshardingNotStarted`]; both
    /// with nothing sent. Dropping the future stops the job and its writer at once.
    pub async fn run(self, mut progress: impl FnMut(&Progress)) -> Result<Progress> {
        self.scope.check::<T>()?;
        let group = self.scope == Scope::Group;
        if let Some(checkpoint) = &self.resume {
            // Over a collection group a checkpoint is a path: `rooms/lobby/messages/m1`.
            let checked = match group {
                true => crate::document_id::check_document_path(&checkpoint.last_id),
                false => crate::check_document_id(&checkpoint.last_id),
            };
            checked.map_err(|error| Error::InvalidCursor(format!("checkpoint: {error}")))?;
            if !self
                .ids
                .contains_under(self.bound_prefix(), &checkpoint.last_id)
            {
                return Err(Error::InvalidCursor(format!(
                    "checkpoint: `{}` is not in the job's id range {:?}",
                    checkpoint.last_id, self.ids
                )));
            }
        }
        if let Some(since) = crate::reshard::not_started::<T>() {
            return Err(Error::ReshardingNotStarted { since });
        }
        let started = Instant::now();
        let writer = BulkWriter::new(self.db, self.writer.clone())?;
        let mut report = Progress {
            total: match &self.resume {
                None => Some(self.count().await?),
                Some(_) => None,
            },
            checkpoint: self.resume.clone(),
            ..Progress::default()
        };
        let after = self.resume.as_ref().map(|c| c.last_id.clone());
        let mut page = self.scan_page(after.as_deref()).await?;
        // Each page's writes finish while the next page is read.
        while let Some(last) = page.last().map(|document| self.position(&document.name)) {
            let mut fixes = Vec::new();
            for document in &page {
                report.scanned += 1;
                if has_current_shard::<T>(document) {
                    report.unchanged += 1;
                } else {
                    fixes.push(Fix {
                        name: document.name.clone(),
                        pending: writer.queue(shard_write::<T>(document)).await?,
                        conflicts: 0,
                    });
                }
            }
            let full = page.len() == self.page_size as usize;
            let (next, finished) = tokio::join!(
                async {
                    if full {
                        self.scan_page(Some(&last)).await
                    } else {
                        Ok(Vec::new())
                    }
                },
                self.finish(&writer, fixes, &mut report)
            );
            finished?;
            report.checkpoint = Some(Checkpoint::after(last));
            report.elapsed = started.elapsed();
            if full {
                progress(&report);
            }
            page = next?;
        }
        self.sweep(&writer, &mut report).await?;
        writer.close().await?;
        report.elapsed = started.elapsed();
        progress(&report);
        Ok(report)
    }

    /// After the scan: the documents of the job's id range that still hold a retired value,
    /// which a process still running the type before the change wrote behind the scan,
    /// found with `shard in [retired] ORDER BY order field` (the query the whole-collection
    /// index serves, so it reads only them; the range is a `__name__` inequality, which that
    /// index ends with) and fixed, a page at a time, until none is left. Each part of a
    /// partitioned job sweeps its own range only, so parts never race for a document.
    async fn sweep(&self, writer: &BulkWriter, report: &mut Progress) -> Result<()> {
        let retired = T::DESCRIPTION.moved_out_of();
        if retired.is_empty() {
            return Ok(());
        }
        for _ in 0..MAX_SWEEPS {
            let mut found = Vec::new();
            for chunk in retired.chunks(crate::MAX_DISJUNCTIONS) {
                found.extend(self.retired_page(chunk, self.page_size, true).await?);
            }
            if found.is_empty() {
                return Ok(());
            }
            report.swept += found.len() as u64;
            let mut fixes = Vec::with_capacity(found.len());
            for document in &found {
                fixes.push(Fix {
                    name: document.name.clone(),
                    pending: writer.queue(shard_write::<T>(document)).await?,
                    conflicts: 0,
                });
            }
            self.finish(writer, fixes, report).await?;
        }
        Err(Error::RetiredValuesStillWritten {
            collection: T::COLLECTION,
            swept: report.swept,
        })
    }

    /// Up to `limit` documents holding one of `values`, with only the shard field; within
    /// the job's id range if `in_range`, else anywhere in its scope.
    pub(crate) async fn retired_page(
        &self,
        values: &[&'static str],
        limit: u32,
        in_range: bool,
    ) -> Result<Vec<Document>> {
        let shard = firestore::FirestoreQueryFilter::Compare(Some(
            firestore::FirestoreQueryFilterCompare::In(
                T::SHARD_FIELD_PATH.to_owned(),
                <FirestoreValue as From<Vec<&str>>>::from(values.to_vec()),
            ),
        ));
        let filter = match self.id_filter().filter(|_| in_range) {
            Some(ids) => firestore::FirestoreQueryFilter::Composite(
                firestore::FirestoreQueryFilterComposite::new(
                    vec![shard, ids],
                    firestore::FirestoreQueryFilterCompositeOperator::And,
                ),
            ),
            None => shard,
        };
        let direction = match T::ORDER_DIRECTION {
            sharded_indexes::Direction::Ascending => firestore::FirestoreQueryDirection::Ascending,
            sharded_indexes::Direction::Descending => {
                firestore::FirestoreQueryDirection::Descending
            }
        };
        self.with_retries(|| {
            let (filter, direction) = (filter.clone(), direction.clone());
            self.scoped(
                self.db
                    .fluent()
                    .select()
                    .fields([T::SHARD_FIELD_PATH])
                    .from(T::COLLECTION),
            )
            .filter(move |_| Some(filter.clone()))
            .order(move |o| o.fields([o.field(T::ORDER_FIELD).direction(direction.clone())]))
            .limit(limit)
            .query()
        })
        .await
    }

    /// Counts the documents by how their shard value stands: the check after a backfill or a
    /// rebalance. It scans the whole collection as the job does, so it costs one billed read
    /// per document; nothing is written.
    pub async fn verify(&self) -> Result<ShardCensus> {
        self.scope.check::<T>()?;
        let mut counts = ShardCensus::default();
        let mut after: Option<String> = None;
        loop {
            let page = self.scan_page(after.as_deref()).await?;
            for document in &page {
                census::<T>(&mut counts, document);
            }
            match page.last() {
                Some(last) if page.len() == self.page_size as usize => {
                    after = Some(self.position(&last.name));
                }
                _ => return Ok(counts),
            }
        }
    }

    /// Waits for a page's writes; a write that lost to a concurrent change is read again
    /// and, if the document still needs a shard, written again.
    async fn finish(
        &self,
        writer: &BulkWriter,
        fixes: Vec<Fix>,
        report: &mut Progress,
    ) -> Result<()> {
        // Every handle is awaited here, so each failure is claimed from it (a flush would
        // report the conflicts this loop resolves).
        let mut queue = fixes;
        let mut failures = Vec::new();
        while !queue.is_empty() {
            let mut retry = Vec::new();
            for fix in queue {
                let failure = match fix.pending.await {
                    Ok(_) => {
                        report.updated += 1;
                        continue;
                    }
                    Err(failure) => failure,
                };
                // A concurrent change (a failed precondition, a deletion), or a transaction
                // holding the document past the writer's retries (ABORTED: a lock timeout):
                // read it again and go on, slower, rather than fail the job.
                let conflict = matches!(
                    failure.code,
                    StatusCode::FailedPrecondition | StatusCode::NotFound | StatusCode::Aborted
                );
                if !conflict {
                    failures.push(failure);
                    continue;
                }
                report.conflicts += 1;
                match self.read_again(&fix.name).await? {
                    None => report.deleted += 1,
                    Some(document) if has_current_shard::<T>(&document) => report.unchanged += 1,
                    Some(_) if fix.conflicts + 1 >= self.max_conflicts => {
                        failures.push(WriteFailure {
                            message: format!(
                                "changed by another writer {} times in a row; run the job again",
                                fix.conflicts + 1
                            ),
                            ..failure
                        })
                    }
                    Some(document) => retry.push(Fix {
                        pending: writer.queue(shard_write::<T>(&document)).await?,
                        name: fix.name,
                        conflicts: fix.conflicts + 1,
                    }),
                }
            }
            queue = retry;
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(Error::BulkWrite { failures })
        }
    }

    async fn count(&self) -> Result<u64> {
        let rows = self
            .with_retries(|| {
                self.scoped(self.db.fluent().select().from(T::COLLECTION))
                    .filter(|_| self.id_filter())
                    .aggregate(|a| a.fields([a.field("count").count()]))
                    .query()
            })
            .await?;
        crate::query::count_of(&rows)
    }

    /// The next page of the scan: documents after `after` in name order, with only the shard
    /// field.
    async fn scan_page(&self, after: Option<&str>) -> Result<Vec<Document>> {
        let after = after.map(|position| {
            FirestoreValue::from(Value {
                value_type: Some(ValueType::ReferenceValue(self.name_at(position))),
            })
        });
        self.with_retries(|| {
            let select = self
                .scoped(
                    self.db
                        .fluent()
                        .select()
                        .fields([T::SHARD_FIELD_PATH])
                        .from(T::COLLECTION),
                )
                .filter(|_| self.id_filter())
                .order(|o| o.fields([o.field("__name__").asc()]))
                .limit(self.page_size);
            let select = match &after {
                Some(after) => {
                    select.start_at(FirestoreQueryCursor::AfterValue(vec![after.clone()]))
                }
                None => select,
            };
            select.query()
        })
        .await
    }

    /// What the job's id range bounds are below: nothing (they are ids), or over a collection
    /// group the first collection of the type's path (`rooms` for `parent = "rooms"`, the
    /// collection itself for a top-level type). A group's documents sort by path, segment by
    /// segment, so its parts split the first parents' ids (`rooms/AB`), and the first and last
    /// parts also take any collection of the group that lies outside them.
    fn bound_prefix(&self) -> Option<&'static str> {
        match self.scope {
            Scope::Group => Some(
                T::DESCRIPTION
                    .parent_collections
                    .first()
                    .copied()
                    .unwrap_or(T::COLLECTION),
            ),
            _ => None,
        }
    }

    /// The scan's bounds on `__name__`: the job's id range.
    fn id_filter(&self) -> Option<firestore::FirestoreQueryFilter> {
        use firestore::{FirestoreQueryFilter, FirestoreQueryFilterCompare};
        let reference = |bound: &str| {
            FirestoreValue::from(Value {
                value_type: Some(ValueType::ReferenceValue(
                    self.name_at(&bound_under(self.bound_prefix(), bound)),
                )),
            })
        };
        let bounds: Vec<FirestoreQueryFilter> = [
            self.ids.start().map(|start| {
                FirestoreQueryFilterCompare::GreaterThanOrEqual("__name__".into(), reference(start))
            }),
            self.ids.end().map(|end| {
                FirestoreQueryFilterCompare::LessThan("__name__".into(), reference(end))
            }),
        ]
        .into_iter()
        .flatten()
        .map(|compare| FirestoreQueryFilter::Compare(Some(compare)))
        .collect();
        match bounds.len() {
            0 => None,
            _ => Some(FirestoreQueryFilter::Composite(
                firestore::FirestoreQueryFilterComposite::new(
                    bounds,
                    firestore::FirestoreQueryFilterCompositeOperator::And,
                ),
            )),
        }
    }

    /// The document `name` (in full) again, with only the shard field.
    async fn read_again(&self, name: &str) -> Result<Option<Document>> {
        let (container, id) = (container_of(name), document_id(name));
        self.with_retries(|| {
            self.db
                .fluent()
                .select()
                .fields([T::SHARD_FIELD_PATH])
                .by_id_in(T::COLLECTION)
                .parent(container)
                .one(id)
        })
        .await
    }

    /// `select` over the job's documents: one collection (at the top or under a parent), or
    /// every one of the group.
    fn scoped<'a>(
        &self,
        select: firestore::select_builder::FirestoreSelectDocBuilder<'a, FirestoreDb>,
    ) -> firestore::select_builder::FirestoreSelectDocBuilder<'a, FirestoreDb> {
        let select = select.parent(self.scope.parent_path(self.db));
        match self.scope {
            Scope::Group => select.all_descendants(),
            _ => select,
        }
    }

    /// Where a checkpoint says the scan is: the document's id, or over a collection group
    /// its path below the database root.
    fn position(&self, name: &str) -> String {
        match self.scope {
            Scope::Group => relative_path(name).to_owned(),
            _ => document_id(name).to_owned(),
        }
    }

    /// The full name of the document at `position` ([`position`](Self::position)).
    fn name_at(&self, position: &str) -> String {
        match self.scope {
            Scope::Group => format!("{}/{position}", self.db.get_documents_path()),
            _ => document_name(&self.scope.parent_path(self.db), T::COLLECTION, position),
        }
    }

    /// Reads, retried after connection failures with the writer's backoff.
    async fn with_retries<R, F>(&self, read: impl Fn() -> F) -> Result<R>
    where
        F: std::future::Future<Output = firestore::FirestoreResult<R>>,
    {
        crate::retry::retry_reads(&self.scan_backoff, read).await
    }
}

/// Whether `document` holds one of `T`'s current shard values.
fn has_current_shard<T: Sharded>(document: &Document) -> bool {
    shard_value::<T>(document).is_some_and(|shard| T::SHARD_VALUES.contains(&shard))
}

/// What a [`ShardCensus`] counts `document` as.
fn census<T: Sharded>(census: &mut ShardCensus, document: &Document) {
    census.scanned += 1;
    let Some(shard) = shard_value::<T>(document) else {
        census.missing += 1;
        return;
    };
    if T::SHARD_VALUES.contains(&shard) {
        census.current += 1;
    } else if T::DESCRIPTION.moves_out_of(shard) {
        census.retired += 1;
    } else {
        census.missing += 1;
    }
}

/// The write of a freshly drawn shard to `document`, and of nothing else, if it has not
/// changed since it was read.
fn shard_write<T: Sharded>(document: &Document) -> Write {
    let shard = Value {
        value_type: Some(ValueType::StringValue(
            crate::reshard::draw::<T>().to_owned(),
        )),
    };
    Write {
        operation: Some(Operation::Update(Document {
            name: document.name.clone(),
            fields: [(T::SHARD_FIELD.to_owned(), shard)].into_iter().collect(),
            ..Document::default()
        })),
        update_mask: Some(DocumentMask {
            field_paths: vec![T::SHARD_FIELD_PATH.to_owned()],
        }),
        current_document: Some(Precondition {
            condition_type: document
                .update_time
                .map(precondition::ConditionType::UpdateTime)
                .or(Some(precondition::ConditionType::Exists(true))),
        }),
        ..Write::default()
    }
}

/// Every collection with `T`'s id, under every parent (a collection group): the jobs that run
/// over all of them at once. Get one with
/// [`Sharded::collection_group`](crate::Sharded::collection_group); the jobs are
/// [`ShardJob`]s as for one collection, and their checkpoints are paths
/// (`rooms/lobby/messages/m1`).
pub struct ShardedCollectionGroup<'db, T> {
    db: &'db FirestoreDb,
    marker: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for ShardedCollectionGroup<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedCollectionGroup")
            .field("collection", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

impl<'db, T: crate::CollectionGroup> ShardedCollectionGroup<'db, T> {
    pub(crate) fn new(db: &'db FirestoreDb) -> Self {
        ShardedCollectionGroup {
            db,
            marker: PhantomData,
        }
    }

    /// The backfill of every parent's collection: see
    /// [`ShardedCollection::backfill`](crate::ShardedCollection::backfill).
    pub fn backfill(&self) -> ShardJob<'db, T> {
        ShardJob::new(self.db, Scope::Group)
    }

    /// The rebalance of every parent's collection: see
    /// [`ShardedCollection::rebalance`](crate::ShardedCollection::rebalance).
    pub fn rebalance(&self) -> ShardJob<'db, T> {
        ShardJob::new(self.db, Scope::Group)
    }

    /// The census of every parent's collection: see
    /// [`ShardedCollection::verify`](crate::ShardedCollection::verify).
    pub async fn verify(&self) -> Result<ShardCensus> {
        ShardJob::<T>::new(self.db, Scope::Group).verify().await
    }
}
