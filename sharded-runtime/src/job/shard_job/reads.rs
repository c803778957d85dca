//! The job's reads: the scan's pages (the shard field alone, in name order, within the job's
//! id range), the count for the ETA, a document read again after a conflict; each retried
//! with the job's backoff.

use firestore::gcloud_sdk::google::firestore::v1::{Document, Value, value::ValueType};
use firestore::{FirestoreQueryCursor, FirestoreValue};

use super::ShardJob;
use crate::error::Result;
use crate::model::document_path::DocumentPath;
use crate::model::sharded::Sharded;

impl<'db, T: Sharded> ShardJob<'db, T> {
    pub(crate) async fn count(&self) -> Result<u64> {
        let rows = self
            .with_retries(|| {
                self.scope
                    .select(self.db, self.db.fluent().select().from(T::COLLECTION))
                    .filter(|_| self.id_filter())
                    .aggregate(|a| a.fields([a.field("count").count()]))
                    .query()
            })
            .await?;
        crate::query::count_of(&rows)
    }

    /// The next page of the scan: documents after `after` in name order, with only the
    /// fields the job's change reads.
    pub(super) async fn scan_page(&self, after: Option<&str>) -> Result<Vec<Document>> {
        self.scan_page_of(after, &self.change.projection::<T>())
            .await
    }

    /// The next page of the scan, with only `fields`.
    pub(super) async fn scan_page_of(
        &self,
        after: Option<&str>,
        fields: &[String],
    ) -> Result<Vec<Document>> {
        let after = after.map(|position| {
            FirestoreValue::from(Value {
                value_type: Some(ValueType::ReferenceValue(self.name_at(position))),
            })
        });
        self.with_retries(|| {
            let select = self
                .scope
                .select(
                    self.db,
                    self.db.fluent().select().fields(fields).from(T::COLLECTION),
                )
                .filter(|_| self.id_filter())
                .order(|o| o.fields([o.field("__name__").asc()]))
                .limit(self.page_size);
            let select = match &after {
                Some(after) => {
                    select.start_at(FirestoreQueryCursor::AfterValue(vec![after.clone()]))
                }
                None => select,
            };
            select.query()
        })
        .await
    }

    /// The document `name` (in full) again, with only the fields the job's change reads.
    pub(super) async fn read_again(&self, name: &str) -> Result<Option<Document>> {
        let path = DocumentPath::parse(name);
        let (container, id) = (path.container(), path.id());
        let fields = self.change.projection::<T>();
        self.with_retries(|| {
            self.db
                .fluent()
                .select()
                .fields(&fields)
                .by_id_in(T::COLLECTION)
                .parent(container.clone())
                .one(id)
        })
        .await
    }

    /// Reads, retried after connection failures with the writer's backoff.
    pub(super) async fn with_retries<R, F>(&self, read: impl Fn() -> F) -> Result<R>
    where
        F: std::future::Future<Output = firestore::FirestoreResult<R>>,
    {
        crate::wire::retry::retry_reads(&self.scan_backoff, read).await
    }
}
