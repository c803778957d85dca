//! A tracked job's state as Firestore holds it: the job's document (its parts, fixed when the
//! first task starts it) and one document per part (its checkpoint, counts, attempt, owner).
//! Each is read with the server's read time, and written only on a precondition, so two
//! attempts never both believe they hold a part.

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{
    BatchGetDocumentsRequest, CommitRequest, Document, Precondition, RunQueryRequest,
    StructuredQuery, Write, batch_get_documents_response, precondition, run_query_request,
    structured_query, write::Operation,
};
use firestore::gcloud_sdk::prost_types::Timestamp;
use firestore::gcloud_sdk::tonic::Code;
use futures::TryStreamExt;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::wire::retry::{Backoff, retries_request, retry_reads};

pub(crate) use super::records::{
    Closing, JobRecord, LostRecord, MAX_STORED_SECONDS, PartRecord, Phase, Starting, Stored,
};

/// The collection tracked jobs keep their state in, unless told another: a name no sharded
/// type takes (the derive refuses collection ids that start with
/// [`RESERVED_COLLECTION_PREFIX`](sharded_indexes::RESERVED_COLLECTION_PREFIX)).
pub const JOB_STATE_COLLECTION: &str = "_sharded_jobs";

const _: () = assert!(
    JOB_STATE_COLLECTION.len() > sharded_indexes::RESERVED_COLLECTION_PREFIX.len()
        && const_starts_with(
            JOB_STATE_COLLECTION,
            sharded_indexes::RESERVED_COLLECTION_PREFIX
        )
);

const fn const_starts_with(text: &str, prefix: &str) -> bool {
    let (text, prefix) = (text.as_bytes(), prefix.as_bytes());
    if prefix.len() > text.len() {
        return false;
    }
    let mut i = 0;
    while i < prefix.len() {
        if text[i] != prefix[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A document as read: its fields, when it was last written, and when it was read (both
/// the server's clock, so their difference is a heartbeat's age whatever the local clock).
#[derive(Debug, Clone)]
pub(crate) struct Read<R> {
    pub(crate) record: Option<R>,
    pub(crate) update_time: Option<Timestamp>,
    pub(crate) read_time: Option<Timestamp>,
}

/// The write lost to another: the document changed, exists already, or is gone.
#[derive(Debug)]
pub(crate) struct Conflict;

pub(crate) fn job_name(db: &FirestoreDb, collection: &str, job: &str) -> String {
    format!("{}/{collection}/{job}", db.get_documents_path())
}

/// The subcollection of a job's document holding its parts: reserved like the state
/// collection, so that no sharded type's collection group takes in a job's parts.
pub(crate) const PARTS_COLLECTION: &str = "_sharded_parts";

const _: () = assert!(const_starts_with(
    PARTS_COLLECTION,
    sharded_indexes::RESERVED_COLLECTION_PREFIX
));

pub(crate) fn part_name(db: &FirestoreDb, collection: &str, job: &str, index: u32) -> String {
    format!(
        "{}/{PARTS_COLLECTION}/{index:05}",
        job_name(db, collection, job)
    )
}

/// The subcollection of a job's document holding what attempts that lost their part did
/// after their last heartbeat: reserved like the parts'.
pub(crate) const LOST_COLLECTION: &str = "_sharded_lost";

const _: () = assert!(const_starts_with(
    LOST_COLLECTION,
    sharded_indexes::RESERVED_COLLECTION_PREFIX
));

/// The most bytes the commit that starts a job may hold (Firestore takes requests of up to
/// 10 MiB): the job's document and every part's, with its range's ids.
pub(crate) const MAX_START_BYTES: usize = 9 * 1024 * 1024;

/// Starts the job whose start this task claimed (its document as written at `claimed`): the
/// job's document, started, on the claim's precondition, and every part's, each created only
/// if it does not exist, in one commit, so that exactly one task starts a job and every task
/// sees all of its parts. The conflict when another task took the start over (read it
/// again). A job whose start does not fit in one commit is refused before anything is
/// written.
pub(crate) async fn start(
    db: &FirestoreDb,
    collection: &str,
    job: &str,
    record: &mut JobRecord,
    claimed: Timestamp,
    parts: &mut [PartRecord],
    backoff: &Backoff,
) -> Result<std::result::Result<(), Conflict>> {
    *record.writes() += 1;
    for part in parts.iter_mut() {
        *part.writes() += 1;
    }
    let mut documents = vec![firestore::firestore_document_from_serializable(
        job_name(db, collection, job),
        &*record,
    )?];
    for (index, part) in parts.iter().enumerate() {
        let name = part_name(db, collection, job, index as u32);
        documents.push(firestore::firestore_document_from_serializable(name, part)?);
    }
    fits_one_commit(&documents)?;
    let writes: Vec<Write> = documents
        .into_iter()
        .enumerate()
        .map(|(i, document)| Write {
            operation: Some(Operation::Update(document)),
            // The job's document as this task's claim left it; each part's, new.
            current_document: Some(Precondition {
                condition_type: Some(match i {
                    0 => precondition::ConditionType::UpdateTime(claimed),
                    _ => precondition::ConditionType::Exists(false),
                }),
            }),
            ..Default::default()
        })
        .collect();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let request = CommitRequest {
            database: db.get_database_path().clone(),
            writes: writes.clone(),
            ..Default::default()
        };
        match db.client().get().commit(request).await {
            Ok(_) => return Ok(Ok(())),
            // Another task's start (or this one's, whose answer was lost): read it again.
            Err(status)
                if matches!(
                    status.code(),
                    Code::FailedPrecondition | Code::AlreadyExists | Code::NotFound
                ) =>
            {
                return Ok(Err(Conflict));
            }
            Err(status) if attempts < backoff.max_attempts && retries_request(status.code()) => {
                let code = crate::wire::status::StatusCode::from(status.code());
                tokio::time::sleep(backoff.delay(attempts, code)).await;
            }
            Err(status) => return Err(firestore::errors::FirestoreError::from(status).into()),
        }
    }
}

/// A job's start is one commit of at most [`MAX_START_BYTES`]: more parts, or longer split
/// ids, are refused before anything is written.
fn fits_one_commit(documents: &[Document]) -> Result<()> {
    let bytes: usize = documents
        .iter()
        .map(firestore::gcloud_sdk::prost::Message::encoded_len)
        .sum();
    if bytes > MAX_START_BYTES {
        return Err(Error::InvalidOptions {
            option: "TaskPart::count",
            expected: "fewer parts: the job's parts and their split ids are written in one commit of at most 9 MiB when it starts",
        });
    }
    Ok(())
}

/// How many of the job's parts are done: one count, billed a read per thousand parts, where
/// reading every part would be one per part at each part's end.
pub(crate) async fn done_parts(
    db: &FirestoreDb,
    collection: &str,
    job: &str,
    backoff: &Backoff,
) -> Result<u64> {
    let rows = retry_reads(backoff, || {
        db.fluent()
            .select()
            .from(PARTS_COLLECTION)
            .parent(job_name(db, collection, job))
            .filter(|q| q.for_all([q.field("phase").eq("done")]))
            .aggregate(|a| a.fields([a.field("count").count()]))
            .query()
    })
    .await?;
    crate::query::count_of(&rows)
}

/// Every record of work done by attempts after they lost their part, under the job.
pub(crate) async fn read_lost(
    db: &FirestoreDb,
    collection: &str,
    job: &str,
    backoff: &Backoff,
) -> Result<Vec<LostRecord>> {
    let documents = retry_reads(backoff, || {
        db.fluent()
            .select()
            .from(LOST_COLLECTION)
            .parent(job_name(db, collection, job))
            .query()
    })
    .await?;
    documents.iter().map(decode).collect()
}

/// The document `name`, read again while it fails in a way another attempt may fix.
pub(crate) async fn read<R: Stored>(
    db: &FirestoreDb,
    name: &str,
    backoff: &Backoff,
) -> Result<Read<R>> {
    let request = BatchGetDocumentsRequest {
        database: db.get_database_path().clone(),
        documents: vec![name.to_owned()],
        ..Default::default()
    };
    let responses = crate::wire::lookup::batch_get(db, request, backoff).await?;
    let mut read = Read {
        record: None,
        update_time: None,
        read_time: None,
    };
    for response in responses {
        read.read_time = response.read_time.or(read.read_time);
        if let Some(batch_get_documents_response::Result::Found(document)) = response.result {
            read.update_time = document.update_time;
            read.record = Some(decode(&document)?);
        }
    }
    Ok(read)
}

/// Every part document of the job, each with its update time, and the read time.
pub(crate) async fn read_parts(
    db: &FirestoreDb,
    collection: &str,
    job: &str,
    backoff: &Backoff,
) -> Result<(Vec<(u32, PartRecord, Option<Timestamp>)>, Option<Timestamp>)> {
    let responses = retry_reads(backoff, || async {
        let query = StructuredQuery {
            from: vec![structured_query::CollectionSelector {
                collection_id: PARTS_COLLECTION.to_owned(),
                all_descendants: false,
            }],
            ..Default::default()
        };
        let request = RunQueryRequest {
            parent: job_name(db, collection, job),
            query_type: Some(run_query_request::QueryType::StructuredQuery(query)),
            ..Default::default()
        };
        let responses: Vec<_> = db
            .client()
            .get()
            .run_query(request)
            .await?
            .into_inner()
            .try_collect()
            .await?;
        Ok(responses)
    })
    .await?;
    let mut read_time = None;
    let mut parts = Vec::new();
    for response in responses {
        read_time = response.read_time.or(read_time);
        if let Some(document) = response.document {
            let index = document
                .name
                .rsplit('/')
                .next()
                .and_then(|id| id.parse().ok())
                .ok_or_else(|| Error::JobStateCorrupt {
                    document: document.name.clone(),
                    reason: format!("the parts of job `{job}` hold a document no part is named"),
                })?;
            parts.push((index, decode(&document)?, document.update_time));
        }
    }
    parts.sort_by_key(|(index, _, _)| *index);
    Ok((parts, read_time))
}

/// The record `document` holds, each of its measures checked: a corrupt one is a typed
/// error here, never a panic where it becomes a `Duration`.
fn decode<R: Stored>(document: &Document) -> Result<R> {
    let record: R = FirestoreDb::deserialize_doc_to(document)?;
    for (name, value) in record.measures() {
        if !(0.0..=MAX_STORED_SECONDS).contains(&value) {
            return Err(Error::JobStateCorrupt {
                document: document.name.clone(),
                reason: format!("`{name}` is {value}, not a duration or rate from 0"),
            });
        }
    }
    Ok(record)
}

/// Writes `record` as the document `name`: created only if it does not exist (`after`
/// `None`), else only if it is as last read (`after`, its update time). The new update time,
/// or the conflict. The record's write count goes up by the write, if it lands.
///
/// A request that failed in a way another attempt may fix is sent again. Its answer may have
/// been lost after the write applied; the next attempt then conflicts with this very write,
/// which the document, read back, shows: it holds this record (its write count and owner
/// make each write of one attempt unique), so the write landed.
pub(crate) async fn write<R: Stored + PartialEq>(
    db: &FirestoreDb,
    name: &str,
    record: &mut R,
    after: Option<Timestamp>,
    backoff: &Backoff,
) -> Result<std::result::Result<Timestamp, Conflict>> {
    *record.writes() += 1;
    let written = write_retried(db, name, &*record, after, backoff).await;
    if !matches!(written, Ok(Ok(_))) {
        *record.writes() -= 1;
    }
    written
}

async fn write_retried<R: Stored + PartialEq>(
    db: &FirestoreDb,
    name: &str,
    record: &R,
    after: Option<Timestamp>,
    backoff: &Backoff,
) -> Result<std::result::Result<Timestamp, Conflict>> {
    let mut attempts = 0;
    let mut may_have_landed = false;
    loop {
        attempts += 1;
        match write_once(db, name, record, after).await? {
            Ok(update_time) => return Ok(Ok(update_time)),
            Err(NotWritten::Conflict) if may_have_landed => {
                let read = read::<R>(db, name, backoff).await?;
                return Ok(match (read.record, read.update_time) {
                    (Some(stored), Some(update_time)) if stored == *record => Ok(update_time),
                    _ => Err(Conflict),
                });
            }
            Err(NotWritten::Conflict) => return Ok(Err(Conflict)),
            Err(Failed(status))
                if attempts < backoff.max_attempts && retries_request(status.code()) =>
            {
                tracing::debug!(%status, attempts, "sharded: a job state write failed; trying again");
                may_have_landed = true;
                let code = crate::wire::status::StatusCode::from(status.code());
                tokio::time::sleep(backoff.delay(attempts, code)).await;
            }
            Err(Failed(status)) => {
                return Err(firestore::errors::FirestoreError::from(status).into());
            }
        }
    }
}

/// Why one attempt of a write did not land: the precondition, or the request.
enum NotWritten {
    Conflict,
    Failed(firestore::gcloud_sdk::tonic::Status),
}
use NotWritten::Failed;

/// One attempt of a write: its update time, or why it did not land.
async fn write_once<R: Serialize>(
    db: &FirestoreDb,
    name: &str,
    record: &R,
    after: Option<Timestamp>,
) -> Result<std::result::Result<Timestamp, NotWritten>> {
    let document = firestore::firestore_document_from_serializable(name, record)?;
    let condition = match after {
        Some(update_time) => precondition::ConditionType::UpdateTime(update_time),
        None => precondition::ConditionType::Exists(false),
    };
    let request = CommitRequest {
        database: db.get_database_path().clone(),
        writes: vec![Write {
            operation: Some(Operation::Update(document)),
            current_document: Some(Precondition {
                condition_type: Some(condition),
            }),
            ..Default::default()
        }],
        ..Default::default()
    };
    match db.client().get().commit(request).await {
        Ok(response) => {
            let response = response.into_inner();
            let update_time = response
                .write_results
                .into_iter()
                .next()
                .and_then(|result| result.update_time)
                .or(response.commit_time)
                .unwrap_or_default();
            Ok(Ok(update_time))
        }
        Err(status)
            if matches!(
                status.code(),
                Code::FailedPrecondition | Code::AlreadyExists | Code::NotFound
            ) =>
        {
            Ok(Err(NotWritten::Conflict))
        }
        Err(status) => Ok(Err(Failed(status))),
    }
}

/// How long before `read_time` a document was last written at `update_time`, in seconds on
/// the server's clock (whatever the local clock); `None` when either is unknown.
pub(crate) fn age(update_time: Option<&Timestamp>, read_time: Option<&Timestamp>) -> Option<f64> {
    let (written, now) = (update_time?, read_time?);
    Some((now.seconds - written.seconds) as f64 + f64::from(now.nanos - written.nanos) / 1e9)
}

/// Whether the holder of a part or of the closing step, whose last write is `age` old, still
/// holds it: younger than the lease it took (`lease_seconds`, the default lease where a
/// record has none), or of unknown age.
pub(crate) fn holder_live(age: Option<f64>, lease_seconds: f64) -> bool {
    age.is_none_or(|age| age < lease_of(lease_seconds))
}

/// How long until the lease of a holder whose last write is `age` old runs out: the whole
/// lease when its age is unknown.
pub(crate) fn lease_left(age: Option<f64>, lease_seconds: f64) -> std::time::Duration {
    let lease = lease_of(lease_seconds);
    let left = age.map_or(lease, |age| (lease - age).max(0.0));
    std::time::Duration::try_from_secs_f64(left).unwrap_or(super::DEFAULT_LEASE)
}

/// A stored lease, or the default lease where a record has none.
fn lease_of(lease_seconds: f64) -> f64 {
    if lease_seconds > 0.0 {
        lease_seconds
    } else {
        super::DEFAULT_LEASE.as_secs_f64()
    }
}

/// Whether a document of the job's collection (`collection` in `scope`, as a job stores it:
/// empty at the top, a parent's path) holds the stored name `field`: one query of its
/// single-field index, limit 1. `None` over a collection group, whose single-field indexes
/// Firestore does not keep by default.
pub(crate) async fn holds_field(
    db: &FirestoreDb,
    collection: &str,
    scope: &str,
    field: &str,
    backoff: &Backoff,
) -> Result<Option<bool>> {
    let parent = match scope {
        "*" => return Ok(None),
        "" => db.get_documents_path().clone(),
        parent => format!("{}/{parent}", db.get_documents_path()),
    };
    let path = sharded_indexes::field_path::field_path(&[field]);
    let found = retry_reads(backoff, || {
        db.fluent()
            .select()
            .fields([path.as_str()])
            .from(collection)
            .parent(parent.clone())
            .order(|o| o.fields([o.field(path.as_str()).asc()]))
            .limit(1)
            .query()
    })
    .await?;
    Ok(Some(!found.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::partition::IdRange;

    /// The documents of a job's start with `parts` parts whose split ids are `id_bytes` long.
    fn start(parts: u32, id_bytes: usize) -> Vec<Document> {
        let name =
            |n: String| format!("projects/p/databases/(default)/documents/_sharded_jobs/j{n}");
        (0..parts)
            .map(|index| {
                let id = |k: u32| format!("{k:0>width$}", width = id_bytes);
                let range = IdRange::new(Some(&id(index)), Some(&id(index + 1))).ok();
                firestore::firestore_document_from_serializable(
                    name(format!("/_sharded_parts/{index:05}")),
                    &PartRecord::pending(range),
                )
                .unwrap()
            })
            .collect()
    }

    #[test]
    fn a_start_that_does_not_fit_one_commit_is_refused_before_sending() {
        // Every part count, with Firestore's generated ids (20 bytes).
        assert!(fits_one_commit(&start(crate::model::partition::MAX_PARTS, 20)).is_ok());
        // Ids of the longest kind Firestore takes (1,500 bytes): about 3,000 parts fit.
        assert!(fits_one_commit(&start(2_000, 1_500)).is_ok());
        assert!(matches!(
            fits_one_commit(&start(crate::model::partition::MAX_PARTS, 1_500)),
            Err(Error::InvalidOptions {
                option: "TaskPart::count",
                ..
            })
        ));
    }
}
