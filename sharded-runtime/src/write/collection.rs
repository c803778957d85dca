use std::marker::PhantomData;

use firestore::errors::FirestoreError;
use firestore::gcloud_sdk::google::firestore::v1::Write;
use firestore::{FirestoreBatch, FirestoreBatchWriter, FirestoreDb};

use crate::error::Result;
use crate::job::shard_job::{ShardCensus, ShardJob};
use crate::model::document_id::check_document_id;
use crate::model::fields::Field;
use crate::model::parent::{Parent, Scope};
use crate::model::sharded::Sharded;
use crate::model::stored::Stored;
use crate::write::firestore_write::{
    Existing, OrderStamp, Written, commit_one, merge, sharded_write, transform_only,
    transformed_write, upsert_stamped_on_create,
};
use crate::write::serialize::{masked, serialize};
use crate::write::transform::Transform;

/// Writes and reads of one sharded collection. Get one with
/// [`Sharded::collection`](crate::model::sharded::Sharded::collection).
///
/// Every write stores the document's fields plus the shard field, drawn uniformly at random
/// from the type's shard values as the document is serialized, so every write re-draws the
/// shard. Before anything is sent, each write checks its id (see [`check_document_id`]) and
/// that the serialized document holds the order field and every non-optional indexed path
/// ([`Error::FieldNotWritten`](crate::error::Error::FieldNotWritten) otherwise). Reads return the user's type.
///
/// Single writes are one `Commit` each and return what the server stored that the caller did
/// not send ([`Written`]): the update time and, for a `server_timestamp` type, the order
/// field's value (the struct's own value of it is not sent).
///
/// [`check_document_id`]: crate::model::document_id::check_document_id
pub struct ShardedCollection<'db, T> {
    db: &'db FirestoreDb,
    scope: Scope,
    stamp: OrderStamp,
    marker: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for ShardedCollection<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedCollection")
            .field("collection", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

impl<'db, T: Sharded> ShardedCollection<'db, T> {
    pub(crate) fn new(db: &'db FirestoreDb) -> Self {
        ShardedCollection {
            db,
            scope: Scope::Top,
            stamp: OrderStamp::default(),
            marker: PhantomData,
        }
    }

    pub(crate) fn under(db: &'db FirestoreDb, parent: &Parent<T>) -> Self {
        ShardedCollection {
            db,
            scope: Scope::under(parent),
            stamp: OrderStamp::default(),
            marker: PhantomData,
        }
    }

    pub(crate) fn scoped(db: &'db FirestoreDb, scope: Scope) -> Self {
        ShardedCollection {
            db,
            scope,
            stamp: OrderStamp::default(),
            marker: PhantomData,
        }
    }

    pub(crate) fn db(&self) -> &'db FirestoreDb {
        self.db
    }

    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    pub(crate) fn stamp(&self) -> OrderStamp {
        self.stamp
    }

    /// How this handle's whole-document writes of a `server_timestamp` type set the order
    /// field ([`OrderStamp`]): by default the server's time on create, the stored time kept
    /// on replace; [`OrderStamp::FromDocument`] writes the document's own value (an import
    /// of documents that have their times), [`OrderStamp::Always`] the server's time on
    /// every write. It applies to the handle's single writes, batch writes and
    /// transactions; nothing changes for another type.
    pub fn order_stamp(self, stamp: OrderStamp) -> Self {
        ShardedCollection { stamp, ..self }
    }

    /// The full path of the parent document (or the database root), checked against the
    /// type's `parent`.
    pub(crate) fn parent_path(&self) -> Result<String> {
        self.scope.check::<T>()?;
        Ok(self.scope.parent_path(self.db))
    }

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

    /// The document `id`, if it exists.
    pub async fn get(&self, id: &str) -> Result<Option<T>> {
        check_document_id(id)?;
        let parent = self.parent_path()?;
        Ok(self
            .db
            .fluent()
            .select()
            .by_id_in(T::COLLECTION)
            .parent(parent)
            .obj()
            .one(id)
            .await?)
    }

    /// The document `id` with its id and shard, if it exists.
    pub async fn get_stored(&self, id: &str) -> Result<Option<Stored<T>>> {
        check_document_id(id)?;
        let parent = self.parent_path()?;
        let document = self
            .db
            .fluent()
            .select()
            .by_id_in(T::COLLECTION)
            .parent(parent)
            .one(id)
            .await?;
        document.as_ref().map(Stored::from_document).transpose()
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

    /// The collection split into at most `parts` parts of about equal numbers of documents,
    /// for a partitioned job (`.backfill().ids(parts.ranges[i].clone())` in task `i`): by
    /// Firestore's `PartitionQuery`, at documents it picks, where the server has it; by equal
    /// shares of the id space ([`IdRange::part`](crate::job::partition::IdRange::part)) where it answers
    /// UNIMPLEMENTED, as the emulator does ([`Parts::by`](crate::job::balanced_parts::Parts::by) says which). The
    /// parts hold every id once; Firestore may find fewer points than asked in a small
    /// collection. Split once when the job starts and hand every task the same parts: a later
    /// split draws other points. [`Error::InvalidOptions`](crate::error::Error::InvalidOptions)
    /// unless `parts` is 1 to [`MAX_PARTS`](crate::job::partition::MAX_PARTS).
    pub async fn parts(&self, parts: u32) -> Result<crate::job::balanced_parts::Parts> {
        crate::job::balanced_parts::balanced_parts::<T>(self.db, &self.scope, parts).await
    }

    /// The backfill of a collection written before it was sharded: a job that gives every
    /// document without a current shard value one, writing nothing else. See [`ShardJob`]
    /// for what it reads and writes, and how it resumes.
    ///
    /// ```no_run
    /// # use serde::{Deserialize, Serialize};
    /// # use sharded_runtime::Sharded;
    /// # use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
    /// # #[derive(Serialize, Deserialize, Sharded)]
    /// # #[sharded(shards = 3, order_by = "timestamp")]
    /// # struct Instrument { #[sharded(index)] exchange: String, timestamp: FirestoreTimestamp }
    /// # async fn example(db: &FirestoreDb) -> sharded_runtime::Result<()> {
    /// let done = Instrument::collection(db)
    ///     .backfill()
    ///     .run(|progress| println!("{} of {:?} scanned", progress.scanned, progress.total))
    ///     .await?;
    /// assert_eq!(Instrument::collection(db).verify().await?.outstanding(), 0);
    /// # Ok(()) }
    /// ```
    ///
    /// [`ShardJob`]: crate::job::shard_job::ShardJob
    pub fn backfill(&self) -> ShardJob<'db, T> {
        ShardJob::new(self.db, self.scope.clone())
    }

    /// The rebalance after the shard set changed (`previous(...)` on the type): a job that
    /// moves every document whose shard value the current set retired into a current one.
    /// It is the same job as [`backfill`](Self::backfill), which also fixes documents with
    /// no shard at all; the name says what it is run for.
    pub fn rebalance(&self) -> ShardJob<'db, T> {
        ShardJob::new(self.db, self.scope.clone())
    }

    /// The job that moves a top-level field's stored name: every document that stores a
    /// value as `from` (the name before a `#[serde(rename)]` or a field's rename) gets it as
    /// `to` (a field of the type, `T::fields().venue`) and loses `from`, in one field-masked
    /// write with the scanned update time as its precondition: a document changed meanwhile
    /// is read again, never overwritten, and one whose `to` holds a value already (the type
    /// after the rename wrote it) keeps it and only loses `from`. A [`ShardJob`] like the
    /// backfill: progress (`updated`: documents renamed), checkpoints, parts
    /// ([`ids`](ShardJob::ids)) and [`tracked`](ShardJob::tracked) tasks. Until it is done,
    /// documents stored under `from` are missing from queries on `to`.
    ///
    /// [`Error::InvalidOptions`](crate::error::Error::InvalidOptions) unless both are top-level
    /// stored names, different, and neither the shard field.
    pub fn rename_field(&self, from: &str, to: Field<T>) -> Result<ShardJob<'db, T>> {
        let mut job = ShardJob::new(self.db, self.scope.clone());
        job.change = crate::job::shard_job::Change::rename::<T>(from, to.path())?;
        Ok(job)
    }

    /// Counts the documents by shard value: current, retired (by a `previous(...)` set) and
    /// missing. After a backfill or a rebalance, [`ShardCensus::outstanding`] should be 0.
    /// Costs one billed read per document (a scan with a projection of the shard field).
    pub async fn verify(&self) -> Result<ShardCensus> {
        ShardJob::<T>::new(self.db, self.scope.clone())
            .verify()
            .await
    }

    fn document_name(&self, id: &str) -> Result<String> {
        self.scope.document_name::<T>(self.db, id)
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
