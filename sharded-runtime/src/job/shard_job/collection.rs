//! The jobs over one collection, from its [`ShardedCollection`]: its parts, the backfill,
//! the rebalance, a field's rename, and the census of its shard values.

use super::{ShardCensus, ShardJob};
use crate::error::Result;
use crate::model::fields::Field;
use crate::model::handle::ShardedCollection;
use crate::model::sharded::Sharded;

impl<'db, T: Sharded> ShardedCollection<'db, T> {
    /// The collection split into at most `parts` parts of about equal numbers of documents,
    /// for a partitioned job (`.backfill().ids(parts.ranges[i].clone())` in task `i`): by
    /// Firestore's `PartitionQuery`, at documents it picks, where the server has it; by equal
    /// shares of the id space ([`IdRange::part`](crate::model::partition::IdRange::part)) where it answers
    /// UNIMPLEMENTED, as the emulator does ([`Parts::by`](crate::job::balanced_parts::Parts::by) says which). The
    /// parts hold every id once; Firestore may find fewer points than asked in a small
    /// collection. Split once when the job starts and hand every task the same parts: a later
    /// split draws other points. [`Error::InvalidOptions`](crate::error::Error::InvalidOptions)
    /// unless `parts` is 1 to [`MAX_PARTS`](crate::model::partition::MAX_PARTS).
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
}
