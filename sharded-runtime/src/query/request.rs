//! A prepared query in the firestore crate's terms: one chunk's filter (`shard in [...]` and
//! the query's own), its order, the cursor values it starts after, and the same order on the
//! client, for merging chunks.

use firestore::gcloud_sdk::google::firestore::v1::Document;
use firestore::{
    FirestoreDb, FirestoreQueryCursor, FirestoreQueryFilter, FirestoreQueryFilterCompare,
    FirestoreQueryFilterComposite, FirestoreQueryFilterCompositeOperator, FirestoreQueryOrder,
    FirestoreValue,
};

use super::chunk::Chunk;
use super::prepare::{Prepared, compare};
use super::{Reach, ShardedQuery, compare_documents};
use crate::{Error, Result, Sharded};

impl<T: Sharded, const QUERY: u64, R: Reach> ShardedQuery<T, QUERY, R> {
    /// A chunk's query as the protocol's `StructuredQuery`, starting just after `after`, at
    /// most `limit`: what a Listen target or a raw RunQuery sends.
    pub(super) fn structured_query(
        &self,
        prepared: &Prepared,
        chunk: Chunk,
        after: Option<Vec<FirestoreValue>>,
        limit: Option<u32>,
    ) -> Result<firestore::gcloud_sdk::google::firestore::v1::StructuredQuery> {
        let mut params = firestore::FirestoreQueryParams::new(T::COLLECTION.into())
            .with_filter(self.filter(prepared, chunk))
            .with_order_by(prepared.orders.clone());
        if self.scope == crate::parent::Scope::Group {
            params.all_descendants = Some(true);
        }
        if let Some(limit) = limit {
            params = params.with_limit(limit);
        }
        if let Some(after) = after {
            params = params.with_start_at(FirestoreQueryCursor::AfterValue(after));
        }
        firestore::gcloud_sdk::google::firestore::v1::StructuredQuery::try_from(params)
            .map_err(Error::from)
    }

    pub(super) fn select<'db>(
        &self,
        db: &'db FirestoreDb,
        prepared: &Prepared,
        chunk: Chunk,
    ) -> firestore::select_builder::FirestoreSelectDocBuilder<'db, FirestoreDb> {
        self.select_page(
            db,
            prepared,
            chunk,
            prepared.start_after.clone(),
            self.limit,
        )
    }

    /// A chunk's query, starting just after `after` (cursor values), at most `limit`.
    pub(super) fn select_page<'db>(
        &self,
        db: &'db FirestoreDb,
        prepared: &Prepared,
        chunk: Chunk,
        after: Option<Vec<FirestoreValue>>,
        limit: Option<u32>,
    ) -> firestore::select_builder::FirestoreSelectDocBuilder<'db, FirestoreDb> {
        let mut select = self.select_ordered(
            db,
            prepared,
            chunk,
            prepared.orders.clone(),
            self.mask.as_deref(),
        );
        if let Some(limit) = limit {
            select = select.limit(limit);
        }
        if let Some(after) = after {
            select = select.start_at(FirestoreQueryCursor::AfterValue(after));
        }
        select
    }

    /// A chunk's query where the query's scope reads, ordered by `orders`; with a
    /// `projection`, of those field paths alone.
    pub(super) fn select_ordered<'db>(
        &self,
        db: &'db FirestoreDb,
        prepared: &Prepared,
        chunk: Chunk,
        orders: Vec<FirestoreQueryOrder>,
        projection: Option<&[String]>,
    ) -> firestore::select_builder::FirestoreSelectDocBuilder<'db, FirestoreDb> {
        let filter = self.filter(prepared, chunk);
        let select = db.fluent().select();
        let select = match projection {
            Some(fields) => select.fields(fields),
            None => select,
        };
        self.scope
            .select(db, select.from(T::COLLECTION))
            .filter(move |_| Some(filter.clone()))
            .order(move |o| o.fields(orders.clone()))
    }

    pub(super) fn filter(&self, prepared: &Prepared, chunk: Chunk) -> FirestoreQueryFilter {
        let shards: Vec<&str> = chunk.shards.to_vec();
        let mut filters = vec![compare(FirestoreQueryFilterCompare::In(
            T::SHARD_FIELD_PATH.to_owned(),
            <FirestoreValue as From<Vec<&str>>>::from(shards),
        ))];
        filters.extend(prepared.filters.iter().cloned());
        if let Some(any_of) = &prepared.any_of {
            let (start, end) = chunk.values;
            filters.push(any_of.filter(start, end));
        }
        FirestoreQueryFilter::Composite(FirestoreQueryFilterComposite {
            for_all_filters: filters,
            operator: FirestoreQueryFilterCompositeOperator::And,
        })
    }
}

/// The order of `T`'s sharded queries: order field, then document name, in its direction.
pub(super) fn query_order<T: Sharded, R: Reach>(a: &Document, b: &Document) -> std::cmp::Ordering {
    compare_documents(a, b, T::ORDER_FIELD, query_direction::<T, R>())
}

/// The direction `T`'s queries of reach `R` order in: the type's, or the other for a
/// reversed one.
pub(super) fn query_direction<T: Sharded, R: Reach>() -> sharded_indexes::Direction {
    match R::REVERSED {
        true => T::ORDER_DIRECTION.reversed(),
        false => T::ORDER_DIRECTION,
    }
}
