//! `count()`: one count aggregation per chunk at one snapshot, summed.

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{Document, value::ValueType};
use tracing::Instrument as _;

use super::plan::QueryPlan;
use super::spans::query_span;
use super::{Reach, ShardedQuery, Window};
use crate::{Error, Result, Sharded};

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// How many documents the query returns: its limit and cursor apply, as they do to
    /// Firestore's `count`. One count aggregation per chunk, with the cursor and the limit;
    /// their sum capped at the limit.
    pub async fn count(&self, db: &FirestoreDb) -> Result<u64> {
        let span = query_span::<T, QUERY>("count");
        let plan = self.plan()?;
        self.count_planned(db, &plan, &span)
            .instrument(span.clone())
            .await
    }

    /// The count of `plan`'s documents, capped at its limit.
    async fn count_planned(
        &self,
        db: &FirestoreDb,
        plan: &QueryPlan,
        span: &tracing::Span,
    ) -> Result<u64> {
        let counts = self
            .in_every_chunk(db, plan, span, |db, plan, chunk| {
                let count = plan
                    .select(db, chunk)
                    .aggregate(|a| a.fields([a.field("count").count()]));
                Box::pin(async move {
                    let rows = crate::retry::retry_reads(&crate::retry::QUERY_READS, || {
                        count.clone().query()
                    })
                    .await?;
                    count_of(&rows)
                })
            })
            .await?;
        let total: u64 = counts.into_iter().sum();
        Ok(plan
            .limit
            .map_or(total, |limit| total.min(u64::from(limit))))
    }
}

/// The count a `count` aggregation named "count" returned.
pub(crate) fn count_of(rows: &[Document]) -> Result<u64> {
    rows.first()
        .and_then(|row| row.fields.get("count"))
        .and_then(|value| match value.value_type {
            Some(ValueType::IntegerValue(count)) => u64::try_from(count).ok(),
            _ => None,
        })
        .ok_or_else(|| Error::UnexpectedAnswer("an aggregation returned no count".into()))
}
