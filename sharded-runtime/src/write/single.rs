//! Single writes on a [`ShardedCollection`]: one `Commit` each, the document serialized with
//! its shard and checked by the write guard first.

use firestore::errors::FirestoreError;
use firestore::gcloud_sdk::google::firestore::v1::Write;
use firestore::{FirestoreBatch, FirestoreBatchWriter};

use crate::error::Result;
use crate::model::document_id::check_document_id;
use crate::model::fields::Field;
use crate::model::handle::ShardedCollection;
use crate::model::order_stamp::OrderStamp;
use crate::model::sharded::Sharded;
use crate::write::firestore_write::{
    Existing, Written, commit_one, merge, sharded_write, transform_only, transformed_write,
    upsert_stamped_on_create,
};
use crate::write::serialize::{masked, serialize};
use crate::write::transform::Transform;

impl<'db, T: Sharded> ShardedCollection<'db, T> {
    /// Creates a document under a new random id, drawn as Firestore's own clients draw them
    /// (20 letters and digits, which spread over the document-name index); the write fails
    /// if the id exists, which is as likely as guessing 119 random bits. What it stored that
    /// it did not send is [`Written`]: the id among it.
    pub async fn insert(&self, document: &T) -> Result<Written<T>> {
        let id = crate::model::document_id::generate_document_id();
        self.write(&id, document, Existing::Absent).await
    }

    /// Creates the document `id`; fails if it exists.
    pub async fn insert_with_id(&self, id: &str, document: &T) -> Result<Written<T>> {
        self.write(id, document, Existing::Absent).await
    }

    /// Creates or replaces the document `id`.
    pub async fn upsert(&self, id: &str, document: &T) -> Result<Written<T>> {
        self.write(id, document, Existing::Any).await
    }

    /// Replaces the existing document `id`; fails if it does not exist. The shard is drawn
    /// anew; [`update_fields`](Self::update_fields) keeps it.
    pub async fn update(&self, id: &str, document: &T) -> Result<Written<T>> {
        self.write(id, document, Existing::Present).await
    }

    /// Updates only `fields` of the existing document `id`, from `document`: a field-masked
    /// write that leaves every other stored field as it is, the shard among them, so the
    /// document keeps its shard (every other write draws a new one). Fails if the document
    /// does not exist, since creating it this way would store it without a shard.
    ///
    /// ```no_run
    /// # use serde::{Deserialize, Serialize};
    /// # use sharded_runtime::Sharded;
    /// # use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
    /// # #[derive(Serialize, Deserialize, Sharded)]
    /// # #[sharded(shards = 3, order_by = "timestamp")]
    /// # struct Instrument { #[sharded(index)] exchange: String, price_micros: i64, timestamp: FirestoreTimestamp }
    /// # async fn example(db: &FirestoreDb, instrument: &Instrument) -> sharded_runtime::Result<()> {
    /// let fields = Instrument::fields();
    /// Instrument::collection(db)
    ///     .update_fields("aaa", instrument, &[fields.price_micros, fields.timestamp])
    ///     .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// A masked field that `document` does not store is deleted, as Firestore does; for the
    /// order field or an indexed path that would drop the document out of sharded queries, so
    /// it is [`Error::FieldNotWritten`](crate::error::Error::FieldNotWritten) instead, with nothing sent. For a `server_timestamp`
    /// type, masking the order field sets it to the server's time; leaving it out keeps the
    /// stored one.
    pub async fn update_fields(
        &self,
        id: &str,
        document: &T,
        fields: &[Field<T>],
    ) -> Result<Written<T>> {
        let (document, mask) = masked::<T>(&self.document_name(id)?, document, fields)?;
        let mask = mask.into_iter().map(str::to_owned).collect();
        let write = sharded_write::<T>(document, Some(mask), Existing::Present, self.stamp)?;
        commit_one(self.db, write).await
    }

    /// Firestore's `set(..., merge)` for a typed document: where the document `id` exists,
    /// writes only `fields` from `document` and keeps every other stored field, the shard
    /// among them (as [`update_fields`](Self::update_fields)); where it does not, creates it
    /// whole from `document` with a shard drawn (as [`insert_with_id`](Self::insert_with_id)).
    /// A merge that wrote only `fields` to a new document would store it without its shard
    /// or its order field, and no sharded query would return it.
    ///
    /// One request when the document exists, two when it does not (the update is refused with
    /// `NOT_FOUND`, then the create goes): no read, and each step is safe to send again. A
    /// document created or deleted between the two is written by the other step after all.
    /// A document stored without a shard (legacy data) keeps having none, as with
    /// `update_fields`: [`backfill`](Self::backfill) gives it one.
    ///
    /// ```no_run
    /// # use serde::{Deserialize, Serialize};
    /// # use sharded_runtime::Sharded;
    /// # use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
    /// # #[derive(Serialize, Deserialize, Sharded)]
    /// # #[sharded(shards = 3, order_by = "timestamp")]
    /// # struct Instrument { #[sharded(index)] exchange: String, price_micros: i64, timestamp: FirestoreTimestamp }
    /// # async fn example(db: &FirestoreDb, instrument: &Instrument) -> sharded_runtime::Result<()> {
    /// let fields = Instrument::fields();
    /// Instrument::collection(db)
    ///     .merge_fields("aaa", instrument, &[fields.price_micros])
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn merge_fields(
        &self,
        id: &str,
        document: &T,
        fields: &[Field<T>],
    ) -> Result<Written<T>> {
        let name = self.document_name(id)?;
        let (masked_document, mask) = masked::<T>(&name, document, fields)?;
        let mask: Vec<String> = mask.into_iter().map(str::to_owned).collect();
        let whole = serialize(document, &name)?;
        merge::<T>(self.db, masked_document, mask, whole, self.stamp).await
    }

    /// Transforms fields of the existing document `id` on the server, atomically, leaving
    /// every other stored field as it is, the shard among them: counters that concurrent
    /// writers all count, high-water marks, tag sets, last-seen times. Fails if the document
    /// does not exist (creating it this way would store it without a shard). Each field is
    /// transformed at most once per write; nothing is sent when a transform is refused.
    ///
    /// ```no_run
    /// # use serde::{Deserialize, Serialize};
    /// # use sharded_runtime::Sharded;
    /// # use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
    /// # #[derive(Serialize, Deserialize, Sharded)]
    /// # #[sharded(shards = 3, order_by = "timestamp")]
    /// # struct Post { #[sharded(contains)] tags: Vec<String>, likes: i64, timestamp: FirestoreTimestamp }
    /// # async fn example(db: &FirestoreDb) -> sharded_runtime::Result<()> {
    /// let post = Post::transforms();
    /// Post::collection(db)
    ///     .transform("p1", &[post.likes.increment(1), post.tags.array_union(["rust".to_owned()])])
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub async fn transform(&self, id: &str, transforms: &[Transform<T>]) -> Result<Written<T>> {
        let write = transform_only::<T>(&self.document_name(id)?, transforms)?;
        commit_one(self.db, write).await
    }

    /// [`update_fields`](Self::update_fields) and [`transform`](Self::transform) in one
    /// write: `fields` from `document`, then `transforms` on other fields (a field both written
    /// and transformed is [`Error::InvalidUpdate`](crate::error::Error::InvalidUpdate), as Firestore refuses it).
    pub async fn update_fields_and_transform(
        &self,
        id: &str,
        document: &T,
        fields: &[Field<T>],
        transforms: &[Transform<T>],
    ) -> Result<Written<T>> {
        let write = transformed_write::<T>(
            &self.document_name(id)?,
            document,
            fields,
            transforms,
            self.stamp,
        )?;
        commit_one(self.db, write).await
    }

    /// One whole-document write, committed alone.
    async fn write(&self, id: &str, document: &T, existing: Existing) -> Result<Written<T>> {
        let name = self.document_name(id)?;
        let document = serialize(document, &name)?;
        if T::DESCRIPTION.server_timestamp
            && self.stamp == OrderStamp::OnCreate
            && matches!(existing, Existing::Any)
        {
            return upsert_stamped_on_create(self.db, document).await;
        }
        let write = sharded_write::<T>(document, None, existing, self.stamp)?;
        commit_one(self.db, write).await
    }

    /// Queues a create-or-replace of the document `id` in `batch` (a Firestore batch write
    /// cannot create documents with generated ids). The shard is drawn and the document
    /// checked now; on an error nothing is queued.
    pub fn upsert_in<W: FirestoreBatchWriter>(
        &self,
        batch: &mut FirestoreBatch<'_, W>,
        id: &str,
        document: &T,
    ) -> Result<()> {
        let document = serialize(document, &self.document_name(id)?)?;
        batch.add(Upsert(sharded_write::<T>(
            document,
            None,
            Existing::Any,
            self.stamp,
        )?))?;
        Ok(())
    }

    /// Deletes the document `id`; deleting a missing document succeeds.
    pub async fn delete(&self, id: &str) -> Result<()> {
        check_document_id(id)?;
        let parent = self.parent_path()?;
        self.db
            .fluent()
            .delete()
            .from(T::COLLECTION)
            .document_id(id)
            .parent(parent)
            .execute()
            .await?;
        Ok(())
    }
}

/// A serialized, checked document queued as a batch upsert.
struct Upsert(Write);

impl TryInto<Write> for Upsert {
    type Error = FirestoreError;

    fn try_into(self) -> std::result::Result<Write, FirestoreError> {
        Ok(self.0)
    }
}
