//! Applying increments: alone (a commit of their two writes, sent again until it is answered),
//! in an atomic batch, or in a transaction.

use std::time::{Duration, SystemTime};

use firestore::gcloud_sdk::google::firestore::v1::{CommitRequest, Write};
use firestore::gcloud_sdk::tonic::Code;
use firestore::{FirestoreDb, errors::FirestoreError};

use super::digest::CommitDigest;
use super::marker::{Placed, read_markers, settle_refusal};
use super::{CounterField, Increment, saturation};
use crate::error::{Error, Result};
use crate::model::handle::ShardedCollection;
use crate::model::sharded::Sharded;
use crate::wire::retry::{Backoff, retries_request};
use crate::wire::status::StatusCode;

/// How long an increment's marker is kept: the window in which applying the same
/// [`Increment`] again is known to count nothing. Firestore's TTL deletes a marker some time
/// after it (typically within a day).
pub const MARKER_LIFETIME: Duration = Duration::from_secs(sharded_indexes::MARKER_LIFETIME_SECONDS);

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
    /// [`apply`](Self::apply), under a new [`Increment`] (an amount the counter's type cannot
    /// take is [`Error::InvalidUpdate`], nothing sent). A failure whose outcome is unknown is
    /// [`Error::IncrementUnsettled`], which carries the increment's id.
    ///
    /// The document itself is not read or written, and need not exist.
    pub async fn increment(&self, id: &str, field: CounterField<T>, by: i64) -> Result<()> {
        self.apply(id, &Increment::new(field, by)).await
    }

    /// Applies `increment` to the document `id`'s counter exactly once: one commit that adds
    /// to one shard document and creates the increment's marker, on the precondition that it
    /// does not exist. A commit whose answer is lost is sent again (up to 6 attempts over
    /// about 3 s). One refused for the marker's existence had landed before, or the id was
    /// applied before: with the same counter and amount, by whatever path, that is a success
    /// (it counted once); with another counter or amount, [`Error::IncrementConflict`], and
    /// nothing is written. When no attempt is answered, the increment may or may not have
    /// landed: [`Error::IncrementUnsettled`]; applying the same `increment` again later
    /// settles it (within [`MARKER_LIFETIME`]), and [`was_applied`](Self::was_applied) tells
    /// which. An addition Firestore cut at the end of its integers is undone:
    /// [`Error::CounterSaturated`], whether the commit's answer or, after a lost answer, its
    /// marker tells that it landed; an undo that fails is [`Error::CounterUndoFailed`]
    /// (applying the same increment again undoes it).
    pub async fn apply(&self, id: &str, increment: &Increment<T>) -> Result<()> {
        let document = self.scope().document_name::<T>(self.db(), id)?;
        let span = tracing::debug_span!(
            "sharded.increment",
            collection = T::COLLECTION,
            counter = increment.field.path(),
            increment = increment.id(),
        );
        let _entered = span.enter();
        let placed = increment.placed(document)?;
        let expire_at = marker_expiry(self.db(), &placed).await?;
        commit_exactly_once(self.db(), &IncrementCommit::alone_until(placed, expire_at)).await?;
        Ok(())
    }

    /// Whether `increment` has been applied to the document `id`: whether its marker exists
    /// (one document read), within [`MARKER_LIFETIME`] of its application.
    /// [`Error::IncrementConflict`] when the id was applied with another counter or amount
    /// (this increment was not, and cannot be under that id).
    pub async fn was_applied(&self, id: &str, increment: &Increment<T>) -> Result<bool> {
        let document = self.scope().document_name::<T>(self.db(), id)?;
        let placed = increment.placed(document)?;
        let found = read_markers(self.db(), &[placed.marker_name()]).await?;
        match found.into_iter().next().flatten() {
            Some(recorded) if recorded.is_of(&placed) => Ok(true),
            Some(recorded) => Err(recorded.conflict(&placed)),
            None => Ok(false),
        }
    }
}

/// A commit that holds increments: its writes, built once (a resend sends the very same),
/// and what tells, when it is refused for a marker, whether it had landed.
#[derive(Debug)]
pub(crate) struct IncrementCommit {
    pub(crate) writes: Vec<Write>,
    /// Each increment, with the index of its addition among the writes.
    pub(crate) increments: Vec<(Placed, usize)>,
    /// The digest its markers record.
    pub(crate) digest: String,
    /// It is one increment and nothing else: its marker holding the same increment, from
    /// whatever commit, means it counted.
    pub(crate) alone: bool,
}

impl IncrementCommit {
    /// The commit of `placed` alone, its marker expiring at `expire_at`.
    pub(crate) fn alone_until(placed: Placed, expire_at: SystemTime) -> IncrementCommit {
        let mut digest = CommitDigest::default();
        placed.digest_into(&mut digest);
        let digest = digest.finish();
        IncrementCommit {
            writes: placed.writes(&digest, expire_at).to_vec(),
            increments: vec![(placed, 1)],
            digest,
            alone: true,
        }
    }

    fn placed(&self) -> Vec<&Placed> {
        self.increments.iter().map(|(placed, _)| placed).collect()
    }
}

/// Commits `commit` until it is answered; the commit time. `ALREADY_EXISTS` is settled by its
/// markers ([`settle_refusal`]); a failure after an unanswered attempt is unsettled, one before
/// any is the failure itself. An increment cut at the end of Firestore's integers is undone
/// and reported ([`saturation::check`]).
pub(crate) async fn commit_exactly_once(
    db: &FirestoreDb,
    commit: &IncrementCommit,
) -> Result<SystemTime> {
    let mut attempts = 0;
    let mut unanswered = false;
    loop {
        attempts += 1;
        let request = CommitRequest {
            database: db.get_database_path().clone(),
            writes: commit.writes.clone(),
            ..Default::default()
        };
        let status = match db.client().get().commit(request).await {
            Ok(response) => {
                let response = response.into_inner();
                let time = response
                    .commit_time
                    .map(crate::wire::server_clock::system_time)
                    .unwrap_or_else(SystemTime::now);
                crate::wire::server_clock::observe(db, time);
                saturation::check(db, &commit.increments, &response)
                    .await
                    .map_err(|err| settled_or_unknown(commit, err))?;
                return Ok(time);
            }
            Err(status) => status,
        };
        let code = status.code();
        if code == Code::AlreadyExists {
            // Whether it was a marker's precondition (an earlier attempt landed, or the id was
            // applied before) or another write's (nothing applied): the markers say. Unread,
            // the increment is unsettled.
            let names: Vec<String> = commit.placed().iter().map(|p| p.marker_name()).collect();
            let found = match read_markers(db, &names).await {
                Ok(found) => found,
                Err(Error::Firestore(cause)) if unanswered => {
                    return Err(unsettled(commit, cause));
                }
                Err(other) => return Err(other),
            };
            let refusal = FirestoreError::from(status).into();
            let landed = settle_refusal(
                &commit.placed(),
                &found,
                &commit.digest,
                commit.alone,
                refusal,
            )?;
            tracing::debug!(
                attempts,
                "sharded: the increment's commit had landed before"
            );
            let Some(landed) = landed else {
                // A marker written before markers recorded their time: nothing to check at.
                return Ok(SystemTime::now());
            };
            // Learnt from the markers, not the answer: whether an addition was cut is worked
            // out from its shard before the commit, on the shard its marker records.
            let placed: Vec<Placed> = commit
                .increments
                .iter()
                .zip(&found)
                .map(|((placed, _), recorded)| placed.on_recorded_shard(recorded.as_ref()))
                .collect();
            let placed: Vec<&Placed> = placed.iter().collect();
            saturation::check_landed(db, &placed, landed)
                .await
                .map_err(|err| settled_or_unknown(commit, err))?;
            return Ok(landed);
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
            true => unsettled(commit, cause),
            false => cause.into(),
        });
    }
}

/// When the marker of an increment made now expires: [`MARKER_LIFETIME`] after the server's
/// time. The server's time unread (a process's first increment, through a network that
/// fails) is [`Error::IncrementUnsettled`] for `placed`, as a commit whose answer is lost is:
/// nothing was sent, and applying the same increment again counts it once.
pub(crate) async fn marker_expiry(db: &FirestoreDb, placed: &Placed) -> Result<SystemTime> {
    match crate::wire::server_clock::now(db).await {
        Ok(now) => Ok(now + MARKER_LIFETIME),
        Err(Error::Firestore(cause)) if crate::wire::retry::transient(&cause) => {
            Err(Error::IncrementUnsettled {
                increment: placed.id.clone(),
                document: placed.document.clone(),
                cause: Box::new(cause),
            })
        }
        Err(other) => Err(other),
    }
}

/// A failed saturation check as what the caller learns: a cut (undone, or not) as it is; a
/// read that failed, so that whether an addition was cut is unknown, as
/// [`Error::IncrementUnsettled`], since applying the same increments again finds them
/// landed and checks them again.
fn settled_or_unknown(commit: &IncrementCommit, err: Error) -> Error {
    match err {
        Error::Firestore(cause) => unsettled(commit, cause),
        other => other,
    }
}

/// [`Error::IncrementUnsettled`] for `commit`, named by its first increment.
fn unsettled(commit: &IncrementCommit, cause: FirestoreError) -> Error {
    let (document, increment) = commit
        .increments
        .first()
        .map(|(placed, _)| (placed.document.clone(), placed.id.clone()))
        .unwrap_or_default();
    Error::IncrementUnsettled {
        increment,
        document,
        cause: Box::new(cause),
    }
}
