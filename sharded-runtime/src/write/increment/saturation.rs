//! A shard document at the end of Firestore's integers. Firestore's integer `increment`
//! saturates: past `i64::MAX` a value stays at `i64::MAX`, below `i64::MIN` at `i64::MIN`, and
//! the commit succeeds as if all of it had been added (measured: `server_increments.rs`). So
//! after a commit whose answer shows an increment's shard at that end, the shard is read one
//! microsecond before the commit to learn what was added; an increment that was cut is
//! undone (what was added taken off again, its marker deleted), and reported
//! [`Error::CounterSaturated`]: it counts nothing, and may be applied again (to another shard,
//! drawn again). When a commit's answer is lost and a later attempt learns from the markers
//! that it landed, what each addition left is worked out from the shard's value before the
//! commit instead ([`check_landed`]). An undo that fails is [`Error::CounterUndoFailed`]:
//! the increment's marker and the part it added stay, and applying the same increment
//! again finds it landed and undoes it.
//!
//! [`Error::CounterSaturated`]: crate::error::Error::CounterSaturated
//! [`Error::CounterUndoFailed`]: crate::error::Error::CounterUndoFailed

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use firestore::FirestoreDb;
use firestore::errors::FirestoreError;
use firestore::gcloud_sdk::google::firestore::v1::{
    BatchGetDocumentsRequest, CommitRequest, CommitResponse, Write, batch_get_documents_request,
    batch_get_documents_response, value::ValueType, write::Operation,
};
use firestore::gcloud_sdk::prost_types::Timestamp;
use firestore::gcloud_sdk::tonic::Code;

use super::marker::Placed;
use crate::error::{Error, Result};
use crate::wire::retry::{Backoff, retries_request};
use crate::wire::status::StatusCode;
use crate::write::firestore_write::Existing;

/// How an undo is sent again until it is answered.
const UNDO_COMMITS: Backoff = Backoff {
    initial: Duration::from_millis(100),
    factor: 2.0,
    maximum: Duration::from_secs(10),
    jitter: 0.3,
    max_attempts: 8,
};

/// Checks each of `increments` (with the index of its addition among the commit's writes)
/// against the commit's answer: an increment that left its shard at an end of the integers
/// and was cut there is undone, and the first such is the error.
pub(crate) async fn check(
    db: &FirestoreDb,
    increments: &[(Placed, usize)],
    answer: &CommitResponse,
) -> Result<()> {
    let Some(commit_time) = answer.commit_time else {
        return Ok(());
    };
    let left = increments.iter().map(|(_, index)| {
        answer
            .write_results
            .get(*index)
            .and_then(|result| result.transform_results.first())
            .and_then(|value| match value.value_type {
                Some(ValueType::IntegerValue(n)) => Some(n),
                _ => None,
            })
    });
    let placed: Vec<&Placed> = increments.iter().map(|(placed, _)| placed).collect();
    undo_cuts(db, &placed, left.collect(), commit_time, HashMap::new()).await
}

/// How long after a commit the shards' values before it are still read: Firestore keeps a
/// read time readable for an hour (point-in-time recovery keeps whole minutes only), less
/// room for the reads themselves.
const READABLE_FOR: Duration = Duration::from_secs(55 * 60);

/// [`check`] for a commit whose answer was lost, learnt to have landed at `commit_time`
/// (an attempt refused for its markers): what each addition left on its shard is worked
/// out from the shard's value one microsecond before the commit, adding in the commit's
/// order as Firestore does, stopping at the ends. `increments` are the commit's, each on the
/// shard its marker records. A commit more than [`READABLE_FOR`] old (an increment applied
/// again long after) can no longer be read before: it is taken as it landed, with a warning.
pub(crate) async fn check_landed(
    db: &FirestoreDb,
    increments: &[&Placed],
    commit_time: SystemTime,
) -> Result<()> {
    let now = crate::wire::server_clock::now(db).await?;
    if now
        .duration_since(commit_time)
        .is_ok_and(|age| age > READABLE_FOR)
    {
        tracing::warn!(
            ?commit_time,
            "sharded: an increment's commit landed over 55 minutes ago; whether Firestore cut it can no longer be read"
        );
        return Ok(());
    }
    let commit_time = Timestamp::from(commit_time);
    let mut before_commit: HashMap<String, i64> = HashMap::new();
    for placed in increments {
        if let std::collections::hash_map::Entry::Vacant(shard) =
            before_commit.entry(placed.shard_name())
        {
            let value = value_before(db, shard.key(), commit_time).await?;
            shard.insert(value);
        }
    }
    let mut held = before_commit.clone();
    let left = increments
        .iter()
        .map(|placed| {
            let value = held.entry(placed.shard_name()).or_default();
            *value = value.saturating_add(placed.amount);
            Some(*value)
        })
        .collect();
    undo_cuts(db, increments, left, commit_time, before_commit).await
}

/// Undoes each of `increments` that `left` (what its addition left on its shard, in the
/// commit's order) shows cut at an end of the integers; the first such is the error.
/// `before_commit` holds the shards' values one microsecond before the commit already read
/// (none after an answer, every shard after [`check_landed`]); the others are read as needed.
async fn undo_cuts(
    db: &FirestoreDb,
    increments: &[&Placed],
    left: Vec<Option<i64>>,
    commit_time: Timestamp,
    before_commit: HashMap<String, i64>,
) -> Result<()> {
    // What a shard held before each addition: the value one microsecond before the commit,
    // then, for a second addition to the same shard in the commit, what the first left.
    let mut left_before = before_commit;
    let mut cut = None;
    for (placed, left) in increments.iter().zip(left) {
        let Some(left) = left else { continue };
        let name = placed.shard_name();
        let at_end =
            (left == i64::MAX && placed.amount > 0) || (left == i64::MIN && placed.amount < 0);
        let before = match left_before.get(&name) {
            Some(before) => Some(*before),
            None if at_end => Some(value_before(db, &name, commit_time).await?),
            None => None,
        };
        left_before.insert(name, left);
        let Some(before) = before.filter(|_| at_end) else {
            continue;
        };
        let added = i128::from(left) - i128::from(before);
        if added == i128::from(placed.amount) {
            continue;
        }
        // Within i64: `left` and `before` are on the same side of zero as the amount's sign.
        let added = i64::try_from(added).unwrap_or(placed.amount);
        if let Err(cause) = undo(db, placed, added).await {
            tracing::error!(
                document = %placed.document,
                increment = %placed.id,
                shard = placed.shard,
                added,
                "sharded: an increment was cut at the end of Firestore's integers, and its undo failed"
            );
            return Err(Error::CounterUndoFailed {
                increment: placed.id.clone(),
                document: placed.document.clone(),
                field: placed.field.to_owned(),
                shard: placed.shard,
                added,
                cause: Box::new(cause),
            });
        }
        tracing::warn!(
            document = %placed.document,
            increment = %placed.id,
            shard = placed.shard,
            "sharded: an increment was cut at the end of Firestore's integers and undone"
        );
        cut.get_or_insert(*placed);
    }
    match cut {
        Some(placed) => Err(placed.saturated()),
        None => Ok(()),
    }
}

/// The integer value of the shard document `name` one microsecond before `time`.
async fn value_before(db: &FirestoreDb, name: &str, time: Timestamp) -> Result<i64> {
    let nanos = i64::from(time.nanos) - 1_000;
    let read_time = Timestamp {
        seconds: time.seconds + nanos.div_euclid(1_000_000_000),
        nanos: nanos.rem_euclid(1_000_000_000) as i32,
    };
    let request = BatchGetDocumentsRequest {
        database: db.get_database_path().clone(),
        documents: vec![name.to_owned()],
        consistency_selector: Some(batch_get_documents_request::ConsistencySelector::ReadTime(
            read_time,
        )),
        ..Default::default()
    };
    let answers =
        crate::wire::lookup::batch_get(db, request, &crate::wire::retry::QUERY_READS).await?;
    match answers.into_iter().find_map(|answer| answer.result) {
        Some(batch_get_documents_response::Result::Found(shard)) => {
            crate::model::counter_field::shard_value(&shard)
        }
        _ => Ok(0),
    }
}

/// Takes `added` off `placed`'s shard and deletes its marker, together (the delete on the
/// precondition that the marker exists), sent again until answered: a resend refused for a
/// missing marker had landed. The failure of the last attempt when none is known to have.
async fn undo(
    db: &FirestoreDb,
    placed: &Placed,
    added: i64,
) -> std::result::Result<(), FirestoreError> {
    let mut writes = vec![Write {
        operation: Some(Operation::Delete(placed.marker_name())),
        current_document: Existing::Present.precondition(),
        ..Write::default()
    }];
    if added != 0 {
        writes.push(super::shard_addition(placed.shard_name(), -added));
    }
    let mut attempts = 0;
    let mut unanswered = false;
    loop {
        attempts += 1;
        let request = CommitRequest {
            database: db.get_database_path().clone(),
            writes: writes.clone(),
            ..Default::default()
        };
        let status = match db.client().get().commit(request).await {
            Ok(_) => return Ok(()),
            Err(status) => status,
        };
        if unanswered && matches!(status.code(), Code::NotFound | Code::FailedPrecondition) {
            return Ok(());
        }
        unanswered |= !matches!(status.code(), Code::Aborted | Code::ResourceExhausted);
        if retries_request(status.code()) && attempts < UNDO_COMMITS.max_attempts {
            tokio::time::sleep(UNDO_COMMITS.delay(attempts, StatusCode::from(status.code()))).await;
            continue;
        }
        return Err(FirestoreError::from(status));
    }
}
