//! A migration as a tracked job, as a backfill runs one: each task of a Cloud Run job or a
//! Kubernetes Indexed Job runs its part (every `count`-th lane of the old kind's split), its
//! state held in Datastore beside the kinds (kind [`JOB_KIND`], each part a child entity of
//! [`PART_KIND`]). The first task to start splits the old kind and stores the lanes; a task
//! resumes its part from the part's stored checkpoint; a second live attempt of a part does not
//! run beside the first (a lease taken in a transaction, taken over when its holder's last
//! write is older than the lease, or at once by a later attempt of the same task as its engine
//! numbers them, [`TaskPart`]'s rule); a finished part is not run again; and
//! [`Kind::migration_status`] shows the whole job from anywhere. Each commit's progress is
//! written to the part's state in a transaction that checks the lease: an attempt that lost
//! its part stops at its next commit with [`Error::JobLeaseLost`].

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::time::Duration;

use firestore::gcloud_sdk::google::datastore::v1 as ds;
use firestore::gcloud_sdk::prost_types::Timestamp;

use ds::key::path_element::IdType;

use super::lanes::Lane;
use super::{Migration, MigrationCheckpoint, MigrationProgress, check_options};
use crate::datastore::Datastore;
use crate::datastore::kind::Kind;
use crate::error::{Error, Result};
use crate::job::task_part::{Holder, TaskPart};
use crate::job::tracked::PartPhase;
use crate::model::sharded::Sharded;

/// The kind of a tracked migration's state entity, named by the job's id.
pub const JOB_KIND: &str = "ShardedMigrationJob";
/// The kind of a part's state entity, a child of the job's, named `part-<index>`.
pub const PART_KIND: &str = "ShardedMigrationPart";

/// The lease by default: a holder whose last write is older is taken over.
const DEFAULT_LEASE: Duration = Duration::from_secs(60);
/// How long a waiting attempt sleeps before it looks at a held part again, at most.
const MAX_WAIT: Duration = Duration::from_secs(5);

/// A migration's part run as one task of the tracked job `job`; see
/// [`Kind::tracked_migration`].
#[must_use = "a tracked migration does nothing until it is run"]
#[derive(Debug)]
pub struct TrackedMigration<'k, T> {
    kind: &'k Kind<T>,
    options: Migration,
    job: String,
    part: TaskPart,
    lease_timeout: Duration,
    leave_if_held: bool,
}

/// What a tracked migration's part run did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MigrationPartRun {
    /// This attempt ran the part to its end; the part as stored now.
    Finished(MigrationPartStatus),
    /// The part was done already; nothing was run.
    AlreadyDone(MigrationPartStatus),
    /// A live attempt holds the part, and the run was asked to
    /// [`leave_if_held`](TrackedMigration::leave_if_held); nothing was run or written.
    HeldElsewhere(MigrationPartStatus),
}

/// One part of a tracked migration, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MigrationPartStatus {
    /// Which part, from 0.
    pub index: u32,
    /// Where it stands.
    pub phase: PartPhase,
    /// The attempt that last held it.
    pub attempt: u32,
    /// Entities it copied, over every attempt's stored progress.
    pub copied: u64,
    /// Entities the new kind held already when their commit came.
    pub already_there: u64,
    /// Entities deleted from the old kind before their commit.
    pub vanished: u64,
    /// Entities left behind ([`super::LeftBehind`], reported to the attempt's progress).
    pub left_behind: u64,
    /// Commits made.
    pub commits: u64,
    /// How long ago its holder last wrote, as the server's clock tells.
    pub last_write_age: Option<Duration>,
    /// The last attempt's error, when it failed.
    pub error: Option<String>,
}

/// A tracked migration as stored: every part.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MigrationJobStatus {
    /// The job's id.
    pub job: String,
    /// The old kind.
    pub source_kind: String,
    /// Every part, by index.
    pub parts: Vec<MigrationPartStatus>,
}

impl MigrationJobStatus {
    /// Whether every part is done.
    pub fn is_done(&self) -> bool {
        self.parts.iter().all(|part| part.phase == PartPhase::Done)
    }

    /// Entities copied by every part.
    pub fn copied(&self) -> u64 {
        self.parts.iter().map(|part| part.copied).sum()
    }
}

impl<T: Sharded> Kind<T> {
    /// `options`' migration as part `part` of the tracked job `job`
    /// ([`TaskPart::from_env`] in a Cloud Run job or a Kubernetes Indexed Job). Every task of
    /// the job gives the same options and the same part count.
    pub fn tracked_migration(
        &self,
        options: Migration,
        job: &str,
        part: TaskPart,
    ) -> TrackedMigration<'_, T> {
        TrackedMigration {
            kind: self,
            options,
            job: job.to_owned(),
            part,
            lease_timeout: DEFAULT_LEASE,
            leave_if_held: false,
        }
    }

    /// The tracked migration `job` as stored, from any machine.
    pub async fn migration_status(&self, job: &str) -> Result<MigrationJobStatus> {
        let state = State::of(&self.datastore, job)?;
        let (found, _) = state.read(vec![state.job_key()], None).await?;
        let Some(record) = found.into_iter().next() else {
            return Err(Error::JobMismatch {
                job: job.to_owned(),
                reason: "no such migration job has started".into(),
            });
        };
        let parts = integer(&record.entity, "parts") as u32;
        let keys = (0..parts).map(|index| state.part_key(index)).collect();
        let (found, read_time) = state.read(keys, None).await?;
        let mut by_index: HashMap<u32, Found> = found
            .into_iter()
            .map(|found| (part_index(&found.entity), found))
            .collect();
        let parts = (0..parts)
            .map(|index| match by_index.remove(&index) {
                Some(found) => part_status(index, &found, read_time.as_ref()),
                None => Err(Error::JobMismatch {
                    job: job.to_owned(),
                    reason: format!("its part {index} is missing"),
                }),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(MigrationJobStatus {
            job: job.to_owned(),
            source_kind: string(&record.entity, "source_kind"),
            parts,
        })
    }
}

impl<T: Sharded> TrackedMigration<'_, T> {
    /// How long a holder may go without writing before another attempt takes its part over:
    /// one minute by default, at least a second.
    pub fn lease_timeout(mut self, lease: Duration) -> Self {
        self.lease_timeout = lease;
        self
    }

    /// Returns [`MigrationPartRun::HeldElsewhere`] at once when a live attempt holds the
    /// part, instead of waiting for its lease to run out.
    pub fn leave_if_held(mut self) -> Self {
        self.leave_if_held = true;
        self
    }

    /// Runs the part: starts the job if no task has, takes the part's lease, resumes from its
    /// stored checkpoint, and writes its progress after each commit; `progress` is told the
    /// progress of this attempt after each commit, before it is stored. A part that fails is stored as failed with
    /// its error, which is returned; the next attempt goes on from its checkpoint.
    pub async fn run(
        self,
        mut progress: impl FnMut(&MigrationProgress),
    ) -> Result<MigrationPartRun> {
        check_options(&self.options)?;
        if self.lease_timeout < Duration::from_secs(1) {
            return Err(Error::InvalidOptions {
                option: "lease_timeout",
                expected: "at least a second",
            });
        }
        let state = State::of(&self.kind.datastore, &self.job)?;
        let lanes = self.start(&state).await?;
        let owner = crate::job::tracked::attempt_token();
        let held = loop {
            match self.acquire(&state, &owner).await? {
                Acquired::Held(held) => break held,
                Acquired::Done(status) => return Ok(MigrationPartRun::AlreadyDone(status)),
                Acquired::Elsewhere(status, _) if self.leave_if_held => {
                    return Ok(MigrationPartRun::HeldElsewhere(status));
                }
                Acquired::Elsewhere(_, left) => {
                    tokio::time::sleep(left.min(MAX_WAIT) + Duration::from_millis(50)).await;
                }
            }
        };
        // The part's lanes: every `count`-th of the job's, resumed where the part stands.
        let mine: Vec<Lane> = lanes
            .into_iter()
            .skip(self.part.index as usize)
            .step_by(self.part.count as usize)
            .collect();
        let checkpoint = match &held.checkpoint {
            Some(token) => MigrationCheckpoint::from_token(token)?,
            None => MigrationCheckpoint {
                source_kind: self.options.source_kind.clone(),
                lanes: mine,
            },
        };
        let base = held.counts;
        let (state_ref, owner_ref, part) = (&state, owner.as_str(), &self.part);
        let outcome = self
            .kind
            .run_migration(&self.options, checkpoint, |done| {
                progress(&done);
                async move {
                    // The commit landed; its progress is stored while this attempt holds the
                    // part, or the run stops: another attempt goes on from its checkpoint.
                    state_ref
                        .write_part(part.index, owner_ref, part, |stored| {
                            stored.counts = base.plus(&done);
                            stored.checkpoint = Some(done.checkpoint.to_token());
                        })
                        .await?;
                    Ok(ControlFlow::Continue(()))
                }
            })
            .await;
        match outcome {
            Ok(done) => {
                let counts = base.plus(&done);
                state
                    .write_part(self.part.index, &owner, &self.part, |part| {
                        part.counts = counts;
                        part.checkpoint = Some(done.checkpoint.to_token());
                        part.phase = StoredPhase::Done;
                    })
                    .await?;
                let status = self.status_of(&state).await?;
                Ok(MigrationPartRun::Finished(status))
            }
            Err(error) => {
                if !matches!(error, Error::JobLeaseLost { .. }) {
                    let message = error.to_string();
                    // Best effort: the error is returned whether or not this lands.
                    let _ = state
                        .write_part(self.part.index, &owner, &self.part, |part| {
                            part.phase = StoredPhase::Failed;
                            part.error = Some(message.clone());
                        })
                        .await;
                }
                Err(error)
            }
        }
    }

    async fn status_of(&self, state: &State) -> Result<MigrationPartStatus> {
        let (found, read_time) = state
            .read(vec![state.part_key(self.part.index)], None)
            .await?;
        let found = found.into_iter().next().ok_or_else(|| Error::JobMismatch {
            job: self.job.clone(),
            reason: format!("its part {} is missing", self.part.index),
        })?;
        part_status(self.part.index, &found, read_time.as_ref())
    }

    /// The job's lanes: stored by the first task to start it (which splits the old kind and
    /// inserts the job and its pending parts in one commit), or by another task before.
    async fn start(&self, state: &State) -> Result<Vec<Lane>> {
        let mut sampled: Option<Vec<Lane>> = None;
        loop {
            let (found, _) = state.read(vec![state.job_key()], None).await?;
            if let Some(job) = found.into_iter().next() {
                return self.check_job(&job.entity);
            }
            let lanes = match &sampled {
                Some(lanes) => lanes.clone(),
                None => {
                    let lanes = self.kind.lanes(&self.options).await?;
                    sampled = Some(lanes.clone());
                    lanes
                }
            };
            let token = crate::wire::token::encode(&lanes);
            let mut mutations = vec![insert(ds::Entity {
                key: Some(state.job_key()),
                properties: HashMap::from([
                    ("source_kind".into(), text(&self.options.source_kind)),
                    ("parts".into(), number(i64::from(self.part.count))),
                    ("lanes".into(), unindexed(text(&token))),
                ]),
            })];
            for index in 0..self.part.count {
                mutations.push(insert(PartRecord::pending(index).entity(state)));
            }
            // One commit of inserts, all or nothing: it fails whole where the job is there.
            match state.datastore.commit(mutations, None).await {
                Ok(_) => return Ok(lanes),
                // Another task started it meanwhile: read what it stored.
                Err(Error::Datastore {
                    code: crate::wire::status::StatusCode::AlreadyExists,
                    ..
                }) => {}
                Err(other) => return Err(other),
            }
        }
    }

    /// The stored job's lanes, where it is this job: the same old kind and part count.
    fn check_job(&self, job: &ds::Entity) -> Result<Vec<Lane>> {
        let mismatch = |reason: String| {
            Err(Error::JobMismatch {
                job: self.job.clone(),
                reason,
            })
        };
        let source = string(job, "source_kind");
        if source != self.options.source_kind {
            return mismatch(format!(
                "it migrates `{source}`, not `{}`",
                self.options.source_kind
            ));
        }
        let parts = integer(job, "parts");
        if parts != i64::from(self.part.count) {
            return mismatch(format!(
                "it has {parts} parts, this task counts {}",
                self.part.count
            ));
        }
        crate::wire::token::decode(&string(job, "lanes")).map_err(|reason| Error::JobMismatch {
            job: self.job.clone(),
            reason: format!("its lanes do not read: {reason}"),
        })
    }

    /// Takes the part, in a transaction: a pending or failed one, one whose holder last wrote
    /// longer ago than the lease, or one an earlier attempt of this very task holds.
    async fn acquire(&self, state: &State, owner: &str) -> Result<Acquired> {
        let index = self.part.index;
        loop {
            let transaction = state.datastore.begin().await?;
            let attempt = async {
                let (found, read_time) = state
                    .read(vec![state.part_key(index)], Some(transaction.id().to_vec()))
                    .await?;
                let found = found.into_iter().next().ok_or_else(|| Error::JobMismatch {
                    job: self.job.clone(),
                    reason: format!(
                        "it has no part {index}: its parts were written when it started"
                    ),
                })?;
                let status = part_status(index, &found, read_time.as_ref())?;
                let mut record = PartRecord::read(&found.entity);
                let age = status.last_write_age.unwrap_or(Duration::MAX);
                match record.phase {
                    StoredPhase::Done => return Ok(Acquired::Done(status)),
                    StoredPhase::Running
                        if age < self.lease_timeout
                            && !record
                                .holder
                                .as_ref()
                                .is_some_and(|holder| self.part.supersedes(holder)) =>
                    {
                        let left = self.lease_timeout - age;
                        return Ok(Acquired::Elsewhere(status, left));
                    }
                    _ => {}
                }
                record.phase = StoredPhase::Running;
                record.holder = Some(self.part.holder());
                record.owner = owner.to_owned();
                record.error = None;
                transaction
                    .commit_mutations(vec![upsert(record.entity(state))])
                    .await?;
                Ok(Acquired::Held(Held {
                    checkpoint: record.checkpoint,
                    counts: record.counts,
                }))
            };
            match attempt.await {
                Ok(Acquired::Held(held)) => return Ok(Acquired::Held(held)),
                Ok(other) => {
                    transaction.abandon().await;
                    return Ok(other);
                }
                Err(Error::Datastore { code, .. }) if crate::wire::retry::retries_request(code) => {
                    transaction.abandon().await;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(other) => {
                    transaction.abandon().await;
                    return Err(other);
                }
            }
        }
    }
}

enum Acquired {
    Held(Held),
    Done(MigrationPartStatus),
    /// Held by a live attempt: how long until its lease runs out.
    Elsewhere(MigrationPartStatus, Duration),
}

/// This attempt's hold on its part: where the part stood when taken.
struct Held {
    checkpoint: Option<String>,
    counts: Counts,
}

/// A part's counts, over every attempt's stored progress.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    copied: u64,
    already_there: u64,
    vanished: u64,
    left_behind: u64,
    commits: u64,
}

impl Counts {
    /// These counts with an attempt's progress added.
    fn plus(self, done: &MigrationProgress) -> Counts {
        Counts {
            copied: self.copied + done.copied as u64,
            already_there: self.already_there + done.already_there as u64,
            vanished: self.vanished + done.vanished as u64,
            left_behind: self.left_behind + done.left_behind_total as u64,
            commits: self.commits + done.commits as u64,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoredPhase {
    Pending,
    Running,
    Done,
    Failed,
}

impl StoredPhase {
    fn name(self) -> &'static str {
        match self {
            StoredPhase::Pending => "pending",
            StoredPhase::Running => "running",
            StoredPhase::Done => "done",
            StoredPhase::Failed => "failed",
        }
    }

    fn of(name: &str) -> StoredPhase {
        match name {
            "running" => StoredPhase::Running,
            "done" => StoredPhase::Done,
            "failed" => StoredPhase::Failed,
            _ => StoredPhase::Pending,
        }
    }
}

/// A part's state entity.
struct PartRecord {
    index: u32,
    phase: StoredPhase,
    holder: Option<Holder>,
    /// The token of the attempt holding it: what each of its writes checks.
    owner: String,
    checkpoint: Option<String>,
    counts: Counts,
    error: Option<String>,
}

impl PartRecord {
    fn pending(index: u32) -> PartRecord {
        PartRecord {
            index,
            phase: StoredPhase::Pending,
            holder: None,
            owner: String::new(),
            checkpoint: None,
            counts: Counts::default(),
            error: None,
        }
    }

    fn read(entity: &ds::Entity) -> PartRecord {
        let optional = |name: &str| Some(string(entity, name)).filter(|s| !s.is_empty());
        PartRecord {
            index: part_index(entity),
            phase: StoredPhase::of(&string(entity, "phase")),
            holder: optional("holder").and_then(|json| serde_json::from_str(&json).ok()),
            owner: string(entity, "owner"),
            checkpoint: optional("checkpoint"),
            counts: Counts {
                copied: integer(entity, "copied") as u64,
                already_there: integer(entity, "already_there") as u64,
                vanished: integer(entity, "vanished") as u64,
                left_behind: integer(entity, "left_behind") as u64,
                commits: integer(entity, "commits") as u64,
            },
            error: optional("error"),
        }
    }

    fn entity(&self, state: &State) -> ds::Entity {
        let holder = self
            .holder
            .as_ref()
            .map(|holder| serde_json::to_string(holder).unwrap_or_default())
            .unwrap_or_default();
        let count = |n: u64| number(i64::try_from(n).unwrap_or(i64::MAX));
        ds::Entity {
            key: Some(state.part_key(self.index)),
            properties: HashMap::from([
                ("index".into(), number(i64::from(self.index))),
                ("phase".into(), text(self.phase.name())),
                ("holder".into(), unindexed(text(&holder))),
                ("owner".into(), unindexed(text(&self.owner))),
                (
                    "checkpoint".into(),
                    unindexed(text(self.checkpoint.as_deref().unwrap_or_default())),
                ),
                ("copied".into(), count(self.counts.copied)),
                ("already_there".into(), count(self.counts.already_there)),
                ("vanished".into(), count(self.counts.vanished)),
                ("left_behind".into(), count(self.counts.left_behind)),
                ("commits".into(), count(self.counts.commits)),
                (
                    "error".into(),
                    unindexed(text(self.error.as_deref().unwrap_or_default())),
                ),
            ]),
        }
    }
}

/// Where a job's state lives: the kind's database and namespace.
struct State {
    datastore: Datastore,
    job: String,
}

/// A state entity read, with when it was last written.
struct Found {
    entity: ds::Entity,
    update_time: Option<Timestamp>,
}

impl State {
    fn of(datastore: &Datastore, job: &str) -> Result<State> {
        crate::model::document_id::check_document_id(job).map_err(|_| Error::InvalidOptions {
            option: "job",
            expected: "a job id that is a document id (not empty, no `/`, not `__…__`)",
        })?;
        Ok(State {
            datastore: datastore.clone(),
            job: job.to_owned(),
        })
    }

    fn job_key(&self) -> ds::Key {
        ds::Key {
            partition_id: Some(self.datastore.partition.clone()),
            path: vec![ds::key::PathElement {
                kind: JOB_KIND.into(),
                id_type: Some(IdType::Name(self.job.clone())),
            }],
        }
    }

    fn part_key(&self, index: u32) -> ds::Key {
        let mut key = self.job_key();
        key.path.push(ds::key::PathElement {
            kind: PART_KIND.into(),
            id_type: Some(IdType::Name(format!("part-{index}"))),
        });
        key
    }

    /// The entities at `keys` that exist, with their last write; and the read's time.
    async fn read(
        &self,
        keys: Vec<ds::Key>,
        transaction: Option<Vec<u8>>,
    ) -> Result<(Vec<Found>, Option<Timestamp>)> {
        use ds::read_options::ConsistencyType;
        let answer = self
            .datastore
            .lookup(keys, transaction.map(ConsistencyType::Transaction))
            .await?;
        if !answer.deferred.is_empty() {
            return Err(Error::UnexpectedAnswer(
                "a job state lookup deferred keys".into(),
            ));
        }
        let found = answer
            .found
            .into_iter()
            .filter_map(|result| {
                Some(Found {
                    entity: result.entity?,
                    update_time: result.update_time,
                })
            })
            .collect();
        Ok((found, answer.read_time))
    }

    /// Changes part `index` by `change` in a transaction, while `owner` holds it:
    /// [`Error::JobLeaseLost`] when another attempt has taken it over.
    async fn write_part(
        &self,
        index: u32,
        owner: &str,
        part: &TaskPart,
        change: impl Fn(&mut PartRecord),
    ) -> Result<()> {
        let backoff = crate::write::bulk::Backoff::default();
        crate::datastore::retried(&backoff, "migration job state", || async {
            let transaction = self.datastore.begin().await?;
            let attempt = async {
                let (found, _) = self
                    .read(vec![self.part_key(index)], Some(transaction.id().to_vec()))
                    .await?;
                let mut record = match found.into_iter().next() {
                    Some(found) => PartRecord::read(&found.entity),
                    None => PartRecord::pending(index),
                };
                if record.owner != owner {
                    return Err(Error::JobLeaseLost {
                        job: self.job.clone(),
                        part: part.index,
                    });
                }
                change(&mut record);
                transaction
                    .commit_mutations(vec![upsert(record.entity(self))])
                    .await
            };
            let outcome = attempt.await;
            if outcome.is_err() {
                transaction.abandon().await;
            }
            outcome
        })
        .await
    }
}

fn part_status(
    index: u32,
    found: &Found,
    read_time: Option<&Timestamp>,
) -> Result<MigrationPartStatus> {
    let record = PartRecord::read(&found.entity);
    let age = match (found.update_time.as_ref(), read_time) {
        (Some(written), Some(read)) => {
            let nanos = (i128::from(read.seconds) - i128::from(written.seconds)) * 1_000_000_000
                + i128::from(read.nanos - written.nanos);
            Some(Duration::from_nanos(
                u64::try_from(nanos.max(0)).unwrap_or(u64::MAX),
            ))
        }
        _ => None,
    };
    Ok(MigrationPartStatus {
        index,
        phase: match record.phase {
            StoredPhase::Pending => PartPhase::Pending,
            StoredPhase::Running if age.is_none_or(|age| age < DEFAULT_LEASE) => PartPhase::Running,
            StoredPhase::Running => PartPhase::Stale,
            StoredPhase::Done => PartPhase::Done,
            StoredPhase::Failed => PartPhase::Failed,
        },
        attempt: record.holder.as_ref().map_or(0, |holder| holder.attempt),
        copied: record.counts.copied,
        already_there: record.counts.already_there,
        vanished: record.counts.vanished,
        left_behind: record.counts.left_behind,
        commits: record.counts.commits,
        last_write_age: age,
        error: record.error,
    })
}

fn part_index(entity: &ds::Entity) -> u32 {
    u32::try_from(integer(entity, "index")).unwrap_or(u32::MAX)
}

fn string(entity: &ds::Entity, name: &str) -> String {
    match entity
        .properties
        .get(name)
        .and_then(|v| v.value_type.as_ref())
    {
        Some(ds::value::ValueType::StringValue(s)) => s.clone(),
        _ => String::new(),
    }
}

fn integer(entity: &ds::Entity, name: &str) -> i64 {
    match entity
        .properties
        .get(name)
        .and_then(|v| v.value_type.as_ref())
    {
        Some(ds::value::ValueType::IntegerValue(n)) => *n,
        _ => 0,
    }
}

fn text(value: &str) -> ds::Value {
    ds::Value {
        value_type: Some(ds::value::ValueType::StringValue(value.to_owned())),
        ..Default::default()
    }
}

fn number(value: i64) -> ds::Value {
    ds::Value {
        value_type: Some(ds::value::ValueType::IntegerValue(value)),
        ..Default::default()
    }
}

fn unindexed(mut value: ds::Value) -> ds::Value {
    value.exclude_from_indexes = true;
    value
}

fn insert(entity: ds::Entity) -> ds::Mutation {
    ds::Mutation {
        operation: Some(ds::mutation::Operation::Insert(entity)),
        ..Default::default()
    }
}

fn upsert(entity: ds::Entity) -> ds::Mutation {
    ds::Mutation {
        operation: Some(ds::mutation::Operation::Upsert(entity)),
        ..Default::default()
    }
}
