//! The adoption job: backfill and rebalance give every document of a collection a current
//! shard value, by a scan in document-name order that reads only the shard field and writes
//! only it (`backfill.rs`), then sweep what stale writers left behind the scan (`sweep.rs`);
//! `verify.rs` counts how the documents stand. `reads.rs` holds the job's reads,
//! `positions.rs` where the scan is and the bounds of its part.

mod backfill;
mod change;
mod collection;
mod group;
mod positions;
mod progress;
mod reads;
mod sweep;
mod verify;

use std::marker::PhantomData;

use firestore::FirestoreDb;

use crate::model::handle::Scope;
use crate::model::partition::IdRange;
use crate::model::sharded::Sharded;
use crate::write::bulk::{Backoff, BulkWriterOptions};
pub use change::BothNames;
pub(crate) use change::Change;

pub use crate::model::handle::ShardedCollectionGroup;
pub use progress::{Checkpoint, MAX_LISTED, Progress};
pub use verify::ShardCensus;

/// Gives every document of `T`'s collection whose shard value is missing or retired a
/// current one: the backfill of a collection written before it was sharded, and the
/// rebalance after its shard set changed (the same job).
///
/// - **Reads:** a scan in document-name order, a page at a time, with a projection of the
///   shard field alone: memory stays bounded by a page whatever the collection's size.
///   Every document scanned is one billed read.
/// - **Writes:** only the shard field (a field mask), through a [`BulkWriter`](crate::write::bulk::BulkWriter) that ramps up
///   as Firestore's best practices ask, each with the update time the scan saw as a
///   precondition: a document changed since it was read is never overwritten. It is read
///   again, and written only if it still needs a shard.
/// - **Behind the scan:** a rebalance then looks for documents that still hold a retired
///   value (a process still running the type before the change wrote them behind the scan)
///   and fixes them too, until none is left ([`Progress::swept`]); if they keep coming it
///   fails with [`Error::RetiredValuesStillWritten`](crate::error::Error::RetiredValuesStillWritten).
/// - **Resuming:** after each page, every document up to it is done; its [`Checkpoint`]
///   comes with the progress. A run started from it goes on from there, and a run over a
///   collection that is done changes nothing.
///
/// Run [`verify`](crate::model::handle::ShardedCollection::verify) afterwards.
pub struct ShardJob<'db, T> {
    pub(super) db: &'db FirestoreDb,
    pub(super) scope: Scope,
    pub(super) page_size: u32,
    pub(super) writer: BulkWriterOptions,
    pub(super) resume: Option<Checkpoint>,
    pub(super) ids: IdRange,
    pub(super) max_conflicts: u32,
    pub(super) scan_backoff: Backoff,
    /// Whether the run sweeps its range after its scan; a tracked job's parts leave it to
    /// the job's closing step, which sweeps once after every part.
    pub(super) sweep_after_scan: bool,
    /// What it changes in each document: the shard, or a field's stored name.
    pub(crate) change: Change,
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
            sweep_after_scan: true,
            change: Change::Shard,
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
    /// Over a collection group ([`Sharded::collection_group`](crate::model::sharded::Sharded::collection_group))
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
            page_size: page_size.clamp(1, crate::query::MAX_LIMIT),
            ..self
        }
    }

    /// For a rename ([`rename_field`](crate::model::handle::ShardedCollection::rename_field)): what to do
    /// with a document holding both names with different values. By default
    /// ([`BothNames::Leave`]) it is left as it is, counted and listed by id
    /// ([`Progress::both_names`]), and still counts as under the old name; a document whose
    /// two names hold the same value just loses the old one. No effect on other jobs.
    pub fn on_both_names(mut self, both: BothNames) -> Self {
        if let Change::Rename { both: decided, .. } = &mut self.change {
            *decided = both;
        }
        self
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
}
