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
use serde::{Deserialize, Serialize};

mod lanes;
mod tracked;
mod users;

pub use tracked::{
    JOB_KIND, MigrationJobStatus, MigrationPartRun, MigrationPartStatus, PART_KIND,
    TrackedMigration,
};
pub use users::{USER_MIGRATION_STATE_KIND, UserMigration, UserMigrationProgress, UserState};

use lanes::{KeyPath, Lane, check_lanes, gql_key, key_path};

use super::convert;
use super::cursor::ChunkPosition;
use super::kind::{Kind, MAX_MUTATIONS, Put};
use crate::error::{Error, Result};
use crate::model::partition::IdRange;
use crate::model::sharded::Sharded;
use crate::model::throttling::Throttling;
use crate::write::bulk::{Backoff, RateLimiter};

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

impl MigrationCheckpoint {
    /// The checkpoint as URL-safe text.
    pub fn to_token(&self) -> String {
        crate::wire::token::encode(self)
    }

    /// The checkpoint `token` stands for.
    pub fn from_token(token: &str) -> Result<MigrationCheckpoint> {
        crate::wire::token::decode(token).map_err(Error::InvalidCheckpoint)
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
        check_options(options)?;
        let checkpoint = match resume {
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
        self.run_migration(options, checkpoint, |done| {
            std::future::ready(Ok(progress(&done)))
        })
        .await
    }

    /// Copies from `checkpoint` on, telling `step` after each commit (whose `Break` stops the
    /// run there, and whose error ends it).
    async fn run_migration<F>(
        &self,
        options: &Migration,
        mut checkpoint: MigrationCheckpoint,
        mut step: impl FnMut(MigrationProgress) -> F,
    ) -> Result<MigrationProgress>
    where
        F: std::future::Future<Output = Result<std::ops::ControlFlow<()>>>,
    {
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
            if step(done.clone()).await?.is_break() {
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
            // Round after round, one key from each lane that has one, the lanes taken in an
            // order that goes up and down (0, h, 1, h + 1, …), so that the ids written one
            // after another never rise in a run, however many lanes there are.
            let half = buffers.len().div_ceil(2);
            let order: Vec<usize> = (0..half)
                .flat_map(|i| [i, i + half])
                .filter(|lane| *lane < buffers.len())
                .collect();
            let mut took = true;
            while took && copies < options.batch_size {
                took = false;
                for &lane in &order {
                    let buffer = &mut buffers[lane];
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
                transaction.abandon().await;
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
        self.get_old(id, source_kind).await
    }
}

/// Refuses a commit size Datastore does not take.
fn check_batch_size(batch_size: usize) -> Result<()> {
    if !(1..=MAX_MUTATIONS).contains(&batch_size) {
        return Err(Error::InvalidOptions {
            option: "batch_size",
            expected: "1 to 500",
        });
    }
    Ok(())
}

/// Refuses options a run cannot follow, before anything is read.
fn check_options(options: &Migration) -> Result<()> {
    check_batch_size(options.batch_size)?;
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
    options.backoff.validate()
}
