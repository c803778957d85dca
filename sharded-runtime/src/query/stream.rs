//! `stream()`: every matching document, in order, read in pages at one read time.
//!
//! Each chunk's first page is read in the snapshot every read of the query shares (a
//! read-only transaction past 30 shard values), which is released at once; the rest is read
//! a page at a time at that snapshot's read time. So a slow consumer holds no transaction,
//! which Firestore would end after about 270 seconds; what bounds a stream instead is how
//! long Firestore keeps a read time readable: an hour (seven days with point-in-time
//! recovery). A page that cannot start after its last document (an order value Firestore
//! refuses as a cursor: a string compared past 1,500 bytes) starts after the last one it can,
//! asking for as many more documents as it has to skip.

use std::collections::VecDeque;

use firestore::gcloud_sdk::google::firestore::v1::{Document, RunQueryRequest, run_query_request};
use firestore::gcloud_sdk::prost_types::Timestamp;
use firestore::{FirestoreDb, FirestoreValue};
use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use tracing::Instrument as _;

use super::chunk::Chunk;
use super::prepare::Prepared;
use super::spans::{chunk_span, query_span};
use super::{Reach, ShardedQuery, Window, merge_streams};
use crate::{Error, Result, Sharded, Stored};

/// Documents per page of a chunk's stream, unless
/// [`stream_in_pages_of`](ShardedQuery::stream_in_pages_of) says otherwise.
pub(crate) const STREAM_PAGE: u32 = 300;

/// Where a chunk's stream goes on from.
struct Resume {
    /// Just after the last document that can be a cursor (the query's own start at first).
    after: Option<Vec<FirestoreValue>>,
    /// Documents already yielded after that one.
    skip: usize,
    /// No page left to read.
    done: bool,
    /// Read and not yet yielded.
    buffer: VecDeque<Document>,
}

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// The matching documents as a stream, in order. Chunk queries stream concurrently and
    /// merge as they arrive; an error in any chunk is the stream's last item.
    ///
    /// Every document comes from one snapshot, read in pages of 300 per chunk: the first in
    /// the snapshot every read of a query shares, the rest at its read time, so that a slow
    /// consumer holds no transaction open. Firestore keeps a read time readable for an hour
    /// (seven days with point-in-time recovery): a stream consumed for longer ends with the
    /// server's error. On a client pinned to a transaction or a read time, every page reads
    /// there.
    ///
    /// The stream owns what it reads with (a clone of `db`, a handle to the same client), so
    /// it borrows neither the query nor `db`: it can be returned, kept, or moved into a task,
    /// as a [`listen`](Self::listen)er's can.
    pub async fn stream(&self, db: &FirestoreDb) -> Result<BoxStream<'static, Result<Stored<T>>>> {
        self.stream_in_pages_of(db, STREAM_PAGE).await
    }

    /// [`stream`](Self::stream), reading pages of `page_size` documents per chunk query
    /// (fewer held in memory, more requests); [`Error::InvalidQuery`] unless `page_size` is
    /// 1 to [`MAX_LIMIT`](crate::MAX_LIMIT), nothing sent.
    pub async fn stream_in_pages_of(
        &self,
        db: &FirestoreDb,
        page_size: u32,
    ) -> Result<BoxStream<'static, Result<Stored<T>>>> {
        let documents = self.stream_documents(db, page_size).await?;
        Ok(documents
            .map(|document| Stored::from_document(&document?))
            .boxed())
    }

    /// The stream's documents as read, not yet decoded.
    pub(super) async fn stream_documents(
        &self,
        db: &FirestoreDb,
        page_size: u32,
    ) -> Result<BoxStream<'static, Result<Document>>> {
        if !(1..=super::MAX_LIMIT).contains(&page_size) {
            return Err(Error::InvalidQuery(format!(
                "a stream's page size is 1 to {}, not {page_size}",
                super::MAX_LIMIT
            )));
        }
        let span = query_span::<T, QUERY>("stream");
        self.open_stream(db, &span, page_size)
            .instrument(span.clone())
            .await
    }

    /// Reads every chunk's first page and opens its stream, within the query's span.
    async fn open_stream(
        &self,
        db: &FirestoreDb,
        span: &tracing::Span,
        page_size: u32,
    ) -> Result<BoxStream<'static, Result<Document>>> {
        let (prepared, snapshot) = self.begin(db, span).await?;
        let page = self.limit.map_or(page_size, |limit| limit.min(page_size));
        // Every chunk's first page at once: one round trip of latency, not one each.
        let first =
            futures::future::try_join_all(prepared.chunks.iter().enumerate().map(|(i, chunk)| {
                self.stream_page(
                    snapshot.db(),
                    &prepared,
                    *chunk,
                    None,
                    prepared.start_after.clone(),
                    page,
                )
                .instrument(chunk_span(i, *chunk))
            }))
            .await;
        snapshot.release();
        let first = first?;
        // The rest at the first pages' read time, unless the client is pinned already.
        let read_time = first.iter().find_map(|(_, read_time)| *read_time);
        let pinned = db.get_session_params().consistency_selector.is_some();
        let more = first
            .iter()
            .any(|(documents, _)| documents.len() == page as usize);
        if more && !pinned && read_time.is_none() {
            // Later pages read elsewhere would not be the first pages' moment.
            return Err(Error::InvalidQuery(
                "Firestore returned no read time with the first pages".into(),
            ));
        }
        let read_time = read_time.filter(|_| !pinned);
        let prepared = std::sync::Arc::new(prepared);
        let mut streams: Vec<BoxStream<'static, Result<Document>>> = first
            .into_iter()
            .enumerate()
            .map(|(i, (documents, _))| {
                let resume = self.resume_after(&prepared, documents, page);
                self.chunk_stream(db.clone(), prepared.clone(), i, read_time, resume, page)
            })
            .collect();
        let order = self.document_order();
        let merged = if streams.len() == 1 {
            streams.pop().expect("one stream")
        } else {
            merge_streams(streams, move |a, b| order.compare(a, b))
        };
        Ok(match self.limit {
            Some(limit) => merged.take(limit as usize).boxed(),
            None => merged,
        })
    }

    /// Chunk `i`'s documents: `resume`'s, then a page at a time at `read_time`.
    fn chunk_stream(
        &self,
        db: FirestoreDb,
        prepared: std::sync::Arc<Prepared>,
        i: usize,
        read_time: Option<Timestamp>,
        resume: Result<Resume>,
        page: u32,
    ) -> BoxStream<'static, Result<Document>> {
        let resume = match resume {
            Ok(resume) => resume,
            Err(error) => return futures::stream::once(async { Err(error) }).boxed(),
        };
        let query = self.clone();
        futures::stream::try_unfold(resume, move |mut resume| {
            let (query, prepared, db) = (query.clone(), prepared.clone(), db.clone());
            async move {
                loop {
                    if let Some(document) = resume.buffer.pop_front() {
                        return Ok(Some((document, resume)));
                    }
                    if resume.done {
                        return Ok(None);
                    }
                    let chunk = prepared.chunks[i];
                    let wanted = u32::try_from(resume.skip)
                        .unwrap_or(u32::MAX)
                        .saturating_add(page);
                    let (documents, _) = query
                        .stream_page(
                            &db,
                            &prepared,
                            chunk,
                            read_time,
                            resume.after.clone(),
                            wanted,
                        )
                        .instrument(chunk_span(i, chunk))
                        .await?;
                    resume = query.next_resume(resume, documents, wanted)?;
                }
            }
        })
        .boxed()
    }

    /// Where a chunk goes on after its first page, `documents`, of at most `page`.
    fn resume_after(
        &self,
        prepared: &Prepared,
        documents: Vec<Document>,
        page: u32,
    ) -> Result<Resume> {
        let start = Resume {
            after: prepared.start_after.clone(),
            skip: 0,
            done: false,
            buffer: VecDeque::new(),
        };
        self.next_resume(start, documents, page)
    }

    /// `resume` after a page of `documents` asked for `wanted` from its cursor: the ones
    /// already yielded dropped, the cursor moved to the last new one that can be one.
    fn next_resume(&self, resume: Resume, documents: Vec<Document>, wanted: u32) -> Result<Resume> {
        let done = documents.len() < wanted as usize;
        let mut after = resume.after;
        let mut skip = resume.skip;
        let fresh: VecDeque<Document> = documents.into_iter().skip(resume.skip).collect();
        for document in &fresh {
            match self.after_document_values(document) {
                Some(values) => {
                    after = Some(values);
                    skip = 0;
                }
                None => skip += 1,
            }
        }
        Ok(Resume {
            after,
            skip,
            done,
            buffer: fresh,
        })
    }

    /// One page of `chunk`: at most `limit` documents just after `after`, at `read_time` (or
    /// as `db` reads), with the read time the server read them at.
    async fn stream_page(
        &self,
        db: &FirestoreDb,
        prepared: &Prepared,
        chunk: Chunk,
        read_time: Option<Timestamp>,
        after: Option<Vec<FirestoreValue>>,
        limit: u32,
    ) -> Result<(Vec<Document>, Option<Timestamp>)> {
        let Some(read_time) = read_time else {
            let responses: Vec<_> = self
                .select_page(db, prepared, chunk, after, Some(limit))
                .stream_query_with_metadata()
                .await?
                .try_collect()
                .await?;
            let read_time = responses
                .iter()
                .find_map(|response| response.metadata.read_time)
                .map(firestore::timestamp_utils::to_timestamp);
            let documents = responses
                .into_iter()
                .filter_map(|response| response.document)
                .collect();
            return Ok((documents, read_time));
        };
        let query = self.structured_query(prepared, chunk, after, Some(limit))?;
        let request = RunQueryRequest {
            parent: self.scope.parent_path(db),
            query_type: Some(run_query_request::QueryType::StructuredQuery(query)),
            consistency_selector: Some(run_query_request::ConsistencySelector::ReadTime(read_time)),
            ..Default::default()
        };
        let responses: Vec<_> = db
            .client()
            .get()
            .run_query(request)
            .await
            .map_err(firestore::errors::FirestoreError::from)?
            .into_inner()
            .try_collect()
            .await
            .map_err(firestore::errors::FirestoreError::from)?;
        let documents = responses
            .into_iter()
            .filter_map(|response| response.document)
            .collect();
        Ok((documents, Some(read_time)))
    }
}
