use std::marker::PhantomData;

use firestore::gcloud_sdk::google::firestore::v1::Document;
use firestore::{
    FirestoreBatch, FirestoreBatchWriter, FirestoreDb, FirestoreWritePrecondition,
    firestore_document_from_serializable,
};

use crate::shard::{WithShard, draw_shard};
use crate::stored::{Stored, document_id};
use crate::{Result, Sharded};

/// Writes and reads of one sharded collection. Get one with
/// [`Sharded::collection`](crate::Sharded::collection).
///
/// Every write stores the document's fields plus the shard field, drawn uniformly at random
/// from the type's shard values as the document is serialized. Reads return the user's type.
pub struct ShardedCollection<'db, T> {
    db: &'db FirestoreDb,
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
            marker: PhantomData,
        }
    }

    /// Creates a document with an id Firestore generates; returns the id.
    pub async fn insert(&self, document: &T) -> Result<String> {
        let stored = self
            .db
            .fluent()
            .insert()
            .into(T::COLLECTION)
            .generate_document_id()
            .document(serialize(document, "")?)
            .execute()
            .await?;
        Ok(document_id(&stored.name).to_owned())
    }

    /// Creates the document `id`; fails if it exists.
    pub async fn insert_with_id(&self, id: &str, document: &T) -> Result<()> {
        self.db
            .fluent()
            .insert()
            .into(T::COLLECTION)
            .document_id(id)
            .document(serialize(document, "")?)
            .execute()
            .await?;
        Ok(())
    }

    /// Creates or replaces the document `id`.
    pub async fn upsert(&self, id: &str, document: &T) -> Result<()> {
        self.write(id, document, None).await
    }

    /// Replaces the existing document `id`; fails if it does not exist.
    pub async fn update(&self, id: &str, document: &T) -> Result<()> {
        self.write(id, document, Some(FirestoreWritePrecondition::Exists(true)))
            .await
    }

    async fn write(
        &self,
        id: &str,
        document: &T,
        precondition: Option<FirestoreWritePrecondition>,
    ) -> Result<()> {
        let update = self.db.fluent().update().in_col(T::COLLECTION);
        let update = match precondition {
            Some(precondition) => update.precondition(precondition),
            None => update,
        };
        update
            .document(serialize(document, &self.document_name(id))?)
            .execute()
            .await?;
        Ok(())
    }

    /// Queues a create-or-replace of the document `id` in `batch` (a Firestore batch write
    /// cannot create documents with generated ids). The shard is drawn now.
    pub fn upsert_in<W: FirestoreBatchWriter>(
        &self,
        batch: &mut FirestoreBatch<'_, W>,
        id: &str,
        document: &T,
    ) -> Result<()> {
        let with_shard = WithShard {
            document,
            field: T::SHARD_FIELD,
            shard: draw_shard(T::SHARD_VALUES),
        };
        batch.update_object(T::COLLECTION, id, &with_shard, None, None, Vec::new())?;
        Ok(())
    }

    /// The document `id`, if it exists.
    pub async fn get(&self, id: &str) -> Result<Option<T>> {
        Ok(self
            .db
            .fluent()
            .select()
            .by_id_in(T::COLLECTION)
            .obj()
            .one(id)
            .await?)
    }

    /// The document `id` with its id and shard, if it exists.
    pub async fn get_stored(&self, id: &str) -> Result<Option<Stored<T>>> {
        let document = self
            .db
            .fluent()
            .select()
            .by_id_in(T::COLLECTION)
            .one(id)
            .await?;
        document.as_ref().map(Stored::from_document).transpose()
    }

    /// Deletes the document `id`; deleting a missing document succeeds.
    pub async fn delete(&self, id: &str) -> Result<()> {
        self.db
            .fluent()
            .delete()
            .from(T::COLLECTION)
            .document_id(id)
            .execute()
            .await?;
        Ok(())
    }

    fn document_name(&self, id: &str) -> String {
        format!("{}/{}/{id}", self.db.get_documents_path(), T::COLLECTION)
    }
}

/// `document` as a Firestore document named `name`, with a freshly drawn shard.
pub fn serialize<T: Sharded>(document: &T, name: &str) -> Result<Document> {
    let with_shard = WithShard {
        document,
        field: T::SHARD_FIELD,
        shard: draw_shard(T::SHARD_VALUES),
    };
    Ok(firestore_document_from_serializable(name, &with_shard)?)
}
