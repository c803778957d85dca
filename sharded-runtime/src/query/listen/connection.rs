//! The connection a live query listens over. It starts as the database client's own; after
//! a silence (the idle timeout) the next stream goes over a fresh connection instead. A
//! connection whose peer vanished without closing it (a NAT or load balancer that dropped
//! its state) stays open and silent until gRPC's HTTP/2 keepalive gives up on it (60 s of
//! pings, then 60 s more), and a stream opened again on it is as silent: measured through a
//! proxy that keeps such a connection open, recovery took about two minutes over the old
//! connection, and one idle timeout plus one reconnection over a fresh one. The reads a
//! listener makes beside its stream go over the same connection and are given the same
//! timeout, so a silence is noticed whichever request meets it.

use std::time::Duration;

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::firestore_client::FirestoreClient;
use firestore::gcloud_sdk::tonic::{self, Status};
use firestore::gcloud_sdk::{GoogleApi, GoogleAuthMiddleware};

/// A Firestore client on one connection, authenticated as the database client is.
pub(crate) type Connection = GoogleApi<FirestoreClient<GoogleAuthMiddleware>>;

/// Where the firestore crate sends `db`'s requests: its options' URL, else the emulator
/// `FIRESTORE_EMULATOR_HOST` names, else Firestore itself (as the crate decides).
fn api_url(db: &FirestoreDb) -> String {
    db.get_options()
        .firebase_api_url
        .clone()
        .or_else(|| {
            std::env::var("FIRESTORE_EMULATOR_HOST")
                .ok()
                .map(|host| match host.contains("://") {
                    true => host,
                    false => format!("http://{host}"),
                })
        })
        .unwrap_or_else(|| "https://firestore.googleapis.com".to_owned())
}

/// A new connection to `db`'s endpoint with `db`'s authentication and headers.
pub(crate) async fn fresh(db: &FirestoreDb) -> Result<Connection, tonic::Status> {
    db.client()
        .connect_with_endpoint(
            FirestoreClient::new,
            api_url(db),
            Some(db.get_database_path().to_string()),
        )
        .await
        .map_err(|error| tonic::Status::unavailable(format!("a new connection failed: {error}")))
}

/// `future`'s output, unless `timeout` passes first (`None`: it waits as long as it takes).
pub(crate) async fn within<F: std::future::Future>(
    timeout: Option<Duration>,
    future: F,
) -> Option<F::Output> {
    match timeout {
        Some(timeout) => tokio::time::timeout(timeout, future).await.ok(),
        None => Some(future.await),
    }
}

/// The failure of a request that went unanswered for `timeout`: `DEADLINE_EXCEEDED`, which
/// [`retried`] does not send again over the same connection, and after which a listener
/// opens a fresh one.
pub(crate) fn silence(timeout: Option<Duration>) -> Status {
    let idle = timeout.unwrap_or_default();
    tracing::debug!(
        ?idle,
        "sharded listener: the stream is idle, or a request beside it unanswered"
    );
    Status::deadline_exceeded(format!("no answer from the server for {idle:?}"))
}

/// Whether `status` is a silence ([`silence`]), after which the next request goes over a
/// fresh connection.
pub(crate) fn is_silence(status: &Status) -> bool {
    status.code() == tonic::Code::DeadlineExceeded
}

/// `read`, again after a transient failure (a dropped connection), waiting as the listener's
/// reconnections do ([`Backoff`](crate::wire::retry::Backoff)), up to its `max_attempts`. Each
/// attempt is given `silence` (the idle timeout): one unanswered by then ends the read with
/// [`silence`], since over a connection gone silent every attempt would wait as long.
pub(crate) async fn retried<R, F: std::future::Future<Output = Result<R, Status>>>(
    backoff: crate::wire::retry::Backoff,
    timeout: Option<Duration>,
    read: impl Fn() -> F,
) -> Result<R, Status> {
    let mut attempt = 1;
    loop {
        match within(timeout, read()).await {
            None => return Err(silence(timeout)),
            Some(Err(status))
                if attempt < backoff.max_attempts
                    && crate::wire::retry::retries_request(status.code()) =>
            {
                tokio::time::sleep(backoff.delay(attempt, status.code().into())).await;
                attempt += 1;
            }
            Some(done) => return done,
        }
    }
}
