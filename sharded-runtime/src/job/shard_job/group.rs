//! The jobs over a collection group: every parent's collection at once.

use super::{ShardCensus, ShardJob};
use crate::error::Result;
use crate::model::handle::{Scope, ShardedCollectionGroup};

impl<'db, T: crate::model::sharded::CollectionGroup> ShardedCollectionGroup<'db, T> {
    /// The backfill of every parent's collection: see
    /// [`ShardedCollection::backfill`](crate::model::handle::ShardedCollection::backfill).
    pub fn backfill(&self) -> ShardJob<'db, T> {
        ShardJob::new(self.db, Scope::Group)
    }

    /// The rebalance of every parent's collection: see
    /// [`ShardedCollection::rebalance`](crate::model::handle::ShardedCollection::rebalance).
    pub fn rebalance(&self) -> ShardJob<'db, T> {
        ShardJob::new(self.db, Scope::Group)
    }

    /// The census of every parent's collection: see
    /// [`ShardedCollection::verify`](crate::model::handle::ShardedCollection::verify).
    pub async fn verify(&self) -> Result<ShardCensus> {
        ShardJob::<T>::new(self.db, Scope::Group).verify().await
    }

    /// Every parent's documents split into at most `parts` parts of the first parents' ids,
    /// for a partitioned group job: see
    /// [`ShardedCollection::parts`](crate::model::handle::ShardedCollection::parts).
    pub async fn parts(&self, parts: u32) -> Result<crate::job::balanced_parts::Parts> {
        crate::job::balanced_parts::balanced_parts::<T>(self.db, &Scope::Group, parts).await
    }
}
