//! The handles made, and what every room reads of them: a collection's client, place and
//! order stamp, its parent's path and its documents' names; a transaction's client.

use std::marker::PhantomData;

use firestore::{FirestoreConsistencySelector, FirestoreDb, FirestoreTransaction};

use crate::error::Result;
#[cfg(feature = "jobs")]
use crate::model::handle::ShardedCollectionGroup;
use crate::model::handle::{InTransaction, Parent, Scope, ShardedCollection};
use crate::model::order_stamp::OrderStamp;
use crate::model::sharded::Sharded;

impl<'db, T: Sharded> ShardedCollection<'db, T> {
    pub(crate) fn new(db: &'db FirestoreDb) -> Self {
        Self::scoped(db, Scope::Top)
    }

    pub(crate) fn under(db: &'db FirestoreDb, parent: &Parent<T>) -> Self {
        Self::scoped(db, Scope::under(parent))
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
            marker: PhantomData,
        }
    }
}

#[cfg(feature = "jobs")]
impl<'db, T: crate::model::sharded::CollectionGroup> ShardedCollectionGroup<'db, T> {
    pub(crate) fn new(db: &'db FirestoreDb) -> Self {
        ShardedCollectionGroup {
            db,
            marker: PhantomData,
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
