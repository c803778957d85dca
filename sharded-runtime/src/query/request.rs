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
use super::reach::query_direction;
use super::{Reach, ShardedQuery, Window};
use crate::{Error, Result, Sharded};

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// A chunk's query as the protocol's `StructuredQuery`, starting just after `after`, at
    /// most `limit`: what a Listen target or a raw RunQuery sends.
    pub(super) fn structured_query(
        &self,
        prepared: &Prepared,
        chunk: Chunk,
        after: Option<Vec<FirestoreValue>>,
        limit: Option<u32>,
    ) -> Result<firestore::gcloud_sdk::google::firestore::v1::StructuredQuery> {
        self.structured_query_ordered(prepared, chunk, prepared.orders.clone(), after, limit)
    }

    /// [`structured_query`](Self::structured_query) ordered by `orders`: what an aggregation
    /// over the chunk (ordered by the order field alone) sends.
    pub(super) fn structured_query_ordered(
        &self,
        prepared: &Prepared,
        chunk: Chunk,
        orders: Vec<FirestoreQueryOrder>,
        after: Option<Vec<FirestoreValue>>,
        limit: Option<u32>,
    ) -> Result<firestore::gcloud_sdk::google::firestore::v1::StructuredQuery> {
        let mut params = firestore::FirestoreQueryParams::new(T::COLLECTION.into())
            .with_filter(self.chunk_filter(prepared, chunk))
            .with_order_by(orders);
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
        let filter = self.chunk_filter(prepared, chunk);
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

    pub(super) fn chunk_filter(&self, prepared: &Prepared, chunk: Chunk) -> FirestoreQueryFilter {
        let shards: Vec<&str> = chunk.shards.to_vec();
        let shard_field = T::SHARD_FIELD_PATH.to_owned();
        let mut filters = vec![compare(match (prepared.shard_by_equality, &shards[..]) {
            (true, [shard]) => FirestoreQueryFilterCompare::Equal(shard_field, (*shard).into()),
            _ => FirestoreQueryFilterCompare::In(
                shard_field,
                <FirestoreValue as From<Vec<&str>>>::from(shards),
            ),
        })];
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

/// The order a query's documents come in, to merge chunk queries by: the order field, then
/// the field a range filter is on (if any), then the document name, in the query's direction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DocumentOrder {
    order_field: &'static str,
    then_by: Option<&'static str>,
    direction: sharded_indexes::Direction,
    /// An order of the unit tests' own, in place of the fields'.
    #[cfg(test)]
    by: Option<fn(&Document, &Document) -> std::cmp::Ordering>,
}

impl DocumentOrder {
    /// The order `by` compares in: what the listener's unit tests order their documents by.
    #[cfg(test)]
    pub(crate) fn by(by: fn(&Document, &Document) -> std::cmp::Ordering) -> Self {
        DocumentOrder {
            order_field: "",
            then_by: None,
            direction: sharded_indexes::Direction::Ascending,
            by: Some(by),
        }
    }

    pub(crate) fn compare(&self, a: &Document, b: &Document) -> std::cmp::Ordering {
        #[cfg(test)]
        if let Some(by) = self.by {
            return by(a, b);
        }
        crate::value_order::compare_documents_then(
            a,
            b,
            self.order_field,
            self.then_by,
            self.direction,
        )
    }
}

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// The order this query's documents come in.
    pub(super) fn document_order(&self) -> DocumentOrder {
        DocumentOrder {
            order_field: T::ORDER_FIELD,
            then_by: self.then_by(),
            direction: query_direction::<T, R>(),
            #[cfg(test)]
            by: None,
        }
    }

    /// The field a range filter is on, which the query orders by after the order field.
    pub(super) fn then_by(&self) -> Option<&'static str> {
        self.filters.first().map(|filter| filter.path)
    }
}
