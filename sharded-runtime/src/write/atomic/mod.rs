//! Sharded writes that land together or not at all: inside a Firestore transaction
//! ([`ShardedCollection::in_transaction`]), or as one atomic batch ([`AtomicBatch`]).
//!
//! Which API is which:
//! - [`AtomicBatch`] and a transaction are one `Commit`: every write applies, at one commit
//!   time, or none does (Firebase's `writeBatch` and `runTransaction`). At most 500 writes.
//! - [`ShardedCollection::upsert_in`] queues into the firestore crate's batch writers, which
//!   send `BatchWrite`: each write succeeds or fails on its own, each gets its own update time,
//!   and a listener can see part of a batch. So does [`BulkWriter`](crate::write::bulk::BulkWriter).
//!
//! Every write here draws its shard and is checked by the write guard as the document is
//! serialized, as the collection's own writes are; a write that fails the check is an error at
//! once, and nothing of it is queued.

mod batch;
mod transaction;

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{Write, write::Operation};

use crate::error::Result;
use crate::model::fields::Field;
use crate::model::handle::Scope;
use crate::model::order_stamp::OrderStamp;
use crate::model::sharded::Sharded;
use crate::write::firestore_write::{Existing, sharded_write};

pub use batch::{AtomicBatch, AtomicBatchIn};
pub use transaction::{TransactionError, transaction_error};

/// Writes a `Commit` may hold.
pub const MAX_COMMIT_WRITES: usize = 500;

/// One sharded write as the `Commit` RPC takes it, to document `id` in `scope`.
fn set<T: Sharded>(
    db: &FirestoreDb,
    scope: &Scope,
    id: &str,
    document: &T,
    existing: Existing,
    stamp: OrderStamp,
) -> Result<Write> {
    let name = scope.document_name::<T>(db, id)?;
    let document = crate::write::serialize::serialize(document, &name)?;
    sharded_write::<T>(document, None, existing, stamp)
}

fn set_fields<T: Sharded>(
    db: &FirestoreDb,
    scope: &Scope,
    id: &str,
    document: &T,
    fields: &[Field<T>],
    stamp: OrderStamp,
) -> Result<Write> {
    let name = scope.document_name::<T>(db, id)?;
    let (document, mask) = crate::write::serialize::masked::<T>(&name, document, fields)?;
    let mask = mask.into_iter().map(str::to_owned).collect();
    sharded_write::<T>(document, Some(mask), Existing::Present, stamp)
}

fn delete<T: Sharded>(db: &FirestoreDb, scope: &Scope, id: &str) -> Result<Write> {
    let name = scope.document_name::<T>(db, id)?;
    Ok(Write {
        operation: Some(Operation::Delete(name)),
        ..Default::default()
    })
}

/// A write already built, queued on a transaction as it is.
pub(crate) struct Built(pub(crate) Write);

impl TryFrom<Built> for Write {
    type Error = firestore::errors::FirestoreError;

    fn try_from(built: Built) -> std::result::Result<Write, Self::Error> {
        Ok(built.0)
    }
}
