//! A counter's exact value: the sum of its shard documents, one aggregation per counted
//! document (an aggregation has no per-parent grouping, so many documents take one each),
//! every one at one snapshot; in a read-write transaction, the shard documents themselves.

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::Document;
use futures::{StreamExt as _, TryStreamExt as _};

use crate::error::{Error, Result};
use crate::model::counter_field::{CounterField, SHARD_VALUE_FIELD, integer, shard_value, total};
use crate::model::handle::{InTransaction, ShardedCollection};
use crate::model::sharded::Sharded;

/// Aggregations of one [`counters`](ShardedCollection::counters) call in flight at once.
const CONCURRENT_READS: usize = 16;

impl<T: Sharded> ShardedCollection<'_, T> {
    /// The exact value of the counter `field` of the document `id`: the sum of its shard
    /// documents, one aggregation (billed as one read per 1,000 shard documents, so one). On a
    /// client pinned to a read time or a transaction, the value then. A counter never added
    /// to is 0.
    pub async fn counter(&self, id: &str, field: CounterField<T>) -> Result<i64> {
        let document = self.scope().document_name::<T>(self.db(), id)?;
        shard_sum(self.db(), &document, field).await
    }

    /// The exact values of the counter `field` of the documents `ids`, in their order, all at
    /// one snapshot (a read-only transaction, or the client's own read time): one aggregation
    /// per document, at most 16 in flight. Firestore has no aggregation grouped by parent, so
    /// this is the fewest billed reads; the alternative, one batch get of every shard
    /// document, is one request but a read per shard document.
    pub async fn counters<I, S>(&self, ids: I, field: CounterField<T>) -> Result<Vec<i64>>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let documents = ids
            .into_iter()
            .map(|id| self.scope().document_name::<T>(self.db(), id.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        let snapshot = crate::query::snapshot::Snapshot::begin(self.db(), documents.len()).await?;
        let db = snapshot.db();
        let values = futures::stream::iter(&documents)
            .map(|document| shard_sum(db, document, field))
            .buffered(CONCURRENT_READS)
            .try_collect()
            .await;
        snapshot.release();
        values
    }
}

impl<T: Sharded> InTransaction<'_, '_, T> {
    /// The exact value of the counter `field` of the document `id` as the transaction sees
    /// it: its shard documents read (one billed read each) and added, so that the
    /// transaction holds them and is run again if an increment lands before it commits.
    pub async fn counter(&self, id: &str, field: CounterField<T>) -> Result<i64> {
        let document = self.scope().document_name::<T>(self.db(), id)?;
        let shards = shard_documents(self.db(), &document, field).await?;
        let values = shards.iter().map(shard_value).collect::<Result<Vec<_>>>()?;
        total(values, &document)
    }
}

/// Every shard document of `field` under `document`, read by `db` (in a transaction, each
/// read locks its document).
pub(super) async fn shard_documents<T>(
    db: &FirestoreDb,
    document: &str,
    field: CounterField<T>,
) -> Result<Vec<Document>> {
    let collection = field.collection_id();
    Ok(db
        .fluent()
        .select()
        .from(collection.as_str())
        .parent(document)
        .query()
        .await?)
}

/// The sum of the shard documents of `field` under `document`, read by `db`.
pub(crate) async fn shard_sum<T>(
    db: &FirestoreDb,
    document: &str,
    field: CounterField<T>,
) -> Result<i64> {
    let collection = field.collection_id();
    let rows = crate::wire::retry::retry_reads(&crate::wire::retry::QUERY_READS, || {
        db.fluent()
            .select()
            .from(collection.as_str())
            .parent(document)
            .aggregate(|a| a.fields([a.field("sum").sum(SHARD_VALUE_FIELD)]))
            .query()
    })
    .await?;
    let sum = rows
        .first()
        .and_then(|row| row.fields.get("sum"))
        .ok_or_else(|| Error::UnexpectedAnswer("a sum aggregation returned no sum".into()))?;
    integer(sum.value_type.as_ref(), document)
}
