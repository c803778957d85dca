//! One point in time for all chunk queries of a fan-out.

use std::borrow::Cow;

use firestore::{
    FirestoreConsistencySelector, FirestoreDb, FirestoreTransaction, FirestoreTransactionMode,
    FirestoreTransactionOptions,
};

use crate::Result;

/// With more than one chunk, a read-only transaction whose snapshot every chunk query reads,
/// so a document rewritten meanwhile (an upsert re-draws its shard and may move it to another
/// chunk) is seen once, as it was at that moment. One chunk is one query, already consistent,
/// and costs no transaction; so does a client that already reads at one point in time (a
/// transaction or a read time of the caller's), whose snapshot every chunk shares already.
pub(crate) struct Snapshot<'db> {
    transaction: Option<FirestoreTransaction<'db>>,
    db: Cow<'db, FirestoreDb>,
}

impl<'db> Snapshot<'db> {
    pub(crate) async fn begin(db: &'db FirestoreDb, chunks: usize) -> Result<Snapshot<'db>> {
        if chunks <= 1 || db.get_session_params().consistency_selector.is_some() {
            return Ok(Snapshot {
                transaction: None,
                db: Cow::Borrowed(db),
            });
        }
        let transaction = db
            .begin_transaction_with_options(
                FirestoreTransactionOptions::new().with_mode(FirestoreTransactionMode::ReadOnly),
            )
            .await?;
        let pinned = db.clone_with_consistency_selector(FirestoreConsistencySelector::Transaction(
            transaction.transaction_id().clone(),
        ));
        Ok(Snapshot {
            transaction: Some(transaction),
            db: Cow::Owned(pinned),
        })
    }

    /// The client whose reads see the snapshot.
    pub(crate) fn db(&self) -> &FirestoreDb {
        &self.db
    }

    /// Ends the read-only transaction (it holds no locks; this frees it on the server).
    pub(crate) async fn release(self) -> Result<()> {
        if let Some(transaction) = self.transaction {
            transaction.rollback().await?;
        }
        Ok(())
    }
}
