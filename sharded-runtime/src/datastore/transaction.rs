//! A Datastore transaction: reads at its snapshot, writes (each with a shard drawn) queued and
//! committed together or not at all.

use firestore::gcloud_sdk::google::datastore::v1 as ds;

use super::kind::Put;
use super::{Datastore, Kind, status_error};
use crate::error::{Error, Result};
use crate::model::sharded::Sharded;
use crate::model::stored::Stored;

/// How many times [`DatastoreTransaction::abandon`] sends its rollback at most.
const ABANDON_ATTEMPTS: u32 = 6;

/// A transaction begun with [`Datastore::begin`]. Its writes are sent by
/// [`commit`](Self::commit), all or none; an `ABORTED` commit (a conflicting transaction) is
/// [`Error::Datastore`] with [`StatusCode::Aborted`](crate::wire::status::StatusCode::Aborted):
/// run the whole transaction again. Dropping it uncommitted sends nothing and writes nothing,
/// but the server keeps it, and the locks its reads took, until it expires: another
/// transaction on those entities waits meanwhile, or aborts with "Transaction lock timeout".
/// End one you give up on with [`rollback`](Self::rollback), which releases them at once.
#[derive(Debug)]
pub struct DatastoreTransaction {
    datastore: Datastore,
    id: Vec<u8>,
    mutations: Vec<ds::Mutation>,
}

impl Datastore {
    /// Begins a read-write transaction.
    pub async fn begin(&self) -> Result<DatastoreTransaction> {
        let request = ds::BeginTransactionRequest {
            project_id: self.partition.project_id.clone(),
            database_id: self.partition.database_id.clone(),
            ..Default::default()
        };
        let answer = self
            .client
            .get()
            .begin_transaction(request)
            .await
            .map_err(status_error)?
            .into_inner();
        Ok(DatastoreTransaction {
            datastore: self.clone(),
            id: answer.transaction,
            mutations: Vec::new(),
        })
    }
}

impl DatastoreTransaction {
    /// The entity `id` of `kind` as the transaction sees it.
    pub async fn get<T: Sharded>(&self, kind: &Kind<T>, id: &str) -> Result<Option<Stored<T>>> {
        kind.lookup(id, Some(self.id.clone())).await
    }

    fn queue<T: Sharded>(
        &mut self,
        put: Put,
        kind: &Kind<T>,
        id: &str,
        document: &T,
    ) -> Result<()> {
        let mutation = kind.mutation(put, id, document)?;
        self.push(mutation)
    }

    /// Queues `mutation`: at most [`MAX_MUTATIONS`](super::MAX_MUTATIONS) in one commit.
    fn push(&mut self, mutation: ds::Mutation) -> Result<()> {
        if self.mutations.len() == super::kind::MAX_MUTATIONS {
            return Err(Error::InvalidUpdate(format!(
                "a commit takes at most {} mutations",
                super::kind::MAX_MUTATIONS
            )));
        }
        self.mutations.push(mutation);
        Ok(())
    }

    /// Queues the creation of `id` (the commit fails if it is there), shard drawn.
    pub fn insert<T: Sharded>(&mut self, kind: &Kind<T>, id: &str, document: &T) -> Result<()> {
        self.queue(Put::Insert, kind, id, document)
    }

    /// Queues a write of `id` whether or not it is there, shard drawn.
    pub fn upsert<T: Sharded>(&mut self, kind: &Kind<T>, id: &str, document: &T) -> Result<()> {
        self.queue(Put::Upsert, kind, id, document)
    }

    /// Queues the deletion of `id`.
    pub fn delete<T: Sharded>(&mut self, kind: &Kind<T>, id: &str) -> Result<()> {
        self.push(ds::Mutation {
            operation: Some(ds::mutation::Operation::Delete(kind.key(id)?)),
            ..Default::default()
        })
    }

    /// Sends every queued write in one transactional commit.
    pub async fn commit(mut self) -> Result<()> {
        let mutations = std::mem::take(&mut self.mutations);
        self.commit_mutations(mutations).await
    }

    /// The transaction's id, for reads in it.
    pub(super) fn id(&self) -> &[u8] {
        &self.id
    }

    /// Commits `mutations` as the transaction's writes.
    pub(super) async fn commit_mutations(&self, mutations: Vec<ds::Mutation>) -> Result<()> {
        self.datastore
            .commit(mutations, Some(self.id.clone()))
            .await
            .map(drop)
    }

    /// Ends the transaction without writing.
    pub async fn rollback(self) -> Result<()> {
        self.send_rollback().await
    }

    async fn send_rollback(&self) -> Result<()> {
        let request = ds::RollbackRequest {
            project_id: self.datastore.partition.project_id.clone(),
            database_id: self.datastore.partition.database_id.clone(),
            transaction: self.id.clone(),
            ..Default::default()
        };
        self.datastore
            .client
            .get()
            .rollback(request)
            .await
            .map_err(status_error)
            .map(drop)
    }

    /// Ends a job's failed transaction: the rollback sent again while it fails transiently (a
    /// dropped connection), a few times. A transaction left open holds what its reads locked
    /// until it expires, and the job's next attempt would wait on those locks (measured
    /// through the fault proxy: a run of the per-user migration stalled over a minute, twice,
    /// on a rollback lost with its connection). A commit applied before its answer was lost
    /// makes the rollback fail for good, which is fine: nothing is locked then.
    pub(super) async fn abandon(self) {
        for attempt in 1..=ABANDON_ATTEMPTS {
            match self.send_rollback().await {
                Err(Error::Datastore { code, .. })
                    if attempt < ABANDON_ATTEMPTS && crate::wire::retry::retries_request(code) =>
                {
                    tokio::time::sleep(std::time::Duration::from_millis(20 * attempt as u64)).await;
                }
                _ => return,
            }
        }
    }
}
