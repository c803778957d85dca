//! Typed queries over a sharded collection whose results equal the same query on an unsharded
//! collection: same documents, same order (ties broken by document name), page after page.

mod aggregate;
mod cursor;
mod listen;
mod merge;
mod names;
pub(crate) mod order;
mod queries;
mod reach;
mod shape;
mod shares;
mod snapshot;
mod stream;

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

use firestore::gcloud_sdk::google::firestore::v1::{Document, Value, value::ValueType};
use firestore::{
    FirestoreDb, FirestoreQueryCursor, FirestoreQueryDirection, FirestoreQueryFilter,
    FirestoreQueryFilterCompare, FirestoreQueryFilterComposite,
    FirestoreQueryFilterCompositeOperator, FirestoreQueryOrder, FirestoreValue,
};
use futures::stream::StreamExt;
use serde::Serialize;
use sharded_indexes::Direction;
use tracing::Instrument as _;

pub use aggregate::{Number, Numeric, NumericField, numeric_field};
pub use cursor::Cursor;
pub use listen::{
    ChangeKind, DocumentChange, ListenCheckpoint, ListenOptions, QuerySnapshot, SnapshotStream,
};
pub use merge::{merge_sorted, merge_streams};
pub use names::{CursorOf, PageOf, PagedQuery};
pub use order::{compare_documents, compare_references, compare_values, usable_in_cursor};
pub use queries::{Queries, queries};
pub use reach::{InCollection, InGroup, Reach};
pub use shape::{QueryShape, query_id};

use crate::{Error, Result, Sharded, Stored};
use snapshot::Snapshot;

/// Firestore's limit on values in one `in` filter, and on disjunctions in one query.
pub const MAX_DISJUNCTIONS: usize = 30;

/// The `QUERY` of the whole-collection query, `T::query().all()`: no equality filter, ordered
/// by the order field, served by the index (shard, order field).
pub const WHOLE_COLLECTION: u64 = query_id("all");

/// The query `T::query().all()`: every document of the collection, by the order field;
/// `WholeCollection<T, InGroup>` after `.in_group()`. `CursorOf<WholeCollection<T>>` and
/// `PageOf<..>` are its cursor and page.
pub type WholeCollection<T, R = InCollection> = ShardedQuery<T, WHOLE_COLLECTION, R>;

/// The shape of `T`'s query `QUERY`, read from the collection's description: the queries are
/// `all`, then one per indexed field, then one per field set, in the description's order, and
/// the derive names them in that order (`Tables::query_names`), so that the fields each
/// compares are written once, in the description, for every user's build to compile.
fn shape<T: Sharded>(query: u64) -> Option<QueryShape> {
    if query == WHOLE_COLLECTION {
        return Some(QueryShape::new("all", &[]));
    }
    let names = T::TABLES.query_names;
    let position = names.iter().position(|name| query_id(name) == query)?;
    let indexed = T::DESCRIPTION.indexed_fields;
    let fields = match indexed.get(position..=position) {
        Some(field) => field,
        None => T::DESCRIPTION.field_sets.get(position - indexed.len())?,
    };
    Some(QueryShape::new(names[position], fields))
}

/// How a `QUERY` is named in spans and cursor tokens: its method's name.
pub(crate) fn query_name<T: Sharded>(query: u64) -> &'static str {
    shape::<T>(query).map_or("?", |shape| shape.name)
}

/// An equality query on one indexed field or on a declared set of fields, or the whole
/// collection, ordered by the order field, over every shard.
///
/// Built by the derive's `T::query().<field>(value)`, `T::query().<a>_and_<b>(x, y)` or
/// `T::query().all()`. `QUERY` is [`query_id`] of that method's name, so the type names its
/// query by name, not by a field's position: `ShardedQuery<Instrument, { query_id("exchange") }>`.
/// Every query this type can express is served by a composite index the index plan generates:
/// (shard, field(s), order field), or (shard, order field) for the whole collection.
///
/// With at most 30 shard values it is one Firestore query, `shard in [...]`, which the server
/// merges; with more, one query per chunk of ≤ 30 values, sent concurrently and merged here on
/// (order field, document name). Either way the documents and their order are exactly those of
/// the same query on an unsharded collection ordered by (order field, `__name__`).
///
/// `R` is what the query reads: [`InCollection`], one collection (the top-level one, or one
/// parent's); or [`InGroup`], after [`in_group`](Self::in_group), every parent's. Its cursors
/// and pages carry the same `R`, so a group query's cursor does not compile with a per-parent
/// query, nor the reverse.
pub struct ShardedQuery<T, const QUERY: u64, R: Reach = InCollection> {
    /// The values the query's fields equal, in the shape's order; none for the whole collection.
    values: Vec<std::result::Result<Value, String>>,
    lower: Bound<std::result::Result<Value, String>>,
    upper: Bound<std::result::Result<Value, String>>,
    limit: Option<u32>,
    after: Option<cursor::Position>,
    scope: crate::parent::Scope,
    marker: PhantomData<fn() -> (T, R)>,
}

/// One page of results and the cursor of the next.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T, const QUERY: u64, R: Reach = InCollection> {
    /// The documents of this page, in query order.
    pub items: Vec<Stored<T>>,
    /// Where the next page starts; `None` when no document follows this page.
    pub next: Option<Cursor<T, QUERY, R>>,
    /// What fetching the page cost.
    pub stats: QueryStats,
}

/// What a fetch cost. Firestore bills one read per document a query returns. With more than
/// 30 shard values, a limited query asks each chunk for a little more than its share of the
/// limit and goes back only to chunks that may hold more of it, so `documents_read` is a little
/// over the documents kept (about ⌈1.3·limit⌉ + chunks on average); a page also reads the one
/// document it looks ahead at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueryStats {
    /// Queries sent.
    pub queries: usize,
    /// Documents the server returned, before the merge kept `limit` of them.
    pub documents_read: usize,
    /// Rounds of queries, each sent concurrently (one network round trip of latency each): 1,
    /// unless a limited query past 30 shard values went back to some chunks (at most 4).
    pub rounds: usize,
}

impl<T, const QUERY: u64, R: Reach> Clone for ShardedQuery<T, QUERY, R> {
    fn clone(&self) -> Self {
        ShardedQuery {
            values: self.values.clone(),
            lower: self.lower.clone(),
            upper: self.upper.clone(),
            limit: self.limit,
            after: self.after.clone(),
            scope: self.scope.clone(),
            marker: PhantomData,
        }
    }
}

impl<T, const QUERY: u64, R: Reach> std::fmt::Debug for ShardedQuery<T, QUERY, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedQuery")
            .field("values", &self.values)
            .field("lower", &self.lower)
            .field("upper", &self.upper)
            .field("limit", &self.limit)
            .field("after", &self.after)
            .field("scope", &self.scope)
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

impl<T: Sharded, const QUERY: u64> ShardedQuery<T, QUERY> {
    /// The query on one field equal to `value`, taken as the field's type `F`: the whole body
    /// of a generated query method, so that the conversion is compiled here, not in each one.
    #[doc(hidden)]
    pub fn __eq<F: Serialize, V: Into<F>>(value: V) -> Self {
        Self::__whole_collection().__and::<F, V>(value)
    }

    /// This query also on the next field of its shape equal to `value`, taken as `F`.
    #[doc(hidden)]
    pub fn __and<F: Serialize, V: Into<F>>(mut self, value: V) -> Self {
        self.values.push(to_value(&value.into()));
        self
    }

    #[doc(hidden)]
    pub fn __whole_collection() -> Self {
        ShardedQuery {
            values: Vec::new(),
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
            limit: None,
            after: None,
            scope: crate::parent::Scope::Top,
            marker: PhantomData,
        }
    }

    /// The query over the documents under `parent` only, for a type declared under parent
    /// documents (`#[sharded(parent = "rooms")]`); such a type's queries need a parent or
    /// [`in_group`](Self::in_group), else [`Error::InvalidParent`] before anything is sent.
    pub fn in_parent(mut self, parent: &crate::Parent<T>) -> Self
    where
        T: crate::Subcollection,
    {
        self.scope = crate::parent::Scope::under(parent);
        self
    }

    /// The query over every collection with the type's id, under every parent: a
    /// collection-group query, for a type that declares `collection_group` (which plans its
    /// indexes in that scope; a type that does not, does not compile). Ties in the order field
    /// go by the documents' full paths, as Firestore orders them, and each result's
    /// [`Stored::parent`] says where it lives. Its cursors and pages are [`InGroup`]'s; a
    /// cursor given before this call is refused when the query runs
    /// ([`Error::InvalidCursor`]).
    pub fn in_group(self) -> ShardedQuery<T, QUERY, InGroup>
    where
        T: crate::CollectionGroup,
    {
        ShardedQuery {
            values: self.values,
            lower: self.lower,
            upper: self.upper,
            limit: self.limit,
            after: self.after,
            scope: crate::parent::Scope::Group,
            marker: PhantomData,
        }
    }
}

impl<T: Sharded, const QUERY: u64, R: Reach> ShardedQuery<T, QUERY, R> {
    /// Only documents whose order field lies in `range`, e.g. `since..until` or `since..`.
    /// Served by the same index: a range on the field the index ends with. Bounds are of the
    /// order field's type, or one that converts into it ([`OrderBound`](crate::OrderBound):
    /// `"a".."b"` for a `String` field); an integer literal takes the field's type
    /// (`10..20` on a `u32` field).
    pub fn range<B, Range>(mut self, range: Range) -> Self
    where
        B: Clone + crate::OrderBound<T::OrderValue>,
        Range: RangeBounds<B>,
    {
        let convert = |bound: Bound<&B>| bound.cloned().map(crate::OrderBound::into_order_value);
        self.lower = to_bound(convert(range.start_bound()).as_ref());
        self.upper = to_bound(convert(range.end_bound()).as_ref());
        self
    }

    /// At most `limit` documents; at most [`MAX_LIMIT`], checked before sending.
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Starts just after the document `cursor` points at.
    pub fn after(mut self, cursor: Cursor<T, QUERY, R>) -> Self {
        self.after = Some(cursor.position);
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

    /// One page of at most `limit` documents (replacing any [`limit`](Self::limit) set
    /// before), and the cursor of the next page if there is one. The limit is an argument, so
    /// a page query without one does not compile.
    ///
    /// The page asks for one document more than `limit`, so it knows whether another page
    /// follows: a full last page has no `next`, and reading on costs no empty round trip. That
    /// one look-ahead document is read (and billed) but not returned.
    pub async fn page(&self, db: &FirestoreDb, limit: u32) -> Result<Page<T, QUERY, R>> {
        let mut ahead = self.clone();
        ahead.limit = Some(limit);
        // Checked before sending, as for any query; at the largest limit there is no room to
        // look ahead, so a full page then has a `next`.
        ahead.prepare(db)?;
        let look_ahead = limit < MAX_LIMIT;
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

    /// How many documents the query returns: its limit and cursor apply, as they do to
    /// Firestore's `count`. One count aggregation per chunk, with the cursor and the limit;
    /// their sum capped at the limit.
    pub async fn count(&self, db: &FirestoreDb) -> Result<u64> {
        let span = query_span::<T, QUERY>("count");
        self.count_in(db, &span).instrument(span.clone()).await
    }

    async fn count_in(&self, db: &FirestoreDb, span: &tracing::Span) -> Result<u64> {
        let counts = self
            .in_every_chunk(db, span, |db, prepared, chunk| {
                let count = self
                    .select(db, prepared, chunk)
                    .aggregate(|a| a.fields([a.field("count").count()]));
                Box::pin(async move { count_of(&count.query().await?) })
            })
            .await?;
        let total: u64 = counts.into_iter().sum();
        Ok(self
            .limit
            .map_or(total, |limit| total.min(u64::from(limit))))
    }

    /// The sum of `field` over every document the query matches, as the same query on an
    /// unsharded collection returns it: an integer while every value is one and the sum
    /// fits, otherwise a double. Integer sums are exact: a chunk query whose own sum passed
    /// `i64::MAX` (which Firestore answers as a double) is asked again one shard value at a
    /// time, and a shard value still past it has its values read (a projection of `field`,
    /// one billed read per document) and added exactly. A double sum across chunk queries
    /// adds the chunks' sums, so it may differ from the unsharded sum in the last bits, as any
    /// reordering of a floating-point sum does.
    ///
    /// A query with a [`limit`](Self::limit) or a cursor ([`after`](Self::after)) is
    /// [`Error::InvalidQuery`], nothing sent: Firestore orders an aggregation by the
    /// aggregated field too, so its "first `limit`" is not the query's.
    ///
    /// Served by the index (shard, equality fields, order field, `field`), which the plan holds
    /// for every query and every `#[sharded(aggregate)]` field.
    pub async fn sum(&self, db: &FirestoreDb, field: NumericField<T>) -> Result<Number> {
        Ok(self.aggregate(db, field, false).await?.0)
    }

    /// The average of `field` over every document the query matches that holds a number in
    /// it, as Firestore's `avg` skips a null or a string (legacy data); `None` when there is
    /// none. Across chunk queries it is the total sum over the total count of numbers, never
    /// an average of averages. A chunk's count of numbers is its sum over its average; a
    /// chunk averaging exactly 0 (while the total is not) leaves it open, and is asked again
    /// as [`sum`](Self::sum) asks an overflowing chunk. Refuses a limit or a cursor as
    /// [`sum`](Self::sum) does.
    pub async fn avg(&self, db: &FirestoreDb, field: NumericField<T>) -> Result<Option<f64>> {
        Ok(self.aggregate(db, field, true).await?.1)
    }

    /// [`sum`](Self::sum) and [`avg`](Self::avg) of `field` at once: one aggregation request
    /// per chunk instead of two.
    pub async fn sum_and_avg(
        &self,
        db: &FirestoreDb,
        field: NumericField<T>,
    ) -> Result<(Number, Option<f64>)> {
        self.aggregate(db, field, true).await
    }

    /// The query, live: a stream of snapshots, the first once every chunk's results are in,
    /// then one whenever the results change. Each snapshot holds the documents in order (the
    /// first `limit` when limited) and the changes since the one before.
    ///
    /// Every chunk query is a target of one Listen stream, and a snapshot shows every target
    /// at the same read time: never a mix of two moments, and a document an upsert moved to
    /// another chunk appears once. When the server or the network closes the stream, it is
    /// opened again and each target resumes from its resume token; a target the server
    /// removes (a missing index) or connections that keep failing end the stream with
    /// [`Error::Listen`]. The query is checked before anything is sent.
    ///
    /// What each snapshot is, as the Firebase SDKs keep it: each target's documents and its
    /// resume token are committed together at a point the server declares consistent, and a
    /// broken stream goes back to the last such point before resuming from its token, so a
    /// snapshot never shows half a resend. A target the server sends afresh (a reset) is
    /// counted at that point's read time before it is shown (one read per thousand matches)
    /// and read again if the stream left it short, which the emulator was seen to do.
    /// [`ListenOptions`] set the reconnections, an idle timeout, and checkpoints to resume
    /// from after a restart ([`listen_from`](Self::listen_from)).
    pub fn listen(&self, db: &FirestoreDb) -> Result<listen::SnapshotStream<T>> {
        self.listen_with(db, ListenOptions::default())
    }

    /// [`listen`](Self::listen), reconnecting as `options` say.
    pub fn listen_with(
        &self,
        db: &FirestoreDb,
        options: ListenOptions,
    ) -> Result<listen::SnapshotStream<T>> {
        self.listener(db, options, None)
    }

    /// [`listen_with`](Self::listen_with), starting where `checkpoint` (taken from a snapshot
    /// of this same query, in this process or an earlier one) left off: each target resumes
    /// from the checkpoint's resume token, so the server sends only the documents changed
    /// since, not the whole result. The first snapshot holds every document, and its changes
    /// are those since the checkpoint's snapshot. A checkpoint of another query or database is
    /// [`Error::InvalidCheckpoint`]. The server may decline an old token; it then sends the
    /// whole result again (with a reset), which costs reads but is exact all the same.
    pub fn listen_from(
        &self,
        db: &FirestoreDb,
        checkpoint: ListenCheckpoint,
        options: ListenOptions,
    ) -> Result<listen::SnapshotStream<T>> {
        self.listener(db, options, Some(checkpoint))
    }

    fn listener(
        &self,
        db: &FirestoreDb,
        options: ListenOptions,
        checkpoint: Option<ListenCheckpoint>,
    ) -> Result<listen::SnapshotStream<T>> {
        options.validate()?;
        let prepared = self.prepare(db)?;
        let queries = prepared
            .chunks
            .iter()
            .map(|chunk| {
                self.structured_query(&prepared, chunk, prepared.start_after.clone(), self.limit)
            })
            .collect::<Result<Vec<_>>>()?;
        let limit = self.limit.map(|limit| limit as usize);
        let order = query_order::<T>;
        let parent = self.scope.parent_path(db);
        let listener =
            listen::Listener::<T>::new(db, parent, queries, limit, order, options, checkpoint)?;
        let snapshots = listener.into_stream();
        if T::RETIRED_SHARD_VALUES.is_empty() {
            return Ok(snapshots);
        }
        // No snapshot before the check that no document holds a retired value.
        let (db, scope) = (db.clone(), self.scope.clone());
        Ok(futures::stream::once(async move {
            match crate::retired::check::<T>(&db, &scope).await {
                Ok(()) => snapshots,
                Err(error) => futures::stream::iter([Err(error)]).boxed(),
            }
        })
        .flatten()
        .boxed())
    }

    /// A chunk's query as the protocol's `StructuredQuery`, starting just after `after`, at
    /// most `limit`: what a Listen target or a raw RunQuery sends.
    fn structured_query(
        &self,
        prepared: &Prepared,
        chunk: &[&str],
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

    async fn fetch_documents(&self, db: &FirestoreDb) -> Result<(Vec<Document>, QueryStats)> {
        let span = query_span::<T, QUERY>("fetch");
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
        let fetched = self.fetch_rounds(snapshot.db(), &prepared).await;
        snapshot.release();
        let (mut results, stats) = fetched?;
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

    /// Every chunk's documents, as many as the merge of the first `limit` needs
    /// ([`shares`]): one round of one query per chunk, and for a limited query past 30 shard
    /// values, up to three more rounds to the chunks that may hold more of them.
    async fn fetch_rounds(
        &self,
        db: &FirestoreDb,
        prepared: &Prepared,
    ) -> Result<(Vec<Vec<Document>>, QueryStats)> {
        let chunks = &prepared.chunks;
        let query = |i: usize, after: Option<Vec<FirestoreValue>>, limit: Option<u32>| {
            self.select_page(db, prepared, chunks[i], after, limit)
                .query()
                .instrument(chunk_span(i, chunks[i]))
        };
        let limit = match self.limit {
            Some(limit) if chunks.len() > 1 => limit as usize,
            _ => {
                let results = futures::future::try_join_all(
                    (0..chunks.len()).map(|i| query(i, prepared.start_after.clone(), self.limit)),
                )
                .await?;
                let stats = QueryStats {
                    queries: results.len(),
                    documents_read: results.iter().map(Vec::len).sum(),
                    rounds: 1,
                };
                return Ok((results, stats));
            }
        };
        let values: Vec<usize> = chunks.iter().map(|chunk| chunk.len()).collect();
        let asked = shares::first_round(limit, &values);
        let mut fetched = futures::future::try_join_all(
            asked
                .iter()
                .enumerate()
                .map(|(i, &ask)| query(i, prepared.start_after.clone(), Some(ask as u32))),
        )
        .await?;
        let mut ran_out: Vec<bool> = fetched
            .iter()
            .zip(&asked)
            .map(|(documents, &ask)| documents.len() < ask)
            .collect();
        let mut stats = QueryStats {
            queries: chunks.len(),
            documents_read: fetched.iter().map(Vec::len).sum(),
            rounds: 1,
        };
        loop {
            let next = shares::next_round(
                limit,
                stats.rounds,
                &fetched,
                &ran_out,
                &values,
                query_order::<T>,
            );
            if next.is_empty() {
                return Ok((fetched, stats));
            }
            // Just after the chunk's last document; from the start again when that document's
            // order value is a string Firestore refuses as a cursor (over 1,500 bytes).
            let requests: Vec<(usize, bool, usize)> = next
                .iter()
                .map(|&(i, more)| {
                    let last = fetched[i]
                        .last()
                        .expect("a chunk asked again returned documents");
                    let resumable = order::field_value(last, T::ORDER_FIELD)
                        .is_some_and(order::usable_in_cursor);
                    match resumable {
                        true => (i, true, more),
                        false => (i, false, fetched[i].len() + more),
                    }
                })
                .collect();
            let extra = futures::future::try_join_all(requests.iter().map(|&(i, resume, ask)| {
                let after = match resume {
                    true => fetched[i]
                        .last()
                        .map(|last| -> Result<_> {
                            let cursor = Cursor::<T, QUERY, R>::after_document(last)?;
                            Ok(start_after_values(
                                cursor.position.order_value,
                                last.name.clone(),
                            ))
                        })
                        .transpose(),
                    false => Ok(prepared.start_after.clone()),
                };
                async move { Ok::<_, Error>(query(i, after?, Some(ask as u32)).await?) }
            }))
            .await?;
            stats.rounds += 1;
            stats.queries += requests.len();
            for ((i, resume, ask), documents) in requests.into_iter().zip(extra) {
                stats.documents_read += documents.len();
                ran_out[i] = documents.len() < ask;
                match resume {
                    true => fetched[i].extend(documents),
                    false => fetched[i] = documents,
                }
            }
        }
    }

    /// `per_chunk` on every chunk at once, all reading one snapshot, released before the
    /// results return; each in a span of its own. A failure in any chunk fails the whole: no
    /// partial result.
    async fn in_every_chunk<Each>(
        &self,
        db: &FirestoreDb,
        span: &tracing::Span,
        per_chunk: impl for<'a> Fn(
            &'a FirestoreDb,
            &'a Prepared,
            &'a [&'static str],
        ) -> futures::future::BoxFuture<'a, Result<Each>>,
    ) -> Result<Vec<Each>> {
        let (prepared, snapshot) = self.begin(db, span).await?;
        let results =
            futures::future::try_join_all(prepared.chunks.iter().enumerate().map(|(i, chunk)| {
                per_chunk(snapshot.db(), &prepared, chunk).instrument(chunk_span(i, chunk))
            }))
            .await;
        snapshot.release();
        results
    }

    fn select<'db>(
        &self,
        db: &'db FirestoreDb,
        prepared: &Prepared,
        chunk: &[&str],
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
    fn select_page<'db>(
        &self,
        db: &'db FirestoreDb,
        prepared: &Prepared,
        chunk: &[&str],
        after: Option<Vec<FirestoreValue>>,
        limit: Option<u32>,
    ) -> firestore::select_builder::FirestoreSelectDocBuilder<'db, FirestoreDb> {
        let mut select = self.select_ordered(db, prepared, chunk, prepared.orders.clone(), None);
        if let Some(limit) = limit {
            select = select.limit(limit);
        }
        if let Some(after) = after {
            select = select.start_at(FirestoreQueryCursor::AfterValue(after));
        }
        select
    }

    /// A chunk's query where the query's scope reads, ordered by `orders`; with a
    /// `projection`, of that field alone.
    fn select_ordered<'db>(
        &self,
        db: &'db FirestoreDb,
        prepared: &Prepared,
        chunk: &[&str],
        orders: Vec<FirestoreQueryOrder>,
        projection: Option<&str>,
    ) -> firestore::select_builder::FirestoreSelectDocBuilder<'db, FirestoreDb> {
        let filter = self.filter(prepared, chunk);
        let select = db.fluent().select();
        let select = match projection {
            Some(field) => select.fields([field]),
            None => select,
        };
        let select = select
            .from(T::COLLECTION)
            .parent(self.scope.parent_path(db))
            .filter(move |_| Some(filter.clone()))
            .order(move |o| o.fields(orders.clone()));
        match self.scope {
            crate::parent::Scope::Group => select.all_descendants(),
            _ => select,
        }
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

    /// The start of every read: the query checked and prepared, its chunk count on `span`, no
    /// document left in a retired shard value ([`crate::retired`]), and the snapshot its chunk
    /// queries share.
    async fn begin<'db>(
        &self,
        db: &'db FirestoreDb,
        span: &tracing::Span,
    ) -> Result<(Prepared, Snapshot<'db>)> {
        let prepared = self.prepare(db)?;
        span.record("chunks", prepared.chunks.len());
        crate::retired::check::<T>(db, &self.scope).await?;
        let snapshot = Snapshot::begin(db, prepared.chunks.len()).await?;
        Ok((prepared, snapshot))
    }

    /// Checks the query and turns it into Firestore terms; an error here means nothing was sent.
    fn prepare(&self, db: &FirestoreDb) -> Result<Prepared> {
        self.scope.check::<T>()?;
        let invalid = |why: String| Error::InvalidQuery(why);
        let Some(shape) = shape::<T>(QUERY).filter(|s| s.fields.len() == self.values.len()) else {
            return Err(invalid(format!(
                "`{}` has no query with id {QUERY} on {} field(s)",
                T::COLLECTION,
                self.values.len()
            )));
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
        for (field, value) in shape.fields.iter().zip(&self.values) {
            let value = value.clone().map_err(invalid)?;
            check_filter_value(field, &value)?;
            filters.push(compare(FirestoreQueryFilterCompare::Equal(
                (*field).to_owned(),
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
        if let Some(cursor) = &self.after {
            cursor.check_scope(&self.scope)?;
        }
        let start_after = self.after.as_ref().map(|cursor| {
            let name = cursor.document_name(db, T::COLLECTION);
            start_after_values(cursor.order_value.clone(), name)
        });
        Ok(Prepared {
            filters,
            orders,
            start_after,
            chunks,
        })
    }
}

/// The cursor values a query starts just after: a document's order value and full name, as
/// the query orders.
fn start_after_values(order_value: Value, name: String) -> Vec<FirestoreValue> {
    vec![
        FirestoreValue { value: order_value },
        FirestoreValue {
            value: Value {
                value_type: Some(ValueType::ReferenceValue(name)),
            },
        },
    ]
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
fn query_span<T: Sharded, const QUERY: u64>(operation: &'static str) -> tracing::Span {
    tracing::info_span!(
        "sharded_query",
        operation,
        collection = T::COLLECTION,
        field = query_name::<T>(QUERY),
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
