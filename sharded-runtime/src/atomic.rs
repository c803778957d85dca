//! Sharded writes that land together or not at all: inside a Firestore transaction
//! ([`ShardedCollection::in_transaction`]), or as one atomic batch ([`AtomicBatch`]).
//!
//! Which API is which:
//! - [`AtomicBatch`] and a transaction are one `Commit`: every write applies, at one commit
//!   time, or none does (Firebase's `writeBatch` and `runTransaction`). At most 500 writes.
//! - [`ShardedCollection::upsert_in`] queues into the firestore crate's batch writers, which
//!   send `BatchWrite`: each write succeeds or fails on its own, each gets its own update time,
//!   and a listener can see part of a batch. So does [`BulkWriter`](crate::bulk::BulkWriter).
//!
//! Every write here draws its shard and is checked by the write guard as the document is
//! serialized, as the collection's own writes are; a write that fails the check is an error at
//! once, and nothing of it is queued.

use firestore::gcloud_sdk::google::firestore::v1::{Write, write::Operation};
use firestore::{
    FirestoreConsistencySelector, FirestoreDb, FirestoreTransaction, FirestoreTransactionOps,
};

use crate::bounds::{Subcollection, TopLevel};
use crate::parent::Scope;
use crate::transform::Transform;
use crate::write::{Existing, OrderStamp, sharded_write, transform_only, transformed_write};
use crate::{Error, Field, Parent, Result, Sharded, ShardedCollection, Stored};

/// Writes a `Commit` may hold.
pub const MAX_COMMIT_WRITES: usize = 500;

/// One sharded write as the `Commit` RPC takes it, to document `id` in `scope`.
fn set<T: Sharded>(
    db: &FirestoreDb,
    scope: &Scope,
    id: &str,
    document: &T,
    existing: Existing,
    stamp: OrderStamp,
) -> Result<Write> {
    let name = scope.document_name::<T>(db, id)?;
    let document = crate::serialize::serialize(document, &name)?;
    sharded_write::<T>(document, None, existing, stamp)
}

fn set_fields<T: Sharded>(
    db: &FirestoreDb,
    scope: &Scope,
    id: &str,
    document: &T,
    fields: &[Field<T>],
    stamp: OrderStamp,
) -> Result<Write> {
    let name = scope.document_name::<T>(db, id)?;
    let (document, mask) = crate::serialize::masked::<T>(&name, document, fields)?;
    let mask = mask.into_iter().map(str::to_owned).collect();
    sharded_write::<T>(document, Some(mask), Existing::Present, stamp)
}

fn delete<T: Sharded>(db: &FirestoreDb, scope: &Scope, id: &str) -> Result<Write> {
    let name = scope.document_name::<T>(db, id)?;
    Ok(Write {
        operation: Some(Operation::Delete(name)),
        ..Default::default()
    })
}

/// A write already built, queued on a transaction as it is.
pub(crate) struct Built(pub(crate) Write);

impl TryFrom<Built> for Write {
    type Error = firestore::errors::FirestoreError;

    fn try_from(built: Built) -> std::result::Result<Write, Self::Error> {
        Ok(built.0)
    }
}

/// A sharded collection's writes and reads inside one transaction: writes are queued on it
/// and commit with it (atomically, with its other writes); reads see its snapshot, and in a
/// read-write transaction lock what they read, so the firestore crate's `run_transaction`
/// retries the whole function when another transaction wrote it meanwhile.
///
/// ```no_run
/// # use serde::{Deserialize, Serialize};
/// # use futures::FutureExt;
/// # use sharded_runtime::Sharded;
/// # use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
/// # #[derive(Serialize, Deserialize, Sharded)]
/// # #[sharded(shards = 3, order_by = "timestamp")]
/// # struct Message { #[sharded(index)] room: String, text: String, timestamp: FirestoreTimestamp }
/// # async fn example(db: &FirestoreDb) -> Result<(), Box<dyn std::error::Error>> {
/// db.run_transaction(|db, transaction| {
///     async move {
///         let mut messages = Message::collection(&db).in_transaction(transaction);
///         // A sharded query at the transaction's snapshot (every chunk reads it).
///         let newest = Message::query().room("lobby").limit(1).fetch(messages.db()).await
///             .map_err(sharded_runtime::writes::transaction_error)?;
///         let text = format!("{} messages before", newest.len());
///         messages
///             .upsert("m1", &Message { room: "lobby".into(), text, timestamp: FirestoreTimestamp::now() })
///             .map_err(sharded_runtime::writes::transaction_error)?;
///         Ok::<_, sharded_runtime::writes::TransactionError>(())
///     }
///     .boxed()
/// })
/// .await?;
/// # Ok(()) }
/// ```
pub struct InTransaction<'t, 'db, T> {
    transaction: &'t mut FirestoreTransaction<'db>,
    db: FirestoreDb,
    scope: Scope,
    stamp: OrderStamp,
    marker: std::marker::PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for InTransaction<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InTransaction")
            .field("collection", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

impl<'db, T: Sharded> ShardedCollection<'db, T> {
    /// This collection's writes and reads inside `transaction`: see [`InTransaction`].
    pub fn in_transaction<'t, 'x>(
        &self,
        transaction: &'t mut FirestoreTransaction<'x>,
    ) -> InTransaction<'t, 'x, T> {
        let db = transaction.db().clone_with_consistency_selector(
            FirestoreConsistencySelector::Transaction(transaction.transaction_id().clone()),
        );
        InTransaction {
            transaction,
            db,
            scope: self.scope().clone(),
            stamp: self.stamp(),
            marker: std::marker::PhantomData,
        }
    }
}

impl<T: Sharded> InTransaction<'_, '_, T> {
    /// The client whose reads see the transaction's snapshot: pass it to a sharded query's
    /// `fetch`, `count` or `sum` to read inside the transaction.
    pub fn db(&self) -> &FirestoreDb {
        &self.db
    }

    /// The document `id` as the transaction sees it.
    pub async fn get(&self, id: &str) -> Result<Option<T>> {
        Ok(self.get_stored(id).await?.map(|stored| stored.document))
    }

    /// The document `id` with its id and shard, as the transaction sees it.
    pub async fn get_stored(&self, id: &str) -> Result<Option<Stored<T>>> {
        ShardedCollection::scoped(&self.db, self.scope.clone())
            .get_stored(id)
            .await
    }

    /// The documents `ids` as the transaction sees them, and the ids of those that do not
    /// exist; in a read-write transaction, each read locks its document as `get` does. See
    /// [`ShardedCollection::get_many`].
    pub async fn get_many<I, S>(&self, ids: I) -> Result<crate::Many<T>>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        ShardedCollection::scoped(&self.db, self.scope.clone())
            .get_many(ids)
            .await
    }

    /// Queues a create-or-replace of the document `id`.
    pub fn upsert(&mut self, id: &str, document: &T) -> Result<()> {
        let write = set(
            &self.db,
            &self.scope,
            id,
            document,
            Existing::Any,
            self.stamp,
        )?;
        self.queue(write)
    }

    /// Queues the creation of the document `id`: the commit fails if it exists.
    pub fn insert(&mut self, id: &str, document: &T) -> Result<()> {
        let write = set(
            &self.db,
            &self.scope,
            id,
            document,
            Existing::Absent,
            self.stamp,
        )?;
        self.queue(write)
    }

    /// Queues a replacement of the document `id`: the commit fails if it does not exist.
    pub fn update(&mut self, id: &str, document: &T) -> Result<()> {
        let write = set(
            &self.db,
            &self.scope,
            id,
            document,
            Existing::Present,
            self.stamp,
        )?;
        self.queue(write)
    }

    /// Queues an update of `fields` of the document `id`, which keeps its shard and every
    /// other field: the commit fails if it does not exist. See
    /// [`ShardedCollection::update_fields`].
    pub fn update_fields(&mut self, id: &str, document: &T, fields: &[Field<T>]) -> Result<()> {
        self.queue(set_fields(
            &self.db,
            &self.scope,
            id,
            document,
            fields,
            self.stamp,
        )?)
    }

    /// Queues server-side transforms of the document `id`, which keeps its shard and every
    /// other field: the commit fails if it does not exist. See
    /// [`ShardedCollection::transform`].
    pub fn transform(&mut self, id: &str, transforms: &[Transform<T>]) -> Result<()> {
        let name = self.scope.document_name::<T>(&self.db, id)?;
        self.queue(transform_only::<T>(&name, transforms)?)
    }

    /// Queues [`update_fields`](Self::update_fields) and [`transform`](Self::transform) as
    /// one write. See [`ShardedCollection::update_fields_and_transform`].
    pub fn update_fields_and_transform(
        &mut self,
        id: &str,
        document: &T,
        fields: &[Field<T>],
        transforms: &[Transform<T>],
    ) -> Result<()> {
        let name = self.scope.document_name::<T>(&self.db, id)?;
        self.queue(transformed_write::<T>(
            &name, document, fields, transforms, self.stamp,
        )?)
    }

    /// Queues a delete of the document `id` (deleting a missing document succeeds).
    pub fn delete(&mut self, id: &str) -> Result<()> {
        self.queue(delete::<T>(&self.db, &self.scope, id)?)
    }

    /// Queues `increment` to the counter of the document `id`, unless it was applied before:
    /// the transaction reads the increment's marker (one read) and, when it is absent, queues
    /// the shard's addition and the marker's creation, which commit with the transaction.
    /// Returns whether it queued them.
    ///
    /// So a transaction that landed and is run again (the firestore crate's `run_transaction`
    /// runs it again when a commit's answer is lost) counts the increment once and succeeds,
    /// provided the `Increment` is made once, outside the function the transaction runs, so
    /// that every run applies the same one. The read also holds the marker's absence until
    /// the commit: an application of the same increment elsewhere meanwhile makes the
    /// transaction run again.
    pub async fn increment(
        &mut self,
        id: &str,
        increment: &crate::counters::Increment<T>,
    ) -> Result<bool> {
        let document = self.scope.document_name::<T>(&self.db, id)?;
        let marker: Option<firestore::FirestoreDocument> = self
            .db
            .fluent()
            .select()
            .by_id_in(crate::counters::INCREMENTS_COLLECTION)
            .parent(document.as_str())
            .one(increment.id())
            .await?;
        if marker.is_some() {
            return Ok(false);
        }
        for write in increment.writes(&document) {
            self.queue(write)?;
        }
        Ok(true)
    }

    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    fn queue(&mut self, write: Write) -> Result<()> {
        self.transaction.add(Built(write))?;
        Ok(())
    }
}

/// The error a `run_transaction` function returns: transient ones run the transaction again.
pub type TransactionError = firestore::errors::BackoffError<Error>;

/// A sharded error as the error of a `run_transaction` function: transient (the transaction
/// runs again) when the failure is one a retry can cure, permanent otherwise.
pub fn transaction_error(error: Error) -> TransactionError {
    let transient = match &error {
        Error::Firestore(error) => crate::retry::transient(error),
        _ => false,
    };
    match transient {
        true => firestore::errors::BackoffError::transient(error),
        false => firestore::errors::BackoffError::permanent(error),
    }
}

/// Writes to sharded collections (one type or several) committed together in one `Commit`,
/// without a transaction: all apply at one commit time, or none does, as Firebase's
/// `writeBatch`. Each write draws its shard and is checked as it is queued; at most
/// [`MAX_COMMIT_WRITES`] writes.
///
/// A subcollection type's writes go through [`in_parent`](Self::in_parent), into the same
/// commit; the batch's own writes take top-level types only ([`TopLevel`](crate::bounds::TopLevel)).
///
/// A commit whose answer is lost may have been applied: [`commit`](Self::commit) sends it once
/// and reports the error, as the Firebase SDKs do for a batch.
#[derive(Debug)]
pub struct AtomicBatch<'db> {
    db: &'db FirestoreDb,
    writes: Vec<Write>,
    stamp: OrderStamp,
    /// The marker of the first increment queued: with one, the batch is sent again until it
    /// is answered, and counts once (see [`increment`](Self::increment)).
    marker: Option<String>,
}

impl<'db> AtomicBatch<'db> {
    /// An empty batch for `db`.
    pub fn new(db: &'db FirestoreDb) -> AtomicBatch<'db> {
        AtomicBatch {
            db,
            writes: Vec::new(),
            stamp: OrderStamp::default(),
            marker: None,
        }
    }

    /// How the batch's whole-document writes of a `server_timestamp` type set the order
    /// field: see [`OrderStamp`] (by default the server's time on `insert`, the stored time
    /// kept on `update`, and an `upsert` refused, since it cannot tell which it is).
    pub fn order_stamp(self, stamp: OrderStamp) -> Self {
        AtomicBatch { stamp, ..self }
    }

    /// Writes queued so far.
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Queues a create-or-replace of the document `id` of `T`'s collection.
    pub fn upsert<T: TopLevel>(&mut self, id: &str, document: &T) -> Result<&mut Self> {
        self.queue(set(
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
        self.queue(set(
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
        self.queue(set(
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
        self.queue(set_fields(
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
        self.queue(write)
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
        self.queue(write)
    }

    /// Queues a delete of the document `id` of `T`'s collection.
    pub fn delete<T: TopLevel>(&mut self, id: &str) -> Result<&mut Self> {
        self.queue(delete::<T>(self.db, &Scope::Top, id))
    }

    /// Queues `increment` to the counter of the document `id` of `T`'s collection (two
    /// writes: its shard's addition and its marker). A batch holding an increment is
    /// idempotent as a whole, so [`commit`](Self::commit) sends it again when an answer is
    /// lost, and a batch that landed before counts as committed: every write of it applies
    /// once.
    pub fn increment<T: TopLevel>(
        &mut self,
        id: &str,
        increment: &crate::counters::Increment<T>,
    ) -> Result<&mut Self> {
        self.queue_increment(&Scope::Top, id, increment)
    }

    fn queue_increment<T: Sharded>(
        &mut self,
        scope: &Scope,
        id: &str,
        increment: &crate::counters::Increment<T>,
    ) -> Result<&mut Self> {
        let document = scope.document_name::<T>(self.db, id)?;
        if self.writes.len() + 2 > MAX_COMMIT_WRITES {
            return Err(Error::InvalidUpdate(format!(
                "an atomic batch holds at most {MAX_COMMIT_WRITES} writes, and an increment is two"
            )));
        }
        self.writes.extend(increment.writes(&document));
        self.marker
            .get_or_insert_with(|| increment.marker_name(&document));
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

    fn queue(&mut self, write: Result<Write>) -> Result<&mut Self> {
        let write = write?;
        if self.writes.len() >= MAX_COMMIT_WRITES {
            return Err(Error::InvalidUpdate(format!(
                "an atomic batch holds at most {MAX_COMMIT_WRITES} writes"
            )));
        }
        self.writes.push(write);
        Ok(self)
    }

    /// Commits every queued write at once; the commit time. Sent once, unless the batch holds
    /// an increment: then it is sent again until answered, as
    /// [`ShardedCollection::apply`] is, and a batch that had landed answers with the time it
    /// did.
    pub async fn commit(self) -> Result<std::time::SystemTime> {
        if let Some(marker) = &self.marker {
            let writes = self.writes;
            return crate::counter::commit_exactly_once(self.db, marker, || writes.clone()).await;
        }
        let response = crate::write::commit(self.db, self.writes).await?;
        Ok(response
            .commit_time
            .map(crate::stored::system_time)
            .unwrap_or_else(std::time::SystemTime::now))
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
        increment: &crate::counters::Increment<T>,
    ) -> Result<&mut Self> {
        let scope = self.scope.clone();
        self.batch.queue_increment(&scope, id, increment)?;
        Ok(self)
    }

    fn queue(&mut self, write: Result<Write>) -> Result<&mut Self> {
        self.batch.queue(write)?;
        Ok(self)
    }
}
