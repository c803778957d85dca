//! Typed queries over a sharded collection whose results equal the same query on an unsharded
//! collection: same documents, same order (ties broken by document name), page after page.

mod cursor;
mod merge;
pub(crate) mod order;
mod snapshot;

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

use firestore::gcloud_sdk::google::firestore::v1::{Document, Value, value::ValueType};
use firestore::{
    FirestoreDb, FirestoreQueryCursor, FirestoreQueryDirection, FirestoreQueryFilter,
    FirestoreQueryFilterCompare, FirestoreQueryFilterComposite,
    FirestoreQueryFilterCompositeOperator, FirestoreQueryOrder, FirestoreValue,
};
use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use serde::Serialize;
use sharded_indexes::Direction;
use tracing::Instrument as _;

pub use cursor::Cursor;
pub use merge::{merge_sorted, merge_streams};
pub use order::{compare_documents, compare_references, compare_values, usable_in_cursor};

use crate::{Error, Result, Sharded, Stored};
use snapshot::Snapshot;

/// Firestore's limit on values in one `in` filter, and on disjunctions in one query.
pub const MAX_DISJUNCTIONS: usize = 30;

/// The `INDEX` of the whole-collection query, `T::query().all()`: no equality filter, ordered
/// by the order field, served by the index (shard, order field).
pub const WHOLE_COLLECTION: usize = usize::MAX;

/// `T::query().all()`: every document of the collection, by the order field.
pub type WholeCollection<T> = ShardedQuery<T, WHOLE_COLLECTION>;

/// The field path an `INDEX` filters on for equality; `None` for the whole collection.
fn equality_field<T: Sharded>(index: usize) -> Option<&'static str> {
    T::INDEXED_FIELDS.get(index).copied()
}

/// How an `INDEX` is named in spans and cursor tokens.
pub(crate) fn query_name<T: Sharded>(index: usize) -> &'static str {
    match index {
        WHOLE_COLLECTION => "*",
        index => equality_field::<T>(index).unwrap_or("?"),
    }
}

/// An equality query on one indexed field, or the whole collection, ordered by the order
/// field, over every shard.
///
/// Built by the derive's `T::query().<field>(value)`, where `INDEX` is the field's position in
/// [`Sharded::INDEXED_FIELDS`], or `T::query().all()`, where it is [`WHOLE_COLLECTION`]. Every
/// query this type can express is served by a composite index the index plan generates:
/// (shard, field, order field), or (shard, order field) for the whole collection.
///
/// With at most 30 shard values it is one Firestore query, `shard in [...]`, which the server
/// merges; with more, one query per chunk of ≤ 30 values, sent concurrently and merged here on
/// (order field, document name). Either way the documents and their order are exactly those of
/// the same query on an unsharded collection ordered by (order field, `__name__`).
pub struct ShardedQuery<T, const INDEX: usize> {
    /// The value the indexed field equals; `None` for the whole collection.
    value: Option<std::result::Result<Value, String>>,
    lower: Bound<std::result::Result<Value, String>>,
    upper: Bound<std::result::Result<Value, String>>,
    limit: Option<u32>,
    after: Option<Cursor<T, INDEX>>,
    marker: PhantomData<fn() -> T>,
}

/// One page of results and the cursor of the next.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T, const INDEX: usize> {
    /// The documents of this page, in query order.
    pub items: Vec<Stored<T>>,
    /// Where the next page starts; `None` when no document follows this page.
    pub next: Option<Cursor<T, INDEX>>,
    /// What fetching the page cost.
    pub stats: QueryStats,
}

/// What a fetch cost. Firestore bills one read per document a query returns, so with more than
/// 30 shard values, where each chunk query returns up to the limit, `documents_read` can exceed
/// the documents kept; a page also reads the one document it looks ahead at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueryStats {
    /// Queries sent (sent concurrently: one network round trip of latency).
    pub queries: usize,
    /// Documents the server returned, before the merge kept `limit` of them.
    pub documents_read: usize,
}

impl<T, const INDEX: usize> Clone for ShardedQuery<T, INDEX> {
    fn clone(&self) -> Self {
        ShardedQuery {
            value: self.value.clone(),
            lower: self.lower.clone(),
            upper: self.upper.clone(),
            limit: self.limit,
            after: self.after.clone(),
            marker: PhantomData,
        }
    }
}

impl<T, const INDEX: usize> std::fmt::Debug for ShardedQuery<T, INDEX> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedQuery")
            .field("value", &self.value)
            .field("lower", &self.lower)
            .field("upper", &self.upper)
            .field("limit", &self.limit)
            .field("after", &self.after)
            .finish()
    }
}

fn to_value<V: Serialize + ?Sized>(value: &V) -> std::result::Result<Value, String> {
    let value = <FirestoreValue as From<&V>>::from(value).value;
    match value.value_type {
        Some(_) => Ok(value),
        None => Err(format!(
            "`{}` does not serialize to a Firestore value",
            std::any::type_name::<V>()
        )),
    }
}

fn to_bound<V: Serialize>(bound: Bound<&V>) -> Bound<std::result::Result<Value, String>> {
    match bound {
        Bound::Included(v) => Bound::Included(to_value(v)),
        Bound::Excluded(v) => Bound::Excluded(to_value(v)),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The shard values split into the fewest chunks of at most 30, of near-equal size.
pub fn shard_chunks(values: &'static [&'static str]) -> Vec<&'static [&'static str]> {
    if values.is_empty() {
        return Vec::new();
    }
    let chunks = values.len().div_ceil(MAX_DISJUNCTIONS);
    let (size, extra) = (values.len() / chunks, values.len() % chunks);
    let mut rest = values;
    (0..chunks)
        .map(|i| {
            let (chunk, tail) = rest.split_at(size + usize::from(i < extra));
            rest = tail;
            chunk
        })
        .collect()
}

/// A query checked and turned into Firestore terms, before anything is sent.
struct Prepared {
    filters: Vec<FirestoreQueryFilter>,
    orders: Vec<FirestoreQueryOrder>,
    start_after: Option<Vec<FirestoreValue>>,
    chunks: Vec<&'static [&'static str]>,
}

impl<T: Sharded, const INDEX: usize> ShardedQuery<T, INDEX> {
    #[doc(hidden)]
    pub fn __new<V: Serialize + ?Sized>(value: &V) -> Self {
        ShardedQuery {
            value: Some(to_value(value)),
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
            limit: None,
            after: None,
            marker: PhantomData,
        }
    }

    #[doc(hidden)]
    pub fn __whole_collection() -> Self {
        ShardedQuery {
            value: None,
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
            limit: None,
            after: None,
            marker: PhantomData,
        }
    }

    /// Only documents whose order field lies in `range`, e.g. `since..until` or `since..`.
    /// Served by the same index: a range on the field the index ends with. Bounds may be of
    /// any type that converts into the order field's (`"a".."b"` for a `String` field).
    pub fn range<B, R>(mut self, range: R) -> Self
    where
        B: Clone + Into<T::OrderValue>,
        R: RangeBounds<B>,
    {
        let convert = |bound: Bound<&B>| bound.cloned().map(Into::into);
        self.lower = to_bound(convert(range.start_bound()).as_ref());
        self.upper = to_bound(convert(range.end_bound()).as_ref());
        self
    }

    /// At most `limit` documents (per page, with [`fetch_page`](Self::fetch_page)); at most
    /// [`MAX_LIMIT`], checked before sending.
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Starts just after the document `cursor` points at.
    pub fn after(mut self, cursor: Cursor<T, INDEX>) -> Self {
        self.after = Some(cursor);
        self
    }

    /// The matching documents, in order.
    pub async fn fetch(&self, db: &FirestoreDb) -> Result<Vec<T>> {
        Ok(self
            .fetch_stored(db)
            .await?
            .into_iter()
            .map(|stored| stored.document)
            .collect())
    }

    /// The matching documents with their ids and shards, in order.
    pub async fn fetch_stored(&self, db: &FirestoreDb) -> Result<Vec<Stored<T>>> {
        Ok(self.fetch_with_stats(db).await?.0)
    }

    /// [`fetch_stored`](Self::fetch_stored), with what the fetch cost.
    pub async fn fetch_with_stats(&self, db: &FirestoreDb) -> Result<(Vec<Stored<T>>, QueryStats)> {
        let (documents, stats) = self.fetch_documents(db).await?;
        let items = documents
            .iter()
            .map(Stored::from_document)
            .collect::<Result<_>>()?;
        Ok((items, stats))
    }

    /// One page of at most `limit` documents, and the cursor of the next page if there is one:
    /// [`fetch_page`](Self::fetch_page) with the limit as an argument, so a page query without
    /// one does not compile. `limit` replaces any [`limit`](Self::limit) set before.
    pub async fn page(&self, db: &FirestoreDb, limit: u32) -> Result<Page<T, INDEX>> {
        self.clone().limit(limit).fetch_page(db).await
    }

    /// One page of at most `limit` documents, and the cursor of the next page if there is one.
    /// Without a [`limit`](Self::limit) it is [`Error::InvalidQuery`]; [`page`](Self::page)
    /// takes the limit as an argument instead.
    ///
    /// The page asks for one document more than `limit`, so it knows whether another page
    /// follows: a full last page has no `next`, and reading on costs no empty round trip. That
    /// one look-ahead document is read (and billed) but not returned.
    pub async fn fetch_page(&self, db: &FirestoreDb) -> Result<Page<T, INDEX>> {
        let Some(limit) = self.limit else {
            return Err(Error::InvalidQuery("a page needs a `limit`".into()));
        };
        // At the largest limit there is no room to look ahead: a full page then has a `next`.
        let look_ahead = limit < MAX_LIMIT;
        let mut ahead = self.clone();
        ahead.limit = Some(limit + u32::from(look_ahead));
        let (mut documents, stats) = ahead.fetch_documents(db).await?;
        let more =
            documents.len() > limit as usize || (!look_ahead && documents.len() == limit as usize);
        documents.truncate(limit as usize);
        let next = match documents.last() {
            Some(last) if more => Some(Cursor::after_document(last)?),
            _ => None,
        };
        let items = documents
            .iter()
            .map(Stored::from_document)
            .collect::<Result<_>>()?;
        Ok(Page { items, next, stats })
    }

    /// The matching documents as a stream, in order. Chunk queries stream concurrently and
    /// merge as they arrive; an error in any chunk is the stream's last item.
    pub async fn stream<'db>(
        &self,
        db: &'db FirestoreDb,
    ) -> Result<BoxStream<'db, Result<Stored<T>>>> {
        let span = query_span::<T, INDEX>("stream");
        self.open_stream(db, &span).instrument(span.clone()).await
    }

    /// Opens every chunk's stream, within the query's span.
    async fn open_stream<'db>(
        &self,
        db: &'db FirestoreDb,
        span: &tracing::Span,
    ) -> Result<BoxStream<'db, Result<Stored<T>>>> {
        let (prepared, snapshot) = self.begin(db, span).await?;
        // Every chunk's query is opened concurrently: one round trip of latency, not one each.
        let opened =
            futures::future::try_join_all(prepared.chunks.iter().enumerate().map(|(i, chunk)| {
                self.select(snapshot.db(), &prepared, chunk)
                    .stream_query_with_errors()
                    .instrument(chunk_span(i, chunk))
            }))
            .await;
        let opened = match opened {
            Ok(opened) => opened,
            Err(error) => {
                snapshot.release().await?;
                return Err(error.into());
            }
        };
        let mut streams: Vec<BoxStream<'db, Result<Document>>> = opened
            .into_iter()
            .map(|stream| stream.map_err(Error::from).boxed())
            .collect();
        let merged = if streams.len() == 1 {
            streams.pop().expect("one stream")
        } else {
            merge_streams(streams, query_order::<T>)
        };
        let limited = match self.limit {
            Some(limit) => merged.take(limit as usize).boxed(),
            None => merged,
        };
        // The snapshot is released when the stream ends; a failure to release is its last item.
        let released = futures::stream::once(snapshot.release())
            .filter_map(|released| async move { released.err().map(Err) });
        Ok(limited
            .map(|document| Stored::from_document(&document?))
            .chain(released)
            .boxed())
    }

    /// How many documents match the field and the range (the limit and the cursor are not
    /// applied). One count aggregation per chunk, summed.
    pub async fn count(&self, db: &FirestoreDb) -> Result<u64> {
        let span = query_span::<T, INDEX>("count");
        self.count_in(db, &span).instrument(span.clone()).await
    }

    async fn count_in(&self, db: &FirestoreDb, span: &tracing::Span) -> Result<u64> {
        let (prepared, snapshot) = self.begin(db, span).await?;
        let counts =
            futures::future::try_join_all(prepared.chunks.iter().enumerate().map(|(i, chunk)| {
                async {
                    let filter = self.filter(&prepared, chunk);
                    let rows = snapshot
                        .db()
                        .fluent()
                        .select()
                        .from(T::COLLECTION)
                        .filter(move |_| Some(filter.clone()))
                        .aggregate(|a| a.fields([a.field("count").count()]))
                        .query()
                        .await?;
                    count_of(&rows)
                }
                .instrument(chunk_span(i, chunk))
            }))
            .await;
        snapshot.release().await?;
        Ok(counts?.into_iter().sum())
    }

    async fn fetch_documents(&self, db: &FirestoreDb) -> Result<(Vec<Document>, QueryStats)> {
        let span = query_span::<T, INDEX>("fetch");
        self.fetch_documents_in(db, &span)
            .instrument(span.clone())
            .await
    }

    async fn fetch_documents_in(
        &self,
        db: &FirestoreDb,
        span: &tracing::Span,
    ) -> Result<(Vec<Document>, QueryStats)> {
        let (prepared, snapshot) = self.begin(db, span).await?;
        let results =
            futures::future::try_join_all(prepared.chunks.iter().enumerate().map(|(i, chunk)| {
                self.select(snapshot.db(), &prepared, chunk)
                    .query()
                    .instrument(chunk_span(i, chunk))
            }))
            .await;
        snapshot.release().await?;
        let mut results = results?;
        let stats = QueryStats {
            queries: results.len(),
            documents_read: results.iter().map(Vec::len).sum(),
        };
        span.record("documents_read", stats.documents_read);
        if results.len() == 1 {
            return Ok((results.pop().expect("one result"), stats));
        }
        let merged = merge_sorted(
            results,
            self.limit.map(|limit| limit as usize),
            query_order::<T>,
        );
        Ok((merged, stats))
    }

    fn select<'db>(
        &self,
        db: &'db FirestoreDb,
        prepared: &Prepared,
        chunk: &[&str],
    ) -> firestore::select_builder::FirestoreSelectDocBuilder<'db, FirestoreDb> {
        let filter = self.filter(prepared, chunk);
        let orders = prepared.orders.clone();
        let mut select = db
            .fluent()
            .select()
            .from(T::COLLECTION)
            .filter(move |_| Some(filter.clone()))
            .order(move |o| o.fields(orders.clone()));
        if let Some(limit) = self.limit {
            select = select.limit(limit);
        }
        if let Some(after) = &prepared.start_after {
            select = select.start_at(FirestoreQueryCursor::AfterValue(after.clone()));
        }
        select
    }

    fn filter(&self, prepared: &Prepared, chunk: &[&str]) -> FirestoreQueryFilter {
        let shards: Vec<&str> = chunk.to_vec();
        let mut filters = vec![compare(FirestoreQueryFilterCompare::In(
            T::SHARD_FIELD_PATH.to_owned(),
            <FirestoreValue as From<Vec<&str>>>::from(shards),
        ))];
        filters.extend(prepared.filters.iter().cloned());
        FirestoreQueryFilter::Composite(FirestoreQueryFilterComposite {
            for_all_filters: filters,
            operator: FirestoreQueryFilterCompositeOperator::And,
        })
    }

    /// The start of every read: the query checked and prepared, its chunk count on `span`, and
    /// the snapshot its chunk queries share.
    async fn begin<'db>(
        &self,
        db: &'db FirestoreDb,
        span: &tracing::Span,
    ) -> Result<(Prepared, Snapshot<'db>)> {
        let prepared = self.prepare(db)?;
        span.record("chunks", prepared.chunks.len());
        let snapshot = Snapshot::begin(db, prepared.chunks.len()).await?;
        Ok((prepared, snapshot))
    }

    /// Checks the query and turns it into Firestore terms; an error here means nothing was sent.
    fn prepare(&self, db: &FirestoreDb) -> Result<Prepared> {
        let invalid = |why: String| Error::InvalidQuery(why);
        let equality = match (&self.value, equality_field::<T>(INDEX)) {
            (None, _) if INDEX == WHOLE_COLLECTION => None,
            (Some(value), Some(field)) => Some((field, value)),
            _ => {
                return Err(invalid(format!(
                    "`{}` has no indexed field #{INDEX}",
                    T::COLLECTION
                )));
            }
        };
        if T::READ_SHARD_VALUES.is_empty() {
            return Err(invalid(format!("`{}` has no shard values", T::COLLECTION)));
        }
        match self.limit {
            Some(0) => {
                return Err(invalid(
                    "`limit(0)` asks for nothing; Firestore rejects it".into(),
                ));
            }
            Some(limit) if limit > MAX_LIMIT => {
                return Err(invalid(format!(
                    "`limit({limit})` is more than Firestore's largest limit, {MAX_LIMIT}"
                )));
            }
            _ => {}
        }
        let chunks = shard_chunks(T::READ_SHARD_VALUES);
        if let Some(chunk) = chunks.iter().find(|chunk| chunk.len() > MAX_DISJUNCTIONS) {
            return Err(invalid(format!(
                "{} disjunctions in one query; Firestore allows {MAX_DISJUNCTIONS}",
                chunk.len()
            )));
        }
        let mut filters = Vec::new();
        if let Some((field, value)) = equality {
            let value = value.clone().map_err(invalid)?;
            check_filter_value(field, &value)?;
            filters.push(compare(FirestoreQueryFilterCompare::Equal(
                field.to_owned(),
                FirestoreValue { value },
            )));
        }
        let order = T::ORDER_FIELD.to_owned();
        use FirestoreQueryFilterCompare::{
            GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual,
        };
        for (bound, inclusive, exclusive) in [
            (
                &self.lower,
                GreaterThanOrEqual as Comparison,
                GreaterThan as Comparison,
            ),
            (&self.upper, LessThanOrEqual, LessThan),
        ] {
            let (compare_with, value) = match bound {
                Bound::Included(value) => (inclusive, value),
                Bound::Excluded(value) => (exclusive, value),
                Bound::Unbounded => continue,
            };
            let value = value.clone().map_err(invalid)?;
            check_filter_value(T::ORDER_FIELD, &value)?;
            let value = FirestoreValue { value };
            filters.push(compare(compare_with(order.clone(), value)));
        }
        let direction = match T::ORDER_DIRECTION {
            Direction::Ascending => FirestoreQueryDirection::Ascending,
            Direction::Descending => FirestoreQueryDirection::Descending,
        };
        let orders = vec![
            FirestoreQueryOrder {
                field_name: order,
                direction: direction.clone(),
            },
            FirestoreQueryOrder {
                field_name: "__name__".to_owned(),
                direction,
            },
        ];
        if let Some(cursor) = &self.after
            && !order::usable_in_cursor(&cursor.order_value)
        {
            return Err(Error::InvalidCursor(format!(
                "the cursor's `{}` is a string of more than {MAX_FILTER_VALUE_BYTES} bytes that Firestore compares whole, which it refuses as a cursor value (\"the cursor value is too large\"); no query, sharded or not, can start after this document",
                T::ORDER_FIELD
            )));
        }
        let start_after = self.after.as_ref().map(|cursor| {
            let name =
                crate::stored::document_name(db.get_documents_path(), T::COLLECTION, &cursor.id);
            vec![
                FirestoreValue {
                    value: cursor.order_value.clone(),
                },
                FirestoreValue {
                    value: Value {
                        value_type: Some(ValueType::ReferenceValue(name)),
                    },
                },
            ]
        });
        Ok(Prepared {
            filters,
            orders,
            start_after,
            chunks,
        })
    }
}

/// The count a `count` aggregation named "count" returned.
pub(crate) fn count_of(rows: &[Document]) -> Result<u64> {
    rows.first()
        .and_then(|row| row.fields.get("count"))
        .and_then(|value| match value.value_type {
            Some(ValueType::IntegerValue(count)) => u64::try_from(count).ok(),
            _ => None,
        })
        .ok_or_else(|| Error::InvalidQuery("Firestore returned no count".into()))
}

/// Firestore's largest query limit (an `int32`).
pub const MAX_LIMIT: u32 = i32::MAX as u32;

/// The longest string a filter may compare with, in UTF-8 bytes: the server refuses longer
/// ones ("too large to be used in a query"; measured in `tests/server_order.rs`). A bytes
/// value may have one byte more.
pub const MAX_FILTER_VALUE_BYTES: usize = order::INDEXED_STRING_BYTES;

/// Refuses, before sending, a filter value the server would reject as too large; values
/// inside arrays and maps count too.
fn check_filter_value(path: &str, value: &Value) -> Result<()> {
    let too_long = match &value.value_type {
        Some(ValueType::StringValue(s)) => s.len() > MAX_FILTER_VALUE_BYTES,
        Some(ValueType::BytesValue(b)) => b.len() > order::INDEXED_BYTES_BYTES,
        Some(ValueType::ArrayValue(array)) => {
            return array
                .values
                .iter()
                .try_for_each(|v| check_filter_value(path, v));
        }
        Some(ValueType::MapValue(map)) => {
            return map
                .fields
                .values()
                .try_for_each(|v| check_filter_value(path, v));
        }
        _ => false,
    };
    if too_long {
        return Err(Error::InvalidQuery(format!(
            "a value compared with `{path}` is longer than Firestore takes in a query ({MAX_FILTER_VALUE_BYTES} bytes of a string, {} of bytes)",
            order::INDEXED_BYTES_BYTES
        )));
    }
    Ok(())
}

/// The span of one sharded query, at INFO: a production service keeps it, and a slow fan-out
/// shows as a long span with its chunks (DEBUG) inside. Fields: the collection, the indexed
/// field, the shard count, the chunk queries sent and the documents they read.
fn query_span<T: Sharded, const INDEX: usize>(operation: &'static str) -> tracing::Span {
    tracing::info_span!(
        "sharded_query",
        operation,
        collection = T::COLLECTION,
        field = query_name::<T>(INDEX),
        shards = T::READ_SHARD_VALUES.len(),
        chunks = tracing::field::Empty,
        documents_read = tracing::field::Empty,
    )
}

/// The span of one chunk query of a fan-out.
fn chunk_span(index: usize, chunk: &[&str]) -> tracing::Span {
    tracing::debug_span!("sharded_chunk", index, shards = chunk.len())
}

/// The order of `T`'s sharded queries: order field, then document name, in its direction.
fn query_order<T: Sharded>(a: &Document, b: &Document) -> std::cmp::Ordering {
    compare_documents(a, b, T::ORDER_FIELD, T::ORDER_DIRECTION)
}

/// A comparison of a field path with a value.
type Comparison = fn(String, FirestoreValue) -> FirestoreQueryFilterCompare;

fn compare(compare: FirestoreQueryFilterCompare) -> FirestoreQueryFilter {
    FirestoreQueryFilter::Compare(Some(compare))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_few_and_even() {
        static FORTY: [&str; 40] = [""; 40];
        let sizes = |values: &'static [&'static str]| {
            shard_chunks(values)
                .iter()
                .map(|c| c.len())
                .collect::<Vec<_>>()
        };
        assert_eq!(sizes(&FORTY), [20, 20]);
        assert_eq!(sizes(&FORTY[..3]), [3]);
        assert_eq!(sizes(&FORTY[..30]), [30]);
        assert_eq!(sizes(&FORTY[..31]), [16, 15]);
        assert_eq!(sizes(&[]), Vec::<usize>::new());
        static MANY: [&str; 301] = [""; 301];
        let chunks = sizes(&MANY);
        assert_eq!(chunks.len(), 11);
        assert!(chunks.iter().all(|&c| (27..=28).contains(&c)));
        assert_eq!(chunks.iter().sum::<usize>(), 301);
    }
}
