//! `stream()`: every matching document, in order, read in pages at one read time.
//!
//! Each chunk's first page is read in the snapshot every read of the query shares (a
//! read-only transaction past 30 shard values), which is released at once; the rest is read
//! a page at a time at that snapshot's read time. So a slow consumer holds no transaction,
//! which Firestore would end after about 270 seconds; what bounds a stream instead is how
//! long Firestore keeps a read time readable: an hour (point-in-time recovery keeps whole
//! minutes for seven days, and a stream's read time is no whole minute), after which it ends
//! with [`Error::ReadTimeExpired`] and the cursor to resume after. Every page is read
//! through the one retry policy. A page that cannot start after its last document (an order value Firestore
//! refuses as a cursor: a string compared past 1,500 bytes) starts after the last one it can,
//! asking for as many more documents as it has to skip.

use std::collections::VecDeque;

use firestore::gcloud_sdk::google::firestore::v1::{Document, RunQueryRequest, run_query_request};
use firestore::gcloud_sdk::prost_types::Timestamp;
use firestore::{FirestoreDb, FirestoreQueryCursor};
use futures::stream::{BoxStream, StreamExt, TryStreamExt};
use tracing::Instrument as _;

use super::fetch::begin;
use super::plan::{Chunk, QueryPlan};
use super::spans::{chunk_span, query_span};
use super::{Reach, ShardedQuery, Window, merge_streams};
use crate::error::{Error, Result};
use crate::model::sharded::Sharded;

/// Documents per page of a chunk's stream, unless
/// [`stream_in_pages_of`](ShardedQuery::stream_in_pages_of) says otherwise.
pub(crate) const STREAM_PAGE: u32 = 300;

/// Where a chunk's stream goes on from.
struct Resume {
    /// Just after the last document that can be a cursor (the query's own start at first).
    after: Option<FirestoreQueryCursor>,
    /// Documents already yielded after that one.
    skip: usize,
    /// No page left to read.
    done: bool,
    /// Read and not yet yielded.
    buffer: VecDeque<Document>,
}

/// The stream's documents as read, not yet decoded.
pub(super) async fn stream_documents<T: Sharded, const QUERY: u64, R: Reach, W: Window>(
    query: &ShardedQuery<T, QUERY, R, W>,
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
    let documents = open_stream(query, db, &span, page_size)
        .instrument(span.clone())
        .await?;
    Ok(resumable(query, documents))
}

/// `documents` whose [`Error::ReadTimeExpired`] carries the cursor after the last document
/// yielded before it (the query's own start before the first).
fn resumable<T: Sharded, const QUERY: u64, R: Reach, W: Window>(
    query: &ShardedQuery<T, QUERY, R, W>,
    documents: BoxStream<'static, Result<Document>>,
) -> BoxStream<'static, Result<Document>> {
    let start = query
        .after
        .clone()
        .map(|position| super::Cursor::<T, QUERY, R>::from_position(position).to_token());
    resume_tokens(start, documents, |document| {
        super::Cursor::<T, QUERY, R>::after_document(document)
            .ok()
            .map(|cursor| cursor.to_token())
    })
}

/// Reads every chunk's first page and opens its stream, within the query's span.
async fn open_stream<T: Sharded, const QUERY: u64, R: Reach, W: Window>(
    query: &ShardedQuery<T, QUERY, R, W>,
    db: &FirestoreDb,
    span: &tracing::Span,
    page_size: u32,
) -> Result<BoxStream<'static, Result<Document>>> {
    let plan = query.plan()?.forward_only()?;
    let snapshot = begin::<T>(db, &plan, span).await?;
    let start_after = plan.start_cursor(db);
    let page = plan.limit.map_or(page_size, |limit| limit.min(page_size));
    // Every chunk's first page at once: one round trip of latency, not one each.
    let first = futures::future::try_join_all(plan.chunks.iter().enumerate().map(|(i, chunk)| {
        stream_page(
            snapshot.db(),
            &plan,
            *chunk,
            None,
            start_after.clone(),
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
        return Err(Error::UnexpectedAnswer(
            "the first pages came without their read time".into(),
        ));
    }
    let read_time = read_time.filter(|_| !pinned);
    let plan = std::sync::Arc::new(plan);
    let mut streams: Vec<BoxStream<'static, Result<Document>>> = first
        .into_iter()
        .enumerate()
        .map(|(i, (documents, _))| {
            let resume = resume_after(&plan, start_after.clone(), documents, page);
            chunk_stream(db.clone(), plan.clone(), i, read_time, resume, page)
        })
        .collect();
    let order = plan.document_order();
    let merged = if streams.len() == 1 {
        streams.pop().expect("one stream")
    } else {
        merge_streams(streams, move |a, b| order.compare(a, b))
    };
    Ok(match plan.limit {
        Some(limit) => merged.take(limit as usize).boxed(),
        None => merged,
    })
}

/// Chunk `i`'s documents: `resume`'s, then a page at a time at `read_time`.
fn chunk_stream(
    db: FirestoreDb,
    plan: std::sync::Arc<QueryPlan>,
    i: usize,
    read_time: Option<Timestamp>,
    resume: Result<Resume>,
    page: u32,
) -> BoxStream<'static, Result<Document>> {
    let resume = match resume {
        Ok(resume) => resume,
        Err(error) => return futures::stream::once(async { Err(error) }).boxed(),
    };
    futures::stream::try_unfold(resume, move |mut resume| {
        let (plan, db) = (plan.clone(), db.clone());
        async move {
            loop {
                if let Some(document) = resume.buffer.pop_front() {
                    return Ok(Some((document, resume)));
                }
                if resume.done {
                    return Ok(None);
                }
                let chunk = plan.chunks[i];
                let wanted = u32::try_from(resume.skip)
                    .unwrap_or(u32::MAX)
                    .saturating_add(page);
                let (documents, _) =
                    stream_page(&db, &plan, chunk, read_time, resume.after.clone(), wanted)
                        .instrument(chunk_span(i, chunk))
                        .await?;
                resume = next_resume(&plan, resume, documents, wanted)?;
            }
        }
    })
    .boxed()
}

/// Where a chunk goes on after its first page, `documents`, of at most `page`.
fn resume_after(
    plan: &QueryPlan,
    start_after: Option<FirestoreQueryCursor>,
    documents: Vec<Document>,
    page: u32,
) -> Result<Resume> {
    let start = Resume {
        after: start_after,
        skip: 0,
        done: false,
        buffer: VecDeque::new(),
    };
    next_resume(plan, start, documents, page)
}

/// `resume` after a page of `documents` asked for `wanted` from its cursor: the ones
/// already yielded dropped, the cursor moved to the last new one that can be one.
fn next_resume(
    plan: &QueryPlan,
    resume: Resume,
    documents: Vec<Document>,
    wanted: u32,
) -> Result<Resume> {
    let done = documents.len() < wanted as usize;
    let mut after = resume.after;
    let mut skip = resume.skip;
    let fresh: VecDeque<Document> = documents.into_iter().skip(resume.skip).collect();
    for document in &fresh {
        match plan.after_document_values(document) {
            Some(values) => {
                after = Some(FirestoreQueryCursor::AfterValue(values));
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
/// as `db` reads), with the read time the server read them at; read again while it fails
/// in a way another attempt may fix. A read time Firestore keeps no more is
/// [`Error::ReadTimeExpired`].
async fn stream_page(
    db: &FirestoreDb,
    plan: &QueryPlan,
    chunk: Chunk,
    read_time: Option<Timestamp>,
    after: Option<FirestoreQueryCursor>,
    limit: u32,
) -> Result<(Vec<Document>, Option<Timestamp>)> {
    let page = crate::wire::retry::retry_reads(&crate::wire::retry::QUERY_READS, || {
        stream_page_once(db, plan, chunk, read_time, after.clone(), limit)
    })
    .await;
    match page {
        Err(Error::Firestore(error)) if read_time_expired(&error) => {
            Err(Error::ReadTimeExpired { resume_after: None })
        }
        page => page,
    }
}

/// [`stream_page`], once.
async fn stream_page_once(
    db: &FirestoreDb,
    plan: &QueryPlan,
    chunk: Chunk,
    read_time: Option<Timestamp>,
    after: Option<FirestoreQueryCursor>,
    limit: u32,
) -> firestore::FirestoreResult<(Vec<Document>, Option<Timestamp>)> {
    let Some(read_time) = read_time else {
        let responses: Vec<_> = plan
            .select_page(db, chunk, after, Some(limit))
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
    let query = plan
        .structured_query(db, chunk, after, Some(limit))
        .map_err(|error| {
            firestore::errors::FirestoreError::InvalidParametersError(
                firestore::errors::FirestoreInvalidParametersError::new(
                    firestore::errors::FirestoreInvalidParametersPublicDetails::new(
                        "query".into(),
                        error.to_string(),
                    ),
                ),
            )
        })?;
    let request = RunQueryRequest {
        parent: plan.scope.parent_path(db),
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

/// `documents`, with the token `token_of` gives the last one yielded (`start` before the
/// first) put in an [`Error::ReadTimeExpired`] that ends them.
fn resume_tokens(
    start: Option<String>,
    documents: BoxStream<'static, Result<Document>>,
    token_of: impl Fn(&Document) -> Option<String> + Send + 'static,
) -> BoxStream<'static, Result<Document>> {
    documents
        .scan(start, move |last, item| {
            let item = match item {
                Ok(document) => {
                    if let Some(token) = token_of(&document) {
                        *last = Some(token);
                    }
                    Ok(document)
                }
                Err(Error::ReadTimeExpired { .. }) => Err(Error::ReadTimeExpired {
                    resume_after: last.clone(),
                }),
                Err(error) => Err(error),
            };
            futures::future::ready(Some(item))
        })
        .boxed()
}

/// Whether `error` is Firestore's answer to a read at a time it keeps no more ("The
/// requested 'read_time' is too old.", measured on the emulator: FAILED_PRECONDITION).
fn read_time_expired(error: &firestore::errors::FirestoreError) -> bool {
    let text = error.to_string();
    text.contains("read_time") && text.contains("too old")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream that ends with its read time expired says where to resume: after the last
    /// document it yielded, or where it started when it yielded none.
    #[tokio::test]
    async fn an_expired_stream_carries_the_cursor_after_its_last_document() {
        let document = |name: &str| Document {
            name: name.to_owned(),
            ..Document::default()
        };
        let expired = || Err(Error::ReadTimeExpired { resume_after: None });
        let token_of = |document: &Document| Some(format!("after {}", document.name));
        let items = futures::stream::iter(vec![Ok(document("a")), Ok(document("b")), expired()]);
        let ended: Vec<_> = resume_tokens(Some("start".into()), items.boxed(), token_of)
            .collect()
            .await;
        assert_eq!(ended.len(), 3);
        match &ended[2] {
            Err(Error::ReadTimeExpired { resume_after }) => {
                assert_eq!(resume_after.as_deref(), Some("after b"))
            }
            other => panic!("{other:?}"),
        }
        let at_once = futures::stream::iter(vec![expired()]).boxed();
        let ended: Vec<_> = resume_tokens(Some("start".into()), at_once, token_of)
            .collect()
            .await;
        assert!(matches!(
            &ended[0],
            Err(Error::ReadTimeExpired { resume_after: Some(start) }) if start == "start"
        ));
    }

    #[test]
    fn firestores_answer_to_a_read_time_too_old_is_recognized() {
        let status = firestore::gcloud_sdk::tonic::Status::failed_precondition(
            "The requested 'read_time' is too old.",
        );
        assert!(read_time_expired(&firestore::errors::FirestoreError::from(
            status
        )));
        let other = firestore::gcloud_sdk::tonic::Status::failed_precondition(
            "The query requires an index.",
        );
        assert!(!read_time_expired(
            &firestore::errors::FirestoreError::from(other)
        ));
    }
}
