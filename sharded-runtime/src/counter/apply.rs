//! Applying increments: alone (a commit of their two writes, sent again until it is answered),
//! in an atomic batch, or in a transaction.

use std::time::{Duration, SystemTime};

use firestore::gcloud_sdk::google::firestore::v1::CommitRequest;
use firestore::gcloud_sdk::tonic::Code;
use firestore::{FirestoreDb, errors::FirestoreError};

use super::{CounterField, Increment};
use crate::retry::{Backoff, retries_request};
use crate::{Error, Result, Sharded, ShardedCollection, StatusCode};

/// How long an increment's marker is kept: the window in which applying the same
/// [`Increment`] again is known to count nothing. Firestore's TTL deletes a marker some time
/// after it (typically within a day).
pub const MARKER_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);

/// How an increment's commit is sent again: soon, as a caller waits on it, 6 attempts over
/// about 3 s before the increment is reported unsettled (and left to the caller to apply
/// again, which counts it once).
const INCREMENT_COMMITS: Backoff = Backoff {
    initial: Duration::from_millis(100),
    factor: 2.0,
    maximum: Duration::from_secs(10),
    jitter: 0.3,
    max_attempts: 6,
};

impl<T: Sharded> ShardedCollection<'_, T> {
    /// Adds `by` to the counter `field` of the document `id`, exactly once: see
    /// [`apply`](Self::apply), under a new [`Increment`]. A failure whose outcome is unknown
    /// is [`Error::IncrementUnsettled`], which carries the increment's id.
    ///
    /// The document itself is not read or written, and need not exist.
    pub async fn increment(&self, id: &str, field: CounterField<T>, by: i64) -> Result<()> {
        self.apply(id, &Increment::new(field, by)).await
    }

    /// Applies `increment` to the document `id`'s counter exactly once: one commit that adds
    /// to one shard document and creates the increment's marker, on the precondition that it
    /// does not exist. A commit whose answer is lost is sent again (up to 6 attempts over
    /// about 3 s); one refused for the marker's existence had landed before, and
    /// counts as done. When no attempt is answered, the increment may or may not have landed:
    /// [`Error::IncrementUnsettled`]; applying the same `increment` again later settles it
    /// (within [`MARKER_LIFETIME`]), and [`was_applied`](Self::was_applied) tells which.
    pub async fn apply(&self, id: &str, increment: &Increment<T>) -> Result<()> {
        let document = self.scope().document_name::<T>(self.db(), id)?;
        let span = tracing::debug_span!(
            "sharded.increment",
            collection = T::COLLECTION,
            counter = increment.field.path(),
            increment = increment.id(),
        );
        let _entered = span.enter();
        let marker = increment.marker_name(&document);
        commit_exactly_once(self.db(), &marker, || increment.writes(&document).to_vec()).await?;
        Ok(())
    }

    /// Whether `increment` has been applied to the document `id`: whether its marker exists
    /// (one document read). Within [`MARKER_LIFETIME`] of its application.
    pub async fn was_applied(&self, id: &str, increment: &Increment<T>) -> Result<bool> {
        let document = self.scope().document_name::<T>(self.db(), id)?;
        Ok(marker_created(self.db(), &increment.marker_name(&document))
            .await?
            .is_some())
    }
}

/// Commits `writes()`, which create the marker `marker` of an increment (perhaps beside other
/// writes), until it is answered; the commit time. `ALREADY_EXISTS` with the marker there
/// means an earlier attempt landed (its time is the marker's creation); a failure after an
/// unanswered attempt is unsettled, one before any is the failure itself.
pub(crate) async fn commit_exactly_once(
    db: &FirestoreDb,
    marker: &str,
    writes: impl Fn() -> Vec<firestore::gcloud_sdk::google::firestore::v1::Write>,
) -> Result<SystemTime> {
    let mut attempts = 0;
    let mut unanswered = false;
    loop {
        attempts += 1;
        let request = CommitRequest {
            database: db.get_database_path().clone(),
            writes: writes(),
            ..Default::default()
        };
        let status = match db.client().get().commit(request).await {
            Ok(response) => {
                let time = response.into_inner().commit_time;
                return Ok(time
                    .map(crate::stored::system_time)
                    .unwrap_or_else(SystemTime::now));
            }
            Err(status) => status,
        };
        let code = status.code();
        if code == Code::AlreadyExists {
            // Whether it was the marker's precondition (an earlier attempt landed) or another
            // write's (nothing applied): the marker says. Unread, the increment is unsettled.
            match marker_created(db, marker).await {
                Ok(Some(landed)) => {
                    tracing::debug!(
                        attempts,
                        "sharded: an earlier attempt of the increment landed"
                    );
                    return Ok(landed);
                }
                Ok(None) => return Err(FirestoreError::from(status).into()),
                Err(Error::Firestore(cause)) => return Err(unsettled(marker, cause)),
                Err(other) => return Err(other),
            }
        }
        // Refused outright (contention, overload): not applied; anything else may have been.
        unanswered |= !matches!(code, Code::Aborted | Code::ResourceExhausted);
        if retries_request(code) && attempts < INCREMENT_COMMITS.max_attempts {
            tracing::debug!(%status, attempts, "sharded: an increment's commit failed; sending it again");
            tokio::time::sleep(INCREMENT_COMMITS.delay(attempts, StatusCode::from(code))).await;
            continue;
        }
        let cause = FirestoreError::from(status);
        return Err(match unanswered && retries_request(code) {
            true => unsettled(marker, cause),
            false => cause.into(),
        });
    }
}

/// [`Error::IncrementUnsettled`] for the increment whose marker is `marker`.
fn unsettled(marker: &str, cause: FirestoreError) -> Error {
    let (document, increment) = marker
        .rsplit_once(&format!("/{}/", super::INCREMENTS_COLLECTION))
        .unwrap_or((marker, ""));
    Error::IncrementUnsettled {
        increment: increment.to_owned(),
        document: document.to_owned(),
        cause: Box::new(cause),
    }
}

/// When the marker `name` was created, if it exists: read through the one retry policy.
pub(super) async fn marker_created(db: &FirestoreDb, name: &str) -> Result<Option<SystemTime>> {
    use firestore::gcloud_sdk::google::firestore::v1::GetDocumentRequest;
    let request = GetDocumentRequest {
        name: name.to_owned(),
        mask: Some(firestore::gcloud_sdk::google::firestore::v1::DocumentMask {
            field_paths: vec![super::MARKER_EXPIRY_FIELD.to_owned()],
        }),
        ..Default::default()
    };
    let answer = crate::retry::retry_reads(&crate::retry::QUERY_READS, || async {
        match db.client().get().get_document(request.clone()).await {
            Ok(found) => Ok(Some(
                found
                    .into_inner()
                    .create_time
                    .map(crate::stored::system_time)
                    .unwrap_or_else(SystemTime::now),
            )),
            Err(status) if status.code() == Code::NotFound => Ok(None),
            Err(status) => Err(FirestoreError::from(status)),
        }
    })
    .await?;
    Ok(answer)
}
