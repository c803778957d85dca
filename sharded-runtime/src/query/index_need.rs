//! What a query asks of a composite index, read off the terms it sends.

use firestore::{FirestoreQueryFilter, FirestoreQueryFilterCompare, FirestoreQueryOrder};
use sharded_indexes::{Direction, IndexNeed, QueryScope};

use super::prepare::shape_of;
use super::{Reach, ShardedQuery, Window};
use crate::{Result, Sharded};

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// What this query asks of a composite index, from the terms every one of its chunk
    /// queries sends: the shard field and each field it compares by equality or `in`, then
    /// the order field in the type's direction (a range on it is its inequality), on the
    /// type's collection, in the query's scope. `T::indexes().serving(&need)` is the index
    /// of the plan that serves it, and `need.is_served_by_file(..)` tells whether a
    /// `firestore.indexes.json` does: the emulator runs any query without an index,
    /// production does not. The query is checked as running it would check it.
    pub fn index_need(&self) -> Result<IndexNeed> {
        if let Some(flipped) = self.ending_before()? {
            return flipped.index_need();
        }
        if !self.or.is_empty() {
            return Err(crate::Error::InvalidQuery(
                "an OR is served by one index per disjunct: ask `index_needs()`".into(),
            ));
        }
        let prepared = self.terms()?;
        let mut equalities = vec![T::SHARD_FIELD_PATH.to_owned()];
        let mut contains = None;
        for filter in &prepared.filters {
            match filter {
                FirestoreQueryFilter::Compare(Some(FirestoreQueryFilterCompare::Equal(
                    field,
                    _,
                ))) => equalities.push(field.clone()),
                FirestoreQueryFilter::Compare(Some(
                    FirestoreQueryFilterCompare::ArrayContains(field, _),
                )) => contains = Some(field.clone()),
                _ => {}
            }
        }
        if let Some(any_of) = &prepared.any_of {
            match any_of.contains {
                true => contains = Some(any_of.field.clone()),
                false => equalities.push(any_of.field.clone()),
            }
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
            query_scope: self.query_scope(),
            equalities,
            contains,
            orders,
        })
    }

    /// What each part of this query asks of an index: for an OR
    /// ([`or`](Self::or)), one need per disjunct (Firestore serves each from its own index
    /// and merges them), this query's first; for any other query, its one
    /// [`index_need`](Self::index_need).
    pub fn index_needs(&self) -> Result<Vec<IndexNeed>> {
        if let Some(flipped) = self.ending_before()? {
            return flipped.index_needs();
        }
        if self.or.is_empty() {
            return Ok(vec![self.index_need()?]);
        }
        self.terms()?;
        let queries = std::iter::once((
            QUERY,
            self.values.len() + usize::from(self.any_of.is_some()),
        ))
        .chain(
            self.or
                .iter()
                .map(|d| (d.query, d.values.len() + usize::from(d.any_of.is_some()))),
        );
        let direction = super::reach::query_direction::<T, R>();
        queries
            .map(|(query, count)| {
                let shape = shape_of::<T>(query, count)?;
                let mut equalities = vec![T::SHARD_FIELD_PATH.to_owned()];
                let mut contains = None;
                for field in shape.fields {
                    match shape.contains {
                        true => contains = Some((*field).to_owned()),
                        false => equalities.push((*field).to_owned()),
                    }
                }
                Ok(IndexNeed {
                    collection_group: T::COLLECTION.to_owned(),
                    query_scope: self.query_scope(),
                    equalities,
                    contains,
                    orders: vec![(T::ORDER_FIELD.to_owned(), direction)],
                })
            })
            .collect()
    }

    /// The index scope this query reads in.
    fn query_scope(&self) -> QueryScope {
        match self.scope {
            crate::parent::Scope::Group => QueryScope::CollectionGroup,
            _ => QueryScope::Collection,
        }
    }
}
