//! The handles a sharded type's reads and writes go through: [`ShardedCollection`] (one
//! collection, top-level or under a parent) and, with the `jobs` feature,
//! [`ShardedCollectionGroup`] (every parent's collection at once), and [`InTransaction`]
//! (one collection inside a transaction). Each room adds its methods
//! to them: writes in `write`, reads and queries in `query`, counters in `counter`, jobs in
//! `job`.

use std::marker::PhantomData;

use firestore::{FirestoreConsistencySelector, FirestoreDb, FirestoreTransaction};

use crate::error::Result;
use crate::model::order_stamp::OrderStamp;
use crate::model::parent::{Parent, Scope};
use crate::model::sharded::Sharded;

/// Writes and reads of one sharded collection. Get one with
/// [`Sharded::collection`](crate::model::sharded::Sharded::collection).
///
/// Every write stores the document's fields plus the shard field, drawn uniformly at random
/// from the type's shard values as the document is serialized, so every write re-draws the
/// shard. Before anything is sent, each write checks its id (see [`check_document_id`]) and
/// that the serialized document holds the order field and every non-optional indexed path
/// ([`Error::FieldNotWritten`](crate::error::Error::FieldNotWritten) otherwise). Reads return the user's type.
///
/// Single writes are one `Commit` each and return what the server stored that the caller did
/// not send ([`Written`]): the update time and, for a `server_timestamp` type, the order
/// field's value (the struct's own value of it is not sent).
///
/// [`check_document_id`]: crate::model::document_id::check_document_id
/// [`Written`]: crate::writes::Written
pub struct ShardedCollection<'db, T> {
    pub(crate) db: &'db FirestoreDb,
    pub(crate) scope: Scope,
    pub(crate) stamp: OrderStamp,
    marker: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for ShardedCollection<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedCollection")
            .field("collection", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

impl<'db, T: Sharded> ShardedCollection<'db, T> {
    pub(crate) fn new(db: &'db FirestoreDb) -> Self {
        ShardedCollection {
            db,
            scope: Scope::Top,
            stamp: OrderStamp::default(),
            marker: PhantomData,
        }
    }

    pub(crate) fn under(db: &'db FirestoreDb, parent: &Parent<T>) -> Self {
        ShardedCollection {
            db,
            scope: Scope::under(parent),
            stamp: OrderStamp::default(),
            marker: PhantomData,
        }
    }

    pub(crate) fn scoped(db: &'db FirestoreDb, scope: Scope) -> Self {
        ShardedCollection {
            db,
            scope,
            stamp: OrderStamp::default(),
            marker: PhantomData,
        }
    }

    pub(crate) fn db(&self) -> &'db FirestoreDb {
        self.db
    }

    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    pub(crate) fn stamp(&self) -> OrderStamp {
        self.stamp
    }

    /// How this handle's whole-document writes of a `server_timestamp` type set the order
    /// field ([`OrderStamp`]): by default the server's time on create, the stored time kept
    /// on replace; [`OrderStamp::FromDocument`] writes the document's own value (an import
    /// of documents that have their times), [`OrderStamp::Always`] the server's time on
    /// every write. It applies to the handle's single writes, batch writes and
    /// transactions; nothing changes for another type.
    pub fn order_stamp(self, stamp: OrderStamp) -> Self {
        ShardedCollection { stamp, ..self }
    }

    /// The full path of the parent document (or the database root), checked against the
    /// type's `parent`.
    pub(crate) fn parent_path(&self) -> Result<String> {
        self.scope.check::<T>()?;
        Ok(self.scope.parent_path(self.db))
    }

    pub(crate) fn document_name(&self, id: &str) -> Result<String> {
        self.scope.document_name::<T>(self.db, id)
    }
}

/// Every collection with `T`'s id, under every parent (a collection group): the jobs that run
/// over all of them at once. Get one with
/// [`Sharded::collection_group`](crate::model::sharded::Sharded::collection_group); the jobs are
/// [`ShardJob`](crate::jobs::ShardJob)s as for one collection, and their checkpoints are paths
/// (`rooms/lobby/messages/m1`).
#[cfg(feature = "jobs")]
pub struct ShardedCollectionGroup<'db, T> {
    pub(crate) db: &'db FirestoreDb,
    marker: PhantomData<fn() -> T>,
}

#[cfg(feature = "jobs")]
impl<T> std::fmt::Debug for ShardedCollectionGroup<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedCollectionGroup")
            .field("collection", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

#[cfg(feature = "jobs")]
impl<'db, T: crate::model::parent::CollectionGroup> ShardedCollectionGroup<'db, T> {
    pub(crate) fn new(db: &'db FirestoreDb) -> Self {
        ShardedCollectionGroup {
            db,
            marker: PhantomData,
        }
    }
}

/// A sharded collection's writes and reads inside one transaction: writes are queued on it
/// and commit with it (atomically, with its other writes); reads see its snapshot, and in a
/// read-write transaction lock what they read, so the firestore crate's `run_transaction`
/// retries the whole function when another transaction wrote it meanwhile.
///
/// ```no_run
/// # use serde::{Deserialize, Serialize};
/// # use futures::FutureExt;
/// # use sharded_runtime::Sharded;
/// # use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
/// # #[derive(Serialize, Deserialize, Sharded)]
/// # #[sharded(shards = 3, order_by = "timestamp")]
/// # struct Message { #[sharded(index)] room: String, text: String, timestamp: FirestoreTimestamp }
/// # async fn example(db: &FirestoreDb) -> Result<(), Box<dyn std::error::Error>> {
/// db.run_transaction(|db, transaction| {
///     async move {
///         let mut messages = Message::collection(&db).in_transaction(transaction);
///         // A sharded query at the transaction's snapshot (every chunk reads it).
///         let newest = Message::query().room("lobby").limit(1).fetch(messages.db()).await
///             .map_err(sharded_runtime::writes::transaction_error)?;
///         let text = format!("{} messages before", newest.len());
///         messages
///             .upsert("m1", &Message { room: "lobby".into(), text, timestamp: FirestoreTimestamp::now() })
///             .map_err(sharded_runtime::writes::transaction_error)?;
///         Ok::<_, sharded_runtime::writes::TransactionError>(())
///     }
///     .boxed()
/// })
/// .await?;
/// # Ok(()) }
/// ```
pub struct InTransaction<'t, 'db, T> {
    pub(crate) transaction: &'t mut FirestoreTransaction<'db>,
    pub(crate) db: FirestoreDb,
    pub(crate) scope: Scope,
    pub(crate) stamp: OrderStamp,
    marker: std::marker::PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for InTransaction<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InTransaction")
            .field("collection", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

impl<'db, T: Sharded> ShardedCollection<'db, T> {
    /// This collection's writes and reads inside `transaction`: see [`InTransaction`].
    pub fn in_transaction<'t, 'x>(
        &self,
        transaction: &'t mut FirestoreTransaction<'x>,
    ) -> InTransaction<'t, 'x, T> {
        let db = transaction.db().clone_with_consistency_selector(
            FirestoreConsistencySelector::Transaction(transaction.transaction_id().clone()),
        );
        InTransaction {
            transaction,
            db,
            scope: self.scope().clone(),
            stamp: self.stamp(),
            marker: std::marker::PhantomData,
        }
    }
}

impl<T: Sharded> InTransaction<'_, '_, T> {
    /// The client whose reads see the transaction's snapshot: pass it to a sharded query's
    /// `fetch`, `count` or `sum` to read inside the transaction.
    pub fn db(&self) -> &FirestoreDb {
        &self.db
    }

    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }
}
