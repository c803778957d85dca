//! Firestore in Datastore mode: the same `#[derive(Sharded)]` type stored as a kind.
//!
//! The type's collection id is the kind; a parent document is the entity's ancestor (a
//! query in one parent is an ancestor query, a collection-group query a kind query); the
//! namespace and database are the client's. Every write draws the shard as Native mode's
//! writes do (the same serializer and write guard), and marks every property no query reads
//! excluded from indexes, as Datastore mode's best practices ask. Queries are the same typed
//! queries, planned by the same [`QueryPlan`](crate::query::QueryPlan) and merged in the same order:
//! each chunk query is a Datastore query (`shard IN [...]`, the query's filters, ordered by
//! the order property then `__key__`), served by an index of the `index.yaml` that
//! `sharded_build::write_datastore_indexes()` writes.
//!
//! ```no_run
//! # use serde::{Deserialize, Serialize};
//! # use sharded_runtime::Sharded;
//! # #[derive(Serialize, Deserialize, Sharded)]
//! # #[sharded(shards = 3, order_by = "at")]
//! # struct Tick { #[sharded(index)] venue: String, at: i64 }
//! # async fn example() -> sharded_runtime::Result<()> {
//! use sharded_runtime::datastore::Datastore;
//!
//! let datastore = Datastore::new("my-project").await?; // or DATASTORE_EMULATOR_HOST's
//! let ticks = datastore.kind::<Tick>();
//! ticks.insert("t1", &Tick { venue: "XNAS".into(), at: 1 }).await?;
//! let page = ticks.page(&Tick::query().venue("XNAS"), 50, None).await?;
//! let next = ticks.page(&Tick::query().venue("XNAS"), 50, page.next.as_ref()).await?;
//! # Ok(()) }
//! ```

mod aggregate;
mod bulk;
mod checkpoint;
mod convert;
mod cursor;
mod filter;
mod kind;
mod migration;
mod purge;
mod query;
mod transaction;
mod value_order;

use firestore::gcloud_sdk::google::datastore::v1 as ds;
use firestore::gcloud_sdk::google::datastore::v1::datastore_client::DatastoreClient;
use firestore::gcloud_sdk::google_cloud_auth::credentials::{Credentials, anonymous};
use firestore::gcloud_sdk::{GoogleApi, GoogleAuthMiddleware};

pub use bulk::{BulkPut, BulkPutReport};
pub use cursor::DatastoreCursor;
pub use kind::{Kind, MAX_MUTATIONS};
pub use migration::{
    JOB_KIND, LeftBehind, LeftBehindReason, MAX_LANES, Migration, MigrationCheckpoint,
    MigrationJobStatus, MigrationPartRun, MigrationPartStatus, MigrationProgress, PART_KIND,
    TrackedMigration, USER_MIGRATION_STATE_KIND, UserMigration, UserMigrationProgress, UserState,
};
pub use purge::PURGE_STATE_KIND;
pub use query::{DatastorePage, EntityKey};
pub use transaction::DatastoreTransaction;
pub use value_order::compare_values;

use crate::error::{Error, Result};

/// Google's Datastore API endpoint.
pub const DATASTORE_API_URL: &str = "https://datastore.googleapis.com";
/// The variable Google's client libraries read a Datastore-mode emulator's `host:port` from.
pub const DATASTORE_EMULATOR_HOST_ENV: &str = "DATASTORE_EMULATOR_HOST";

type Client = GoogleApi<DatastoreClient<GoogleAuthMiddleware>>;

/// A client of one database in Datastore mode, in one namespace.
#[derive(Clone)]
pub struct Datastore {
    client: Client,
    partition: ds::PartitionId,
}

impl std::fmt::Debug for Datastore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Datastore")
            .field("partition", &self.partition)
            .finish_non_exhaustive()
    }
}

impl Datastore {
    /// A client of `project_id`'s default database: the emulator `DATASTORE_EMULATOR_HOST`
    /// names when it is set, else Google's endpoint with the Application Default Credentials.
    pub async fn new(project_id: &str) -> Result<Datastore> {
        match std::env::var(DATASTORE_EMULATOR_HOST_ENV)
            .ok()
            .filter(|host| !host.is_empty())
        {
            Some(host) => Datastore::emulator(&host, project_id).await,
            None => {
                let client =
                    GoogleApi::from_function(DatastoreClient::new, DATASTORE_API_URL, None)
                        .await
                        .map_err(connect_error)?;
                Ok(Datastore::on(client, project_id))
            }
        }
    }

    /// A client of `project_id` on the emulator at `host` (`host:port`), which takes no
    /// credentials.
    pub async fn emulator(host: &str, project_id: &str) -> Result<Datastore> {
        let credentials = anonymous::Builder::new().build();
        Datastore::with_credentials(&format!("http://{host}"), project_id, credentials).await
    }

    /// A client of `project_id` at `api_url`, authenticated with `credentials`.
    pub async fn with_credentials(
        api_url: &str,
        project_id: &str,
        credentials: Credentials,
    ) -> Result<Datastore> {
        let client = GoogleApi::from_function_with_credentials(
            DatastoreClient::new,
            api_url,
            None,
            credentials,
        )
        .await
        .map_err(connect_error)?;
        Ok(Datastore::on(client, project_id))
    }

    fn on(client: Client, project_id: &str) -> Datastore {
        Datastore {
            client,
            partition: ds::PartitionId {
                project_id: project_id.to_owned(),
                database_id: String::new(),
                namespace_id: String::new(),
            },
        }
    }

    /// The same client on the named database `database_id` (`""` is the default one).
    pub fn database(mut self, database_id: &str) -> Datastore {
        self.partition.database_id = database_id.to_owned();
        self
    }

    /// The same client in `namespace` (`""` is the default one): every key it writes and
    /// every query it sends is in it.
    pub fn namespace(mut self, namespace: &str) -> Datastore {
        self.partition.namespace_id = namespace.to_owned();
        self
    }

    /// The project, database and namespace it reads and writes.
    pub fn partition(&self) -> (&str, &str, &str) {
        (
            &self.partition.project_id,
            &self.partition.database_id,
            &self.partition.namespace_id,
        )
    }

    /// The kind of the top-level sharded type `T`.
    pub fn kind<T: crate::model::sharded::Sharded>(&self) -> Kind<T> {
        Kind::new(self.clone(), None)
    }

    /// The kind of the sharded type `T` under `parent`: its entities' ancestor.
    pub fn kind_in<T: crate::model::sharded::Sharded + crate::model::sharded::Subcollection>(
        &self,
        parent: &crate::model::handle::Parent<T>,
    ) -> Kind<T> {
        Kind::new(self.clone(), Some(parent.path().to_owned()))
    }

    /// The name the runtime's decoder and merge read an entity's key under: a Firestore
    /// documents root for this partition.
    fn documents_root(&self) -> String {
        format!(
            "projects/{}/databases/{}/documents",
            self.partition.project_id,
            match self.partition.database_id.as_str() {
                "" => "(default)",
                database => database,
            }
        )
    }

    /// One Lookup of `keys`: in a transaction, at a read time, or (`None`) now.
    async fn lookup(
        &self,
        keys: Vec<ds::Key>,
        consistency: Option<ds::read_options::ConsistencyType>,
    ) -> Result<ds::LookupResponse> {
        let request = ds::LookupRequest {
            project_id: self.partition.project_id.clone(),
            database_id: self.partition.database_id.clone(),
            keys,
            read_options: consistency.map(|consistency| ds::ReadOptions {
                consistency_type: Some(consistency),
            }),
            ..Default::default()
        };
        Ok(self
            .client
            .get()
            .lookup(request)
            .await
            .map_err(status_error)?
            .into_inner())
    }

    async fn commit(
        &self,
        mutations: Vec<ds::Mutation>,
        transaction: Option<Vec<u8>>,
    ) -> Result<ds::CommitResponse> {
        use ds::commit_request::{Mode, TransactionSelector};
        let request = ds::CommitRequest {
            project_id: self.partition.project_id.clone(),
            database_id: self.partition.database_id.clone(),
            mode: match transaction {
                Some(_) => Mode::Transactional,
                None => Mode::NonTransactional,
            } as i32,
            mutations,
            transaction_selector: transaction.map(TransactionSelector::Transaction),
            ..Default::default()
        };
        Ok(self
            .client
            .get()
            .commit(request)
            .await
            .map_err(status_error)?
            .into_inner())
    }
}

/// `op`, tried again while it fails with a code the one retry policy retries (a dropped
/// connection, contention, an overloaded server), up to `backoff`'s attempts: for the reads
/// and commits of a long job, each of which can be sent again without effect.
async fn retried<R, F>(
    backoff: &crate::write::bulk::Backoff,
    what: &str,
    op: impl Fn() -> F,
) -> Result<R>
where
    F: std::future::Future<Output = Result<R>>,
{
    let mut attempts = 0;
    loop {
        attempts += 1;
        match op().await {
            Err(Error::Datastore { code, message })
                if attempts < backoff.max_attempts && crate::wire::retry::retries_request(code) =>
            {
                tracing::debug!(%message, ?code, attempts, "{what} retried");
                tokio::time::sleep(backoff.delay(attempts, code)).await;
            }
            result => return result,
        }
    }
}

/// A failed Datastore call as the runtime's error.
fn status_error(status: firestore::gcloud_sdk::tonic::Status) -> Error {
    Error::Datastore {
        code: status.code().into(),
        message: status.message().to_owned(),
    }
}

fn connect_error(error: firestore::gcloud_sdk::error::Error) -> Error {
    Error::Datastore {
        code: crate::wire::status::StatusCode::Unavailable,
        message: format!("could not connect: {error}"),
    }
}
