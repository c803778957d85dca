//! A sharded collection's writes and reads inside a Firestore transaction.

use firestore::FirestoreTransactionOps;
use firestore::gcloud_sdk::google::firestore::v1::Write;

use crate::error::{Error, Result};
use crate::model::fields::Field;
use crate::model::handle::InTransaction;
use crate::model::sharded::Sharded;
use crate::write::firestore_write::{Existing, transform_only, transformed_write};
use crate::write::transform::Transform;

use super::{Built, delete, set, set_fields};

impl<T: Sharded> InTransaction<'_, '_, T> {
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
    /// [`ShardedCollection::update_fields`](crate::ShardedCollection::update_fields).
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
    /// [`ShardedCollection::transform`](crate::ShardedCollection::transform).
    pub fn transform(&mut self, id: &str, transforms: &[Transform<T>]) -> Result<()> {
        let name = self.scope.document_name::<T>(&self.db, id)?;
        self.queue(transform_only::<T>(&name, transforms)?)
    }

    /// Queues [`update_fields`](Self::update_fields) and [`transform`](Self::transform) as
    /// one write. See [`ShardedCollection::update_fields_and_transform`](crate::ShardedCollection::update_fields_and_transform).
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
        increment: &crate::write::increment::Increment<T>,
    ) -> Result<bool> {
        let document = self.scope.document_name::<T>(&self.db, id)?;
        let placed = increment.placed(document)?;
        let marker: Option<firestore::FirestoreDocument> = self
            .db
            .fluent()
            .select()
            .by_id_in(crate::model::counter_field::INCREMENTS_COLLECTION)
            .parent(placed.document.as_str())
            .one(placed.id.as_str())
            .await?;
        if let Some(marker) = marker {
            let recorded = crate::write::increment::Recorded::of(&marker);
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
            .map(crate::model::counter_field::shard_value)
            .transpose()?
            .unwrap_or(0);
        if value.checked_add(placed.amount).is_none() {
            return Err(placed.saturated());
        }
        let mut digest = crate::write::increment::CommitDigest::default();
        placed.digest_into(&mut digest);
        let expire_at = crate::wire::server_clock::now(&self.db).await?
            + crate::write::increment::MARKER_LIFETIME;
        for write in placed.writes(&digest.finish(), expire_at) {
            self.queue(write)?;
        }
        Ok(true)
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
