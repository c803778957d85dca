//! A tracked job's state records as stored: the job's document, each part's, and what an
//! attempt that lost its part did; each checked when read, so that a corrupt one is a typed
//! error, never a panic.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::job::balanced_parts::SplitBy;
use crate::job::task_part::Holder;
use crate::model::partition::IdRange;

/// The job's document: what every task of it must agree on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct JobRecord {
    /// The collection id the job runs over.
    pub(crate) collection: String,
    /// Where: the parent document's path, `*` for the whole group, empty at the top.
    pub(crate) scope: String,
    /// How many parts the job was started with; each part's document, written with this
    /// one, holds its id range.
    pub(crate) parts: u32,
    pub(crate) split_by: SplitBy,
    /// The collection's size when the job started, for the whole job's ETA.
    pub(crate) total: u64,
    /// What the job changes ([`Change::describe`](crate::job::shard_job::Change::describe)):
    /// every task of a job makes the same change.
    pub(crate) change: String,
    /// For a rename, the stored name it moves documents from: what the status looks for
    /// after the closing step.
    #[serde(default)]
    pub(crate) renamed_from: Option<String>,
    /// The job's closing step, once every part is done: the sweep and the census, run once
    /// by the task that claims it.
    #[serde(default)]
    pub(crate) closing: Option<Closing>,
    /// While the job is being started: the task that claimed its start (the parts are not
    /// written yet). `None` once started.
    #[serde(default)]
    pub(crate) starting: Option<Starting>,
    /// Writes of this document so far, this one included.
    #[serde(default)]
    pub(crate) writes: u64,
}

/// The closing step's claim and outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Closing {
    /// The task running it: a random token of its own.
    pub(crate) owner: String,
    /// How many times it ran to its end (1 once done).
    pub(crate) runs: u32,
    /// Documents the sweep fixed.
    pub(crate) swept: u64,
    /// The census afterwards: documents still without a current shard value.
    pub(crate) outstanding: Option<u64>,
    /// The claiming task's lease, in seconds: how long it may go without a heartbeat.
    #[serde(default)]
    pub(crate) lease_seconds: f64,
    /// The claiming task's part and attempt, as its engine named them: a later attempt of
    /// that task takes the closing over at once.
    #[serde(default)]
    pub(crate) holder: Option<Holder>,
}

/// A task's claim on a job's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Starting {
    pub(crate) owner: String,
    /// How long it may take before another task takes the start over, in seconds.
    pub(crate) lease_seconds: f64,
    #[serde(default)]
    pub(crate) holder: Option<Holder>,
}

/// Where a part stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Phase {
    /// Written when the job started; no attempt has taken it.
    Pending,
    Running,
    Done,
    Failed,
}

/// A part's document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PartRecord {
    pub(crate) phase: Phase,
    /// The ids the part covers, fixed when the job started; `None` for a part past the
    /// split points Firestore found (a small collection), which has nothing to do.
    pub(crate) range: Option<IdRange>,
    /// The attempt holding the part, as its engine named it: a later attempt of the same
    /// task takes the part over at once.
    #[serde(default)]
    pub(crate) holder: Option<Holder>,
    /// Attempts so far, this one included.
    pub(crate) attempt: u32,
    /// The attempt holding the part: a random token of its own.
    pub(crate) owner: String,
    /// Every document of the part up to this id is done.
    pub(crate) checkpoint: Option<String>,
    pub(crate) scanned: u64,
    pub(crate) updated: u64,
    pub(crate) unchanged: u64,
    pub(crate) conflicts: u64,
    pub(crate) deleted: u64,
    pub(crate) swept: u64,
    /// A rename's documents holding both names with different values, left.
    #[serde(default)]
    pub(crate) both_names: u64,
    /// The first of them, by id.
    #[serde(default)]
    pub(crate) both_names_ids: Vec<String>,
    /// Seconds the part's attempts have run, up to the last heartbeat.
    pub(crate) seconds: f64,
    /// Documents scanned per second by the holding attempt, at its last heartbeat.
    pub(crate) rate: f64,
    /// Why the last attempt failed.
    pub(crate) error: Option<String>,
    /// The holding attempt's lease, in seconds: how long it may go without a heartbeat
    /// before another attempt takes the part over.
    #[serde(default)]
    pub(crate) lease_seconds: f64,
    /// Writes of this document so far, this one included: each is written on the
    /// precondition of the one before, so the count is exact.
    #[serde(default)]
    pub(crate) writes: u64,
}

/// A record of the job's state that counts its own writes.
pub(crate) trait Stored: Serialize + DeserializeOwned {
    fn writes(&mut self) -> &mut u64;

    /// Its durations and rates, by name, each of which a task writes finite and from 0.
    fn measures(&self) -> Vec<(&'static str, f64)>;
}

impl Stored for JobRecord {
    fn writes(&mut self) -> &mut u64 {
        &mut self.writes
    }

    fn measures(&self) -> Vec<(&'static str, f64)> {
        self.closing
            .iter()
            .map(|closing| ("closing.lease_seconds", closing.lease_seconds))
            .collect()
    }
}

impl PartRecord {
    /// Part `range`'s record as the job starts: pending, nothing counted.
    pub(crate) fn pending(range: Option<IdRange>) -> PartRecord {
        PartRecord {
            phase: Phase::Pending,
            range,
            holder: None,
            attempt: 0,
            owner: String::new(),
            checkpoint: None,
            scanned: 0,
            updated: 0,
            unchanged: 0,
            conflicts: 0,
            deleted: 0,
            swept: 0,
            both_names: 0,
            both_names_ids: Vec::new(),
            seconds: 0.0,
            rate: 0.0,
            error: None,
            lease_seconds: 0.0,
            writes: 0,
        }
    }
}

/// What an attempt did after its last stored heartbeat, stored when it learns that another
/// took its part over (its own record is the other's now): the documents it updated then
/// were updated, though the attempt that took over finds them done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LostRecord {
    pub(crate) part: u32,
    pub(crate) attempt: u32,
    pub(crate) scanned: u64,
    pub(crate) updated: u64,
    pub(crate) deleted: u64,
    pub(crate) swept: u64,
    #[serde(default)]
    pub(crate) writes: u64,
}

impl Stored for LostRecord {
    fn writes(&mut self) -> &mut u64 {
        &mut self.writes
    }

    fn measures(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

impl Stored for PartRecord {
    fn writes(&mut self) -> &mut u64 {
        &mut self.writes
    }

    fn measures(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("seconds", self.seconds),
            ("rate", self.rate),
            ("lease_seconds", self.lease_seconds),
        ]
    }
}

/// The longest duration a state document may hold, in seconds: a thousand years, far below
/// what a `Duration` holds, so that no stored value overflows one.
pub(crate) const MAX_STORED_SECONDS: f64 = 1000.0 * 365.25 * 86_400.0;
