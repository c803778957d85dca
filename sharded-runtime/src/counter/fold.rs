//! Folding a counter: its exact value written into the counted document's own field, for
//! clients that read one field (as the Firebase extension's workers do), inside a read-write
//! transaction that reads the shard documents, so the field holds the value at the commit.

use std::time::SystemTime;

use firestore::FirestoreTransactionOps as _;
use firestore::gcloud_sdk::google::firestore::v1::{
    Document, DocumentMask, Value, Write, value::ValueType, write::Operation,
};
use firestore::gcloud_sdk::tonic::Code;

use super::CounterField;
use crate::atomic::Built;
use crate::retry::Backoff;
use crate::write::Existing;
use crate::{Error, Result, Sharded, ShardedCollection, StatusCode};

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
        retry_aborted(|| self.fold_once(id, &document, field)).await
    }

    async fn fold_once(&self, id: &str, document: &str, field: CounterField<T>) -> Result<Folded> {
        let mut transaction = self.db().begin_transaction().await?;
        let read = {
            let inside = self.in_transaction(&mut transaction);
            inside.counter(id, field).await
        };
        let value = match read {
            Ok(value) => value,
            Err(err) => {
                let _ = transaction.rollback().await;
                return Err(err);
            }
        };
        // The document is read back as `T`: a value its field's type cannot hold would make
        // it unreadable.
        let holds = field.holds();
        if !holds.holds(value) {
            let _ = transaction.rollback().await;
            return Err(Error::InvalidUpdate(format!(
                "the counter `{}` of `{id}` is {value}, which its field's type `{}` cannot hold ({} to {}): nothing was written; declare the field `i64` to fold any value",
                field.path(),
                holds.name,
                holds.min,
                holds.max
            )));
        }
        transaction.add(Built(field_write(document, field.path(), value)))?;
        let response = transaction.commit().await?;
        let at = response
            .commit_time
            .map_or_else(SystemTime::now, SystemTime::from);
        Ok(Folded { value, at })
    }
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
            Err(Error::Firestore(err))
                if attempts < FOLD_ATTEMPTS.max_attempts && aborted(&err) =>
            {
                tracing::debug!(%err, attempts, "sharded: a counter's transaction lost to increments; running it again");
                tokio::time::sleep(FOLD_ATTEMPTS.delay(attempts, StatusCode::Aborted)).await;
            }
            other => return other,
        }
    }
}

/// Whether a transaction's failure is contention, which another run may not meet.
fn aborted(err: &firestore::errors::FirestoreError) -> bool {
    match err {
        firestore::errors::FirestoreError::DatabaseError(err) => {
            err.public.code == format!("{:?}", Code::Aborted)
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
