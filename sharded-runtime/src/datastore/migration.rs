//! Moving a kind's entities into a sharded kind, as the best-practices page describes a
//! migration to a new kind: the app writes both kinds and reads the new one first
//! ([`Kind::get_migrating`]), while a batch job copies the old entities over, ramped up
//! (500/50/5) and never writing consecutive keys one after another. The job reads the old
//! kind in several key ranges side by side ("lanes") and builds each commit from all of them,
//! so consecutive writes land in far-apart key ranges. Each commit is a transaction that
//! inserts only the entities the new kind does not hold yet: a newer version the app wrote
//! there is never overwritten, and an entity copied twice (a retried or resumed job) is
//! written once.

use std::time::{Duration, Instant};

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::datastore::v1 as ds;
use firestore::gcloud_sdk::google::firestore::v1::Document;
use serde::{Deserialize, Serialize};

use super::convert;
use super::cursor::ChunkPosition;
use super::kind::{Kind, MAX_MUTATIONS, Put};
use crate::bulk::{Backoff, RateLimiter, Throttling};
use crate::partition::IdRange;
use crate::{Error, Result, Sharded};

/// How [`Kind::migrate_from`] copies.
#[derive(Debug, Clone)]
pub struct Migration {
    /// The kind the entities are copied from, in the same namespace and under the same
    /// ancestor as the sharded kind.
    pub source_kind: String,
    /// The id ranges read side by side, each commit taking from all of them: by default 16
    /// equal parts of the generated-id space ([`IdRange::part`]); give boundaries of your own
    /// for ids spread otherwise (sequential ones above all). In order, each starting where the
    /// one before ends, from the first id to past the last, so that they cover every id once
    /// ([`Error::InvalidOptions`] otherwise, before anything is read).
    pub lanes: Vec<IdRange>,
    /// The ramp; [`Throttling::ramp`] (500/50/5) unless set.
    pub throttling: Throttling,
    /// Entities per commit, 1 to 500.
    pub batch_size: usize,
    /// Retries of a commit that failed transiently or conflicted with the app's writes.
    pub backoff: Backoff,
}

impl Migration {
    /// Copies from `source_kind` with the defaults.
    pub fn from_kind(source_kind: &str) -> Migration {
        Migration {
            source_kind: source_kind.to_owned(),
            lanes: (0..16)
                .map(|i| IdRange::part(i, 16).expect("16 parts"))
                .collect(),
            throttling: Throttling::ramp(),
            batch_size: MAX_MUTATIONS,
            backoff: Backoff::default(),
        }
    }
}

/// Where a migration stands: each lane's position in the old kind, after the last commit.
/// [`to_token`](Self::to_token) keeps it in a file or an environment variable; pass it back
/// to [`Kind::migrate_from`] to go on from there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrationCheckpoint {
    source_kind: String,
    lanes: Vec<(IdRange, ChunkPosition)>,
}

impl MigrationCheckpoint {
    /// The checkpoint as URL-safe text.
    pub fn to_token(&self) -> String {
        crate::token::encode(self)
    }

    /// The checkpoint `token` stands for.
    pub fn from_token(token: &str) -> Result<MigrationCheckpoint> {
        crate::token::decode(token).map_err(Error::InvalidCheckpoint)
    }

    /// Whether every lane is read to its end.
    pub fn is_done(&self) -> bool {
        self.lanes
            .iter()
            .all(|(_, position)| *position == ChunkPosition::Done)
    }
}

/// What a migration has done so far, after each commit.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MigrationProgress {
    /// Entities copied into the sharded kind.
    pub copied: usize,
    /// Entities the sharded kind held already (written by the app, or by an earlier run).
    pub already_there: usize,
    /// Commits made.
    pub commits: usize,
    /// Where a new run goes on from.
    pub checkpoint: MigrationCheckpoint,
}

impl<T: Sharded> Kind<T> {
    /// Copies the entities of `options.source_kind` into this kind, each with a shard drawn,
    /// from `resume` (a checkpoint of an earlier run) or the start. After each commit,
    /// `progress` is told what was done; returning `ControlFlow::Break` stops the run there
    /// (a task engine's deadline), and the progress's checkpoint resumes it. Reads and commits
    /// that fail transiently are retried with `options.backoff`. An entity of the
    /// old kind that does not read as `T` stops the run with its error before its commit.
    pub async fn migrate_from(
        &self,
        options: &Migration,
        resume: Option<&MigrationCheckpoint>,
        mut progress: impl FnMut(&MigrationProgress) -> std::ops::ControlFlow<()>,
    ) -> Result<MigrationProgress> {
        if !(1..=MAX_MUTATIONS).contains(&options.batch_size) {
            return Err(Error::InvalidOptions {
                option: "batch_size",
                expected: "1 to 500",
            });
        }
        check_lanes(&options.lanes)?;
        options.throttling.validate()?;
        options.backoff.validate()?;
        let mut checkpoint = match resume {
            Some(checkpoint) => {
                if checkpoint.source_kind != options.source_kind {
                    return Err(Error::InvalidCheckpoint(format!(
                        "the checkpoint copies `{}`, not `{}`",
                        checkpoint.source_kind, options.source_kind
                    )));
                }
                checkpoint.clone()
            }
            None => MigrationCheckpoint {
                source_kind: options.source_kind.clone(),
                lanes: options
                    .lanes
                    .iter()
                    .map(|lane| (lane.clone(), ChunkPosition::Start))
                    .collect(),
            },
        };
        let clock = Instant::now();
        let limiter = RateLimiter::new(options.throttling, Duration::ZERO, options.batch_size);
        let mut done = MigrationProgress {
            copied: 0,
            already_there: 0,
            commits: 0,
            checkpoint: checkpoint.clone(),
        };
        let per_lane = options.batch_size.div_ceil(checkpoint.lanes.len()).max(1);
        while !checkpoint.is_done() {
            // One round: up to `per_lane` entities of each lane, interleaved.
            let reads = checkpoint.lanes.iter().map(|(lane, position)| async move {
                match position {
                    ChunkPosition::Done => Ok((Vec::new(), true)),
                    _ => {
                        super::retried(&options.backoff, "migration read", || {
                            self.read_lane(&options.source_kind, lane, position, per_lane)
                        })
                        .await
                    }
                }
            });
            let (read, exhausted): (Vec<_>, Vec<_>) = futures::future::try_join_all(reads)
                .await?
                .into_iter()
                .unzip();
            let mut batch: Vec<(usize, String, T, Vec<u8>)> = Vec::new();
            let longest = read.iter().map(Vec::len).max().unwrap_or(0);
            let mut lanes: Vec<_> = read.into_iter().map(Vec::into_iter).collect();
            for _ in 0..longest {
                for (lane, entities) in lanes.iter_mut().enumerate() {
                    if let Some((id, document, cursor)) = entities.next() {
                        batch.push((lane, id, document, cursor));
                    }
                }
            }
            if !batch.is_empty() {
                while let Err(wait) = limiter.try_acquire(batch.len(), clock.elapsed()) {
                    tokio::time::sleep(wait).await;
                }
                let (copied, there) = self.copy_missing(&batch, &options.backoff).await?;
                done.copied += copied;
                done.already_there += there;
                done.commits += 1;
            }
            for (lane, _, _, cursor) in &batch {
                checkpoint.lanes[*lane].1 = ChunkPosition::after(cursor);
            }
            for (lane, end) in exhausted.into_iter().enumerate() {
                if end {
                    checkpoint.lanes[lane].1 = ChunkPosition::Done;
                }
            }
            done.checkpoint = checkpoint.clone();
            if progress(&done).is_break() {
                break;
            }
        }
        Ok(done)
    }

    /// The entity `id` as the app reads it while a migration runs (the page's concurrent
    /// reads): from this kind, or else from `source_kind`, where it is still only there.
    pub async fn get_migrating(&self, id: &str, source_kind: &str) -> Result<Option<T>> {
        if let Some(stored) = self.get(id).await? {
            return Ok(Some(stored.document));
        }
        let mut key = self.key(id)?;
        if let Some(last) = key.path.last_mut() {
            last.kind = source_kind.to_owned();
        }
        let found = self.lookup_keys(vec![key], None).await?;
        match found.first() {
            Some(entity) => {
                let document = convert::to_document(entity, &self.datastore.documents_root())?;
                Ok(Some(decode_source::<T>(&document)?.1))
            }
            None => Ok(None),
        }
    }

    /// Up to `limit` entities of the lane from `position`, in key order, each with the cursor
    /// after it; and whether the lane has nothing more.
    async fn read_lane(
        &self,
        source_kind: &str,
        lane: &IdRange,
        position: &ChunkPosition,
        limit: usize,
    ) -> Result<(Vec<(String, T, Vec<u8>)>, bool)> {
        use ds::property_filter::Operator as Op;
        let mut filters = Vec::new();
        let bound = |id: &str, op: Op| -> Result<ds::Filter> {
            let mut key = self.key(id)?;
            if let Some(last) = key.path.last_mut() {
                last.kind = source_kind.to_owned();
            }
            Ok(key_filter(op, key))
        };
        if let Some(start) = lane.start() {
            filters.push(bound(start, Op::GreaterThanOrEqual)?);
        }
        if let Some(end) = lane.end() {
            filters.push(bound(end, Op::LessThan)?);
        }
        if let Some(parent) = &self.parent {
            filters.push(key_filter(
                Op::HasAncestor,
                ds::Key {
                    partition_id: Some(self.datastore.partition.clone()),
                    path: convert::path_key(parent),
                },
            ));
        }
        let query = ds::Query {
            kind: vec![ds::KindExpression {
                name: source_kind.to_owned(),
            }],
            filter: Some(super::query::and(filters))
                .filter(|filter| !super::query::is_empty(filter)),
            order: vec![ds::PropertyOrder {
                property: Some(ds::PropertyReference {
                    name: "__key__".into(),
                }),
                direction: ds::property_order::Direction::Ascending as i32,
            }],
            start_cursor: position.start_cursor()?,
            limit: Some(super::query::int32_limit(limit as u32)),
            ..Default::default()
        };
        let (read, _) = self.run(query, Some(limit as u32), None).await?;
        let mut entities = Vec::with_capacity(read.entities.len());
        for (document, cursor) in read.entities {
            let (id, value) = decode_source::<T>(&document)?;
            entities.push((id, value, cursor));
        }
        Ok((entities, read.exhausted))
    }

    /// Inserts, in one transaction, those of `batch` this kind does not hold yet; how many
    /// it inserted and how many were there. A conflict with the app's writes, or a lost
    /// connection, is retried: a commit applied before its answer was lost finds its entities
    /// there the next time.
    async fn copy_missing(
        &self,
        batch: &[(usize, String, T, Vec<u8>)],
        backoff: &Backoff,
    ) -> Result<(usize, usize)> {
        let keys = batch
            .iter()
            .map(|(_, id, _, _)| self.key(id))
            .collect::<Result<Vec<_>>>()?;
        let root = self.datastore.documents_root();
        let names: Vec<String> = keys
            .iter()
            .map(|key| convert::document_name(&root, key))
            .collect();
        super::retried(backoff, "migration commit", || async {
            let transaction = self.datastore.begin().await?;
            let attempt = async {
                let found = self
                    .lookup_keys(keys.clone(), Some(transaction.id().to_vec()))
                    .await?;
                let there: std::collections::HashSet<String> = found
                    .iter()
                    .filter_map(|entity| entity.key.as_ref())
                    .map(|key| convert::document_name(&root, key))
                    .collect();
                let mut mutations = Vec::new();
                for ((_, id, document, _), name) in batch.iter().zip(&names) {
                    if !there.contains(name) {
                        mutations.push(self.mutation(Put::Insert, id, document)?);
                    }
                }
                let copied = mutations.len();
                transaction.commit_mutations(mutations).await?;
                Ok((copied, batch.len() - copied))
            };
            let outcome = attempt.await;
            if outcome.is_err() {
                // A transaction left open holds its locks until it expires, and the next
                // attempt would wait on them ("Transaction lock timeout", measured through the
                // fault proxy). Its commit may have been applied, answer lost: then the
                // rollback fails, and nothing is lost.
                let _ = transaction.rollback().await;
            }
            outcome
        })
        .await
    }
}

/// An entity of the old kind (as a document) read as `T`: its id and value.
fn decode_source<T: Sharded>(document: &Document) -> Result<(String, T)> {
    let id = crate::document_path::DocumentPath::parse(&document.name)
        .id()
        .to_owned();
    Ok((id, FirestoreDb::deserialize_doc_to(document)?))
}

/// Refuses lanes that do not cover every id exactly once: in order, each starting where the
/// one before ends, the first from the first id, the last to past the last.
fn check_lanes(lanes: &[IdRange]) -> Result<()> {
    let refused = Err(Error::InvalidOptions {
        option: "lanes",
        expected: "id ranges in order, each starting where the one before ends, from the first id to past the last (as `IdRange::part(i, n)` for i in 0..n)",
    });
    let (Some(first), Some(last)) = (lanes.first(), lanes.last()) else {
        return refused;
    };
    if first.start().is_some() || last.end().is_some() {
        return refused;
    }
    match lanes
        .windows(2)
        .all(|pair| pair[0].end().is_some() && pair[0].end() == pair[1].start())
    {
        true => Ok(()),
        false => refused,
    }
}

fn key_filter(op: ds::property_filter::Operator, key: ds::Key) -> ds::Filter {
    ds::Filter {
        filter_type: Some(ds::filter::FilterType::PropertyFilter(ds::PropertyFilter {
            property: Some(ds::PropertyReference {
                name: "__key__".into(),
            }),
            op: op as i32,
            value: Some(ds::Value {
                value_type: Some(ds::value::ValueType::KeyValue(key)),
                ..Default::default()
            }),
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start: Option<&str>, end: Option<&str>) -> IdRange {
        IdRange::new(start, end).unwrap()
    }

    #[test]
    fn lanes_must_cover_every_id_once() {
        let parts: Vec<IdRange> = (0..5).map(|i| IdRange::part(i, 5).unwrap()).collect();
        assert!(check_lanes(&parts).is_ok());
        assert!(check_lanes(&[IdRange::all()]).is_ok());
        let split = [range(None, Some("m")), range(Some("m"), None)];
        assert!(check_lanes(&split).is_ok());
        for refused in [
            vec![],
            vec![range(None, Some("m"))],
            vec![range(Some("m"), None)],
            vec![split[1].clone(), split[0].clone()],
            vec![range(None, Some("m")), range(Some("n"), None)],
            vec![range(None, Some("n")), range(Some("m"), None)],
            vec![IdRange::all(), IdRange::all()],
        ] {
            assert!(check_lanes(&refused).is_err(), "{refused:?}");
        }
    }
}
