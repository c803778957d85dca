//! Writes committed together in one `Commit`, without a transaction: Firebase's `writeBatch`.

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::Write;

use crate::error::{Error, Result};
use crate::model::fields::Field;
use crate::model::handle::{Parent, Scope};
use crate::model::order_stamp::OrderStamp;
use crate::model::sharded::{Sharded, Subcollection, TopLevel};
use crate::write::firestore_write::{Existing, transform_only, transformed_write};
use crate::write::increment::{CommitDigest, IncrementCommit, Placed};
use crate::write::transform::Transform;

use super::{MAX_COMMIT_WRITES, delete, set, set_fields};

/// Writes to sharded collections (one type or several) committed together in one `Commit`,
/// without a transaction: all apply at one commit time, or none does, as Firebase's
/// `writeBatch`. Each write draws its shard and is checked as it is queued; at most
/// [`MAX_COMMIT_WRITES`] writes.
///
/// A subcollection type's writes go through [`in_parent`](Self::in_parent), into the same
/// commit; the batch's own writes take top-level types only ([`TopLevel`](crate::model::sharded::TopLevel)).
///
/// A commit whose answer is lost may have been applied: [`commit`](Self::commit) sends it once
/// and reports the error, as the Firebase SDKs do for a batch; a batch holding an increment
/// is sent again until answered (see [`increment`](Self::increment)).
#[derive(Debug)]
pub struct AtomicBatch<'db> {
    db: &'db FirestoreDb,
    /// What is queued, in order: writes, and increments (whose two writes are made at the
    /// commit, their markers recording its digest).
    entries: Vec<Entry>,
    /// The commit's digest, fed each entry as it is queued.
    digest: CommitDigest,
    stamp: OrderStamp,
}

/// One thing an [`AtomicBatch`] holds.
#[derive(Debug)]
enum Entry {
    Write(Write),
    Increment(Placed),
}

impl Entry {
    /// The writes it commits: an increment's are its marker and its shard's addition.
    fn writes(&self) -> usize {
        match self {
            Entry::Write(_) => 1,
            Entry::Increment(_) => 2,
        }
    }
}

impl<'db> AtomicBatch<'db> {
    /// An empty batch for `db`.
    pub fn new(db: &'db FirestoreDb) -> AtomicBatch<'db> {
        AtomicBatch {
            db,
            entries: Vec::new(),
            digest: CommitDigest::default(),
            stamp: OrderStamp::default(),
        }
    }

    /// How the batch's whole-document writes of a `server_timestamp` type set the order
    /// field: see [`OrderStamp`] (by default the server's time on `insert`, the stored time
    /// kept on `update`, and an `upsert` refused, since it cannot tell which it is).
    pub fn order_stamp(self, stamp: OrderStamp) -> Self {
        AtomicBatch { stamp, ..self }
    }

    /// Writes queued so far (an increment is two).
    pub fn len(&self) -> usize {
        self.entries.iter().map(Entry::writes).sum()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Queues a create-or-replace of the document `id` of `T`'s collection.
    pub fn upsert<T: TopLevel>(&mut self, id: &str, document: &T) -> Result<&mut Self> {
        self.queue::<T>(set(
            self.db,
            &Scope::Top,
            id,
            document,
            Existing::Any,
            self.stamp,
        ))
    }

    /// Queues the creation of the document `id`: the commit fails if it exists.
    pub fn insert<T: TopLevel>(&mut self, id: &str, document: &T) -> Result<&mut Self> {
        self.queue::<T>(set(
            self.db,
            &Scope::Top,
            id,
            document,
            Existing::Absent,
            self.stamp,
        ))
    }

    /// Queues a replacement of the document `id`: the commit fails if it does not exist.
    pub fn update<T: TopLevel>(&mut self, id: &str, document: &T) -> Result<&mut Self> {
        self.queue::<T>(set(
            self.db,
            &Scope::Top,
            id,
            document,
            Existing::Present,
            self.stamp,
        ))
    }

    /// Queues an update of `fields` of the document `id`, which keeps its shard and every
    /// other field: the commit fails if it does not exist.
    pub fn update_fields<T: TopLevel>(
        &mut self,
        id: &str,
        document: &T,
        fields: &[Field<T>],
    ) -> Result<&mut Self> {
        self.queue::<T>(set_fields(
            self.db,
            &Scope::Top,
            id,
            document,
            fields,
            self.stamp,
        ))
    }

    /// Queues server-side transforms of the document `id` of `T`'s collection, which keeps
    /// its shard and every other field: the commit fails if it does not exist.
    pub fn transform<T: TopLevel>(
        &mut self,
        id: &str,
        transforms: &[Transform<T>],
    ) -> Result<&mut Self> {
        let write = Scope::Top
            .document_name::<T>(self.db, id)
            .and_then(|name| transform_only::<T>(&name, transforms));
        self.queue::<T>(write)
    }

    /// Queues an update of `fields` and server-side transforms of other fields, as one write.
    pub fn update_fields_and_transform<T: TopLevel>(
        &mut self,
        id: &str,
        document: &T,
        fields: &[Field<T>],
        transforms: &[Transform<T>],
    ) -> Result<&mut Self> {
        let stamp = self.stamp;
        let write = Scope::Top
            .document_name::<T>(self.db, id)
            .and_then(|name| transformed_write::<T>(&name, document, fields, transforms, stamp));
        self.queue::<T>(write)
    }

    /// Queues a delete of the document `id` of `T`'s collection.
    pub fn delete<T: TopLevel>(&mut self, id: &str) -> Result<&mut Self> {
        self.queue::<T>(delete::<T>(self.db, &Scope::Top, id))
    }

    /// Queues `increment` to the counter of the document `id` of `T`'s collection (two
    /// writes: its shard's addition and its marker). A batch holding an increment is
    /// idempotent as a whole, so [`commit`](Self::commit) sends it again when an answer is
    /// lost, and a batch that landed before counts as committed: every write of it applies
    /// once. Its amount is checked as [`Increment::new`](crate::write::increment::Increment::new)
    /// checks it; the same increment id twice on one document is
    /// [`Error::InvalidUpdate`], nothing queued.
    pub fn increment<T: TopLevel>(
        &mut self,
        id: &str,
        increment: &crate::write::increment::Increment<T>,
    ) -> Result<&mut Self> {
        self.queue_increment(&Scope::Top, id, increment)
    }

    fn queue_increment<T: Sharded>(
        &mut self,
        scope: &Scope,
        id: &str,
        increment: &crate::write::increment::Increment<T>,
    ) -> Result<&mut Self> {
        let document = scope.document_name::<T>(self.db, id)?;
        if self.len() + 2 > MAX_COMMIT_WRITES {
            return Err(Error::InvalidUpdate(format!(
                "an atomic batch holds at most {MAX_COMMIT_WRITES} writes, and an increment is two"
            )));
        }
        let placed = increment.placed(document)?;
        let twice = self.entries.iter().any(|entry| match entry {
            Entry::Increment(queued) => queued.marker_name() == placed.marker_name(),
            Entry::Write(_) => false,
        });
        if twice {
            return Err(Error::InvalidUpdate(format!(
                "increment `{}` of `{}` is already in this batch: an id names one increment",
                placed.id, placed.document
            )));
        }
        placed.digest_into(&mut self.digest);
        self.entries.push(Entry::Increment(placed));
        Ok(self)
    }

    /// The writes of a subcollection type's documents under `parent`, queued into this
    /// batch (and committed with the rest of it).
    pub fn in_parent<'b, T: Subcollection>(
        &'b mut self,
        parent: &Parent<T>,
    ) -> AtomicBatchIn<'b, 'db, T> {
        AtomicBatchIn {
            batch: self,
            scope: Scope::under(parent),
            marker: std::marker::PhantomData,
        }
    }

    /// Queues a write of a document of `T`, whose shard field the digest leaves out.
    fn queue<T: Sharded>(&mut self, write: Result<Write>) -> Result<&mut Self> {
        let write = write?;
        if self.len() >= MAX_COMMIT_WRITES {
            return Err(Error::InvalidUpdate(format!(
                "an atomic batch holds at most {MAX_COMMIT_WRITES} writes"
            )));
        }
        self.digest.write(&write, Some(T::SHARD_FIELD));
        self.entries.push(Entry::Write(write));
        Ok(self)
    }

    /// Commits every queued write at once; the commit time. Sent once, unless the batch holds
    /// an increment: then it is sent again until answered, as
    /// [`ShardedCollection::apply`](crate::model::handle::ShardedCollection::apply) is. Refused for an
    /// increment's marker, it is settled by the markers: the very batch landed before when
    /// each of its markers records its digest (this batch sent again, or the same writes
    /// queued in a new batch), and it answers with the time it did; otherwise nothing of it
    /// was applied, and the error names why: [`Error::IncrementAlreadyApplied`] (an increment
    /// another commit applied, named; send the rest without it) or
    /// [`Error::IncrementConflict`] (an id applied with another counter or amount). An
    /// increment Firestore cut at the end of its integers is undone after the commit
    /// ([`Error::CounterSaturated`]; the batch's other writes landed).
    pub async fn commit(self) -> Result<std::time::SystemTime> {
        let first = self.entries.iter().find_map(|entry| match entry {
            Entry::Increment(placed) => Some(placed),
            Entry::Write(_) => None,
        });
        let Some(first) = first else {
            let writes = self
                .entries
                .into_iter()
                .filter_map(|entry| match entry {
                    Entry::Write(write) => Some(write),
                    Entry::Increment(_) => None,
                })
                .collect();
            let response = crate::write::firestore_write::commit(self.db, writes).await?;
            return Ok(response
                .commit_time
                .map(crate::wire::server_clock::system_time)
                .unwrap_or_else(std::time::SystemTime::now));
        };
        let expire_at = crate::write::increment::marker_expiry(self.db, first).await?;
        let mut writes = Vec::with_capacity(self.len());
        let digest = self.digest.finish();
        let mut increments = Vec::new();
        for entry in self.entries {
            match entry {
                Entry::Write(write) => writes.push(write),
                Entry::Increment(placed) => {
                    writes.extend(placed.writes(&digest, expire_at));
                    increments.push((placed, writes.len() - 1));
                }
            }
        }
        let commit = IncrementCommit {
            writes,
            increments,
            digest,
            alone: false,
        };
        crate::write::increment::commit_exactly_once(self.db, &commit).await
    }
}

/// An [`AtomicBatch`]'s writes under one parent document, for a subcollection type `T`
/// ([`AtomicBatch::in_parent`]); each is the top-level write of the same name.
#[derive(Debug)]
pub struct AtomicBatchIn<'b, 'db, T> {
    batch: &'b mut AtomicBatch<'db>,
    scope: Scope,
    marker: std::marker::PhantomData<fn() -> T>,
}

impl<T: Subcollection> AtomicBatchIn<'_, '_, T> {
    /// A whole-document write of `document` as `id` under the parent, stamped as the batch
    /// stamps.
    fn whole(&self, id: &str, document: &T, existing: Existing) -> Result<Write> {
        set(
            self.batch.db,
            &self.scope,
            id,
            document,
            existing,
            self.batch.stamp,
        )
    }

    /// [`AtomicBatch::upsert`] under the parent.
    pub fn upsert(&mut self, id: &str, document: &T) -> Result<&mut Self> {
        let write = self.whole(id, document, Existing::Any);
        self.queue(write)
    }

    /// [`AtomicBatch::insert`] under the parent.
    pub fn insert(&mut self, id: &str, document: &T) -> Result<&mut Self> {
        let write = self.whole(id, document, Existing::Absent);
        self.queue(write)
    }

    /// [`AtomicBatch::update`] under the parent.
    pub fn update(&mut self, id: &str, document: &T) -> Result<&mut Self> {
        let write = self.whole(id, document, Existing::Present);
        self.queue(write)
    }

    /// [`AtomicBatch::update_fields`] under the parent.
    pub fn update_fields(
        &mut self,
        id: &str,
        document: &T,
        fields: &[Field<T>],
    ) -> Result<&mut Self> {
        let stamp = self.batch.stamp;
        self.queue(set_fields(
            self.batch.db,
            &self.scope,
            id,
            document,
            fields,
            stamp,
        ))
    }

    /// [`AtomicBatch::transform`] under the parent.
    pub fn transform(&mut self, id: &str, transforms: &[Transform<T>]) -> Result<&mut Self> {
        let write = self
            .scope
            .document_name::<T>(self.batch.db, id)
            .and_then(|name| transform_only::<T>(&name, transforms));
        self.queue(write)
    }

    /// [`AtomicBatch::update_fields_and_transform`] under the parent.
    pub fn update_fields_and_transform(
        &mut self,
        id: &str,
        document: &T,
        fields: &[Field<T>],
        transforms: &[Transform<T>],
    ) -> Result<&mut Self> {
        let stamp = self.batch.stamp;
        let write = self
            .scope
            .document_name::<T>(self.batch.db, id)
            .and_then(|name| transformed_write::<T>(&name, document, fields, transforms, stamp));
        self.queue(write)
    }

    /// [`AtomicBatch::delete`] under the parent.
    pub fn delete(&mut self, id: &str) -> Result<&mut Self> {
        self.queue(delete::<T>(self.batch.db, &self.scope, id))
    }

    /// [`AtomicBatch::increment`] under the parent.
    pub fn increment(
        &mut self,
        id: &str,
        increment: &crate::write::increment::Increment<T>,
    ) -> Result<&mut Self> {
        let scope = self.scope.clone();
        self.batch.queue_increment(&scope, id, increment)?;
        Ok(self)
    }

    fn queue(&mut self, write: Result<Write>) -> Result<&mut Self> {
        self.batch.queue::<T>(write)?;
        Ok(self)
    }
}
