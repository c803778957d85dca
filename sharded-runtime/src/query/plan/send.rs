//! A plan in the firestore crate's terms: one chunk's filter (`shard in [...]` and the query's
//! own), its order, the cursor values it starts after, and the same order on the client, for
//! merging chunks.

use firestore::gcloud_sdk::google::firestore::v1::{
    Document, StructuredQuery, Value, value::ValueType,
};
use firestore::{
    FirestoreDb, FirestoreQueryCursor, FirestoreQueryFilter, FirestoreQueryFilterCompare,
    FirestoreQueryFilterComposite, FirestoreQueryFilterCompositeOperator, FirestoreQueryOrder,
    FirestoreValue,
};

use super::{Chunk, QueryPlan, compare};
use crate::error::{Error, Result};
use crate::model::value_order;

impl QueryPlan {
    /// A chunk's query as the protocol's `StructuredQuery`, starting at `start`, at most
    /// `limit`, ending where the plan ends: what a Listen target or a raw RunQuery sends.
    pub(crate) fn structured_query(
        &self,
        db: &FirestoreDb,
        chunk: Chunk,
        start: Option<FirestoreQueryCursor>,
        limit: Option<u32>,
    ) -> Result<StructuredQuery> {
        let end = self.end_cursor(db);
        self.structured_query_ordered(chunk, self.orders.clone(), start, end, limit)
    }

    /// [`structured_query`](Self::structured_query) ordered by `orders`, between `start` and
    /// `end`: what an aggregation over the chunk (ordered by the order field alone) sends.
    pub(crate) fn structured_query_ordered(
        &self,
        chunk: Chunk,
        orders: Vec<FirestoreQueryOrder>,
        start: Option<FirestoreQueryCursor>,
        end: Option<FirestoreQueryCursor>,
        limit: Option<u32>,
    ) -> Result<StructuredQuery> {
        let mut params = firestore::FirestoreQueryParams::new(self.collection.into())
            .with_filter(self.chunk_filter(chunk))
            .with_order_by(orders);
        if self.scope == crate::model::handle::Scope::Group {
            params.all_descendants = Some(true);
        }
        // A projection's fields, as `select_ordered` sends them: a stream's later pages,
        // sent as raw requests at its read time, are projected as its first ones.
        params.return_only_fields = self.mask.clone();
        if let Some(limit) = limit {
            params = params.with_limit(limit);
        }
        if let Some(start) = start {
            params = params.with_start_at(start);
        }
        if let Some(end) = end {
            params = params.with_end_at(end);
        }
        StructuredQuery::try_from(params).map_err(Error::from)
    }

    /// A chunk's query as planned: from the plan's start, at most its limit.
    pub(crate) fn select<'db>(
        &self,
        db: &'db FirestoreDb,
        chunk: Chunk,
    ) -> firestore::select_builder::FirestoreSelectDocBuilder<'db, FirestoreDb> {
        self.select_page(db, chunk, self.start_cursor(db), self.limit)
    }

    /// A chunk's query, starting at `start`, at most `limit`, ending where the plan ends.
    pub(crate) fn select_page<'db>(
        &self,
        db: &'db FirestoreDb,
        chunk: Chunk,
        start: Option<FirestoreQueryCursor>,
        limit: Option<u32>,
    ) -> firestore::select_builder::FirestoreSelectDocBuilder<'db, FirestoreDb> {
        let mut select = self.select_ordered(db, chunk, self.orders.clone(), self.mask.as_deref());
        if let Some(limit) = limit {
            select = select.limit(limit);
        }
        if let Some(start) = start {
            select = select.start_at(start);
        }
        if let Some(end) = self.end_cursor(db) {
            select = select.end_at(end);
        }
        select
    }

    /// A chunk's query where the plan's scope reads, ordered by `orders`; with a
    /// `projection`, of those field paths alone.
    pub(crate) fn select_ordered<'db>(
        &self,
        db: &'db FirestoreDb,
        chunk: Chunk,
        orders: Vec<FirestoreQueryOrder>,
        projection: Option<&[String]>,
    ) -> firestore::select_builder::FirestoreSelectDocBuilder<'db, FirestoreDb> {
        let filter = self.chunk_filter(chunk);
        let select = db.fluent().select();
        let select = match projection {
            Some(fields) => select.fields(fields),
            None => select,
        };
        self.scope
            .select(db, select.from(self.collection))
            .filter(move |_| Some(filter.clone()))
            .order(move |o| o.fields(orders.clone()))
    }

    /// The whole filter of a chunk query: its shard values, the query's filters, and its
    /// share of an `in`'s values.
    pub(crate) fn chunk_filter(&self, chunk: Chunk) -> FirestoreQueryFilter {
        let shards: Vec<&str> = chunk.shards.to_vec();
        let shard_field = self.shard_field.to_owned();
        let mut filters = vec![compare(match (self.shard_by_equality, &shards[..]) {
            (true, [shard]) => FirestoreQueryFilterCompare::Equal(shard_field, (*shard).into()),
            _ => FirestoreQueryFilterCompare::In(
                shard_field,
                <FirestoreValue as From<Vec<&str>>>::from(shards),
            ),
        })];
        filters.extend(self.filters.iter().cloned());
        if let Some(any_of) = &self.any_of {
            let (start, end) = chunk.values;
            filters.push(any_of.filter(start, end));
        }
        FirestoreQueryFilter::Composite(FirestoreQueryFilterComposite {
            for_all_filters: filters,
            operator: FirestoreQueryFilterCompositeOperator::And,
        })
    }

    /// The cursor the chunk queries start at, naming the cursor's document in `db`: just
    /// after it, or at it for `start_at`.
    pub(crate) fn start_cursor(&self, db: &FirestoreDb) -> Option<FirestoreQueryCursor> {
        let start = self.start.as_ref()?;
        let values = self.cursor_document_values(db, start);
        Some(match start.inclusive {
            true => FirestoreQueryCursor::BeforeValue(values),
            false => FirestoreQueryCursor::AfterValue(values),
        })
    }

    /// The cursor the chunk queries end at, naming the cursor's document in `db`: just
    /// before it (`end_before`), or after it, so it is in (`end_at`).
    pub(crate) fn end_cursor(&self, db: &FirestoreDb) -> Option<FirestoreQueryCursor> {
        let end = self.end.as_ref()?;
        let values = self.cursor_document_values(db, end);
        Some(match end.inclusive {
            true => FirestoreQueryCursor::AfterValue(values),
            false => FirestoreQueryCursor::BeforeValue(values),
        })
    }

    fn cursor_document_values(
        &self,
        db: &FirestoreDb,
        cursor: &super::PlannedCursor,
    ) -> Vec<FirestoreValue> {
        let name = crate::model::document_path::document_name(
            db.get_documents_path(),
            cursor.parent.as_deref(),
            self.collection,
            &cursor.id,
        );
        cursor_values(cursor.values.clone(), name)
    }

    /// The cursor values that start a chunk query just after `document`, in this plan's
    /// order; `None` when the document lacks one of them or one is a string Firestore refuses
    /// as a cursor value (over 1,500 bytes).
    pub(crate) fn after_document_values(&self, document: &Document) -> Option<Vec<FirestoreValue>> {
        let mut values = vec![value_order::field_value(document, self.order_field)?.clone()];
        for path in &self.then_by {
            values.push(value_order::field_value(document, path)?.clone());
        }
        if !values.iter().all(value_order::usable_in_cursor) {
            return None;
        }
        Some(cursor_values(values, document.name.clone()))
    }

    /// The order the plan's documents come in, to merge chunk queries by.
    pub(crate) fn document_order(&self) -> DocumentOrder {
        DocumentOrder {
            order_field: self.order_field,
            then_by: self.then_by.clone(),
            direction: self.direction,
            values: crate::model::value_order::compare_values,
            #[cfg(test)]
            by: None,
        }
    }
}

/// The cursor values a query starts just after: a document's order value (and the value of
/// the field a range filter is on), then its full name, as the query orders.
fn cursor_values(values: Vec<Value>, name: String) -> Vec<FirestoreValue> {
    values
        .into_iter()
        .chain([Value {
            value_type: Some(ValueType::ReferenceValue(name)),
        }])
        .map(|value| FirestoreValue { value })
        .collect()
}

/// The order a query's documents come in, to merge chunk queries by: the order field, then
/// the fields range filters are on (if any), then the document name, in the query's direction.
#[derive(Debug, Clone)]
pub(crate) struct DocumentOrder {
    order_field: &'static str,
    then_by: Vec<&'static str>,
    direction: sharded_indexes::Direction,
    /// How two values of a field compare: Firestore's order, or Datastore mode's.
    values: fn(&Value, &Value) -> std::cmp::Ordering,
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
            then_by: Vec::new(),
            direction: sharded_indexes::Direction::Ascending,
            values: crate::model::value_order::compare_values,
            by: Some(by),
        }
    }

    pub(crate) fn compare(&self, a: &Document, b: &Document) -> std::cmp::Ordering {
        #[cfg(test)]
        if let Some(by) = self.by {
            return by(a, b);
        }
        crate::model::value_order::compare_documents_then(
            a,
            b,
            self.order_field,
            &self.then_by,
            self.direction,
            self.values,
        )
    }

    #[cfg_attr(not(feature = "datastore"), allow(dead_code))]
    /// The same order with values compared by `values` (Datastore mode's order).
    pub(crate) fn comparing_values_by(
        self,
        values: fn(&Value, &Value) -> std::cmp::Ordering,
    ) -> Self {
        DocumentOrder { values, ..self }
    }
}
