//! `sum` and `avg` of a numeric field across shards, exact across chunk queries.
//!
//! Each chunk query answers its count, sum and average. Where those fix the chunk's exact
//! share of the total (its sum, and how many of its documents hold a number), the total is
//! added from them; where they do not, the chunk is asked again one shard value at a time,
//! and a shard value that still leaves its subtotal open has its values read (a projection of
//! the field alone) and added here. Two answers leave a subtotal open:
//! - an integer field's sum that came back a double: Firestore turns a sum that passes
//!   `i64::MAX` into a double, though the total of every chunk may fit;
//! - an average that does not fix how many numbers it divided by: Firestore's `avg` skips
//!   values that are not numbers (a null, a string: legacy data a backfill adopted), which the
//!   count beside it counts; sum / avg gives that number, except where the average is 0.

use firestore::FirestoreDb;
use futures::TryStreamExt;
use tracing::Instrument as _;

mod numeric;
mod totals;

pub use numeric::{Number, Numeric, NumericField, SummedOver, numeric_field};
use totals::{ChunkAggregate, Subtotal, Subtotals};

use super::fetch::begin;
use super::plan::{Chunk, QueryPlan};
use super::spans::{chunk_span, query_span};
use super::{QueryStats, Reach, ShardedQuery, Window};
use crate::{Error, Result, Sharded};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `sum` and `avg` of `field` across the chunks, read at one snapshot; `average` says
/// whether the average is asked for (its count of numbers may need more reads).
pub(crate) async fn aggregate<T: Sharded, const QUERY: u64, R: Reach, W: Window>(
    query: &ShardedQuery<T, QUERY, R, W>,
    db: &FirestoreDb,
    field: NumericField<T>,
    average: bool,
) -> Result<(Number, Option<f64>, QueryStats)> {
    // `W: Summable` at every caller: only `limit`, `after` and `before` set these, and
    // each makes the query `Windowed`.
    debug_assert!(query.limit.is_none() && query.after.is_none() && query.before.is_none());
    if let Some(path) = query.then_by() {
        return Err(Error::InvalidQuery(format!(
            "`sum` and `avg` of a query filtered by range on `{path}`: the plan holds no index with both the filtered and the summed field; `count` it, or fetch the documents"
        )));
    }
    if R::REVERSED {
        // No direction changes a sum: run it in the type's own, whose indexes hold the
        // aggregated fields.
        return aggregate_checked(&query.flipped(), db, field, average).await;
    }
    aggregate_checked(query, db, field, average).await
}

/// [`aggregate`] of a query checked already, in its own direction.
async fn aggregate_checked<T: Sharded, const QUERY: u64, R: Reach, W: Window>(
    query: &ShardedQuery<T, QUERY, R, W>,
    db: &FirestoreDb,
    field: NumericField<T>,
    average: bool,
) -> Result<(Number, Option<f64>, QueryStats)> {
    let span = query_span::<T, QUERY>("aggregate");
    async {
        let plan = query.plan()?.forward_only()?;
        let snapshot = begin::<T>(db, &plan, &span).await?;
        let cost = Cost::default();
        let total = aggregate_in(snapshot.db(), &plan, field, average, &cost).await;
        snapshot.release();
        let (sum, avg) = total?;
        let stats = cost.stats();
        span.record("documents_read", stats.documents_read);
        if stats.documents_read > 0 {
            tracing::warn!(
                target: "sharded_runtime::query",
                collection = T::COLLECTION,
                field = field.path,
                documents_read = stats.documents_read,
                "sharded: a chunk's sum or average could not be settled from Firestore's answers (a sum past i64::MAX, or an average of 0), so the values of {} documents were read, one billed read each",
                stats.documents_read
            );
        }
        Ok((sum, avg, stats))
    }
    .instrument(span.clone())
    .await
}

async fn aggregate_in<T: Sharded>(
    db: &FirestoreDb,
    plan: &QueryPlan,
    field: NumericField<T>,
    average: bool,
    cost: &Cost,
) -> Result<(Number, Option<f64>)> {
    let answers =
        futures::future::try_join_all(plan.chunks.iter().enumerate().map(|(i, chunk)| {
            aggregate_of(db, plan, *chunk, field, cost).instrument(chunk_span(i, *chunk))
        }))
        .await?;
    cost.round();
    let mut subtotals = Subtotals::new(field.integer, answers);
    // Twice at most: the open sums first, then the counts an average needs.
    for _ in 0..2 {
        let open = subtotals.open(average);
        if open.is_empty() {
            continue;
        }
        let settled = futures::future::try_join_all(open.iter().map(|&i| {
            let chunk = plan.chunks[i];
            exact_subtotal(db, plan, chunk, field, cost).instrument(chunk_span(i, chunk))
        }))
        .await?;
        cost.round();
        for (i, subtotal) in open.into_iter().zip(settled) {
            subtotals.settle(i, subtotal);
        }
    }
    Ok(subtotals.total())
}

/// One query's count, sum and average of `field` over the shard values `chunk`.
async fn aggregate_of<T: Sharded>(
    db: &FirestoreDb,
    plan: &QueryPlan,
    chunk: Chunk,
    field: NumericField<T>,
    cost: &Cost,
) -> Result<ChunkAggregate> {
    cost.query();
    // The order field alone, so the index (shard, fields, order field, aggregated
    // field) serves it with a range or without.
    let order = vec![plan.orders[0].clone()];
    // As every chunk query (`plan`), checked against the plan in debug builds.
    #[cfg(debug_assertions)]
    {
        let sent = plan.structured_query_ordered(chunk, order.clone(), None, None)?;
        super::served::check_aggregation_served(&T::indexes(), &sent, field.path)?;
    }
    let rows = crate::retry::retry_reads(&crate::retry::QUERY_READS, || {
        plan.select_ordered(db, chunk, order.clone(), None)
            .aggregate(|a| {
                a.fields([
                    a.field("count").count(),
                    a.field("sum").sum(field.path),
                    a.field("avg").avg(field.path),
                ])
            })
            .query()
    })
    .await?;
    ChunkAggregate::from_rows(&rows)
}

/// The exact subtotal of the shard values `chunk`: asked again one value at a time, and the
/// values of a shard value whose answer still leaves it open read and added here.
async fn exact_subtotal<T: Sharded>(
    db: &FirestoreDb,
    plan: &QueryPlan,
    chunk: Chunk,
    field: NumericField<T>,
    cost: &Cost,
) -> Result<Subtotal> {
    if chunk.shards.len() == 1 {
        return read_subtotal(db, plan, chunk, field, cost).await;
    }
    let values: Vec<Chunk> = chunk
        .shards
        .chunks(1)
        .map(|shard| chunk.with_shards(shard))
        .collect();
    let answers = futures::future::try_join_all(
        values
            .iter()
            .map(|&value| aggregate_of(db, plan, value, field, cost)),
    )
    .await?;
    let mut total = Subtotal::default();
    let mut unsettled: Vec<Chunk> = Vec::new();
    for (value, answer) in values.iter().zip(&answers) {
        match (answer.exact_sum(field.integer), answer.numbers()) {
            (Some(sum), Some(numbers)) => total = total.add(Subtotal::of_sum(sum, numbers)),
            _ => unsettled.push(*value),
        }
    }
    let read = futures::future::try_join_all(
        unsettled
            .into_iter()
            .map(|value| read_subtotal(db, plan, value, field, cost)),
    )
    .await?;
    Ok(read.into_iter().fold(total, Subtotal::add))
}

/// The subtotal of the shard values `chunk`, from its documents' values of `field` (a
/// projection of the field alone, streamed: one billed read per document).
async fn read_subtotal<T: Sharded>(
    db: &FirestoreDb,
    plan: &QueryPlan,
    chunk: Chunk,
    field: NumericField<T>,
    cost: &Cost,
) -> Result<Subtotal> {
    // Read again whole when the stream breaks: a subtotal counts every document once.
    let backoff = crate::retry::QUERY_READS;
    let mut attempts = 0;
    loop {
        attempts += 1;
        cost.query();
        let read = async {
            let documents = plan
                .select_ordered(
                    db,
                    chunk,
                    plan.orders.clone(),
                    Some(&[field.path.to_owned()]),
                )
                .stream_query_with_errors()
                .await?;
            documents
                .try_fold(
                    (Subtotal::default(), 0),
                    |(subtotal, read), document| async move {
                        let value = crate::value_order::field_value(&document, field.path)
                            .and_then(|value| value.value_type.as_ref());
                        Ok((subtotal.add(Subtotal::of_documents([value])), read + 1))
                    },
                )
                .await
        };
        match read.await {
            Ok((subtotal, read)) => {
                cost.documents(read);
                return Ok(subtotal);
            }
            Err(error) if attempts < backoff.max_attempts && crate::retry::transient(&error) => {
                tokio::time::sleep(backoff.delay(attempts, crate::StatusCode::Unavailable)).await;
            }
            Err(error) => return Err(error.into()),
        }
    }
}

/// What an aggregation cost, counted as its concurrent requests go: queries sent, rounds of
/// them, and documents whose values were read.
#[derive(Default)]
struct Cost {
    queries: AtomicUsize,
    rounds: AtomicUsize,
    documents: AtomicUsize,
}

impl Cost {
    fn query(&self) {
        self.queries.fetch_add(1, Ordering::Relaxed);
    }

    fn round(&self) {
        self.rounds.fetch_add(1, Ordering::Relaxed);
    }

    fn documents(&self, read: usize) {
        self.documents.fetch_add(read, Ordering::Relaxed);
    }

    fn stats(&self) -> QueryStats {
        QueryStats {
            queries: self.queries.load(Ordering::Relaxed),
            documents_read: self.documents.load(Ordering::Relaxed),
            rounds: self.rounds.load(Ordering::Relaxed),
        }
    }
}
