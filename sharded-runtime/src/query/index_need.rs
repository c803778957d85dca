//! What a query asks of a composite index, read off the terms it sends.

use firestore::{FirestoreQueryFilter, FirestoreQueryFilterCompare, FirestoreQueryOrder};
use sharded_indexes::{Direction, IndexNeed, QueryScope};

use super::{Reach, ShardedQuery};
use crate::{Result, Sharded};

impl<T: Sharded, const QUERY: u64, R: Reach> ShardedQuery<T, QUERY, R> {
    /// What this query asks of a composite index, from the terms every one of its chunk
    /// queries sends: the shard field and each field it compares by equality or `in`, then
    /// the order field in the type's direction (a range on it is its inequality), on the
    /// type's collection, in the query's scope. `T::indexes().serving(&need)` is the index
    /// of the plan that serves it, and `need.is_served_by_file(..)` tells whether a
    /// `firestore.indexes.json` does: the emulator runs any query without an index,
    /// production does not. The query is checked as running it would check it.
    pub fn index_need(&self) -> Result<IndexNeed> {
        let prepared = self.terms()?;
        let mut equalities = vec![T::SHARD_FIELD_PATH.to_owned()];
        for filter in &prepared.filters {
            if let FirestoreQueryFilter::Compare(Some(FirestoreQueryFilterCompare::Equal(
                field,
                _,
            ))) = filter
            {
                equalities.push(field.clone());
            }
        }
        if let Some((field, _)) = &prepared.any_of {
            equalities.push(field.clone());
        }
        let orders = prepared
            .orders
            .iter()
            .filter(|order| order.field_name != "__name__")
            .map(|order: &FirestoreQueryOrder| {
                let direction = match order.direction {
                    firestore::FirestoreQueryDirection::Ascending => Direction::Ascending,
                    firestore::FirestoreQueryDirection::Descending => Direction::Descending,
                };
                (order.field_name.clone(), direction)
            })
            .collect();
        Ok(IndexNeed {
            collection_group: T::COLLECTION.to_owned(),
            query_scope: match self.scope {
                crate::parent::Scope::Group => QueryScope::CollectionGroup,
                _ => QueryScope::Collection,
            },
            equalities,
            orders,
        })
    }
}
