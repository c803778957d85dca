//! What a job reports: its progress after each page, and the checkpoint to resume from.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How far a [`ShardJob`](crate::job::shard_job::ShardJob) got: every document whose id sorts at or before
/// [`last_id`](Self::last_id) has a current shard value (or was deleted). Persist it (it is
/// `Serialize`, or keep [`last_id`](Self::last_id)) and pass it to
/// [`ShardJob::resume_from`](crate::job::shard_job::ShardJob::resume_from) to go on after an interruption.
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

/// What a [`ShardJob`](crate::job::shard_job::ShardJob) has done, reported after each page and returned at the end.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
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
    /// A rename's documents holding both names with different values, left as they are
    /// ([`BothNames::Leave`](crate::job::shard_job::BothNames::Leave)): for you to decide.
    pub both_names: u64,
    /// The ids of the first [`MAX_LISTED`] of them (their paths below the database root over
    /// a collection group).
    pub both_names_ids: Vec<String>,
    /// The collection's size when the job started (a count query), for the ETA; `None` if
    /// the job was resumed, since the count covers documents before the checkpoint too.
    pub total: Option<u64>,
    /// Time since this run started.
    pub elapsed: Duration,
    /// Where a resumed run would start; `None` until the first page is done.
    pub checkpoint: Option<Checkpoint>,
}

/// The most document ids a job's progress lists (of the documents it leaves for you): its
/// memory stays bounded whatever the collection.
pub const MAX_LISTED: usize = 100;

impl Progress {
    /// Notes `position`'s document as holding both names, left.
    pub(crate) fn left_with_both_names(&mut self, position: String) {
        self.both_names += 1;
        if self.both_names_ids.len() < MAX_LISTED {
            self.both_names_ids.push(position);
        }
    }

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
        Duration::try_from_secs_f64(left as f64 / rate)
            .ok()
            .filter(|_| rate > 0.0)
    }
}
