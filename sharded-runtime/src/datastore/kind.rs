//! One sharded kind in one place (the top of a namespace, or under one ancestor): its writes,
//! each with a shard drawn, and its reads.

use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use ds::read_options::ConsistencyType;
use firestore::gcloud_sdk::google::datastore::v1 as ds;

use super::convert::{self, Indexed};
use super::{Datastore, status_error};
use crate::error::{Error, Result};
use crate::model::sharded::Sharded;
use crate::model::stored::Stored;
use crate::write::bulk::sequential_ids::SequentialIds;

/// The id of a key Datastore allocated, as `__id<N>__`.
fn allocated_id(key: &ds::Key) -> Result<String> {
    match key.path.last().and_then(|element| element.id_type.as_ref()) {
        Some(ds::key::path_element::IdType::Id(id)) => Ok(format!("__id{id}__")),
        other => Err(Error::UnexpectedAnswer(format!(
            "an allocated key without a numeric id: {other:?}"
        ))),
    }
}

/// Refuses a request's ids unless each is named once and there are at most [`MAX_MUTATIONS`].
pub(super) fn check_distinct(ids: &[&str]) -> Result<()> {
    if ids.len() > MAX_MUTATIONS {
        return Err(Error::InvalidUpdate(format!(
            "one request takes at most {MAX_MUTATIONS} keys"
        )));
    }
    let mut seen = std::collections::HashSet::new();
    match ids.iter().find(|id| !seen.insert(**id)) {
        Some(id) => Err(Error::InvalidUpdate(format!(
            "`{id}` is named twice in one request, which Datastore refuses"
        ))),
        None => Ok(()),
    }
}

/// The most mutations one Datastore commit takes.
pub const MAX_MUTATIONS: usize = 500;

/// The kind of the sharded type `T` in one namespace, at the top or under one ancestor
/// ([`Datastore::kind`], [`Datastore::kind_in`]).
pub struct Kind<T> {
    pub(super) datastore: Datastore,
    /// The ancestor's path below the root (`rooms/lobby`), for a type with parents.
    pub(super) parent: Option<String>,
    /// The property paths some query reads; every other one is excluded from indexes.
    pub(super) queried: Vec<String>,
    /// The ids writes named, for the warning on rising ones, and the run warned about.
    sequential_ids: Arc<Mutex<(SequentialIds, Option<String>)>>,
    marker: PhantomData<fn() -> T>,
}

impl<T> Clone for Kind<T> {
    fn clone(&self) -> Self {
        Kind {
            datastore: self.datastore.clone(),
            parent: self.parent.clone(),
            queried: self.queried.clone(),
            sequential_ids: Arc::clone(&self.sequential_ids),
            marker: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Kind<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kind")
            .field("datastore", &self.datastore)
            .field("parent", &self.parent)
            .finish_non_exhaustive()
    }
}

/// How a write meets an entity already there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Put {
    /// Fails with `ALREADY_EXISTS` when it is there.
    Insert,
    /// Replaces it, or creates it.
    Upsert,
    /// Fails with `NOT_FOUND` when it is not there.
    Update,
}

impl<T: Sharded> Kind<T> {
    pub(super) fn new(datastore: Datastore, parent: Option<String>) -> Kind<T> {
        Kind {
            datastore,
            parent,
            queried: sharded_indexes::datastore::queried_properties(&T::DESCRIPTION),
            sequential_ids: Arc::default(),
            marker: PhantomData,
        }
    }

    /// The ancestor's path, `None` at the top.
    pub fn parent(&self) -> Option<&str> {
        self.parent.as_deref()
    }

    /// The key of the entity `id`: the ancestor's path, then the kind and `id`, a name, or
    /// the numeric id N for `__id<N>__` (what [`allocate_ids`](Self::allocate_ids) and
    /// [`insert_new`](Self::insert_new) give).
    pub fn key(&self, id: &str) -> Result<ds::Key> {
        crate::model::document_id::check_document_id(id)?;
        self.key_of(Some(convert::id_type(id)))
    }

    /// The key of an entity whose id is `id_type`, or one Datastore is to allocate (`None`).
    fn key_of(&self, id_type: Option<ds::key::path_element::IdType>) -> Result<ds::Key> {
        self.check_scope()?;
        let mut path = self
            .parent
            .as_deref()
            .map(convert::path_key)
            .unwrap_or_default();
        path.push(ds::key::PathElement {
            kind: T::COLLECTION.to_owned(),
            id_type,
        });
        Ok(ds::Key {
            partition_id: Some(self.datastore.partition.clone()),
            path,
        })
    }

    /// `n` numeric ids Datastore allocates for this kind (as `__id<N>__`), scattered over the
    /// key range: the page's advice for an app that assigns its own numeric ids, which no
    /// other entity will be given. At most 500 at once.
    pub async fn allocate_ids(&self, n: usize) -> Result<Vec<String>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        if n > MAX_MUTATIONS {
            return Err(Error::InvalidOptions {
                option: "n",
                expected: "at most 500 ids at once",
            });
        }
        let keys = (0..n)
            .map(|_| self.key_of(None))
            .collect::<Result<Vec<_>>>()?;
        let request = ds::AllocateIdsRequest {
            project_id: self.datastore.partition.project_id.clone(),
            database_id: self.datastore.partition.database_id.clone(),
            keys,
            ..Default::default()
        };
        let answer = self
            .datastore
            .client
            .get()
            .allocate_ids(request)
            .await
            .map_err(status_error)?
            .into_inner();
        answer.keys.iter().map(allocated_id).collect()
    }

    /// Creates `document` under an id Datastore allocates (scattered: no hotspot), with a
    /// shard drawn; returns the id (`__id<N>__`).
    pub async fn insert_new(&self, document: &T) -> Result<String> {
        let entity = self.entity_at(self.key_of(None)?, document)?;
        let mutation = ds::Mutation {
            operation: Some(ds::mutation::Operation::Insert(entity)),
            ..Default::default()
        };
        let answer = self.datastore.commit(vec![mutation], None).await?;
        let key = answer
            .mutation_results
            .first()
            .and_then(|result| result.key.as_ref())
            .ok_or_else(|| Error::UnexpectedAnswer("an insert answered no key".into()))?;
        allocated_id(key)
    }

    /// Notes an id a write names: the first run of ids rising one after another (the page's
    /// hotspot) is logged as a warning, once per handle and its clones.
    fn note_id(&self, id: &str) {
        let Ok(mut ids) = self.sequential_ids.lock() else {
            return;
        };
        let run = ids.0.note(id);
        if let Some(run) = run {
            ids.1 = Some(run.clone());
            tracing::warn!(
                kind = T::COLLECTION,
                run = %run,
                "ids that rise one after another write to one key range: a hotspot (let Datastore allocate ids, or draw them at random)"
            );
        }
    }

    /// The first run of rising ids the writes of this handle (and its clones) named
    /// (`first … last`), if any.
    pub fn sequential_ids(&self) -> Option<String> {
        self.sequential_ids
            .lock()
            .ok()
            .and_then(|ids| ids.1.clone())
    }

    /// A type with parents is written under one; a top-level one under none.
    fn check_scope(&self) -> Result<()> {
        let scope = match &self.parent {
            Some(parent) => crate::model::handle::Scope::Under(parent.clone()),
            None => crate::model::handle::Scope::Top,
        };
        scope.check::<T>()
    }

    /// `document` as the entity `id`, with a freshly drawn shard; every property no query
    /// reads excluded from indexes. A type whose order field the server fills
    /// (`server_timestamp`) has no such write in Datastore mode: refused.
    pub(super) fn entity(&self, id: &str, document: &T) -> Result<ds::Entity> {
        let key = self.key(id)?;
        let entity = self.entity_at(key, document)?;
        self.note_id(id);
        Ok(entity)
    }

    /// `document` as the entity at `key`, shard drawn, unqueried properties excluded.
    fn entity_at(&self, key: ds::Key, document: &T) -> Result<ds::Entity> {
        if T::DESCRIPTION.server_timestamp {
            return Err(Error::InvalidUpdate(format!(
                "`{}` fills its order field on the server (`server_timestamp`), which Datastore mode cannot: write the time yourself",
                T::COLLECTION
            )));
        }
        let name = convert::document_name(&self.datastore.documents_root(), &key);
        let document = crate::write::serialize::serialize(document, &name)?;
        let indexed = Indexed {
            paths: Some(&self.queried),
            partition: &self.datastore.partition,
        };
        let properties = convert::properties(&document.fields, None, &indexed);
        if let Some((property, bytes)) = convert::too_long_to_index(&properties) {
            return Err(Error::TooLongToIndex {
                entity: crate::model::document_path::DocumentPath::parse(&name)
                    .relative()
                    .to_owned(),
                property,
                bytes,
            });
        }
        Ok(ds::Entity {
            key: Some(key),
            properties,
        })
    }

    pub(super) fn mutation(&self, put: Put, id: &str, document: &T) -> Result<ds::Mutation> {
        use ds::mutation::Operation;
        let entity = self.entity(id, document)?;
        Ok(ds::Mutation {
            operation: Some(match put {
                Put::Insert => Operation::Insert(entity),
                Put::Upsert => Operation::Upsert(entity),
                Put::Update => Operation::Update(entity),
            }),
            ..Default::default()
        })
    }

    /// Creates the entity `id`, with a shard drawn: fails with `ALREADY_EXISTS` if it is
    /// there.
    pub async fn insert(&self, id: &str, document: &T) -> Result<()> {
        let mutation = self.mutation(Put::Insert, id, document)?;
        self.datastore.commit(vec![mutation], None).await.map(drop)
    }

    /// Writes the entity `id` whether or not it is there, with a shard drawn.
    pub async fn upsert(&self, id: &str, document: &T) -> Result<()> {
        let mutation = self.mutation(Put::Upsert, id, document)?;
        self.datastore.commit(vec![mutation], None).await.map(drop)
    }

    /// Replaces the entity `id`, which must be there (`NOT_FOUND` otherwise), with a shard
    /// drawn again.
    pub async fn update(&self, id: &str, document: &T) -> Result<()> {
        let mutation = self.mutation(Put::Update, id, document)?;
        self.datastore.commit(vec![mutation], None).await.map(drop)
    }

    /// Deletes the entity `id`; deleting one that is not there succeeds.
    pub async fn delete(&self, id: &str) -> Result<()> {
        self.delete_all([id]).await
    }

    /// Deletes every entity of `ids` in one commit (the page's batch operation): at most
    /// [`MAX_MUTATIONS`], each id once, checked before anything is sent.
    pub async fn delete_all<'i>(&self, ids: impl IntoIterator<Item = &'i str>) -> Result<()> {
        let keys = self.distinct_keys(ids)?;
        if keys.is_empty() {
            return Ok(());
        }
        let mutations = keys
            .into_iter()
            .map(|key| ds::Mutation {
                operation: Some(ds::mutation::Operation::Delete(key)),
                ..Default::default()
            })
            .collect();
        self.datastore.commit(mutations, None).await.map(drop)
    }

    /// The entities of `ids` in one lookup (the page's batch operation), in the order of
    /// `ids`, `None` where one is not there: at most [`MAX_MUTATIONS`], each id once.
    pub async fn get_all<'i>(
        &self,
        ids: impl IntoIterator<Item = &'i str>,
    ) -> Result<Vec<Option<Stored<T>>>> {
        let keys = self.distinct_keys(ids)?;
        let root = self.datastore.documents_root();
        let names: Vec<String> = keys
            .iter()
            .map(|key| convert::document_name(&root, key))
            .collect();
        let mut found: std::collections::HashMap<String, Stored<T>> = Default::default();
        for entity in self.lookup_keys(keys, None).await? {
            let document = convert::to_document(&entity, &root)?;
            found.insert(document.name.clone(), Stored::from_document(&document)?);
        }
        Ok(names.iter().map(|name| found.remove(name)).collect())
    }

    /// The keys of `ids`, checked: each once, at most [`MAX_MUTATIONS`].
    fn distinct_keys<'i>(&self, ids: impl IntoIterator<Item = &'i str>) -> Result<Vec<ds::Key>> {
        let ids: Vec<&str> = ids.into_iter().collect();
        check_distinct(&ids)?;
        ids.into_iter().map(|id| self.key(id)).collect()
    }

    /// Upserts every `(id, document)` in one non-transactional commit, each with its own
    /// shard drawn: at most [`MAX_MUTATIONS`], and each id once, checked before anything
    /// is sent. For more, use [`bulk_put`](Self::bulk_put).
    pub async fn upsert_all<'d>(
        &self,
        documents: impl IntoIterator<Item = (&'d str, &'d T)>,
    ) -> Result<()>
    where
        T: 'd,
    {
        let mutations = self.mutations(Put::Upsert, documents)?;
        if mutations.is_empty() {
            return Ok(());
        }
        self.datastore.commit(mutations, None).await.map(drop)
    }

    /// The mutations of a batch, checked: each id once, at most [`MAX_MUTATIONS`].
    pub(super) fn mutations<'d>(
        &self,
        put: Put,
        documents: impl IntoIterator<Item = (&'d str, &'d T)>,
    ) -> Result<Vec<ds::Mutation>>
    where
        T: 'd,
    {
        let documents: Vec<(&str, &T)> = documents.into_iter().collect();
        self.distinct_keys(documents.iter().map(|(id, _)| *id))?;
        documents
            .into_iter()
            .map(|(id, document)| self.mutation(put, id, document))
            .collect()
    }

    /// The entity `id`, read back with its shard; `None` when it is not there.
    pub async fn get(&self, id: &str) -> Result<Option<Stored<T>>> {
        self.lookup(id, None).await
    }

    pub(super) async fn lookup(
        &self,
        id: &str,
        transaction: Option<Vec<u8>>,
    ) -> Result<Option<Stored<T>>> {
        let found = self.lookup_keys(vec![self.key(id)?], transaction).await?;
        match found.first() {
            Some(entity) => {
                let document = convert::to_document(entity, &self.datastore.documents_root())?;
                Stored::from_document(&document).map(Some)
            }
            None => Ok(None),
        }
    }

    /// The entities at `keys` that exist, in a transaction's snapshot or at one moment.
    pub(super) async fn lookup_keys(
        &self,
        keys: Vec<ds::Key>,
        transaction: Option<Vec<u8>>,
    ) -> Result<Vec<ds::Entity>> {
        let mut found = Vec::new();
        let mut keys = keys;
        let mut consistency = transaction.map(ConsistencyType::Transaction);
        // Datastore may defer some keys of a large lookup: ask again for those, at the first
        // answer's read time, so that every entity is read at one moment.
        while !keys.is_empty() {
            let answer = self.datastore.lookup(keys, consistency.clone()).await?;
            found.extend(answer.found.into_iter().filter_map(|result| result.entity));
            keys = answer.deferred;
            if consistency.is_none() {
                consistency = answer.read_time.map(ConsistencyType::ReadTime);
            }
        }
        Ok(found)
    }
}
