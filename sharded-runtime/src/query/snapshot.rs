//! One point in time for all chunk queries of a fan-out.

use std::borrow::Cow;

use firestore::gcloud_sdk::google::firestore::v1::{
    BeginTransactionRequest, RollbackRequest, TransactionOptions, transaction_options,
};
use firestore::{FirestoreConsistencySelector, FirestoreDb};

use crate::error::Result;

/// With more than one query (chunks, or several queries per chunk), a read-only transaction
/// whose snapshot every one of them reads, so a document rewritten meanwhile (an upsert
/// re-draws its shard and may move it to another chunk) is seen once, as it was at that
/// moment. One query is already consistent, and costs no transaction; so does a client that already reads at one point in time (a
/// transaction or a read time of the caller's), whose snapshot every chunk shares already.
///
/// A read-only transaction takes no locks (on the emulator too, measured in
/// `tests/tests/suite/server_batch_write.rs`: only a read-write one holds what it read), but it
/// lives on the server until it ends. So a snapshot is released as soon as its reads are
/// done, or when it is dropped first (a stream dropped before its end): by a rollback sent
/// from a task of its own, off the read's critical path.
pub(crate) struct Snapshot<'db> {
    transaction: Option<Vec<u8>>,
    base: &'db FirestoreDb,
    db: Cow<'db, FirestoreDb>,
}

impl<'db> Snapshot<'db> {
    pub(crate) async fn begin(db: &'db FirestoreDb, queries: usize) -> Result<Snapshot<'db>> {
        if queries <= 1 || db.get_session_params().consistency_selector.is_some() {
            return Ok(Snapshot {
                transaction: None,
                base: db,
                db: Cow::Borrowed(db),
            });
        }
        let request = BeginTransactionRequest {
            database: db.get_database_path().clone(),
            options: Some(TransactionOptions {
                mode: Some(transaction_options::Mode::ReadOnly(
                    transaction_options::ReadOnly::default(),
                )),
            }),
            ..BeginTransactionRequest::default()
        };
        // Through the one retry policy: a transaction begun twice is one more left to
        // expire on the server.
        let transaction =
            crate::wire::retry::retry_reads(&crate::wire::retry::QUERY_READS, || async {
                db.client()
                    .get()
                    .begin_transaction(request.clone())
                    .await
                    .map_err(firestore::errors::FirestoreError::from)
            })
            .await?
            .into_inner()
            .transaction;
        tracing::debug!(transaction = %hex(&transaction), "sharded: read-only snapshot begun");
        let pinned = db.clone_with_consistency_selector(FirestoreConsistencySelector::Transaction(
            transaction.clone(),
        ));
        Ok(Snapshot {
            transaction: Some(transaction),
            base: db,
            db: Cow::Owned(pinned),
        })
    }

    /// The client whose reads see the snapshot.
    pub(crate) fn db(&self) -> &FirestoreDb {
        &self.db
    }

    /// Ends the read-only transaction once the reads are done, from a task of its own, so that
    /// the caller has its results without waiting for the rollback's round trip. The reads
    /// succeeded whatever the rollback does; a failure to release is logged, and the server's
    /// own expiry frees the transaction.
    pub(crate) fn release(self) {
        drop(self);
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        let Some(transaction) = self.transaction.take() else {
            return;
        };
        // One request, bounded by the client's timeout; without a runtime there is nothing to
        // send it from, and the server's own expiry frees the transaction.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let db = self.base.clone();
            runtime.spawn(async move {
                if let Err(err) = rollback(db, transaction).await {
                    tracing::debug!(%err, "sharded: releasing a snapshot failed");
                }
            });
        }
    }
}

async fn rollback(
    db: FirestoreDb,
    transaction: Vec<u8>,
) -> std::result::Result<(), firestore::errors::FirestoreError> {
    let id = hex(&transaction);
    db.client()
        .get()
        .rollback(RollbackRequest {
            database: db.get_database_path().clone(),
            transaction,
            ..RollbackRequest::default()
        })
        .await?;
    tracing::debug!(transaction = %id, "sharded: read-only snapshot released");
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
