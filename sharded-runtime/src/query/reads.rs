//! What a query reads, as users call it: documents (`fetch`, `page`, `stream`, projections,
//! reads that report undecodable documents apart), `count`, `sum` and `avg`, and `listen`.
//! Each plans the query ([`ShardedQuery::plan`]) and hands the plan to its executor: `fetch`
//! (rounds of chunk queries, pages), `count`, `aggregate`, `stream` and `listen`.
//!
//! The `_with_errors` reads report a document that does not decode beside the ones that do:
//! for collections other clients also write (a Cloud Function, a web client), where one
//! document written differently would otherwise fail the whole read and hide every other
//! document.

use firestore::FirestoreDb;
use futures::future::BoxFuture;
use futures::stream::{BoxStream, StreamExt};
use serde::de::DeserializeOwned;
use tracing::Instrument as _;

use super::spans::query_span;
use super::{
    Aggregations, ExplainedQuery, ListenCheckpoint, ListenOptions, Number, NumericField, Page,
    QueryStats, Reach, ShardedQuery, SnapshotStream, Summable, SummedOver, Window, aggregate,
    count, listen, projection, stream,
};
use crate::error::Result;
use crate::model::sharded::Sharded;
use crate::model::stored::{Decoded, Stored, Undecodable};
use crate::model::stored_names::StoredNames;

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    // Documents.

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
        let page = self.page_documents(db, limit).await?;
        let items = page
            .documents
            .iter()
            .map(Stored::from_document)
            .collect::<Result<_>>()?;
        Ok(Page {
            items,
            next: page.next,
            previous: page.previous,
            stats: page.stats,
        })
    }

    /// The matching documents as a stream, in order. Chunk queries stream concurrently and
    /// merge as they arrive; an error in any chunk is the stream's last item.
    ///
    /// Every document comes from one snapshot, read in pages of 300 per chunk: the first in
    /// the snapshot every read of a query shares, the rest at its read time, so that a slow
    /// consumer holds no transaction open. Each page is read through the one retry policy,
    /// so a dropped connection costs a retry, not the stream. Firestore keeps a read time
    /// readable for an hour (point-in-time recovery keeps whole minutes only, which a
    /// stream's read time is not): a stream consumed for longer ends with
    /// [`Error::ReadTimeExpired`](crate::error::Error::ReadTimeExpired), carrying the token of the cursor after the last document
    /// it yielded, to go on from with a new stream. On a client pinned to a transaction or a
    /// read time, every page reads there.
    ///
    /// The stream owns what it reads with (a clone of `db`, a handle to the same client), so
    /// it borrows neither the query nor `db`: it can be returned, kept, or moved into a task,
    /// as a [`listen`](Self::listen)er's can.
    pub async fn stream(&self, db: &FirestoreDb) -> Result<BoxStream<'static, Result<Stored<T>>>> {
        self.stream_in_pages_of(db, stream::STREAM_PAGE).await
    }

    /// [`stream`](Self::stream), reading pages of `page_size` documents per chunk query
    /// (fewer held in memory, more requests); [`Error::InvalidQuery`](crate::error::Error::InvalidQuery) unless `page_size` is
    /// 1 to [`MAX_LIMIT`](crate::query::MAX_LIMIT), nothing sent.
    pub async fn stream_in_pages_of(
        &self,
        db: &FirestoreDb,
        page_size: u32,
    ) -> Result<BoxStream<'static, Result<Stored<T>>>> {
        let documents = stream::stream_documents(self, db, page_size).await?;
        Ok(documents
            .map(|document| Stored::from_document(&document?))
            .boxed())
    }

    /// The matching documents, in order, read as `P`: a struct of some of `T`'s fields
    /// (`#[derive(Deserialize, StoredNames)]`, its fields named and renamed as `T`'s are
    /// stored). Only `P`'s fields come back (a field mask, with the order field, the shard and
    /// a range filter's field, which the merge and [`Stored`] need), so a large document
    /// costs less to send;
    /// Firestore bills a projection as it bills the query, one read per document. A field of
    /// `P` that `T` does not store under that name, or one `P` flattens or skips, is
    /// [`Error::InvalidQuery`](crate::error::Error::InvalidQuery) before anything is sent.
    pub fn fetch_as<'q, P>(
        &self,
        db: &'q firestore::FirestoreDb,
    ) -> BoxFuture<'q, Result<Vec<Stored<P>>>>
    where
        P: DeserializeOwned + StoredNames + 'q,
    {
        // Not `async fn`: a future whose type does not carry `P`'s bounds has them checked
        // once, at the call.
        let mask = projection::projection_mask::<T, P>(&self.then_by());
        let mut masked = self.clone();
        Box::pin(async move {
            masked.mask = Some(mask?);
            let (documents, _) = masked.fetch_documents(db).await?;
            documents.iter().map(Stored::read_as::<T>).collect()
        })
    }

    /// [`stream`](Self::stream), each document read as `P` as [`fetch_as`](Self::fetch_as)
    /// reads it: only `P`'s fields come back, with the order field, the shard and a range
    /// filter's field, which the merge and the stream's later pages start after.
    pub fn stream_as<'q, P>(
        &'q self,
        db: &'q FirestoreDb,
    ) -> BoxFuture<'q, Result<BoxStream<'static, Result<Stored<P>>>>>
    where
        P: DeserializeOwned + StoredNames + Send + 'static,
    {
        self.stream_as_in_pages_of(db, stream::STREAM_PAGE)
    }

    /// [`stream_as`](Self::stream_as), reading pages of `page_size` documents per chunk
    /// query, as [`stream_in_pages_of`](Self::stream_in_pages_of) does.
    pub fn stream_as_in_pages_of<'q, P>(
        &'q self,
        db: &'q FirestoreDb,
        page_size: u32,
    ) -> BoxFuture<'q, Result<BoxStream<'static, Result<Stored<P>>>>>
    where
        P: DeserializeOwned + StoredNames + Send + 'static,
    {
        let mask = projection::projection_mask::<T, P>(&self.then_by());
        let mut masked = self.clone();
        Box::pin(async move {
            masked.mask = Some(mask?);
            let documents = stream::stream_documents(&masked, db, page_size).await?;
            Ok(documents
                .map(|document| Stored::read_as::<T>(&document?))
                .boxed())
        })
    }

    // Documents, the undecodable ones apart.

    /// [`fetch_stored`](Self::fetch_stored), with each document that does not read as `T`
    /// reported in its place ([`Undecodable`]: its name and why) instead of failing the
    /// fetch. Every other failure (a chunk query's error) still fails it.
    pub async fn fetch_with_errors(&self, db: &FirestoreDb) -> Result<Vec<Decoded<T>>> {
        let (documents, _) = self.fetch_documents(db).await?;
        Ok(documents.iter().map(Stored::decode).collect())
    }

    /// [`stream`](Self::stream), with each document that does not read as `T` an
    /// `Ok(Err(Undecodable))` item in its place; an error of the stream itself is an `Err`
    /// item, its last.
    pub async fn stream_with_errors(
        &self,
        db: &FirestoreDb,
    ) -> Result<BoxStream<'static, Result<Decoded<T>>>> {
        let documents = stream::stream_documents(self, db, stream::STREAM_PAGE).await?;
        Ok(documents
            .map(|document| document.map(|document| Stored::decode(&document)))
            .boxed())
    }

    /// [`page`](Self::page), each document read as `P` as [`fetch_as`](Self::fetch_as) reads
    /// it: only `P`'s fields come back (with the order field, the shard and a range filter's
    /// field, which the cursors carry), and the page's cursors are the query's own, so the
    /// next page is `query.after(page.next)`, as [`page`](Self::page)'s.
    pub fn page_as<'q, P>(
        &self,
        db: &'q FirestoreDb,
        limit: u32,
    ) -> BoxFuture<'q, Result<Page<T, QUERY, R, P>>>
    where
        P: DeserializeOwned + StoredNames + 'q,
    {
        let mask = projection::projection_mask::<T, P>(&self.then_by());
        let mut masked = self.clone();
        Box::pin(async move {
            masked.mask = Some(mask?);
            let page = masked.page_documents(db, limit).await?;
            let items = page
                .documents
                .iter()
                .map(Stored::read_as::<T>)
                .collect::<Result<_>>()?;
            Ok(Page {
                items,
                next: page.next,
                previous: page.previous,
                stats: page.stats,
            })
        })
    }

    /// [`page`](Self::page), with the page's documents that do not read as `T` apart: the
    /// page holds the ones that do, in order, and its cursors are where they would be had
    /// every document read (so paging on skips none and repeats none).
    pub async fn page_with_errors(
        &self,
        db: &FirestoreDb,
        limit: u32,
    ) -> Result<(Page<T, QUERY, R>, Vec<Undecodable>)> {
        let page = self.page_documents(db, limit).await?;
        let (mut items, mut undecodable) = (Vec::new(), Vec::new());
        for decoded in page.documents.iter().map(Stored::decode) {
            match decoded {
                Ok(stored) => items.push(stored),
                Err(error) => undecodable.push(error),
            }
        }
        let page = Page {
            items,
            next: page.next,
            previous: page.previous,
            stats: page.stats,
        };
        Ok((page, undecodable))
    }

    // Aggregations.

    /// How many documents the query returns: its limit and cursor apply, as they do to
    /// Firestore's `count`. One count aggregation per chunk, with the cursor and the limit;
    /// their sum capped at the limit.
    pub async fn count(&self, db: &FirestoreDb) -> Result<u64> {
        let span = query_span::<T, QUERY>("count");
        let plan = self.plan()?;
        count::count_planned::<T>(db, &plan, &span)
            .instrument(span.clone())
            .await
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
    /// A query with a [`limit`](Self::limit) or a cursor ([`after`](Self::after),
    /// [`before`](Self::before)) has no `sum` (it does not compile): Firestore orders an
    /// aggregation by the aggregated field too, so its "first `limit`" is not the query's.
    ///
    /// Served by the index (shard, equality fields, order field, `field`), which the plan holds
    /// for every query and every `#[sharded(aggregate)]` field, and for the queries a field's
    /// `aggregate(...)` names. An [`or`](Self::or) sums a field only when every query it joins
    /// does (each is served by its own index): otherwise it does not compile.
    pub fn sum<'q, S: SummedOver<QUERY>>(
        &'q self,
        db: &'q FirestoreDb,
        field: NumericField<T, S>,
    ) -> BoxFuture<'q, Result<Number>>
    where
        W: Summable<S>,
    {
        // Not `async fn`: a future whose type does not name `S` has the field's bound checked
        // once, at the call, not again on the future and at its `.await`.
        let field = field.checked();
        Box::pin(async move { Ok(aggregate::aggregate(self, db, field, false).await?.0) })
    }

    /// The average of `field` over every document the query matches that holds a number in
    /// it, as Firestore's `avg` skips a null or a string (legacy data); `None` when there is
    /// none. Across chunk queries it is the total sum over the total count of numbers, never
    /// an average of averages. A chunk's count of numbers is its sum over its average; a
    /// chunk averaging exactly 0 (while the total is not) leaves it open, and is asked again
    /// as [`sum`](Self::sum) asks an overflowing chunk. Like [`sum`](Self::sum), it is not
    /// there on a query with a limit or a cursor.
    pub fn avg<'q, S: SummedOver<QUERY>>(
        &'q self,
        db: &'q FirestoreDb,
        field: NumericField<T, S>,
    ) -> BoxFuture<'q, Result<Option<f64>>>
    where
        W: Summable<S>,
    {
        let field = field.checked();
        Box::pin(async move { Ok(aggregate::aggregate(self, db, field, true).await?.1) })
    }

    /// Several aggregations in one call, as Firestore's SDKs take them in one aggregation
    /// query: a tuple of one to five of [`count()`](crate::query::count),
    /// [`sum(field)`](crate::query::sum) and [`avg(field)`](crate::query::avg), answered as a
    /// tuple in the same order (`u64`, [`Number`], `Option<f64>`), every answer read at one
    /// snapshot and exact as [`sum`](Self::sum) and [`avg`](Self::avg) are.
    ///
    /// ```no_run
    /// # use serde::{Deserialize, Serialize};
    /// # use sharded_runtime::Sharded;
    /// # use sharded_runtime::firestore::FirestoreDb;
    /// use sharded_runtime::reads::{avg, count, sum};
    /// # #[derive(Serialize, Deserialize, Sharded)]
    /// # #[sharded(shards = 40, order_by = "at")]
    /// # struct Order { #[sharded(index)] customer: String, #[sharded(aggregate)] qty: i64, #[sharded(aggregate)] price: f64, at: i64 }
    /// # async fn example(db: &FirestoreDb) -> sharded_runtime::Result<()> {
    /// let fields = Order::aggregates();
    /// let (orders, units, mean_price) = Order::query()
    ///     .customer("c1")
    ///     .aggregate(db, (count(), sum(fields.qty), avg(fields.price)))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    ///
    /// As in Firestore, the aggregations read only the documents that hold every field they
    /// name: `count()` beside `sum(fields.qty)` counts the documents with a `qty`. Each chunk
    /// asks one aggregation query per field named (each served by the index the plan holds
    /// for that field's sum) and, with none or several, one count; where a chunk's
    /// documents do not all hold every field, its documents' values are read (one billed read
    /// each, reported as `sum_and_avg_with_stats` reports its own; see
    /// [`aggregate_with_stats`](Self::aggregate_with_stats)).
    pub fn aggregate<'q, A>(
        &'q self,
        db: &'q FirestoreDb,
        aggregations: A,
    ) -> BoxFuture<'q, Result<A::Output>>
    where
        A: Aggregations<T, QUERY, W> + Send + 'q,
    {
        Box::pin(async move { Ok(self.aggregate_with_stats(db, aggregations).await?.0) })
    }

    /// [`aggregate`](Self::aggregate), with what it cost: the aggregation queries sent, their
    /// rounds, and the documents whose values were read to settle a chunk.
    pub fn aggregate_with_stats<'q, A>(
        &'q self,
        db: &'q FirestoreDb,
        aggregations: A,
    ) -> BoxFuture<'q, Result<(A::Output, QueryStats)>>
    where
        A: Aggregations<T, QUERY, W> + Send + 'q,
    {
        let asked = aggregations.asked();
        Box::pin(async move {
            let (totals, stats) = super::aggregate_asked(self, db, &asked).await?;
            Ok((aggregations.answer(&totals), stats))
        })
    }

    /// [`sum`](Self::sum) and [`avg`](Self::avg) of `field` at once: one aggregation request
    /// per chunk instead of two.
    pub fn sum_and_avg<'q, S: SummedOver<QUERY>>(
        &'q self,
        db: &'q FirestoreDb,
        field: NumericField<T, S>,
    ) -> BoxFuture<'q, Result<(Number, Option<f64>)>>
    where
        W: Summable<S>,
    {
        let field = field.checked();
        Box::pin(async move {
            let (sum, avg, _) = aggregate::aggregate(self, db, field, true).await?;
            Ok((sum, avg))
        })
    }

    /// [`sum_and_avg`](Self::sum_and_avg), with what it cost: the aggregation queries sent,
    /// and the documents whose values were read where a chunk's answer left its subtotal open
    /// (a sum past `i64::MAX`, an average of exactly 0 beside a total that is not: one billed
    /// read per document of that shard value, also reported as a `tracing` warning), so
    /// that a bill is never a surprise. `documents_read` is 0 when the answers settled it.
    pub fn sum_and_avg_with_stats<'q, S: SummedOver<QUERY>>(
        &'q self,
        db: &'q FirestoreDb,
        field: NumericField<T, S>,
    ) -> BoxFuture<'q, Result<(Number, Option<f64>, QueryStats)>>
    where
        W: Summable<S>,
    {
        let field = field.checked();
        Box::pin(aggregate::aggregate(self, db, field, true))
    }

    // Vector search.

    /// Firestore's vector search (`findNearest`) over the query's documents: the `limit`
    /// nearest to `vector` by `measure`, nearest first, each with its distance (for
    /// `DotProduct` the dot product, largest first), exactly the unsharded search's. `field`
    /// is a field of `T::vectors()`, declared `#[sharded(vector(dimension = n))]`, whose vector
    /// indexes the plan holds: one per equality query and the whole collection, each the
    /// shard field, the query's fields, then the vector. Firestore pre-filters a vector search
    /// by equality, so each shard value is one request (`shard == v` and the query's
    /// equalities), each asked for `limit`, and their answers are merged by distance (ties by
    /// document name). A vector of another dimension, a limit
    /// outside 1 to [`MAX_NEIGHBORS`](crate::query::MAX_NEIGHBORS), or a query with a range,
    /// filter, `in`, OR, projection, limit or cursor is
    /// [`Error::InvalidQuery`](crate::error::Error::InvalidQuery) before anything is sent. Billed
    /// as Firestore bills a vector search, per request: one per shard value.
    pub async fn find_nearest(
        &self,
        db: &FirestoreDb,
        field: super::VectorField<T>,
        vector: &[f64],
        limit: u32,
        measure: firestore::FirestoreFindNearestDistanceMeasure,
    ) -> Result<Vec<super::Neighbor<T>>> {
        super::nearest::find_nearest(self, db, field, vector, limit, measure).await
    }

    // Cost.

    /// Firestore's query explain for every chunk query, beside the plan: each chunk query
    /// sent as the plan has it (from its cursor, with its whole limit, as one round of
    /// [`fetch`](Self::fetch) would send it), at one snapshot, and answered with the indexes
    /// it used and, when `analyze` is set, what it cost. `analyze` runs the chunk queries
    /// (their documents are billed, as Firestore bills an analyzed query) and returns their
    /// documents' count, not the documents. [`ExplainedQuery::read_operations`] adds the
    /// chunks' billed reads up: a sharded query's cost next to the unsharded query's own
    /// explain. The emulator answers no metrics (measured), so there every chunk's are `None`.
    pub async fn explain(&self, db: &FirestoreDb, analyze: bool) -> Result<ExplainedQuery> {
        super::explain::explain(self, db, analyze).await
    }

    // Live.

    /// The query, live: a stream of snapshots, the first once every chunk's results are in,
    /// then one whenever the results change. Each snapshot holds the documents in order (the
    /// first `limit` when limited) and the changes since the one before.
    ///
    /// Every chunk query is a target of one Listen stream, and a snapshot shows every target
    /// at the same read time: never a mix of two moments, and a document an upsert moved to
    /// another chunk appears once. When the server or the network closes the stream, it is
    /// opened again and each target resumes from its resume token; a target the server
    /// removes (a missing index) or connections that keep failing end the stream with
    /// [`Error::Listen`](crate::error::Error::Listen). The query is checked before anything is sent.
    /// A live query shows the present: a client pinned to a read time or a transaction
    /// (`clone_with_consistency_selector`) is [`Error::InvalidQuery`](crate::error::Error::InvalidQuery).
    ///
    /// What each snapshot is, as the Firebase SDKs keep it: each target's documents and its
    /// resume token are committed together at a point the server declares consistent, and a
    /// broken stream goes back to the last such point before resuming from its token, so a
    /// snapshot never shows half a resend. A target the server sends afresh (a reset) is
    /// counted at that point's read time before it is shown (one read per thousand matches)
    /// and read again if the stream left it short, which the emulator was seen to do.
    /// [`ListenOptions`] set the reconnections, an idle timeout, and checkpoints to resume
    /// from after a restart ([`listen_from`](Self::listen_from)).
    pub fn listen(&self, db: &FirestoreDb) -> Result<SnapshotStream<T>> {
        self.listen_with(db, ListenOptions::default())
    }

    /// [`listen`](Self::listen), reconnecting as `options` say.
    pub fn listen_with(
        &self,
        db: &FirestoreDb,
        options: ListenOptions,
    ) -> Result<SnapshotStream<T>> {
        listen::listener(self, db, options, None, listen::shared::<T, T>)
    }

    /// [`listen_with`](Self::listen_with), starting where `checkpoint` (taken from a snapshot
    /// of this same query, in this process or an earlier one) left off: each target resumes
    /// from the checkpoint's resume token, so the server sends only the documents changed
    /// since, not the whole result. The first snapshot holds every document, and its changes
    /// are those since the checkpoint's snapshot. A checkpoint of another query or database is
    /// [`Error::InvalidCheckpoint`](crate::error::Error::InvalidCheckpoint). The server may decline an old token; it then sends the
    /// whole result again (with a reset), which costs reads but is exact all the same.
    pub fn listen_from(
        &self,
        db: &FirestoreDb,
        checkpoint: ListenCheckpoint,
        options: ListenOptions,
    ) -> Result<SnapshotStream<T>> {
        listen::listener(self, db, options, Some(checkpoint), listen::shared::<T, T>)
    }

    /// [`listen`](Self::listen), each document read as `P` as [`fetch_as`](Self::fetch_as)
    /// reads it: every chunk's target asks for `P`'s fields alone (with the order field, the
    /// shard and a range filter's field, which the merge compares), so each change costs
    /// less to send. A checkpoint of it resumes it, not the whole documents' listener.
    pub fn listen_as<P>(&self, db: &FirestoreDb) -> Result<SnapshotStream<P>>
    where
        P: DeserializeOwned + StoredNames + Send + Sync + 'static,
    {
        let mut masked = self.clone();
        masked.mask = Some(projection::projection_mask::<T, P>(&self.then_by())?);
        listen::listener(
            &masked,
            db,
            ListenOptions::default(),
            None,
            listen::shared::<T, P>,
        )
    }
}
