//! `count()`: one count aggregation per chunk at one snapshot, summed.

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{Document, value::ValueType};

use super::fetch::in_every_chunk;
use super::plan::{Chunk, QueryPlan};
use crate::error::{Error, Result};
use crate::model::sharded::Sharded;

/// How many documents `plan` reads, in the span `span` of the query of `T` it plans: one
/// count aggregation per chunk, with the cursor and the limit, at one snapshot; their sum
/// capped at the limit.
pub(super) async fn count_planned<T: Sharded>(
    db: &FirestoreDb,
    plan: &QueryPlan,
    span: &tracing::Span,
) -> Result<u64> {
    let counts = in_every_chunk::<T, _>(db, plan, span, |db, plan, chunk| {
        Box::pin(count_chunk(db, plan, chunk))
    })
    .await?;
    let total: u64 = counts.into_iter().sum();
    Ok(plan
        .limit
        .map_or(total, |limit| total.min(u64::from(limit))))
}

/// How many documents the chunk query `chunk` of `plan` reads (its cursor and limit applied):
/// one count aggregation, through the one retry policy.
pub(super) async fn count_chunk(db: &FirestoreDb, plan: &QueryPlan, chunk: Chunk) -> Result<u64> {
    let count = plan
        .select(db, chunk)
        .aggregate(|a| a.fields([a.field("count").count()]));
    let rows =
        crate::wire::retry::retry_reads(&crate::wire::retry::QUERY_READS, || count.clone().query())
            .await?;
    count_of(&rows)
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
