//! The handles a sharded type's reads and writes go through, and the places they point at,
//! as data: [`ShardedCollection`] (one collection, top-level or under a [`Parent`]),
//! [`ShardedCollectionGroup`] (every parent's collection at once, with the `jobs` feature),
//! [`InTransaction`] (one collection inside a transaction), and the `Scope` each reads and
//! writes in. Their methods are added where they are used: `model/collection.rs` and
//! `model/parent.rs` make them, each room above adds its reads and writes. Defined apart from
//! the `Sharded` trait, whose constructors return them, so that no file here imports back.

use std::marker::PhantomData;

use firestore::{FirestoreDb, FirestoreTransaction};

use crate::model::order_stamp::OrderStamp;

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
    pub(crate) marker: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for ShardedCollection<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedCollection")
            .field("collection", &std::any::type_name::<T>())
            .finish_non_exhaustive()
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
    pub(crate) marker: PhantomData<fn() -> T>,
}

#[cfg(feature = "jobs")]
impl<T> std::fmt::Debug for ShardedCollectionGroup<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedCollectionGroup")
            .field("collection", &std::any::type_name::<T>())
            .finish_non_exhaustive()
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
    pub(crate) marker: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for InTransaction<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InTransaction")
            .field("collection", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

/// The parent document a subcollection's documents live under, for one sharded type: the ids
/// along its path, one per collection of `#[sharded(parent = "...")]`. A `Parent<Message>`
/// serves `Message` only, so a parent of another type does not compile; ids are checked when
/// it is made, so a wrong one is an error before anything is sent.
///
/// ```
/// # use serde::{Deserialize, Serialize};
/// # use sharded_runtime::{Parent, Sharded};
/// # #[derive(Serialize, Deserialize, Sharded)]
/// # #[sharded(shards = 3, order_by = "at", parent = "rooms")]
/// # struct Message { text: String, at: i64 }
/// let lobby = Parent::<Message>::new(&["lobby"])?;
/// assert_eq!(lobby.path(), "rooms/lobby");
/// // `Parent::<Message>::new(&["lobby", "extra"])` does not compile; ids known only at run
/// // time are counted then:
/// assert!(Parent::<Message>::from_ids(&["lobby", "extra"]).is_err());
/// # Ok::<(), sharded_runtime::Error>(())
/// ```
pub struct Parent<T> {
    pub(crate) path: String,
    pub(crate) marker: PhantomData<fn() -> T>,
}

impl<T> Clone for Parent<T> {
    fn clone(&self) -> Self {
        Parent {
            path: self.path.clone(),
            marker: PhantomData,
        }
    }
}

impl<T> PartialEq for Parent<T> {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl<T> Eq for Parent<T> {}

impl<T> std::hash::Hash for Parent<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.path.hash(state);
    }
}

impl<T> std::fmt::Debug for Parent<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Parent").field(&self.path).finish()
    }
}

/// Where a collection's calls read and write.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Scope {
    /// The top of the database.
    #[default]
    Top,
    /// Under one parent document: its path below the database root.
    Under(String),
    /// Every collection with the type's id, under every parent.
    Group,
}
