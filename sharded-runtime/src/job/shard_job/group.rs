//! The jobs over a collection group: every parent's collection at once.

use std::marker::PhantomData;

use firestore::FirestoreDb;

use super::{ShardCensus, ShardJob};
use crate::error::Result;
use crate::model::parent::Scope;

/// Every collection with `T`'s id, under every parent (a collection group): the jobs that run
/// over all of them at once. Get one with
/// [`Sharded::collection_group`](crate::model::sharded::Sharded::collection_group); the jobs are
/// [`ShardJob`]s as for one collection, and their checkpoints are paths
/// (`rooms/lobby/messages/m1`).
pub struct ShardedCollectionGroup<'db, T> {
    db: &'db FirestoreDb,
    marker: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for ShardedCollectionGroup<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedCollectionGroup")
            .field("collection", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

impl<'db, T: crate::model::parent::CollectionGroup> ShardedCollectionGroup<'db, T> {
    pub(crate) fn new(db: &'db FirestoreDb) -> Self {
        ShardedCollectionGroup {
            db,
            marker: PhantomData,
        }
    }

    /// The backfill of every parent's collection: see
    /// [`ShardedCollection::backfill`](crate::write::collection::ShardedCollection::backfill).
    pub fn backfill(&self) -> ShardJob<'db, T> {
        ShardJob::new(self.db, Scope::Group)
    }

    /// The rebalance of every parent's collection: see
    /// [`ShardedCollection::rebalance`](crate::write::collection::ShardedCollection::rebalance).
    pub fn rebalance(&self) -> ShardJob<'db, T> {
        ShardJob::new(self.db, Scope::Group)
    }

    /// The census of every parent's collection: see
    /// [`ShardedCollection::verify`](crate::write::collection::ShardedCollection::verify).
    pub async fn verify(&self) -> Result<ShardCensus> {
        ShardJob::<T>::new(self.db, Scope::Group).verify().await
    }

    /// Every parent's documents split into at most `parts` parts of the first parents' ids,
    /// for a partitioned group job: see
    /// [`ShardedCollection::parts`](crate::write::collection::ShardedCollection::parts).
    pub async fn parts(&self, parts: u32) -> Result<crate::job::balanced_parts::Parts> {
        crate::job::balanced_parts::balanced_parts::<T>(self.db, &Scope::Group, parts).await
    }
}
