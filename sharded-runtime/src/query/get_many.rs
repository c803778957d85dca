//! `get_many`: documents by id, every one read at the same moment, with the ids that name none.

use std::collections::{HashMap, HashSet};

use firestore::gcloud_sdk::google::firestore::v1::Document;
use futures::TryStreamExt as _;

use crate::error::{Error, Result};
use crate::model::document_id::check_document_id;
use crate::model::handle::{InTransaction, ShardedCollection};
use crate::model::sharded::Sharded;
use crate::model::stored::Stored;
use crate::query::snapshot::Snapshot;
use crate::wire::retry::{Backoff, retry_reads};

/// The most ids one BatchGetDocuments request carries; more are read in several requests at
/// once, all in one read-only snapshot.
pub(crate) const IDS_PER_REQUEST: usize = 300;

/// What [`get_many`](ShardedCollection::get_many) found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Many<T> {
    /// The documents found, in the order their ids were first given.
    pub found: Vec<Stored<T>>,
    /// The ids given that name no document, in the order first given.
    pub missing: Vec<String>,
}

impl<T> Many<T> {
    /// The documents found, without their ids and shards.
    pub fn into_documents(self) -> Vec<T> {
        self.found
            .into_iter()
            .map(|stored| stored.document)
            .collect()
    }
}

impl<T: Sharded> ShardedCollection<'_, T> {
    /// The documents `ids` of this collection (a parent's, for
    /// [`collection_in`](crate::model::sharded::Sharded::collection_in)), and the ids that name none: one
    /// billed read per id, as Firestore bills a get (a missing document too). Every id is
    /// checked before anything is sent ([`check_document_id`](crate::model::document_id::check_document_id)); an
    /// id given twice is read once. Up to 300 ids are one request; more are several, sent at
    /// once and all read in one read-only snapshot, so the result is one moment of the
    /// collection. A request that fails after its retries fails the whole: never some ids
    /// silently left out.
    pub async fn get_many<I, S>(&self, ids: I) -> Result<Many<T>>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut seen = HashSet::new();
        let mut distinct: Vec<String> = Vec::new();
        for id in ids {
            let id = id.as_ref();
            crate::model::document_id::check_document_id(id)?;
            if seen.insert(id.to_owned()) {
                distinct.push(id.to_owned());
            }
        }
        let parent = self.parent_path()?;
        if distinct.is_empty() {
            return Ok(Many {
                found: Vec::new(),
                missing: Vec::new(),
            });
        }
        let requests: Vec<&[String]> = distinct.chunks(IDS_PER_REQUEST).collect();
        let snapshot = Snapshot::begin(self.db(), requests.len()).await?;
        let backoff = Backoff::default();
        let answers = futures::future::try_join_all(requests.iter().map(|ids| {
            let (db, parent, backoff) = (snapshot.db(), &parent, &backoff);
            async move {
                retry_reads(backoff, || async move {
                    db.fluent()
                        .select()
                        .by_id_in(T::COLLECTION)
                        .parent(parent)
                        .batch_with_errors(ids.iter())
                        .await?
                        .try_collect::<Vec<(String, Option<Document>)>>()
                        .await
                })
                .await
            }
        }))
        .await;
        snapshot.release();
        let mut by_id: HashMap<String, Option<Document>> = answers?.into_iter().flatten().collect();
        let mut many = Many {
            found: Vec::new(),
            missing: Vec::new(),
        };
        for id in distinct {
            match by_id.remove(&id) {
                Some(Some(document)) => many.found.push(Stored::from_document(&document)?),
                Some(None) => many.missing.push(id),
                None => {
                    return Err(Error::IncompleteGet {
                        collection: T::COLLECTION,
                        id,
                    });
                }
            }
        }
        Ok(many)
    }
}

impl<'db, T: Sharded> ShardedCollection<'db, T> {
    /// The document `id`, if it exists.
    pub async fn get(&self, id: &str) -> Result<Option<T>> {
        check_document_id(id)?;
        let parent = self.parent_path()?;
        Ok(self
            .db
            .fluent()
            .select()
            .by_id_in(T::COLLECTION)
            .parent(parent)
            .obj()
            .one(id)
            .await?)
    }

    /// The document `id` with its id and shard, if it exists.
    pub async fn get_stored(&self, id: &str) -> Result<Option<Stored<T>>> {
        check_document_id(id)?;
        let parent = self.parent_path()?;
        let document = self
            .db
            .fluent()
            .select()
            .by_id_in(T::COLLECTION)
            .parent(parent)
            .one(id)
            .await?;
        document.as_ref().map(Stored::from_document).transpose()
    }
}

impl<T: Sharded> InTransaction<'_, '_, T> {
    /// The document `id` as the transaction sees it.
    pub async fn get(&self, id: &str) -> Result<Option<T>> {
        Ok(self.get_stored(id).await?.map(|stored| stored.document))
    }

    /// The document `id` with its id and shard, as the transaction sees it.
    pub async fn get_stored(&self, id: &str) -> Result<Option<Stored<T>>> {
        ShardedCollection::scoped(&self.db, self.scope.clone())
            .get_stored(id)
            .await
    }

    /// The documents `ids` as the transaction sees them, and the ids of those that do not
    /// exist; in a read-write transaction, each read locks its document as `get` does. See
    /// [`ShardedCollection::get_many`].
    pub async fn get_many<I, S>(&self, ids: I) -> Result<Many<T>>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        ShardedCollection::scoped(&self.db, self.scope.clone())
            .get_many(ids)
            .await
    }
}
