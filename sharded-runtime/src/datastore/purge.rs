//! Deleting expired entities in Datastore mode, as the best-practices page prescribes: one
//! keys-only query per shard value, run side by side (its "split queries"), each going on
//! from Datastore's cursor after the last key it handled, never from the start, which would
//! walk the index entries of what it just deleted; each page deleted in a transaction that
//! reads its entities again and deletes only those still expired, at the 500/50/5 ramp.

use std::time::{Duration, Instant};

use base64::Engine as _;
use firestore::gcloud_sdk::google::datastore::v1 as ds;
use futures::TryStreamExt as _;
use futures::future::BoxFuture;

use super::Kind;
use super::checkpoint::EntityCheckpoints;
use super::filter::{ancestor, and, filter, int32_limit, property as filter_property};
use crate::error::{Error, Result};
use crate::job::purge::{
    PurgeOptions, PurgePart, PurgeProgress, PurgeTime, Report, ShardPurge, Shared,
    check_checkpoint, expired_filter, purge_time, start, tracked_part,
};
use crate::job::stored_checkpoint::CheckpointStore;
use crate::model::expiry::Expiring;
use crate::model::order_key::OrderBound;
use crate::model::throttling::Throttling;
use crate::wire::status::StatusCode;
use crate::write::bulk::RateLimiter;

impl<T: Expiring> Kind<T> {
    /// Deletes every entity of this kind (in this place) whose expiry is at or before `now`:
    /// one keys-only query per shard value, `options.concurrency` side by side, each page
    /// deleted in a transaction that reads its entities again and deletes those still expired
    /// (one given a later expiry meanwhile is left, and counted in
    /// [`changed`](PurgeProgress::changed)), at the ramp of `options.writer`'s throttling (the
    /// page's 500/50/5 by default). `progress` hears of each page with the whole state, the
    /// checkpoint [`resume_purge`](Self::resume_purge) goes on from (its positions are
    /// Datastore's cursors).
    pub async fn purge_expired(
        &self,
        now: impl OrderBound<T::Expiry>,
        options: PurgeOptions,
        mut progress: impl FnMut(&PurgeProgress) + Send,
    ) -> Result<PurgeProgress> {
        let (values, start) = start::<T>(now)?;
        self.purge(&values, &options, start, &mut progress).await
    }

    /// Goes on with a purge from `checkpoint`, with its time.
    pub async fn resume_purge(
        &self,
        checkpoint: PurgeProgress,
        options: PurgeOptions,
        mut progress: impl FnMut(&PurgeProgress) + Send,
    ) -> Result<PurgeProgress> {
        let values = T::DESCRIPTION.declared_values();
        check_checkpoint::<T>(&checkpoint, &values)?;
        self.purge(&values, &options, checkpoint, &mut progress)
            .await
    }

    /// This task's share of the purge `job` (every `part.count`-th shard value from
    /// `part.index`), for a Cloud Run job or a Kubernetes Indexed Job, as
    /// [`ShardedCollection::purge_expired_part`](crate::ShardedCollection::purge_expired_part)
    /// does it: the part's checkpoint is kept in an entity of kind
    /// [`PURGE_STATE_KIND`] (named `<job>-<index>-of-<count>`, in the client's namespace)
    /// every 2 s and at the end; a retry goes on from it with the first attempt's time, and a
    /// finished part returns its progress at once.
    pub async fn purge_expired_part(
        &self,
        job: &str,
        now: impl OrderBound<T::Expiry>,
        part: crate::job::task_part::TaskPart,
        options: PurgeOptions,
        progress: impl FnMut(&PurgeProgress) + Send,
    ) -> Result<PurgeProgress> {
        let runner = InDatastore {
            kind: self,
            options: &options,
            checkpoints: EntityCheckpoints {
                datastore: &self.datastore,
                kind: PURGE_STATE_KIND,
            },
        };
        tracked_part::<T>(
            &runner,
            job,
            purge_time::<T>(now)?,
            part,
            &options,
            progress,
        )
        .await
    }

    async fn purge(
        &self,
        values: &[&'static str],
        options: &PurgeOptions,
        progress: PurgeProgress,
        report: Report<'_>,
    ) -> Result<PurgeProgress> {
        options.validate()?;
        let throttling = options
            .writer
            .as_ref()
            .map_or_else(Throttling::ramp, |writer| writer.throttling);
        let limiter = RateLimiter::new(throttling, Duration::ZERO, options.page_size as usize);
        let clock = Instant::now();
        let shared = Shared::new(progress, report);
        futures::stream::iter(values.iter().copied().map(Ok))
            .try_for_each_concurrent(options.concurrency, |value| {
                self.purge_shard(options, value, &shared, &limiter, clock)
            })
            .await?;
        Ok(shared.into_progress())
    }

    async fn purge_shard(
        &self,
        options: &PurgeOptions,
        value: &'static str,
        shared: &Shared<'_>,
        limiter: &RateLimiter,
        clock: Instant,
    ) -> Result<()> {
        let (now, mut position) = shared.position(value);
        loop {
            let cursor = match &position {
                Some(ShardPurge::Done) => return Ok(()),
                Some(ShardPurge::Cursor { cursor }) => base64::engine::general_purpose::STANDARD
                    .decode(cursor)
                    .map_err(|err| Error::InvalidCheckpoint(format!("`{value}`: {err}")))?,
                Some(ShardPurge::After { .. }) => {
                    return Err(Error::InvalidCheckpoint(format!(
                        "shard value `{value}`'s position is a Native mode one: resume it with `ShardedCollection::resume_purge`"
                    )));
                }
                None => Vec::new(),
            };
            let query = self.expired_keys(value, now, cursor, options.page_size)?;
            // Sent again while it fails transiently (a dropped connection), as a job's reads are.
            let (read, exhausted, _) = super::retried(&options.backoff, "purge read", || {
                self.run_entities(query.clone(), Some(options.page_size), None)
            })
            .await?;
            let keys: Vec<ds::Key> = read
                .iter()
                .filter_map(|(entity, _)| entity.key.clone())
                .collect();
            let deleted = match keys.is_empty() {
                true => 0,
                false => {
                    while let Err(wait) = limiter.try_acquire(keys.len(), clock.elapsed()) {
                        tokio::time::sleep(wait).await;
                    }
                    self.delete_still_expired(keys.clone(), now, options)
                        .await?
                }
            };
            let full = read.len() >= options.page_size as usize;
            let next = match (exhausted || !full, read.last()) {
                (false, Some((_, cursor))) => ShardPurge::Cursor {
                    cursor: base64::engine::general_purpose::STANDARD.encode(cursor),
                },
                _ => ShardPurge::Done,
            };
            shared.record(value, keys.len() as u64, deleted, &next);
            position = Some(next);
        }
    }

    /// `shard == value AND expiry <= now ORDER BY expiry`, keys only, in this place, from
    /// `cursor`: served by the plan's (shard, expiry) index.
    fn expired_keys(
        &self,
        value: &str,
        now: PurgeTime,
        cursor: Vec<u8>,
        page_size: u32,
    ) -> Result<ds::Query> {
        let mut filters = vec![filter(
            &expired_filter::<T>(value, now),
            &self.datastore.partition,
        )?];
        if let Some(parent) = &self.parent {
            filters.push(ancestor(parent, &self.datastore.partition));
        }
        let property = |name: String| Some(ds::PropertyReference { name });
        Ok(ds::Query {
            projection: vec![ds::Projection {
                property: property("__key__".into()),
            }],
            kind: vec![ds::KindExpression {
                name: T::COLLECTION.to_owned(),
            }],
            filter: Some(and(filters)),
            order: vec![ds::PropertyOrder {
                property: property(filter_property(T::EXPIRY_FIELD)?),
                direction: ds::property_order::Direction::Ascending as i32,
            }],
            start_cursor: cursor,
            limit: Some(int32_limit(page_size)),
            ..Default::default()
        })
    }

    /// Deletes those of `keys` still expired at `now`, read again in the deleting
    /// transaction (tried again when a conflicting one aborts it); how many. A commit whose
    /// answer was lost may have been applied: the keys it deleted are gone when the next
    /// attempt reads them, and count as deleted.
    async fn delete_still_expired(
        &self,
        keys: Vec<ds::Key>,
        now: PurgeTime,
        options: &PurgeOptions,
    ) -> Result<u64> {
        let expiry = filter_property(T::EXPIRY_FIELD)?;
        let mut attempts = 0;
        // The keys a commit that failed after it was sent was deleting.
        let mut maybe_deleted: Vec<ds::Key> = Vec::new();
        loop {
            attempts += 1;
            let transaction = match self.datastore.begin().await {
                Ok(transaction) => transaction,
                Err(Error::Datastore { code, .. })
                    if attempts < options.backoff.max_attempts
                        && crate::wire::retry::retries_request(code) =>
                {
                    tokio::time::sleep(options.backoff.delay(attempts, code)).await;
                    continue;
                }
                Err(err) => return Err(err),
            };
            let mut sending: Vec<ds::Key> = Vec::new();
            let attempt = async {
                let found = self
                    .lookup_keys(keys.clone(), Some(transaction.id().to_vec()))
                    .await?;
                let gone = maybe_deleted
                    .iter()
                    .filter(|key| !found.iter().any(|entity| entity.key.as_ref() == Some(*key)))
                    .count() as u64;
                sending = found
                    .into_iter()
                    .filter(|entity| {
                        entity
                            .properties
                            .get(&expiry)
                            .is_some_and(|value| at_or_before(value, now))
                    })
                    .filter_map(|entity| entity.key)
                    .collect();
                let expired: Vec<ds::Mutation> = sending
                    .iter()
                    .map(|key| ds::Mutation {
                        operation: Some(ds::mutation::Operation::Delete(key.clone())),
                        ..Default::default()
                    })
                    .collect();
                let count = expired.len() as u64 + gone;
                transaction.commit_mutations(expired).await?;
                Ok::<u64, Error>(count)
            };
            let outcome = attempt.await;
            if outcome.is_err() {
                // Releases what its reads locked.
                transaction.abandon().await;
            }
            match outcome {
                Ok(count) => return Ok(count),
                // A conflicting transaction (nothing was deleted), or a transient failure
                // (the commit, if it was sent, may have been applied).
                Err(Error::Datastore { code, .. })
                    if attempts < options.backoff.max_attempts
                        && (code == StatusCode::Aborted
                            || crate::wire::retry::retries_request(code)) =>
                {
                    if code != StatusCode::Aborted {
                        for key in sending {
                            if !maybe_deleted.contains(&key) {
                                maybe_deleted.push(key);
                            }
                        }
                    }
                    tokio::time::sleep(options.backoff.delay(attempts, code)).await;
                }
                Err(err) => return Err(err),
            }
        }
    }
}

/// The kind a tracked purge keeps each part's checkpoint in, in Datastore mode.
pub const PURGE_STATE_KIND: &str = "ShardedPurge";

/// A Datastore-mode part: its purge, and its checkpoint in [`PURGE_STATE_KIND`].
struct InDatastore<'a, T> {
    kind: &'a Kind<T>,
    options: &'a PurgeOptions,
    checkpoints: EntityCheckpoints<'a>,
}

impl<T: Expiring> CheckpointStore<PurgeProgress> for InDatastore<'_, T> {
    fn read<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<PurgeProgress>>> {
        self.checkpoints.read(id)
    }
    fn write<'a>(&'a self, id: &'a str, state: &'a PurgeProgress) -> BoxFuture<'a, Result<()>> {
        self.checkpoints.write(id, state)
    }
}

impl<T: Expiring> PurgePart for InDatastore<'_, T> {
    fn run<'a>(
        &'a self,
        values: &'a [&'static str],
        start: PurgeProgress,
        report: Report<'a>,
    ) -> BoxFuture<'a, Result<PurgeProgress>> {
        Box::pin(self.kind.purge(values, self.options, start, report))
    }
}

/// Whether `value` is a time at or before `now` (a non-timestamp never expires).
fn at_or_before(value: &ds::Value, now: PurgeTime) -> bool {
    match &value.value_type {
        Some(ds::value::ValueType::TimestampValue(time)) => {
            (time.seconds, time.nanos / 1000 * 1000) <= (now.seconds, now.nanos)
        }
        _ => false,
    }
}
