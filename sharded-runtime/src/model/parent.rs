//! Where a sharded collection lives, made and read: a [`Parent`] from its ids, checked
//! against the type's `#[sharded(parent = "...")]`, and a `Scope`'s paths and document names
//! (the top of the database, under one parent document, or every parent's collection).

use std::marker::PhantomData;

use firestore::FirestoreDb;

use crate::error::{Error, Result};
use crate::model::handle::{Parent, Scope};
use crate::model::sharded::{ParentDepth, Sharded, Subcollection};

impl<T: Subcollection> Parent<T> {
    /// The parent document with these ids, outermost first: one per collection of the type's
    /// `parent`, which the array's length is checked against when it compiles
    /// ([`ParentDepth`](crate::bounds::ParentDepth)). [`Error::InvalidDocumentId`] for an id Firestore would refuse.
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
