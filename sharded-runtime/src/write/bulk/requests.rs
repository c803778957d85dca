//! The requests the bulk writer sends: a BatchWrite of a batch, a Commit of an increment's
//! writes, and the read of a document whose write lost its answer, to settle what became of it.

use std::sync::Arc;
use std::time::Duration;

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{
    BatchWriteRequest, BatchWriteResponse, CommitRequest, CommitResponse, Document,
    GetDocumentRequest, Write,
};
use firestore::gcloud_sdk::tonic::{self, Code, Status};
use tracing::Instrument;

use super::clock::Clock;
use crate::wire::retry::{Backoff, retries_request};
use crate::write::increment::{IncrementCommit, Placed};

/// One BatchWrite request of `writes`, with `timeout` as its deadline.
pub(super) async fn send(
    db: FirestoreDb,
    writes: Vec<Write>,
    timeout: Duration,
) -> Result<BatchWriteResponse, Status> {
    let span = tracing::debug_span!("sharded_bulk_request", writes = writes.len());
    let mut request = tonic::Request::new(BatchWriteRequest {
        database: db.get_database_path().clone(),
        writes,
        ..BatchWriteRequest::default()
    });
    request.set_timeout(timeout);
    db.client()
        .get()
        .batch_write(request)
        .instrument(span)
        .await
        .map(tonic::Response::into_inner)
}

/// One Commit of `writes` (applied together or not at all), with `timeout` as its deadline.
pub(super) async fn commit(
    db: FirestoreDb,
    writes: Vec<Write>,
    timeout: Duration,
) -> Result<CommitResponse, Status> {
    let span = tracing::debug_span!("sharded_bulk_commit", writes = writes.len());
    let mut request = tonic::Request::new(CommitRequest {
        database: db.get_database_path().clone(),
        writes,
        ..CommitRequest::default()
    });
    request.set_timeout(timeout);
    db.client()
        .get()
        .commit(request)
        .instrument(span)
        .await
        .map(tonic::Response::into_inner)
}

/// The Commit of an increment `placed` alone, its marker expiring [`MARKER_LIFETIME`] after
/// the server's time, with `timeout` as its deadline. An answer that shows the increment cut
/// at the end of Firestore's integers is undone: `OUT_OF_RANGE`, which applied nothing. A cut
/// whose undo failed, or whose check could not be made, is `UNAVAILABLE`: sent again, the
/// increment is refused for its marker, and settled by [`settle_cut`].
///
/// [`MARKER_LIFETIME`]: crate::write::increment::MARKER_LIFETIME
pub(super) async fn commit_increment(
    db: FirestoreDb,
    placed: Placed,
    timeout: Duration,
) -> Result<CommitResponse, Status> {
    let as_status = |err: crate::error::Error| match err {
        crate::error::Error::CounterSaturated { .. } => Status::out_of_range(err.to_string()),
        other => Status::unavailable(other.to_string()),
    };
    let now = crate::wire::server_clock::now(&db)
        .await
        .map_err(as_status)?;
    let increment =
        IncrementCommit::alone_until(placed, now + crate::write::increment::MARKER_LIFETIME);
    let response = commit(db.clone(), increment.writes.clone(), timeout).await?;
    if let Some(time) = response.commit_time {
        crate::wire::server_clock::observe(&db, crate::wire::server_clock::system_time(time));
    }
    crate::write::increment::check_saturation(&db, &increment.increments, &response)
        .await
        .map_err(as_status)?;
    Ok(response)
}

/// How an increment its marker shows landed ends when it was cut at the end of Firestore's
/// integers, or when that could not be told.
#[derive(Debug)]
pub(super) struct Cut {
    pub(super) code: Code,
    pub(super) message: String,
    pub(super) maybe_applied: bool,
}

/// For an increment whose marker (read back after a lost answer, or a refusal for it) shows
/// it landed: whether its addition was cut, worked out from its shard before the commit
/// ([`check_landed`](crate::write::increment::check_landed)). `None` when it was not cut (or the
/// marker holds another increment, which the read-back reports); else undone (`OUT_OF_RANGE`,
/// applied nothing), or not undone or not checked (applied, at least in part).
pub(super) async fn settle_cut(db: &FirestoreDb, placed: Placed, marker: &Document) -> Option<Cut> {
    let recorded = crate::write::increment::Recorded::of(marker);
    let created = recorded.created.filter(|_| recorded.is_of(&placed))?;
    let placed = placed.on_recorded_shard(Some(&recorded));
    let err = crate::write::increment::check_landed(db, &[&placed], created)
        .await
        .err()?;
    let (code, maybe_applied) = match &err {
        crate::error::Error::CounterSaturated { .. } => (Code::OutOfRange, false),
        crate::error::Error::CounterUndoFailed { .. } => (Code::OutOfRange, true),
        _ => (Code::Unavailable, true),
    };
    let message = match maybe_applied
        && !matches!(err, crate::error::Error::CounterUndoFailed { .. })
    {
        true => format!(
            "the increment landed, and whether Firestore cut it at the end of its integers could not be read ({err}); apply the same increment again to settle it"
        ),
        false => err.to_string(),
    };
    Some(Cut {
        code,
        message,
        maybe_applied,
    })
}

/// The document `name` as it is now (`None` if missing), read with the writer's retries,
/// and past them for as long as a request may take (`timeout`): the read-back is the only way
/// to learn whether a write whose answer was lost landed, and through a proxy that drops
/// connections under load the channel was measured failing every one of 10 fast attempts
/// ("transport error", a broken pipe) for over 3 s, which reported landed writes as failed.
pub(super) async fn read_back(
    db: FirestoreDb,
    name: String,
    clock: Arc<dyn Clock>,
    backoff: Backoff,
    timeout: Duration,
) -> Result<Option<Document>, Status> {
    let started = clock.now();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let mut request = tonic::Request::new(GetDocumentRequest {
            name: name.clone(),
            ..GetDocumentRequest::default()
        });
        request.set_timeout(timeout);
        match db.client().get().get_document(request).await {
            Ok(document) => return Ok(Some(document.into_inner())),
            Err(status) if status.code() == Code::NotFound => return Ok(None),
            Err(status)
                if retries_request(status.code())
                    && (attempts < backoff.max_attempts
                        || clock.now().saturating_sub(started) < timeout) =>
            {
                clock
                    .sleep(backoff.delay(attempts, status.code().into()))
                    .await;
            }
            Err(status) => return Err(status),
        }
    }
}
