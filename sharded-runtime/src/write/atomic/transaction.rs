//! A sharded collection's writes and reads inside a Firestore transaction.

use firestore::gcloud_sdk::google::firestore::v1::Write;
use firestore::{
    FirestoreConsistencySelector, FirestoreDb, FirestoreTransaction, FirestoreTransactionOps,
};

use crate::error::{Error, Result};
use crate::model::fields::Field;
use crate::model::parent::Scope;
use crate::model::sharded::Sharded;
use crate::model::stored::Stored;
use crate::write::collection::ShardedCollection;
use crate::write::firestore_write::{Existing, OrderStamp, transform_only, transformed_write};
use crate::write::transform::Transform;

use super::{Built, delete, set, set_fields};

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
    pub async fn get_many<I, S>(&self, ids: I) -> Result<crate::query::get_many::Many<T>>
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
    /// the transaction reads the increment's marker (one read) and, when it is absent, the
    /// shard document drawn for it (one read), and queues the shard's addition and the
    /// marker's creation, which commit with the transaction. Returns whether it queued them.
    ///
    /// So a transaction that landed and is run again (the firestore crate's `run_transaction`
    /// runs it again when a commit's answer is lost) counts the increment once and succeeds,
    /// provided the `Increment` is made once, outside the function the transaction runs, so
    /// that every run applies the same one. The reads also hold the marker's absence and the
    /// shard's value until the commit: an application of the same increment elsewhere
    /// meanwhile makes the transaction run again. The id applied before with another counter
    /// or amount is [`Error::IncrementConflict`](crate::error::Error::IncrementConflict); an
    /// addition that would take the shard past the end of Firestore's integers is
    /// [`Error::CounterSaturated`](crate::error::Error::CounterSaturated); with either, nothing is
    /// queued.
    pub async fn increment(
        &mut self,
        id: &str,
        increment: &crate::counter::Increment<T>,
    ) -> Result<bool> {
        let document = self.scope.document_name::<T>(&self.db, id)?;
        let placed = increment.placed(document)?;
        let marker: Option<firestore::FirestoreDocument> = self
            .db
            .fluent()
            .select()
            .by_id_in(crate::counter::INCREMENTS_COLLECTION)
            .parent(placed.document.as_str())
            .one(placed.id.as_str())
            .await?;
        if let Some(marker) = marker {
            let recorded = crate::counter::Recorded::of(&marker);
            return match recorded.is_of(&placed) {
                true => Ok(false),
                false => Err(recorded.conflict(&placed)),
            };
        }
        let collection = sharded_indexes::counter_collection_id(placed.field);
        let shard: Option<firestore::FirestoreDocument> = self
            .db
            .fluent()
            .select()
            .by_id_in(collection.as_str())
            .parent(placed.document.as_str())
            .one(placed.shard.to_string())
            .await?;
        let value = shard
            .as_ref()
            .map(crate::counter::shard_value)
            .transpose()?
            .unwrap_or(0);
        if value.checked_add(placed.amount).is_none() {
            return Err(placed.saturated());
        }
        let mut digest = crate::counter::CommitDigest::default();
        placed.digest_into(&mut digest);
        let expire_at =
            crate::wire::server_clock::now(&self.db).await? + crate::counter::MARKER_LIFETIME;
        for write in placed.writes(&digest.finish(), expire_at) {
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
        Error::Firestore(error) => crate::wire::retry::transient(error),
        _ => false,
    };
    match transient {
        true => firestore::errors::BackoffError::transient(error),
        false => firestore::errors::BackoffError::permanent(error),
    }
}
