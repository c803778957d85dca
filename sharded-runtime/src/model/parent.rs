//! Where a sharded collection lives: at the top of the database, or under parent documents
//! (`rooms/{room}/messages`, declared with `#[sharded(parent = "rooms")]`), and the queries
//! across every parent (`collection_group`).

use std::marker::PhantomData;

use firestore::FirestoreDb;

use crate::error::{Error, Result};
use crate::model::declared::{
    DeclaredCollectionGroup, DeclaredParentDepth, DeclaredReversible, DeclaredSubcollection,
    DeclaredTopLevel,
};
use crate::model::sharded::Sharded;

/// A sharded type declared under parent documents (`#[sharded(parent = "rooms")]`):
/// implemented by the derive, and what [`Parent`] and
/// [`collection_in`](crate::model::sharded::Sharded::collection_in) require, so a top-level type given a
/// parent does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is a top-level collection: it lives under no parent document",
    label = "not declared with a parent",
    note = "for a subcollection, declare where it lives: `#[sharded(parent = \"rooms\")]`"
)]
pub trait Subcollection: Sharded + DeclaredSubcollection {}

/// A sharded type that declares queries across every parent (`collection_group`):
/// implemented by the derive, and what [`in_group`](crate::query::ShardedQuery::in_group) requires,
/// since those queries need `COLLECTION_GROUP` indexes that only the declaration plans.
///
/// A group query reads every collection with the type's id, wherever it lives: the top-level
/// collection of that id too, and those under other parents (Firestore's collection-group
/// semantics, which the same unsharded query shares). `cargo build` warns when another
/// sharded type's collection has the group's id.
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no collection-group queries",
    label = "not declared with `collection_group`",
    note = "add `collection_group` to its `#[sharded(...)]`: the build then plans the COLLECTION_GROUP indexes these queries need"
)]
pub trait CollectionGroup: Sharded + DeclaredCollectionGroup {}

/// A sharded type stored at the top level of the database (no `parent`): implemented by the
/// derive, and what the writes and reads that take no parent require
/// ([`Sharded::collection`](crate::model::sharded::Sharded::collection), [`AtomicBatch`](crate::write::atomic::AtomicBatch)'s
/// and [`BulkWriter`](crate::write::bulk::BulkWriter)'s own writes), since a subcollection's
/// document is always under a parent.
#[diagnostic::on_unimplemented(
    message = "`{Self}` lives under parent documents: name the parent",
    label = "declared with `parent = \"...\"`",
    note = "write and read it under a parent: `{Self}::collection_in(&db, &parent)`, `batch.in_parent(&parent)`, `writer.in_parent(&parent)`, `query.in_parent(&parent)`, with `let parent = Parent::<{Self}>::new(&[..])?`",
    note = "in generic code over top-level types, bound the type `T: TopLevel`"
)]
pub trait TopLevel: Sharded + DeclaredTopLevel {}

/// A subcollection type `N` levels down: implemented by the derive for the number of
/// collections its `#[sharded(parent = "...")]` names, and what [`Parent::new`] requires of
/// its array of ids, so a parent with one id too few or too many does not compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not live under {N} parent document(s)",
    label = "one id per collection of the type's `parent`",
    note = "give `Parent::new` one id per collection of `{Self}`'s `#[sharded(parent = \"...\")]`, outermost first (`parent = \"users/devices\"` takes two: `users/{{uid}}/devices/{{did}}`); `Parent::from_ids` takes a slice whose length is checked when it runs"
)]
pub trait ParentDepth<const N: usize>: Subcollection + DeclaredParentDepth<N> {}

/// A sharded type whose queries run in both directions (`reversible`): implemented by the
/// derive, and what [`reversed`](crate::query::ShardedQuery::reversed) and
/// [`before`](crate::query::ShardedQuery::before) require, since those queries need the indexes in
/// the other direction that only the declaration plans.
#[diagnostic::on_unimplemented(
    message = "`{Self}` declares no queries in the other direction",
    label = "not declared `reversible`",
    note = "add `reversible` to its `#[sharded(...)]`: the build then plans each query's index in the other direction too, which reversed queries and previous pages need"
)]
pub trait Reversible: Sharded + DeclaredReversible {}

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
    path: String,
    marker: PhantomData<fn() -> T>,
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

impl<T: Subcollection> Parent<T> {
    /// The parent document with these ids, outermost first: one per collection of the type's
    /// `parent`, which the array's length is checked against when it compiles
    /// ([`ParentDepth`]). [`Error::InvalidDocumentId`] for an id Firestore would refuse.
    pub fn new<const N: usize>(ids: &[&str; N]) -> Result<Parent<T>>
    where
        T: ParentDepth<N>,
    {
        Self::from_ids(ids)
    }

    /// [`new`](Self::new) for ids whose count is known only at run time:
    /// [`Error::InvalidParent`] when it differs from the type's parent collections, and
    /// [`Error::InvalidDocumentId`] for an id Firestore would refuse.
    pub fn from_ids(ids: &[&str]) -> Result<Parent<T>> {
        let collections = T::DESCRIPTION.parent_collections;
        if collections.is_empty() || ids.len() != collections.len() {
            return Err(Error::InvalidParent(format!(
                "`{}` lives under {}; {} id(s) given",
                T::COLLECTION,
                match collections {
                    [] => "no parent document".to_owned(),
                    _ => format!("`{}/{{id}}`", collections.join("/{id}/")),
                },
                ids.len()
            )));
        }
        let mut path = String::new();
        for (collection, id) in collections.iter().zip(ids) {
            crate::model::document_id::check_document_id(id)?;
            if !path.is_empty() {
                path.push('/');
            }
            path.push_str(collection);
            path.push('/');
            path.push_str(id);
        }
        Ok(Parent {
            path,
            marker: PhantomData,
        })
    }

    /// The parent document's path below the database root, `rooms/lobby`.
    pub fn path(&self) -> &str {
        &self.path
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

impl Scope {
    pub(crate) fn under<T>(parent: &Parent<T>) -> Scope {
        Scope::Under(parent.path.clone())
    }

    /// The path below the database root of the one parent document this scope is under.
    pub(crate) fn parent(&self) -> Option<&str> {
        match self {
            Scope::Under(parent) => Some(parent),
            Scope::Top | Scope::Group => None,
        }
    }

    /// [`Error::InvalidParent`] for a subcollection type without its parent, and a group query
    /// on a type that did not declare one: before anything is sent.
    pub(crate) fn check<T: Sharded>(&self) -> Result<()> {
        let needs_parent = !T::DESCRIPTION.parent_collections.is_empty();
        match self {
            Scope::Top if needs_parent => Err(Error::InvalidParent(format!(
                "`{}` lives under `{}` documents: give the parent (`T::collection_in(db, &parent)`, `query.in_parent(&parent)`){}",
                T::COLLECTION,
                T::DESCRIPTION.parent_collections.join("/"),
                if T::DESCRIPTION.collection_group {
                    ", or query every parent with `query.in_group()`"
                } else {
                    ""
                }
            ))),
            Scope::Group if !T::DESCRIPTION.collection_group => Err(Error::InvalidParent(format!(
                "`{}` declares no collection-group queries: add `collection_group` to its `#[sharded(...)]`, which plans their indexes",
                T::COLLECTION
            ))),
            _ => Ok(()),
        }
    }

    /// The full path of the documents' parent: the database's documents root, or the parent
    /// document (for a group, the root every parent is under).
    pub(crate) fn parent_path(&self, db: &FirestoreDb) -> String {
        crate::model::document_path::container_name(db.get_documents_path(), self.parent())
    }

    /// `select` reading this scope: its one collection (at the top or under the parent), or
    /// for a group every collection of the type's id.
    pub(crate) fn select<'a>(
        &self,
        db: &FirestoreDb,
        select: firestore::select_builder::FirestoreSelectDocBuilder<'a, FirestoreDb>,
    ) -> firestore::select_builder::FirestoreSelectDocBuilder<'a, FirestoreDb> {
        let select = select.parent(self.parent_path(db));
        match self {
            Scope::Group => select.all_descendants(),
            _ => select,
        }
    }

    /// The full name of document `id` of `T`'s collection here, the id checked first
    /// ([`check_document_id`](crate::model::document_id::check_document_id)); a group has no one parent.
    pub(crate) fn document_name<T: Sharded>(&self, db: &FirestoreDb, id: &str) -> Result<String> {
        self.document_name_in::<T>(db.get_documents_path(), id)
    }

    /// [`document_name`](Self::document_name) below the documents root `documents_path`.
    pub(crate) fn document_name_in<T: Sharded>(
        &self,
        documents_path: &str,
        id: &str,
    ) -> Result<String> {
        crate::model::document_id::check_document_id(id)?;
        self.check::<T>()?;
        if *self == Scope::Group {
            return Err(Error::InvalidParent(
                "a collection group is read, not written: write under a parent".into(),
            ));
        }
        Ok(crate::model::document_path::document_name(
            documents_path,
            self.parent(),
            T::COLLECTION,
            id,
        ))
    }
}
