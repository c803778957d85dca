//! Firestore's clock, as this process last saw it: for a time the server holds a write to (an
//! increment marker's `expire_at`, its creation plus [`MARKER_LIFETIME`]), which a machine
//! whose clock is off by days would otherwise write already past. A server time from an
//! answer is kept with the local monotonic instant it arrived at, per database, so the local
//! wall clock plays no part; the first call of a process reads the server's time once.
//!
//! [`MARKER_LIFETIME`]: crate::write::increment::MARKER_LIFETIME

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime};

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::BatchGetDocumentsRequest;
use firestore::gcloud_sdk::prost_types::Timestamp;

use crate::error::Result;

/// The last server time seen per database path, and when it arrived.
static SEEN: LazyLock<Mutex<HashMap<String, (SystemTime, Instant)>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Records that `db`'s server said `time` (a commit's or a read's time) just now.
pub(crate) fn observe(db: &FirestoreDb, time: SystemTime) {
    let mut seen = SEEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let entry = seen
        .entry(db.get_database_path().clone())
        .or_insert((time, Instant::now()));
    // The later of the two estimates: an answer's time is at most the server's now.
    if time >= entry.0 + entry.1.elapsed() {
        *entry = (time, Instant::now());
    }
}

/// The server's time now, as far as this process can tell: the last time it answered, plus
/// what has passed since (the answer's latency early). Read from the server (one lookup of
/// a document that does not exist) when this process has seen none for `db`.
pub(crate) async fn now(db: &FirestoreDb) -> Result<SystemTime> {
    if let Some(now) = estimate(db) {
        return Ok(now);
    }
    let time = read_time(db).await?;
    observe(db, time);
    Ok(estimate(db).unwrap_or(time))
}

fn estimate(db: &FirestoreDb) -> Option<SystemTime> {
    let seen = SEEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    seen.get(db.get_database_path())
        .map(|(time, at)| *time + at.elapsed())
}

/// The server's read time of a lookup of a document no one writes (under sharded's own
/// reserved prefix), retried as reads are.
async fn read_time(db: &FirestoreDb) -> Result<SystemTime> {
    let request = BatchGetDocumentsRequest {
        database: db.get_database_path().clone(),
        documents: vec![format!("{}/_sharded_clock/now", db.get_documents_path())],
        ..Default::default()
    };
    let answers =
        crate::wire::lookup::batch_get(db, request, &crate::wire::retry::QUERY_READS).await?;
    answers
        .into_iter()
        .find_map(|answer| answer.read_time)
        .map(system_time)
        .ok_or_else(|| {
            crate::error::Error::UnexpectedAnswer("a lookup answered without its read time".into())
        })
}

/// A time the server stamped (an update time, a read time) as a `SystemTime`; the server's
/// times are never before the epoch.
pub(crate) fn system_time(timestamp: Timestamp) -> SystemTime {
    let since_epoch = Duration::new(
        timestamp.seconds.max(0) as u64,
        timestamp.nanos.max(0) as u32,
    );
    SystemTime::UNIX_EPOCH + since_epoch
}
