//! Moving a kind's entities into a sharded kind, as the best-practices page describes a
//! migration to a new kind: the app writes both kinds (dual writes: every insert, update and
//! delete goes to both) and reads the new one first ([`Kind::get_migrating`]), while a batch
//! job copies the old entities over, ramped up (500/50/5) and never writing consecutive keys
//! one after another.
//!
//! The job splits the old kind by its own keys into "lanes" of about equal size (a keys-only
//! pass that samples the keys: the emulator answers no `__scatter__` sample, measured), reads
//! the lanes' keys side by side and builds each commit from all of them, so that consecutive
//! writes land in far-apart key ranges and every commit but the last holds `batch_size`
//! entities, however the ids are spread (allocated numbers, random names, sequential names).
//! Each commit is a transaction that reads the old entities and the new kind again: it copies
//! an entity as it is at that moment, and only where it is still in the old kind and not yet
//! in the new one. An entity the app deleted or updated after the lane read is never brought
//! back or copied stale, a newer version the app wrote to the new kind is never overwritten,
//! and an entity copied twice (a retried or resumed job) is written once.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::datastore::v1 as ds;
use rand::Rng;
use serde::{Deserialize, Serialize};

use ds::key::path_element::IdType;

use super::convert;
use super::cursor::ChunkPosition;
use super::kind::{Kind, MAX_MUTATIONS, Put};
use crate::bulk::{Backoff, RateLimiter, Throttling};
use crate::partition::IdRange;
use crate::{Error, Result, Sharded};

/// The most lanes [`Migration::lane_count`] takes.
pub const MAX_LANES: usize = 100;

/// Keys sampled per lane to split the old kind: enough that lanes come out within about a
/// fifth of each other's size.
const SAMPLES_PER_LANE: usize = 32;

/// How [`Kind::migrate_from`] copies.
#[derive(Debug, Clone)]
pub struct Migration {
    /// The kind the entities are copied from, in the same namespace and under the same
    /// ancestor as the sharded kind.
    pub source_kind: String,
    /// The id ranges read side by side, each commit taking from all of them. Empty (the
    /// default): the old kind is split by its own keys into [`lane_count`](Self::lane_count)
    /// lanes of about equal size, sampled before the first commit. Given: in order, each
    /// starting where the one before ends, from the first id to past the last, so that they
    /// cover every id once ([`Error::InvalidOptions`] otherwise, before anything is read).
    pub lanes: Vec<IdRange>,
    /// How many lanes an old kind is split into when [`lanes`](Self::lanes) is empty: 1 to
    /// [`MAX_LANES`], 16 by default. A kind with fewer entities gets fewer.
    pub lane_count: usize,
    /// The ramp; [`Throttling::ramp`] (500/50/5) unless set.
    pub throttling: Throttling,
    /// Entities per commit, 1 to 500: every commit but the last holds this many. Each lane
    /// reads up to this many keys ahead of the commits.
    pub batch_size: usize,
    /// Retries of a read or a commit that failed transiently or conflicted with the app's
    /// writes.
    pub backoff: Backoff,
}

impl Migration {
    /// Copies from `source_kind` with the defaults.
    pub fn from_kind(source_kind: &str) -> Migration {
        Migration {
            source_kind: source_kind.to_owned(),
            lanes: Vec::new(),
            lane_count: 16,
            throttling: Throttling::ramp(),
            batch_size: MAX_MUTATIONS,
            backoff: Backoff::default(),
        }
    }
}

/// Where a migration stands: its lanes, and each lane's position in the old kind after the
/// last commit. [`to_token`](Self::to_token) keeps it in a file or an environment variable;
/// pass it back to [`Kind::migrate_from`] to go on from there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrationCheckpoint {
    source_kind: String,
    lanes: Vec<Lane>,
}

/// A key range of the old kind and how far it is copied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Lane {
    /// The first key (included); `None`: from the first.
    start: Option<KeyPath>,
    /// The key it ends before; `None`: to the last.
    end: Option<KeyPath>,
    /// After the last entity a commit took from it.
    position: ChunkPosition,
}

/// A key's path, without its partition (the migration's own).
type KeyPath = Vec<(String, KeyId)>;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
enum KeyId {
    Id(i64),
    Name(String),
}

fn key_path(key: &ds::Key) -> KeyPath {
    key.path
        .iter()
        .map(|element| {
            let id = match &element.id_type {
                Some(IdType::Id(id)) => KeyId::Id(*id),
                Some(IdType::Name(name)) => KeyId::Name(name.clone()),
                None => KeyId::Name(String::new()),
            };
            (element.kind.clone(), id)
        })
        .collect()
}

/// `key`'s path as a GQL key literal.
fn gql_key(key: &ds::Key) -> String {
    let elements: Vec<String> = key
        .path
        .iter()
        .map(|element| {
            let id = match &element.id_type {
                Some(IdType::Id(id)) => id.to_string(),
                Some(IdType::Name(name)) => format!("'{}'", name.replace('\'', "''")),
                None => "NULL".into(),
            };
            format!("{}, {id}", element.kind)
        })
        .collect();
    format!("KEY({})", elements.join(", "))
}

fn path_elements(path: &KeyPath) -> Vec<ds::key::PathElement> {
    path.iter()
        .map(|(kind, id)| ds::key::PathElement {
            kind: kind.clone(),
            id_type: Some(match id {
                KeyId::Id(id) => IdType::Id(*id),
                KeyId::Name(name) => IdType::Name(name.clone()),
            }),
        })
        .collect()
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
            .all(|lane| lane.position == ChunkPosition::Done)
    }

    /// How many lanes the old kind is read in.
    pub fn lanes(&self) -> usize {
        self.lanes.len()
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
    /// Entities the app deleted from the old kind after their key was read and before their
    /// commit: not copied, so a deletion is never undone.
    pub vanished: usize,
    /// Entities of the old kind the migration cannot copy as they are, reported here and
    /// left where they are (never renamed or moved to another entity group): those of the
    /// last step in [`left_behind`](Self::left_behind), each reported once.
    pub left_behind_total: usize,
    /// The entities the last step left behind, with why.
    pub left_behind: Vec<LeftBehind>,
    /// Commits made.
    pub commits: usize,
    /// The entities of the largest commit.
    pub largest_commit: usize,
    /// Where a new run goes on from.
    pub checkpoint: MigrationCheckpoint,
}

/// An entity of the old kind a migration does not copy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LeftBehind {
    /// Its key's path as a GQL key literal, `KEY(Root, 'r1', Old, 'x')` (a numeric id
    /// unquoted, a quote in a name doubled).
    pub key: String,
    /// Why it stays.
    pub reason: LeftBehindReason,
}

/// Why a migration leaves an entity behind.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LeftBehindReason {
    /// It lies under another ancestor than the sharded kind's (a kind query finds the kind in
    /// every entity group): copying it under this one would merge entity groups, and two
    /// entities of one name under different ancestors into one.
    OtherAncestor,
    /// Its name is no id of the sharded type (it holds `/`, is `.` or `..`, …): copying it
    /// under another name would rename it, and could merge two entities into one.
    NotAnId(&'static str),
    /// A property that some query reads holds a string or blob longer than Datastore indexes:
    /// Datastore would refuse the whole commit.
    TooLongToIndex {
        /// The property's path.
        property: String,
        /// The value's length in bytes.
        bytes: usize,
    },
}

/// A key read from a lane: copied in a commit, or left behind.
#[derive(Debug)]
struct Pending {
    cursor: Vec<u8>,
    kind: Read,
}

#[derive(Debug)]
enum Read {
    /// The old entity's key and the sharded kind's id for it.
    Copy {
        source: ds::Key,
        id: String,
    },
    LeftBehind(LeftBehind),
}

/// A lane as a run reads it: the keys read and not yet committed, and whether it has more.
#[derive(Debug, Default)]
struct LaneBuffer {
    pending: VecDeque<Pending>,
    exhausted: bool,
}

/// What one commit did.
#[derive(Debug, Default)]
struct Committed {
    copied: usize,
    already_there: usize,
    vanished: usize,
    too_long: Vec<LeftBehind>,
}

impl<T: Sharded> Kind<T> {
    /// Copies the entities of `options.source_kind` into this kind, each with a shard drawn,
    /// from `resume` (a checkpoint of an earlier run) or the start. After each commit,
    /// `progress` is told what was done; returning `ControlFlow::Break` stops the run there
    /// (a task engine's deadline), and the progress's checkpoint resumes it. Reads and commits
    /// that fail transiently are retried with `options.backoff`. An entity of the old kind
    /// that does not read as `T` stops the run with its error before its commit; entities that
    /// cannot be copied as they are ([`LeftBehind`]) are reported and skipped.
    ///
    /// What it guarantees while the app writes both kinds: an entity is copied as the old kind
    /// holds it at its commit, only when the new kind has none; an entity deleted from the old
    /// kind before its commit is not copied; nothing of the new kind is overwritten. An app
    /// that deletes from the new kind alone while the old one still holds the entity sees it
    /// copied back: the page's dual writes delete from both.
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
        if !(1..=MAX_LANES).contains(&options.lane_count) {
            return Err(Error::InvalidOptions {
                option: "lane_count",
                expected: "1 to 100",
            });
        }
        if !options.lanes.is_empty() {
            check_lanes(&options.lanes)?;
        }
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
                lanes: self.lanes(options).await?,
            },
        };
        let clock = Instant::now();
        let limiter = RateLimiter::new(options.throttling, Duration::ZERO, options.batch_size);
        let mut done = MigrationProgress {
            copied: 0,
            already_there: 0,
            vanished: 0,
            left_behind_total: 0,
            left_behind: Vec::new(),
            commits: 0,
            largest_commit: 0,
            checkpoint: checkpoint.clone(),
        };
        let mut buffers: Vec<LaneBuffer> = checkpoint
            .lanes
            .iter()
            .map(|lane| LaneBuffer {
                pending: VecDeque::new(),
                exhausted: lane.position == ChunkPosition::Done,
            })
            .collect();
        // Where each lane's reads go on from: after the last key read (which may be ahead of
        // the checkpoint's position, after the last key committed).
        let mut read_from: Vec<ChunkPosition> = checkpoint
            .lanes
            .iter()
            .map(|lane| lane.position.clone())
            .collect();
        while !checkpoint.is_done() {
            let (batch, left_behind) = self
                .fill(options, &checkpoint, &mut buffers, &mut read_from)
                .await?;
            let mut committed = Committed::default();
            let copies: Vec<(ds::Key, String)> = batch
                .iter()
                .filter_map(|(_, pending)| match &pending.kind {
                    Read::Copy { source, id } => Some((source.clone(), id.clone())),
                    Read::LeftBehind(_) => None,
                })
                .collect();
            if !copies.is_empty() {
                while let Err(wait) = limiter.try_acquire(copies.len(), clock.elapsed()) {
                    tokio::time::sleep(wait).await;
                }
                committed = self.copy_missing(&copies, &options.backoff).await?;
                done.commits += 1;
                done.largest_commit = done.largest_commit.max(copies.len());
            }
            for (lane, pending) in &batch {
                checkpoint.lanes[*lane].position = ChunkPosition::after(&pending.cursor);
            }
            for (lane, buffer) in buffers.iter().enumerate() {
                if buffer.exhausted && buffer.pending.is_empty() {
                    checkpoint.lanes[lane].position = ChunkPosition::Done;
                }
            }
            done.copied += committed.copied;
            done.already_there += committed.already_there;
            done.vanished += committed.vanished;
            done.left_behind = left_behind;
            done.left_behind.extend(committed.too_long);
            done.left_behind_total += done.left_behind.len();
            for left in &done.left_behind {
                tracing::warn!(key = %left.key, reason = ?left.reason, "migration left an entity behind");
            }
            done.checkpoint = checkpoint.clone();
            if progress(&done).is_break() {
                break;
            }
        }
        Ok(done)
    }

    /// The next commit's keys, taken from the lanes in turn (so that consecutive writes are
    /// in far-apart key ranges) until it holds `batch_size` entities to copy or every lane is
    /// read to its end; each with its lane. The keys to leave behind that were taken on the
    /// way are returned apart, reported once.
    async fn fill(
        &self,
        options: &Migration,
        checkpoint: &MigrationCheckpoint,
        buffers: &mut [LaneBuffer],
        read_from: &mut [ChunkPosition],
    ) -> Result<(Vec<(usize, Pending)>, Vec<LeftBehind>)> {
        let mut batch: Vec<(usize, Pending)> = Vec::new();
        let mut left_behind = Vec::new();
        let mut copies = 0;
        loop {
            let open = buffers
                .iter()
                .filter(|buffer| !(buffer.exhausted && buffer.pending.is_empty()))
                .count();
            if copies == options.batch_size || open == 0 {
                return Ok((batch, left_behind));
            }
            // Each lane holds at least its share of what the commit still needs, or all it has.
            let share = (options.batch_size - copies).div_ceil(open);
            let reads = buffers
                .iter()
                .enumerate()
                .filter(|(_, buffer)| !buffer.exhausted && buffer.pending.len() < share)
                .map(|(lane, _)| {
                    let bounds = &checkpoint.lanes[lane];
                    let position = read_from[lane].clone();
                    async move {
                        let read = super::retried(&options.backoff, "migration read", || {
                            self.read_lane(
                                &options.source_kind,
                                bounds,
                                &position,
                                options.batch_size,
                            )
                        })
                        .await?;
                        Ok::<_, Error>((lane, read))
                    }
                })
                .collect::<Vec<_>>();
            for (lane, (read, exhausted)) in futures::future::try_join_all(reads).await? {
                if let Some(last) = read.last() {
                    read_from[lane] = ChunkPosition::after(&last.cursor);
                }
                buffers[lane].pending.extend(read);
                buffers[lane].exhausted = exhausted;
            }
            // Round after round, one key from each lane that has one.
            let mut took = true;
            while took && copies < options.batch_size {
                took = false;
                for (lane, buffer) in buffers.iter_mut().enumerate() {
                    if copies == options.batch_size {
                        break;
                    }
                    // Keys left behind take no place in the commit.
                    while let Some(pending) = buffer.pending.pop_front() {
                        took = true;
                        match &pending.kind {
                            Read::LeftBehind(left) => {
                                left_behind.push(left.clone());
                                batch.push((lane, pending));
                            }
                            Read::Copy { .. } => {
                                copies += 1;
                                batch.push((lane, pending));
                                break;
                            }
                        }
                    }
                }
            }
        }
    }

    /// The lanes a new run reads: the options' id ranges, or the old kind split by a sample
    /// of its keys.
    async fn lanes(&self, options: &Migration) -> Result<Vec<Lane>> {
        let source_key = |id: &str| -> Result<KeyPath> {
            let mut key = self.key(id)?;
            if let Some(last) = key.path.last_mut() {
                last.kind = options.source_kind.clone();
            }
            Ok(key_path(&key))
        };
        let bounds: Vec<(Option<KeyPath>, Option<KeyPath>)> = match options.lanes.is_empty() {
            false => options
                .lanes
                .iter()
                .map(|lane| {
                    Ok((
                        lane.start().map(source_key).transpose()?,
                        lane.end().map(source_key).transpose()?,
                    ))
                })
                .collect::<Result<_>>()?,
            true => {
                let sample = super::retried(&options.backoff, "migration key sample", || {
                    self.sample_keys(&options.source_kind, options.lane_count * SAMPLES_PER_LANE)
                })
                .await?;
                split_points(sample, options.lane_count)
                    .into_iter()
                    .map(|(start, end)| (start.map(|k| key_path(&k)), end.map(|k| key_path(&k))))
                    .collect()
            }
        };
        Ok(bounds
            .into_iter()
            .map(|(start, end)| Lane {
                start,
                end,
                position: ChunkPosition::Start,
            })
            .collect())
    }

    /// Up to `size` keys of the old kind drawn uniformly (reservoir sampling over a keys-only
    /// read of the kind, which Datastore bills as small operations), in key order.
    async fn sample_keys(&self, source_kind: &str, size: usize) -> Result<Vec<ds::Key>> {
        let mut sample: Vec<(usize, ds::Key)> = Vec::with_capacity(size);
        let mut seen = 0usize;
        let mut position = ChunkPosition::Start;
        let mut rng = rand::rng();
        let everything = Lane {
            start: None,
            end: None,
            position: ChunkPosition::Start,
        };
        loop {
            let query = self.lane_query(source_kind, &everything, &position, 1_000)?;
            let (keys, exhausted, _) = self.run_entities(query, Some(1_000), None).await?;
            for (entity, cursor) in keys {
                position = ChunkPosition::after(&cursor);
                let Some(key) = entity.key else { continue };
                if sample.len() < size {
                    sample.push((seen, key));
                } else {
                    let slot = rng.random_range(0..=seen);
                    if slot < size {
                        sample[slot] = (seen, key);
                    }
                }
                seen += 1;
            }
            if exhausted {
                break;
            }
        }
        sample.sort_by_key(|(at, _)| *at);
        Ok(sample.into_iter().map(|(_, key)| key).collect())
    }

    /// A keys-only query of the lane from `position`, in key order: the old kind in this
    /// kind's ancestor (every ancestor, at the top).
    fn lane_query(
        &self,
        source_kind: &str,
        lane: &Lane,
        position: &ChunkPosition,
        limit: usize,
    ) -> Result<ds::Query> {
        use ds::property_filter::Operator as Op;
        let key = |path: &KeyPath| ds::Key {
            partition_id: Some(self.datastore.partition.clone()),
            path: path_elements(path),
        };
        let mut filters = Vec::new();
        if let Some(start) = &lane.start {
            filters.push(key_filter(Op::GreaterThanOrEqual, key(start)));
        }
        if let Some(end) = &lane.end {
            filters.push(key_filter(Op::LessThan, key(end)));
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
        let by_key = ds::PropertyReference {
            name: "__key__".into(),
        };
        Ok(ds::Query {
            projection: vec![ds::Projection {
                property: Some(by_key.clone()),
            }],
            kind: vec![ds::KindExpression {
                name: source_kind.to_owned(),
            }],
            filter: Some(super::query::and(filters))
                .filter(|filter| !super::query::is_empty(filter)),
            order: vec![ds::PropertyOrder {
                property: Some(by_key),
                direction: ds::property_order::Direction::Ascending as i32,
            }],
            start_cursor: position.start_cursor()?,
            limit: Some(super::query::int32_limit(limit as u32)),
            ..Default::default()
        })
    }

    /// Up to `limit` keys of the lane from `position`, in key order, each with the cursor
    /// after it and what becomes of it; and whether the lane has nothing more.
    async fn read_lane(
        &self,
        source_kind: &str,
        lane: &Lane,
        position: &ChunkPosition,
        limit: usize,
    ) -> Result<(Vec<Pending>, bool)> {
        let query = self.lane_query(source_kind, lane, position, limit)?;
        let (read, exhausted, _) = self.run_entities(query, Some(limit as u32), None).await?;
        let parent = self
            .parent
            .as_deref()
            .map(convert::path_key)
            .unwrap_or_default();
        let mut keys = Vec::with_capacity(read.len());
        for (entity, cursor) in read {
            let source = entity
                .key
                .ok_or_else(|| Error::UnexpectedAnswer("an entity without a key".into()))?;
            let kind = match self.copy_id(&source, &parent) {
                Ok(id) => Read::Copy { source, id },
                Err(reason) => Read::LeftBehind(LeftBehind {
                    key: gql_key(&source),
                    reason,
                }),
            };
            keys.push(Pending { cursor, kind });
        }
        Ok((keys, exhausted))
    }

    /// The id the old entity at `source` is copied under: its own, where it is a direct child
    /// of `parent` (the sharded kind's ancestor) and its name is an id of the type.
    fn copy_id(
        &self,
        source: &ds::Key,
        parent: &[ds::key::PathElement],
    ) -> std::result::Result<String, LeftBehindReason> {
        let (last, ancestors) = source
            .path
            .split_last()
            .ok_or(LeftBehindReason::NotAnId("a key without a path"))?;
        if ancestors != parent {
            return Err(LeftBehindReason::OtherAncestor);
        }
        let id = match &last.id_type {
            Some(IdType::Id(id)) => format!("__id{id}__"),
            Some(IdType::Name(name)) => name.clone(),
            None => return Err(LeftBehindReason::NotAnId("a key without an id")),
        };
        match crate::check_document_id(&id) {
            Ok(()) => Ok(id),
            Err(Error::InvalidDocumentId { reason, .. }) => Err(LeftBehindReason::NotAnId(reason)),
            Err(_) => Err(LeftBehindReason::NotAnId("not a document id")),
        }
    }

    /// In one transaction, reads the old entities of `copies` and the new kind at their ids,
    /// and inserts each old entity, as read there, where it is still in the old kind and not
    /// in the new one. A conflict with the app's writes, or a lost connection, is retried: a
    /// commit applied before its answer was lost finds its entities there the next time.
    async fn copy_missing(
        &self,
        copies: &[(ds::Key, String)],
        backoff: &Backoff,
    ) -> Result<Committed> {
        let targets = copies
            .iter()
            .map(|(_, id)| self.key(id))
            .collect::<Result<Vec<_>>>()?;
        let root = self.datastore.documents_root();
        super::retried(backoff, "migration commit", || async {
            let transaction = self.datastore.begin().await?;
            let attempt = async {
                let keys = copies
                    .iter()
                    .map(|(source, _)| source.clone())
                    .chain(targets.iter().cloned())
                    .collect();
                let found = self
                    .lookup_keys(keys, Some(transaction.id().to_vec()))
                    .await?;
                // Found entities by their key's path: sources and targets differ by kind.
                let mut found: HashMap<KeyPath, ds::Entity> = found
                    .into_iter()
                    .filter_map(|entity| Some((key_path(entity.key.as_ref()?), entity)))
                    .collect();
                let mut committed = Committed::default();
                let mut mutations = Vec::new();
                for ((source, id), target) in copies.iter().zip(&targets) {
                    if found.contains_key(&key_path(target)) {
                        committed.already_there += 1;
                        continue;
                    }
                    let Some(entity) = found.remove(&key_path(source)) else {
                        committed.vanished += 1;
                        continue;
                    };
                    let document = convert::to_document(&entity, &root)?;
                    let value: T = FirestoreDb::deserialize_doc_to(&document)?;
                    match self.mutation(Put::Insert, id, &value) {
                        Ok(mutation) => mutations.push(mutation),
                        Err(Error::TooLongToIndex {
                            property, bytes, ..
                        }) => committed.too_long.push(LeftBehind {
                            key: gql_key(source),
                            reason: LeftBehindReason::TooLongToIndex { property, bytes },
                        }),
                        Err(other) => return Err(other),
                    }
                }
                committed.copied = mutations.len();
                transaction.commit_mutations(mutations).await?;
                Ok(committed)
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
                Ok(Some(FirestoreDb::deserialize_doc_to(&document)?))
            }
            None => Ok(None),
        }
    }
}

/// Lanes of about equal size from `sample` (keys in key order, drawn uniformly): up to
/// `lanes` ranges, each starting where the one before ends, the first from the first key, the
/// last to past the last.
fn split_points<K: Clone + PartialEq>(sample: Vec<K>, lanes: usize) -> Vec<(Option<K>, Option<K>)> {
    let mut bounds: Vec<K> = (1..lanes)
        .filter_map(|i| sample.get(i * sample.len() / lanes).cloned())
        .collect();
    bounds.dedup();
    let starts = std::iter::once(None).chain(bounds.iter().cloned().map(Some));
    let ends = bounds
        .iter()
        .cloned()
        .map(Some)
        .chain(std::iter::once(None));
    starts.zip(ends).collect()
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
    fn a_key_reads_as_gql() {
        let key = ds::Key {
            partition_id: None,
            path: vec![
                ds::key::PathElement {
                    kind: "Root".into(),
                    id_type: Some(IdType::Name("it's/1".into())),
                },
                ds::key::PathElement {
                    kind: "Old".into(),
                    id_type: Some(IdType::Id(-3)),
                },
            ],
        };
        assert_eq!(gql_key(&key), "KEY(Root, 'it''s/1', Old, -3)");
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

    /// Split points from random samples cover every key once, in order, with at most the
    /// lanes asked for, and lanes of about equal shares of the sample.
    #[test]
    fn split_points_cover_every_key_once() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(61);
        for _ in 0..2_000 {
            let size = rng.random_range(0..400);
            let range = rng.random_range(1..2_000u32);
            let mut sample: Vec<u32> = (0..size).map(|_| rng.random_range(0..range)).collect();
            sample.sort();
            let lanes = rng.random_range(1..40);
            let split = split_points(sample.clone(), lanes);
            assert!(!split.is_empty() && split.len() <= lanes);
            assert_eq!(split.first().unwrap().0, None);
            assert_eq!(split.last().unwrap().1, None);
            for pair in split.windows(2) {
                assert!(pair[0].1.is_some());
                assert_eq!(pair[0].1, pair[1].0);
                assert!(pair[0].0.is_none() || pair[0].0 < pair[0].1);
            }
            let held = |start: &Option<u32>, end: &Option<u32>| {
                sample
                    .iter()
                    .filter(|key| start.is_none_or(|s| s <= **key) && end.is_none_or(|e| **key < e))
                    .count()
            };
            // Every key of the sample lies in exactly one lane.
            assert_eq!(
                split.iter().map(|(s, e)| held(s, e)).sum::<usize>(),
                sample.len()
            );
            // Distinct keys: no lane holds more than its share and one.
            let mut distinct = sample.clone();
            distinct.dedup();
            if distinct.len() == sample.len() && sample.len() >= lanes {
                for (start, end) in &split {
                    assert!(held(start, end) <= sample.len().div_ceil(lanes) + 1);
                }
            }
        }
    }
}
