//! The connection a live query listens over. It starts as the database client's own; after
//! a silence (the idle timeout) the next stream goes over a fresh connection instead. A
//! connection whose peer vanished without closing it (a NAT or load balancer that dropped
//! its state) stays open and silent until gRPC's HTTP/2 keepalive gives up on it (60 s of
//! pings, then 60 s more), and a stream opened again on it is as silent: measured through a
//! proxy that keeps such a connection open, recovery took about two minutes over the old
//! connection, and one idle timeout plus one reconnection over a fresh one.

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::firestore_client::FirestoreClient;
use firestore::gcloud_sdk::tonic;
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
