//! Reading a query's documents: every chunk query at one snapshot, in rounds for a limited
//! fan-out past 30 shard values, merged into the order one query would return; and pages.

use firestore::gcloud_sdk::google::firestore::v1::Document;
use firestore::{FirestoreDb, FirestoreQueryCursor};
use tracing::Instrument as _;

use super::cursor::Edge;
use super::plan::{Chunk, QueryPlan};
use super::snapshot::Snapshot;
use super::spans::{chunk_span, query_span};
use super::{
    Cursor, MAX_LIMIT, QueryStats, Reach, ShardedQuery, Window, limit_split, merge_sorted,
};
use crate::error::{Error, Result};
use crate::model::sharded::Sharded;

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// A page's documents as read, with its cursors and what it cost.
    pub(super) async fn page_documents(
        &self,
        db: &FirestoreDb,
        limit: u32,
    ) -> Result<RawPage<T, QUERY, R>> {
        if let Some(flipped) = self.ending_before()? {
            return self.page_before(db, flipped, limit).await;
        }
        let (documents, more, mut stats) = self.clone().with_look_ahead(db, limit).await?;
        let next = match documents.last() {
            Some(last) if more => Some(Cursor::after_document(last)?),
            _ => None,
        };
        // Whether a document precedes the page, looked up in the other direction (whose
        // indexes a reversible type has): the first page has none before it. The look-up
        // starts at the page's own cursor, taken the other way (what precedes a page after
        // it is it and what comes before it), not at the page's first document, whose values
        // Firestore may refuse as a cursor (a whole string past 1,499 bytes) where the
        // page's own cursor was taken.
        let previous = match (T::DESCRIPTION.reversible, &self.after) {
            (true, Some(start)) => {
                let first = documents.first();
                let (any, cost) = self
                    .flipped()
                    .any_from(db, Some(start.clone()), !self.start_inclusive)
                    .await?;
                stats.add(cost);
                match (any, first) {
                    (false, _) => None,
                    (true, Some(first)) => Some(Cursor::after_document(first)?),
                    // An empty page after a cursor: the page before is the query's last.
                    (true, None) => Some(Cursor::at_edge(Edge::End)),
                }
            }
            _ => None,
        };
        Ok(RawPage {
            documents,
            next,
            previous,
            stats,
        })
    }

    /// Whether a document of this query comes after `position` (at it too, when
    /// `inclusive`; with none: whether it has any), from one query of one document; and what
    /// that cost.
    async fn any_from(
        mut self,
        db: &FirestoreDb,
        position: Option<super::cursor::Position>,
        inclusive: bool,
    ) -> Result<(bool, QueryStats)> {
        self.after = position;
        self.start_inclusive = inclusive;
        self.before = None;
        self.limit = Some(1);
        let (documents, stats) = self.fetch_documents(db).await?;
        Ok((!documents.is_empty(), stats))
    }

    /// At most `limit` documents of this query, and whether more follow, known from one
    /// look-ahead document (read and billed, not returned). Checked before sending, as any
    /// query; at the largest limit there is no room to look ahead, so a full page then counts
    /// as followed.
    async fn with_look_ahead(
        mut self,
        db: &FirestoreDb,
        limit: u32,
    ) -> Result<(Vec<Document>, bool, QueryStats)> {
        self.limit = Some(limit);
        self.plan()?;
        let look_ahead = limit < MAX_LIMIT;
        self.limit = Some(limit + u32::from(look_ahead));
        let (mut documents, stats) = self.fetch_documents(db).await?;
        let more =
            documents.len() > limit as usize || (!look_ahead && documents.len() == limit as usize);
        documents.truncate(limit as usize);
        Ok((documents, more, stats))
    }

    /// The page of at most `limit` documents just before the `before` cursor, read by
    /// `flipped` (the query in the other direction, after that cursor) with one look-ahead
    /// document, which tells whether another page comes before it.
    async fn page_before(
        &self,
        db: &FirestoreDb,
        flipped: ShardedQuery<T, QUERY, R::Flipped, W>,
        limit: u32,
    ) -> Result<RawPage<T, QUERY, R>> {
        let (mut documents, more, mut stats) = flipped.with_look_ahead(db, limit).await?;
        documents.reverse();
        let previous = match documents.first() {
            Some(first) if more => Some(Cursor::after_document(first)?),
            _ => None,
        };
        // Whether a document follows the page, looked up in this direction from the page's
        // own cursor, its document included (it may be gone), as the look-up of a page after a
        // cursor is; before the end, nothing follows.
        let last = documents.last();
        let before = self.before.clone().filter(|before| before.edge.is_none());
        let (any, cost) = match before {
            Some(before) => self.clone().any_from(db, Some(before), true).await?,
            None => (false, super::QueryStats::default()),
        };
        stats.add(cost);
        let next = match (any, last) {
            (false, _) => None,
            (true, Some(last)) => Some(Cursor::after_document(last)?),
            // An empty page before a cursor: the page after it is the query's first.
            (true, None) => Some(Cursor::at_edge(Edge::Start)),
        };
        Ok(RawPage {
            documents,
            next,
            previous,
            stats,
        })
    }

    /// For a query that ends [`before`](Self::before) a cursor, the query that reads it: the
    /// same in the other direction, starting after that cursor (its documents come back in
    /// reverse); `None` for any other query.
    pub(super) fn ending_before(&self) -> Result<Option<ShardedQuery<T, QUERY, R::Flipped, W>>> {
        let Some(before) = &self.before else {
            return Ok(None);
        };
        if self.after.is_some() {
            return Err(Error::InvalidQuery(
                "a query starts after a cursor or ends before one, not both".into(),
            ));
        }
        if self.end.is_some() {
            return Err(Error::InvalidQuery(
                "`before` reads backwards from its own cursor, which `end_at` and `end_before` would move: give one end".into(),
            ));
        }
        let mut flipped = self.flipped();
        flipped.after = match before.edge {
            None => Some(before.clone()),
            // Before the end: the query's last documents, read from the end.
            Some(Edge::End) => None,
            Some(Edge::Start) => {
                return Err(Error::InvalidCursor(
                    "this cursor points before the query's first document, where no page ends: pass it to `after`".into(),
                ));
            }
        };
        flipped.start_inclusive = false;
        flipped.before = None;
        Ok(Some(flipped))
    }

    /// The query's documents as read, in its order: its plan's chunk queries at one
    /// snapshot, merged (and reversed for a query that ends `before` a cursor).
    pub(super) async fn fetch_documents(
        &self,
        db: &FirestoreDb,
    ) -> Result<(Vec<Document>, QueryStats)> {
        let span = query_span::<T, QUERY>("fetch");
        let plan = self.plan()?;
        let (mut documents, stats) = self
            .fetch_planned(db, &plan, &span)
            .instrument(span.clone())
            .await?;
        if plan.ends_before {
            documents.reverse();
        }
        Ok((documents, stats))
    }

    /// `plan`'s documents, merged in the order its chunk queries read.
    async fn fetch_planned(
        &self,
        db: &FirestoreDb,
        plan: &QueryPlan,
        span: &tracing::Span,
    ) -> Result<(Vec<Document>, QueryStats)> {
        let snapshot = begin::<T>(db, plan, span).await?;
        let fetched = fetch_rounds(snapshot.db(), plan).await;
        snapshot.release();
        let (mut results, stats) = fetched?;
        span.record("documents_read", stats.documents_read);
        if results.len() == 1 {
            return Ok((results.pop().expect("one result"), stats));
        }
        let order = plan.document_order();
        let merged = merge_sorted(results, plan.limit.map(|limit| limit as usize), |a, b| {
            order.compare(a, b)
        });
        Ok((merged, stats))
    }
}

/// A page of documents as read (not yet decoded), with its cursors and what it cost.
pub(super) struct RawPage<T, const QUERY: u64, R: Reach> {
    pub(super) documents: Vec<Document>,
    pub(super) next: Option<Cursor<T, QUERY, R>>,
    pub(super) previous: Option<Cursor<T, QUERY, R>>,
    pub(super) stats: QueryStats,
}

/// Every chunk's documents, as many as the merge of the first `limit` needs
/// ([`limit_split`]): one round of one query per chunk, and for a limited query past 30 shard
/// values, up to three more rounds to the chunks that may hold more of them.
async fn fetch_rounds(
    db: &FirestoreDb,
    plan: &QueryPlan,
) -> Result<(Vec<Vec<Document>>, QueryStats)> {
    let chunks = &plan.chunks;
    let start_after = plan.start_cursor(db);
    // Each chunk query through the one retry policy: one dropped request among many
    // fails no fan-out.
    let query = |i: usize, after: Option<FirestoreQueryCursor>, limit: Option<u32>| {
        crate::wire::retry::retry_reads(&crate::wire::retry::QUERY_READS, move || {
            plan.select_page(db, chunks[i], after.clone(), limit)
                .query()
        })
        .instrument(chunk_span(i, chunks[i]))
    };
    let limit = match plan.limit {
        Some(limit) if chunks.len() > 1 => limit as usize,
        _ => {
            let results = futures::future::try_join_all(
                (0..chunks.len()).map(|i| query(i, start_after.clone(), plan.limit)),
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
    let order = plan.document_order();
    let values: Vec<usize> = chunks.iter().map(|chunk| chunk.weight()).collect();
    let asked = limit_split::first_round(limit, &values);
    let mut fetched = futures::future::try_join_all(
        asked
            .iter()
            .enumerate()
            .map(|(i, &ask)| query(i, start_after.clone(), Some(ask as u32))),
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
        let next =
            limit_split::next_round(limit, stats.rounds, &fetched, &ran_out, &values, |a, b| {
                order.compare(a, b)
            });
        if next.is_empty() {
            return Ok((fetched, stats));
        }
        // Just after the chunk's last document; from the start again when that document's
        // order value is a string Firestore refuses as a cursor (over 1,500 bytes).
        let requests: Vec<(usize, Option<FirestoreQueryCursor>, usize)> = next
            .iter()
            .map(|&(i, more)| {
                let last = fetched[i]
                    .last()
                    .expect("a chunk asked again returned documents");
                match plan.after_document_values(last) {
                    Some(after) => (i, Some(FirestoreQueryCursor::AfterValue(after)), more),
                    None => (i, None, fetched[i].len() + more),
                }
            })
            .collect();
        let extra = futures::future::try_join_all(requests.iter().map(|(i, after, ask)| {
            let after = after.clone().or_else(|| start_after.clone());
            async move { query(*i, after, Some(*ask as u32)).await }
        }))
        .await?;
        stats.rounds += 1;
        stats.queries += requests.len();
        for ((i, after, ask), documents) in requests.into_iter().zip(extra) {
            stats.documents_read += documents.len();
            ran_out[i] = documents.len() < ask;
            match after {
                Some(_) => fetched[i].extend(documents),
                None => fetched[i] = documents,
            }
        }
    }
}

/// `per_chunk` on every chunk of `plan` at once, all reading one snapshot, released before the
/// results return; each in a span of its own. A failure in any chunk fails the whole: no
/// partial result.
pub(super) async fn in_every_chunk<T: Sharded, Each>(
    db: &FirestoreDb,
    plan: &QueryPlan,
    span: &tracing::Span,
    per_chunk: impl for<'a> Fn(
        &'a FirestoreDb,
        &'a QueryPlan,
        Chunk,
    ) -> futures::future::BoxFuture<'a, Result<Each>>,
) -> Result<Vec<Each>> {
    let snapshot = begin::<T>(db, plan, span).await?;
    let results =
        futures::future::try_join_all(plan.chunks.iter().enumerate().map(|(i, chunk)| {
            per_chunk(snapshot.db(), plan, *chunk).instrument(chunk_span(i, *chunk))
        }))
        .await;
    snapshot.release();
    results
}

/// The start of every read of `plan`: its chunk count on `span`, no document left in a
/// retired shard value ([`crate::query::retired`]), and the snapshot its chunk queries share.
pub(super) async fn begin<'db, T: Sharded>(
    db: &'db FirestoreDb,
    plan: &QueryPlan,
    span: &tracing::Span,
) -> Result<Snapshot<'db>> {
    begin_requests::<T>(db, plan, span, plan.chunks.len()).await
}

/// [`begin`] for a read that sends `requests` queries in all (several per chunk), which share
/// one snapshot whenever there is more than one.
pub(super) async fn begin_requests<'db, T: Sharded>(
    db: &'db FirestoreDb,
    plan: &QueryPlan,
    span: &tracing::Span,
    requests: usize,
) -> Result<Snapshot<'db>> {
    span.record("chunks", plan.chunks.len());
    crate::query::retired::check::<T>(db, &plan.scope).await?;
    Snapshot::begin(db, requests).await
}
