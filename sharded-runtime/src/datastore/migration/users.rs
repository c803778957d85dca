//! The page's refinement of a migration to a new kind: users moved in small batches chosen by
//! the hash of their id ([`Rollout`]), each user's migration state recorded on the user's own
//! entity, reads of both kinds while a user is mid-way, and writes to both kinds while any
//! user may still be on the old one (the rollout's [`dual_writes`](Rollout::dual_writes)).
//!
//! A run reconciles every user with the rollout's share. Users below it are moved: their state
//! set to [`UserState::Moving`] (reads now try the new kind, then the old), their old entities
//! copied by the migration's own transactional copy (an entity is copied as the old kind holds
//! it at its commit, only where the new kind has none), then their state set to
//! [`UserState::Moved`] (reads go to the new kind alone) in a transaction that finds them still
//! `Moving`. Users above it whose state says otherwise are rolled back to [`UserState::Old`]:
//! the dual writes kept the old kind current, so nothing is copied back. A user with an
//! entity the copy must leave behind ([`LeftBehind`]) stays `Moving`, where reads still find
//! that entity, and is reported.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::datastore::v1 as ds;
use futures::{StreamExt as _, TryStreamExt as _};
use serde::{Deserialize, Serialize};

use ds::key::path_element::IdType;

use super::lanes::gql_key;
use super::{LeftBehind, Read, check_batch_size};
use crate::datastore::checkpoint::EntityCheckpoints;
use crate::datastore::convert;
use crate::datastore::cursor::ChunkPosition;
use crate::datastore::filter::{ancestor, and, int32_limit, property_filter};
use crate::datastore::kind::{Kind, MAX_MUTATIONS};
use crate::error::{Error, Result};
use crate::job::stored_checkpoint::{CheckpointStore, Latest, part_id, store_while};
use crate::job::task_part::TaskPart;
use crate::model::rollout::Rollout;
use crate::model::sharded::Sharded;
use crate::model::throttling::Throttling;
use crate::write::bulk::{Backoff, RateLimiter};

/// The kind a tracked per-user migration keeps each part's checkpoint in, named
/// `<job>-<index>-of-<count>`.
pub const USER_MIGRATION_STATE_KIND: &str = "ShardedUserMigration";

/// The property of the user's entity that holds its state by default.
pub(crate) const DEFAULT_STATE_PROPERTY: &str = "sharded_migration";

/// User keys read per page of the scan of the user kind.
const SCAN_PAGE: usize = 300;

/// How [`Kind::migrate_users`] moves users from an old kind to this one.
#[derive(Debug, Clone)]
pub struct UserMigration {
    /// Who is moved: the users whose bucket is below the share; those above it whose state
    /// says otherwise are rolled back.
    pub rollout: Rollout,
    /// The kind the users' entities are copied from, in the same namespace and under the same
    /// ancestor as this kind (as [`Migration::source_kind`](super::Migration::source_kind)).
    pub source_kind: String,
    /// The kind of the users' own entities, at the top of the namespace, each named (or
    /// numbered) by the user's id: where each user's state is recorded.
    pub user_kind: String,
    /// The property of the old kind's entities that holds their user's id (the user entity's
    /// name as a string, or its number as an integer); it must be indexed.
    pub user_property: String,
    /// The property of the user's entity that records its state (
    /// unless set: `sharded_migration`); written indexed, since a run finds users to roll back by it.
    pub state_property: String,
    /// Users moved together, 1 to 100 (20 by default): the state of a batch changes in one
    /// transaction.
    pub users_per_batch: usize,
    /// The per-user queries of the old kind run side by side, 1 to 64 (8 by default).
    pub concurrency: usize,
    /// Entities per copy commit, 1 to 500.
    pub batch_size: usize,
    /// The ramp of the copies; [`Throttling::ramp`] (500/50/5) unless set.
    pub throttling: Throttling,
    /// Retries of a read or a commit that failed transiently or conflicted with the app's
    /// writes.
    pub backoff: Backoff,
}

impl UserMigration {
    /// Moves the users `rollout` puts on the new kind, their entities from `source_kind`
    /// (found by `user_property`), their state on their entity of `user_kind`; the defaults
    /// otherwise.
    pub fn new(
        rollout: Rollout,
        source_kind: &str,
        user_kind: &str,
        user_property: &str,
    ) -> UserMigration {
        UserMigration {
            rollout,
            source_kind: source_kind.to_owned(),
            user_kind: user_kind.to_owned(),
            user_property: user_property.to_owned(),
            state_property: DEFAULT_STATE_PROPERTY.to_owned(),
            users_per_batch: 20,
            concurrency: 8,
            batch_size: MAX_MUTATIONS,
            throttling: Throttling::ramp(),
            backoff: Backoff::default(),
        }
    }

    /// Refuses options a run cannot follow, before anything is read.
    fn validate(&self) -> Result<()> {
        let named = [
            ("source_kind", &self.source_kind),
            ("user_kind", &self.user_kind),
            ("user_property", &self.user_property),
            ("state_property", &self.state_property),
        ];
        for (option, name) in named {
            if name.is_empty() || name.starts_with("__") {
                return Err(Error::InvalidOptions {
                    option,
                    expected: "a kind or property name: not empty, not `__...` (reserved)",
                });
            }
        }
        if !(1..=100).contains(&self.users_per_batch) {
            return Err(Error::InvalidOptions {
                option: "users_per_batch",
                expected: "1 to 100",
            });
        }
        if !(1..=64).contains(&self.concurrency) {
            return Err(Error::InvalidOptions {
                option: "concurrency",
                expected: "1 to 64",
            });
        }
        check_batch_size(self.batch_size)?;
        self.throttling.validate()?;
        self.backoff.validate()
    }
}

/// Where a user stands in a per-user migration, as the user's entity records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UserState {
    /// Not moved (no state recorded, or rolled back): the old kind is the user's.
    Old,
    /// Being moved: read the new kind, then the old one where the new has nothing.
    Moving,
    /// Moved: the new kind is the user's.
    Moved,
}

impl UserState {
    const MOVING: &'static str = "moving";
    const MOVED: &'static str = "moved";
    const OLD: &'static str = "old";

    fn of(entity: &ds::Entity, property: &str) -> UserState {
        match entity
            .properties
            .get(property)
            .and_then(|value| value.value_type.as_ref())
        {
            Some(ds::value::ValueType::StringValue(state)) if state == Self::MOVING => {
                UserState::Moving
            }
            Some(ds::value::ValueType::StringValue(state)) if state == Self::MOVED => {
                UserState::Moved
            }
            _ => UserState::Old,
        }
    }

    fn stored(self) -> &'static str {
        match self {
            UserState::Old => Self::OLD,
            UserState::Moving => Self::MOVING,
            UserState::Moved => Self::MOVED,
        }
    }
}

/// Which users a run is at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum UserPhase {
    /// Moving the users below the share, the user kind scanned in key order from here.
    Moving(ChunkPosition),
    /// Rolling back the users above the share in the state `from` (`Moving`, then `Moved`),
    /// the users in that state scanned in key order from here (an equality filter: served
    /// by the property's built-in index).
    RollingBack {
        from: UserState,
        position: ChunkPosition,
    },
    Done,
}

impl UserPhase {
    /// The users the phase scans (all, or those in a state), from where; `None` when done.
    fn scan(&self) -> Option<(Option<UserState>, &ChunkPosition)> {
        match self {
            UserPhase::Moving(position) => Some((None, position)),
            UserPhase::RollingBack { from, position } => Some((Some(*from), position)),
            UserPhase::Done => None,
        }
    }

    /// The same phase, gone on to after `cursor`.
    fn after(&self, cursor: &[u8]) -> UserPhase {
        match self {
            UserPhase::Moving(_) => UserPhase::Moving(ChunkPosition::after(cursor)),
            UserPhase::RollingBack { from, .. } => UserPhase::RollingBack {
                from: *from,
                position: ChunkPosition::after(cursor),
            },
            UserPhase::Done => UserPhase::Done,
        }
    }

    /// The phase after this one's scan ends.
    fn next(&self) -> UserPhase {
        let rolling_back = |from| UserPhase::RollingBack {
            from,
            position: ChunkPosition::Start,
        };
        match self {
            UserPhase::Moving(_) => rolling_back(UserState::Moving),
            UserPhase::RollingBack {
                from: UserState::Moving,
                ..
            } => rolling_back(UserState::Moved),
            UserPhase::RollingBack { .. } | UserPhase::Done => UserPhase::Done,
        }
    }
}

/// What a per-user migration has done, after each batch: also its checkpoint, which
/// [`Kind::migrate_users`] goes on from (serialize it, or let
/// [`Kind::migrate_users_part`] keep it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct UserMigrationProgress {
    /// The rollout's name.
    pub rollout: String,
    /// The share the run moves users to.
    pub share_ppm: u32,
    /// The part of the users this run handles (those whose bucket is `index` modulo `count`).
    pub part: (u32, u32),
    phase: UserPhase,
    /// Users set to [`UserState::Moved`].
    pub users_moved: u64,
    /// Users below the share found moved already.
    pub users_already_moved: u64,
    /// Users left [`UserState::Moving`] because an entity of theirs cannot be copied
    /// ([`left_behind`](Self::left_behind)).
    pub users_held: u64,
    /// Users set back to [`UserState::Old`].
    pub users_rolled_back: u64,
    /// Users whose entity was deleted between the scan and their batch.
    pub users_gone: u64,
    /// Entities copied into the new kind.
    pub copied: u64,
    /// Entities the new kind held already (the dual writes, or an earlier run).
    pub already_there: u64,
    /// Entities deleted from the old kind between their query and their commit.
    pub vanished: u64,
    /// Commits of copies made.
    pub commits: u64,
    /// Entities left behind, over the run.
    pub left_behind_total: u64,
    /// The entities the last batch left behind, with why (not kept in a checkpoint).
    #[serde(skip)]
    pub left_behind: Vec<LeftBehind>,
}

impl UserMigrationProgress {
    fn new(options: &UserMigration, part: &TaskPart) -> Self {
        UserMigrationProgress {
            rollout: options.rollout.name().to_owned(),
            share_ppm: options.rollout.share_ppm(),
            part: (part.index, part.count),
            phase: UserPhase::Moving(ChunkPosition::Start),
            users_moved: 0,
            users_already_moved: 0,
            users_held: 0,
            users_rolled_back: 0,
            users_gone: 0,
            copied: 0,
            already_there: 0,
            vanished: 0,
            commits: 0,
            left_behind_total: 0,
            left_behind: Vec::new(),
        }
    }

    /// Whether every user of the run's part is reconciled with the share.
    pub fn is_done(&self) -> bool {
        self.phase == UserPhase::Done
    }

    /// Refuses a checkpoint of another rollout, share or part.
    fn check(&self, options: &UserMigration, part: &TaskPart) -> Result<()> {
        if self.rollout != options.rollout.name()
            || self.share_ppm != options.rollout.share_ppm()
            || self.part != (part.index, part.count)
        {
            return Err(Error::InvalidCheckpoint(format!(
                "the checkpoint moves rollout `{}` to {} ppm as part {} of {}, not `{}` to {} ppm as part {} of {}",
                self.rollout,
                self.share_ppm,
                self.part.0,
                self.part.1,
                options.rollout.name(),
                options.rollout.share_ppm(),
                part.index,
                part.count
            )));
        }
        Ok(())
    }
}

/// A user the scan found in the run's part.
struct User {
    key: ds::Key,
    /// The id the rollout hashes, and the old kind's `user_property` holds.
    id: String,
    /// The old kind's `user_property` value for the user.
    value: ds::Value,
}

impl<T: Sharded> Kind<T> {
    /// Reconciles every user with `options.rollout`'s share: moves the users below it (state
    /// `Moving`, their entities copied from the old kind, state `Moved`), `users_per_batch`
    /// at a time, and rolls back the users above it to `Old`. From `resume` (the last
    /// progress of a run of the same rollout and share) or the start; `progress` hears of
    /// each batch, and `ControlFlow::Break` stops the run there. Run it again after each raise
    /// (or lowering) of the share.
    ///
    /// Reads of a user's entities go by the user's state ([`get_for_user`](Self::get_for_user)),
    /// and while the rollout is below the whole the app writes both kinds, as for
    /// [`migrate_from`](Self::migrate_from). A user with no entity of `user_kind` is not
    /// moved: at the whole, a [`migrate_from`](Self::migrate_from) of the old kind copies what
    /// such users left.
    pub async fn migrate_users(
        &self,
        options: &UserMigration,
        resume: Option<&UserMigrationProgress>,
        mut progress: impl FnMut(&UserMigrationProgress) -> ControlFlow<()> + Send,
    ) -> Result<UserMigrationProgress> {
        options.validate()?;
        let whole = TaskPart::new(0, 1)?;
        let start = match resume {
            Some(resume) => {
                resume.check(options, &whole)?;
                resume.clone()
            }
            None => UserMigrationProgress::new(options, &whole),
        };
        self.run_users(options, start, &mut progress).await
    }

    /// This task's part of the per-user migration `job` (the users whose bucket is
    /// `part.index` modulo `part.count`), for a Cloud Run job or a Kubernetes Indexed Job: the
    /// part's progress is kept in an entity of kind [`USER_MIGRATION_STATE_KIND`] every 2 s
    /// and at the end (after a failure too), a retry goes on from it, and a finished part
    /// returns it at once. Two attempts at once do no harm: each state change and each copy
    /// is a transaction that finds what it changes as it expects. Every part scans the user
    /// kind's keys (keys-only reads). Each share is a job of its own: give each run of a new
    /// share its own `job` name (a stored checkpoint of another rollout, share or part is
    /// refused with [`Error::InvalidCheckpoint`]).
    pub async fn migrate_users_part(
        &self,
        job: &str,
        options: &UserMigration,
        part: TaskPart,
        mut progress: impl FnMut(&UserMigrationProgress) + Send,
    ) -> Result<UserMigrationProgress> {
        options.validate()?;
        let id = part_id(job, &part)?;
        let store = EntityCheckpoints {
            datastore: &self.datastore,
            kind: USER_MIGRATION_STATE_KIND,
        };
        let store: &dyn CheckpointStore<UserMigrationProgress> = &store;
        let start = match store.read(&id).await? {
            Some(stored) => {
                stored.check(options, &part)?;
                stored
            }
            None => UserMigrationProgress::new(options, &part),
        };
        if start.is_done() {
            progress(&start);
            return Ok(start);
        }
        let latest = Latest::new();
        let mut report = |state: &UserMigrationProgress| {
            latest.set(state);
            progress(state);
            ControlFlow::Continue(())
        };
        let running = self.run_users(options, start, &mut report);
        store_while(store, &id, &latest, running).await
    }

    /// The user's state, as the user's entity records it (`Old` when the user has no entity).
    pub async fn user_state(&self, options: &UserMigration, user_id: &str) -> Result<UserState> {
        let key = self.user_key(options, user_id)?;
        let found = self.lookup_keys(vec![key], None).await?;
        Ok(found.first().map_or(UserState::Old, |user| {
            UserState::of(user, &options.state_property)
        }))
    }

    /// The entity `id` of a user in `state`, read where the state says it is: the old kind
    /// (`source_kind`) for `Old`, this kind then the old one for `Moving` (the page's
    /// concurrent reads), this kind for `Moved`.
    pub async fn get_for_user(
        &self,
        id: &str,
        state: UserState,
        source_kind: &str,
    ) -> Result<Option<T>> {
        match state {
            UserState::Old => self.get_old(id, source_kind).await,
            UserState::Moving => self.get_migrating(id, source_kind).await,
            UserState::Moved => Ok(self.get(id).await?.map(|stored| stored.document)),
        }
    }

    async fn run_users(
        &self,
        options: &UserMigration,
        mut done: UserMigrationProgress,
        report: &mut (dyn FnMut(&UserMigrationProgress) -> ControlFlow<()> + Send),
    ) -> Result<UserMigrationProgress> {
        let clock = Instant::now();
        let limiter = RateLimiter::new(options.throttling, Duration::ZERO, options.batch_size);
        let (index, count) = done.part;
        let ours = |id: &str| options.rollout.bucket(id) % count == index;
        loop {
            let Some((state, position)) = done.phase.scan() else {
                return Ok(done);
            };
            let moving = state.is_none();
            let (page, exhausted) = super::super::retried(&options.backoff, "user scan", || {
                self.scan_users(options, state, position)
            })
            .await?;
            // The users of the page to handle, in batches; the cursor after the last user of
            // each batch (or of the page) is where a resumed run goes on.
            let mut batch: Vec<User> = Vec::new();
            for (i, (key, cursor)) in page.iter().enumerate() {
                if let Some((id, value)) = user_id(key)
                    && ours(&id)
                    && options.rollout.uses_new(&id) == moving
                {
                    batch.push(User {
                        key: key.clone(),
                        id,
                        value,
                    });
                }
                let last = i + 1 == page.len();
                if batch.len() == options.users_per_batch || last {
                    done.left_behind.clear();
                    if moving {
                        self.move_users(options, &batch, &limiter, clock, &mut done)
                            .await?;
                    } else {
                        self.roll_back(options, &batch, &mut done).await?;
                    }
                    batch.clear();
                    done.phase = if last && exhausted {
                        done.phase.next()
                    } else {
                        done.phase.after(cursor)
                    };
                    if report(&done).is_break() {
                        return Ok(done);
                    }
                }
            }
            if page.is_empty() {
                done.phase = done.phase.next();
                if report(&done).is_break() {
                    return Ok(done);
                }
            }
        }
    }

    /// A page of user keys from `position`, in key order: every user, or those in `state`;
    /// and whether it is the last.
    async fn scan_users(
        &self,
        options: &UserMigration,
        state: Option<UserState>,
        position: &ChunkPosition,
    ) -> Result<(Vec<(ds::Key, Vec<u8>)>, bool)> {
        use ds::property_filter::Operator as Op;
        let by_key = ds::PropertyReference {
            name: "__key__".into(),
        };
        let filter = state.map(|state| {
            property_filter(
                &options.state_property,
                Op::Equal,
                string_value(state.stored()),
            )
        });
        let query = ds::Query {
            projection: vec![ds::Projection {
                property: Some(by_key.clone()),
            }],
            kind: vec![ds::KindExpression {
                name: options.user_kind.clone(),
            }],
            filter,
            order: vec![ds::PropertyOrder {
                property: Some(by_key),
                direction: ds::property_order::Direction::Ascending as i32,
            }],
            start_cursor: position.start_cursor()?,
            limit: Some(int32_limit(SCAN_PAGE as u32)),
            ..Default::default()
        };
        let (read, exhausted, _) = self
            .run_entities(query, Some(SCAN_PAGE as u32), None)
            .await?;
        read.into_iter()
            .map(|(entity, cursor)| {
                let key = entity
                    .key
                    .ok_or_else(|| Error::UnexpectedAnswer("an entity without a key".into()))?;
                Ok((key, cursor))
            })
            .collect::<Result<Vec<_>>>()
            .map(|keys| (keys, exhausted))
    }

    /// Moves a batch of users: `Moving`, their entities copied, `Moved`.
    async fn move_users(
        &self,
        options: &UserMigration,
        users: &[User],
        limiter: &RateLimiter,
        clock: Instant,
        done: &mut UserMigrationProgress,
    ) -> Result<()> {
        if users.is_empty() {
            return Ok(());
        }
        let marked = self
            .set_states(options, users, |state| match state {
                UserState::Moved => None,
                UserState::Old | UserState::Moving => Some(UserState::Moving),
            })
            .await?;
        done.users_gone += marked.gone;
        done.users_already_moved += marked.unchanged.len() as u64;
        let moving: Vec<&User> = users
            .iter()
            .filter(|user| marked.changed.contains(&user.id))
            .collect();
        // Each user's old entities, `concurrency` queries at a time.
        let found: Vec<(String, Vec<Read>)> = futures::stream::iter(moving.iter().map(|user| {
            let user = *user;
            async move {
                let reads = super::super::retried(&options.backoff, "user query", || {
                    self.user_entities(options, &user.value)
                })
                .await?;
                Ok::<_, Error>((user.id.clone(), reads))
            }
        }))
        .buffer_unordered(options.concurrency)
        .try_collect()
        .await?;
        let mut held: Vec<String> = Vec::new();
        // Each copy with its user, who stays mid-way if the copy leaves it behind.
        let mut copies: Vec<(ds::Key, String)> = Vec::new();
        let mut owners: Vec<&str> = Vec::new();
        for (user, reads) in &found {
            for read in reads {
                match read {
                    Read::Copy { source, id } => {
                        copies.push((source.clone(), id.clone()));
                        owners.push(user);
                    }
                    Read::LeftBehind(left) => {
                        done.left_behind.push(left.clone());
                        held.push(user.clone());
                    }
                }
            }
        }
        for (commit, owners) in copies
            .chunks(options.batch_size)
            .zip(owners.chunks(options.batch_size))
        {
            while let Err(wait) = limiter.try_acquire(commit.len(), clock.elapsed()) {
                tokio::time::sleep(wait).await;
            }
            let committed = self.copy_missing(commit, &options.backoff).await?;
            done.commits += 1;
            done.copied += committed.copied as u64;
            done.already_there += committed.already_there as u64;
            done.vanished += committed.vanished as u64;
            for left in committed.too_long {
                let owner = commit
                    .iter()
                    .position(|(source, _)| gql_key(source) == left.key)
                    .map(|at| owners[at].to_owned());
                held.extend(owner);
                done.left_behind.push(left);
            }
        }
        held.sort();
        held.dedup();
        done.users_held += held.len() as u64;
        done.left_behind_total += done.left_behind.len() as u64;
        for left in &done.left_behind {
            tracing::warn!(key = %left.key, reason = ?left.reason, "per-user migration left an entity behind; its user stays mid-way");
        }
        let finishing: Vec<User> = moving
            .iter()
            .filter(|user| !held.contains(&user.id))
            .map(|user| User {
                key: user.key.clone(),
                id: user.id.clone(),
                value: user.value.clone(),
            })
            .collect();
        let moved = self
            .set_states(options, &finishing, |state| {
                (state == UserState::Moving).then_some(UserState::Moved)
            })
            .await?;
        // A user found `Moved` already was set so by this batch's commit whose answer was
        // lost (the transaction is retried); one found `Old` was rolled back meanwhile.
        done.users_moved += (moved.changed.len()
            + moved
                .unchanged
                .iter()
                .filter(|(_, state)| *state == UserState::Moved)
                .count()) as u64;
        Ok(())
    }

    /// Rolls back a batch of users above the share to `Old`.
    async fn roll_back(
        &self,
        options: &UserMigration,
        users: &[User],
        done: &mut UserMigrationProgress,
    ) -> Result<()> {
        if users.is_empty() {
            return Ok(());
        }
        let changed = self
            .set_states(options, users, |state| {
                (state != UserState::Old).then_some(UserState::Old)
            })
            .await?;
        // Users of the batch are `Moving` or `Moved` as scanned: one found `Old` now was set so
        // by this batch's commit whose answer was lost (or by another run).
        done.users_rolled_back += (changed.changed.len() + changed.unchanged.len()) as u64;
        Ok(())
    }

    /// In one transaction, reads the users' entities and gives each the state `to` says for
    /// its current one (`None`: left as it is), every other property kept.
    async fn set_states(
        &self,
        options: &UserMigration,
        users: &[User],
        to: impl Fn(UserState) -> Option<UserState>,
    ) -> Result<StateChanges> {
        if users.is_empty() {
            return Ok(StateChanges::default());
        }
        super::super::retried(&options.backoff, "user state commit", || async {
            let transaction = self.datastore.begin().await?;
            let attempt = async {
                let keys = users.iter().map(|user| user.key.clone()).collect();
                let found = self
                    .lookup_keys(keys, Some(transaction.id().to_vec()))
                    .await?;
                let mut changes = StateChanges {
                    gone: (users.len() - found.len()) as u64,
                    ..StateChanges::default()
                };
                let mut mutations = Vec::new();
                for mut entity in found {
                    let Some(id) = entity.key.as_ref().and_then(user_id).map(|(id, _)| id) else {
                        continue;
                    };
                    let now = UserState::of(&entity, &options.state_property);
                    match to(now) {
                        Some(state) => {
                            entity.properties.insert(
                                options.state_property.clone(),
                                string_value(state.stored()),
                            );
                            mutations.push(ds::Mutation {
                                operation: Some(ds::mutation::Operation::Update(entity)),
                                ..Default::default()
                            });
                            changes.changed.push(id);
                        }
                        None => changes.unchanged.push((id, now)),
                    }
                }
                // Committed even with nothing to write: that ends the transaction, whose reads
                // would otherwise hold their locks until it expires, and the next batch's
                // transaction on these users would wait on them (measured: a minute on the
                // emulator).
                transaction.commit_mutations(mutations).await?;
                Ok(changes)
            };
            let outcome = attempt.await;
            if outcome.is_err() {
                transaction.abandon().await;
            }
            outcome
        })
        .await
    }

    /// The keys of the old kind's entities of one user (in this kind's ancestor), each as a
    /// copy or a key left behind.
    async fn user_entities(&self, options: &UserMigration, user: &ds::Value) -> Result<Vec<Read>> {
        use ds::property_filter::Operator as Op;
        let by_key = ds::PropertyReference {
            name: "__key__".into(),
        };
        let mut filters = vec![property_filter(
            &options.user_property,
            Op::Equal,
            user.clone(),
        )];
        if let Some(parent) = &self.parent {
            filters.push(ancestor(parent, &self.datastore.partition));
        }
        let query = ds::Query {
            projection: vec![ds::Projection {
                property: Some(by_key),
            }],
            kind: vec![ds::KindExpression {
                name: options.source_kind.clone(),
            }],
            filter: Some(and(filters)),
            ..Default::default()
        };
        let (read, _, _) = self.run_entities(query, None, None).await?;
        let parent = self
            .parent
            .as_deref()
            .map(convert::path_key)
            .unwrap_or_default();
        read.into_iter()
            .map(|(entity, _)| {
                let source = entity
                    .key
                    .ok_or_else(|| Error::UnexpectedAnswer("an entity without a key".into()))?;
                Ok(match self.copy_id(&source, &parent) {
                    Ok(id) => Read::Copy { source, id },
                    Err(reason) => Read::LeftBehind(LeftBehind {
                        key: gql_key(&source),
                        reason,
                    }),
                })
            })
            .collect()
    }

    /// The key of the user `user_id`'s entity: a name, or the number N for `__id<N>__`.
    fn user_key(&self, options: &UserMigration, user_id: &str) -> Result<ds::Key> {
        crate::model::document_id::check_document_id(user_id)?;
        Ok(ds::Key {
            partition_id: Some(self.datastore.partition.clone()),
            path: vec![ds::key::PathElement {
                kind: options.user_kind.clone(),
                id_type: Some(convert::id_type(user_id)),
            }],
        })
    }

    /// The entity `id` of the old kind `source_kind`, read as this type.
    pub(super) async fn get_old(&self, id: &str, source_kind: &str) -> Result<Option<T>> {
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

/// What a state transaction changed.
#[derive(Debug, Default)]
struct StateChanges {
    /// The users given a new state.
    changed: Vec<String>,
    /// The users left as they were, with the state they hold.
    unchanged: Vec<(String, UserState)>,
    /// Users no longer there.
    gone: u64,
}

/// The id the rollout hashes for a user's key, and the value the old kind's user property
/// holds for it: a name as itself (a string value), the number N as `__id<N>__`, the
/// runtime's id for a numbered entity (an integer value).
/// `None` for an entity of the user kind under an ancestor: users are at the top of the
/// namespace, where [`Kind::user_state`] looks them up.
fn user_id(key: &ds::Key) -> Option<(String, ds::Value)> {
    let [user] = key.path.as_slice() else {
        return None;
    };
    match &user.id_type {
        Some(IdType::Name(name)) => Some((name.clone(), string_value(name))),
        Some(IdType::Id(number)) => Some((
            format!("__id{number}__"),
            ds::Value {
                value_type: Some(ds::value::ValueType::IntegerValue(*number)),
                ..Default::default()
            },
        )),
        None => None,
    }
}

fn string_value(text: &str) -> ds::Value {
    ds::Value {
        value_type: Some(ds::value::ValueType::StringValue(text.to_owned())),
        ..Default::default()
    }
}
