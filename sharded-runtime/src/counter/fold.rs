//! Folding a counter: its exact value written into the counted document's own field, for
//! clients that read one field (as the Firebase extension's workers do), inside a read-write
//! transaction that reads the shard documents, so the field holds the value at the commit.
//! Its requests are sent over a connection of the caller's choosing, so that a fold kept by
//! a listener (`keep_folded.rs`) goes over a fresh connection after a silence, as the
//! listener does.

use std::time::SystemTime;

use std::time::Duration;

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{
    BeginTransactionRequest, CommitRequest, Document, DocumentMask, RollbackRequest,
    RunQueryRequest, TransactionOptions, Value, Write, run_query_request, transaction_options,
    value::ValueType, write::Operation,
};
use firestore::gcloud_sdk::tonic::{Code, Request, Status};
use futures::TryStreamExt as _;

use crate::error::{Error, Result};
use crate::model::counter_field::{CounterField, shard_value, total};
use crate::model::handle::ShardedCollection;
use crate::model::sharded::Sharded;
use crate::query::listen::connection::{self, Connection};
use crate::wire::retry::Backoff;
use crate::wire::status::StatusCode;
use crate::write::firestore_write::Existing;

/// How a fold that lost to concurrent increments (`ABORTED`) is run again.
const FOLD_ATTEMPTS: Backoff = Backoff {
    initial: std::time::Duration::from_millis(100),
    factor: 2.0,
    maximum: std::time::Duration::from_secs(5),
    jitter: 0.3,
    max_attempts: 10,
};

/// What a fold wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Folded {
    /// The counter's exact value, now in the document's field.
    pub value: i64,
    /// The fold's commit time: the value is the counter's at this moment (a read at this
    /// read time sums to it).
    pub at: SystemTime,
}

impl<T: Sharded> ShardedCollection<'_, T> {
    /// Writes the exact value of the counter `field` into that field of the document `id`
    /// (which must exist: `NOT_FOUND` otherwise), and only that field: one read-write
    /// transaction that reads every shard document (one billed read each) and updates the
    /// document. Increments landing meanwhile make the transaction run again (up to 10
    /// times), so the field holds the value at the commit, never a stale one over a newer.
    ///
    /// The shard documents stay as they are: the exact value is still their sum, and the
    /// field is a copy that lags by however long since the last fold. A whole-document write
    /// of the type (`upsert`, `update`) writes the struct's value of the field; the next fold
    /// puts the counter's back. Call it at the rate readers need (one a second at most per
    /// document, Firestore's sustained rate for one document).
    ///
    /// A value the field's Rust type cannot hold (a negative count in a `u32` field, or one
    /// past its largest) is [`Error::InvalidUpdate`] and writes nothing, since the document
    /// would no longer read back as `T`; the counter's value is still exact.
    pub async fn fold(&self, id: &str, field: CounterField<T>) -> Result<Folded> {
        let document = self.scope().document_name::<T>(self.db(), id)?;
        let connection = self.db().client().clone();
        retry_aborted(|| fold_over(&connection, self.db(), &document, id, field, None)).await
    }
}

/// One fold of the counter `field` of `document` (a full name; `id` names it in errors), as
/// a read-write transaction over `connection`: its shard documents read in it, the value
/// checked against the field's type, the field updated at the commit. Each request is given
/// `timeout` ([`connection::silence`] past it, as a listener's reads are), so that a fold
/// over a connection gone silent fails instead of waiting on it. On a failure the
/// transaction is rolled back (best effort).
pub(super) async fn fold_over<T>(
    connection: &Connection,
    db: &FirestoreDb,
    document: &str,
    id: &str,
    field: CounterField<T>,
    timeout: Option<Duration>,
) -> Result<Folded> {
    let client = || connection.get();
    let fail = |status: Status| Error::from(firestore::errors::FirestoreError::from(status));
    let begin = BeginTransactionRequest {
        database: db.get_database_path().clone(),
        options: Some(TransactionOptions {
            mode: Some(transaction_options::Mode::ReadWrite(
                transaction_options::ReadWrite::default(),
            )),
        }),
        ..Default::default()
    };
    let transaction = answered(timeout, client().begin_transaction(Request::new(begin)))
        .await
        .map_err(fail)?
        .into_inner()
        .transaction;
    let rollback = || async {
        let request = RollbackRequest {
            database: db.get_database_path().clone(),
            transaction: transaction.clone(),
            ..Default::default()
        };
        let _ = answered(timeout, client().rollback(Request::new(request))).await;
    };
    let read = RunQueryRequest {
        parent: document.to_owned(),
        query_type: Some(run_query_request::QueryType::StructuredQuery(
            super::shard_documents_query(field.collection_id()),
        )),
        consistency_selector: Some(run_query_request::ConsistencySelector::Transaction(
            transaction.clone(),
        )),
        ..Default::default()
    };
    let shards = answered(timeout, async {
        client()
            .run_query(Request::new(read))
            .await?
            .into_inner()
            .try_collect::<Vec<_>>()
            .await
    })
    .await;
    let value = match shards {
        Ok(answers) => answers
            .iter()
            .filter_map(|answer| answer.document.as_ref())
            .map(shard_value)
            .collect::<Result<Vec<_>>>()
            .and_then(|values| total(values, document)),
        Err(status) => Err(fail(status)),
    };
    let value = match value {
        Ok(value) => value,
        Err(err) => {
            rollback().await;
            return Err(err);
        }
    };
    // The document is read back as `T`: a value its field's type cannot hold would make
    // it unreadable.
    let holds = field.holds();
    if !holds.holds(value) {
        rollback().await;
        return Err(Error::InvalidUpdate(format!(
            "the counter `{}` of `{id}` is {value}, which its field's type `{}` cannot hold ({} to {}): nothing was written; declare the field `i64` to fold any value",
            field.path(),
            holds.name,
            holds.min,
            holds.max
        )));
    }
    let commit = CommitRequest {
        database: db.get_database_path().clone(),
        writes: vec![field_write(document, field.path(), value)],
        transaction,
        ..Default::default()
    };
    let answer = answered(timeout, client().commit(Request::new(commit)))
        .await
        .map_err(fail)?
        .into_inner();
    let at = answer
        .commit_time
        .map_or_else(SystemTime::now, crate::wire::server_clock::system_time);
    Ok(Folded { value, at })
}

/// `request`'s answer, or [`connection::silence`] once `timeout` has passed without one.
async fn answered<R>(
    timeout: Option<Duration>,
    request: impl std::future::Future<Output = std::result::Result<R, Status>>,
) -> std::result::Result<R, Status> {
    connection::within(timeout, request)
        .await
        .unwrap_or_else(|| Err(connection::silence(timeout)))
}

/// Runs the transaction `run` makes until it is not aborted by contention (increments
/// landing on what it read), up to 10 times.
pub(super) async fn retry_aborted<R, F>(mut run: impl FnMut() -> F) -> Result<R>
where
    F: std::future::Future<Output = Result<R>>,
{
    let mut attempts = 0;
    loop {
        attempts += 1;
        match run().await {
            Err(err)
                if attempts < FOLD_ATTEMPTS.max_attempts && failed_with(&err, Code::Aborted) =>
            {
                tracing::debug!(%err, attempts, "sharded: a counter's transaction lost to increments; running it again");
                tokio::time::sleep(FOLD_ATTEMPTS.delay(attempts, StatusCode::Aborted)).await;
            }
            other => return other,
        }
    }
}

/// Whether a fold failed with the gRPC status `code`: contention (`ABORTED`, which another
/// run may not meet), or a silence (`DEADLINE_EXCEEDED`, [`connection::silence`]).
pub(super) fn failed_with(err: &Error, code: Code) -> bool {
    match err {
        Error::Firestore(firestore::errors::FirestoreError::DatabaseError(err)) => {
            err.public.code == format!("{code:?}")
        }
        _ => false,
    }
}

/// The update of the one top-level field `path` (as stored, backticked where it must be) of
/// the existing document `document` to `value`.
fn field_write(document: &str, path: &str, value: i64) -> Write {
    // A counter is a top-level field: its path is one segment.
    let name = sharded_indexes::field_path::segments(path)
        .pop()
        .expect("a path has a segment");
    let value = Value {
        value_type: Some(ValueType::IntegerValue(value)),
    };
    Write {
        operation: Some(Operation::Update(Document {
            name: document.to_owned(),
            fields: [(name, value)].into_iter().collect(),
            ..Document::default()
        })),
        update_mask: Some(DocumentMask {
            field_paths: vec![path.to_owned()],
        }),
        current_document: Existing::Present.precondition(),
        ..Write::default()
    }
}
