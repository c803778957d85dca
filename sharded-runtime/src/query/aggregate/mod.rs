//! `count`, `sum` and `avg` across shards, exact across chunk queries, one field or several
//! in one call (`query.aggregate(&db, (count(), sum(a), avg(b)))`).
//!
//! Each chunk query answers a field's count, sum and average. Where those fix the chunk's
//! exact share of the total (its sum, and how many of its documents hold a number), the total
//! is added from them; where they do not, the chunk is asked again one shard value at a time,
//! and a shard value that still leaves its subtotal open has its values read (a projection of
//! the field alone) and added here. Two answers leave a subtotal open:
//! - an integer field's sum that came back a double: Firestore turns a sum that passes
//!   `i64::MAX` into a double, though the total of every chunk may fit;
//! - an average that does not fix how many numbers it divided by: Firestore's `avg` skips
//!   values that are not numbers (a null, a string: legacy data a backfill adopted), which the
//!   count beside it counts; sum / avg gives that number, except where the average is 0.
//!
//! Several fields: Firestore aggregates only the documents that hold every field the query's
//! aggregations name (measured in `tests/tests/suite/server_aggregates.rs`). Each chunk asks
//! one query per field, served by the index the plan holds for that field's sum (the
//! query's own, the field last; an index with two aggregated fields is in no plan), and one
//! count of every document. Where each field's count equals that count, every document of the
//! chunk holds every field, so the per-field answers are the several-field ones; a chunk where
//! they differ has its documents read (a projection of the fields) and added here.

use firestore::FirestoreDb;
use futures::TryStreamExt;
use tracing::Instrument as _;

mod asked;
pub(super) mod numeric;
mod totals;

use asked::hidden::{Asked, Totals};
pub use asked::{Aggregation, Aggregations, Avg, Count, Sum, avg, count, sum};
pub use numeric::{Number, NumericField, SummedOver, numeric_field};
use totals::{ChunkAggregate, Subtotal, Subtotals};

use super::fetch::begin_requests;
use super::plan::{Chunk, QueryPlan};
use super::spans::{chunk_span, query_span};
use super::{QueryStats, Reach, ShardedQuery, Window};
use crate::error::{Error, Result};
use crate::model::sharded::Sharded;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `sum` and `avg` of `field` across the chunks, read at one snapshot; `average` says
/// whether the average is asked for (its count of numbers may need more reads).
pub(crate) async fn aggregate<T: Sharded, const QUERY: u64, R: Reach, W: Window>(
    query: &ShardedQuery<T, QUERY, R, W>,
    db: &FirestoreDb,
    field: NumericField<T>,
    average: bool,
) -> Result<(Number, Option<f64>, QueryStats)> {
    let field = asked::hidden::Field {
        path: field.path,
        integer: field.integer,
    };
    let mut asked = vec![Asked::Sum(field)];
    if average {
        asked.push(Asked::Avg(field));
    }
    let (totals, stats) = aggregate_asked(query, db, &asked).await?;
    let (sum, avg) = totals.of(field.path);
    Ok((sum, avg, stats))
}

/// Every aggregation of `asked` across the chunks, read at one snapshot.
pub(crate) async fn aggregate_asked<T: Sharded, const QUERY: u64, R: Reach, W: Window>(
    query: &ShardedQuery<T, QUERY, R, W>,
    db: &FirestoreDb,
    asked: &[Asked],
) -> Result<(Totals, QueryStats)> {
    // `W: Summable` at every caller: only `limit`, `after` and `before` set these, and
    // each makes the query `Windowed`.
    debug_assert!(query.limit.is_none() && query.after.is_none() && query.before.is_none());
    // A count alone is the query's own count, served by its own index, filters and all.
    let sums = asked.iter().any(|asked| !matches!(asked, Asked::Count));
    if let Some(path) = query.then_by().first().filter(|_| sums) {
        return Err(Error::InvalidQuery(format!(
            "`sum` and `avg` of a query filtered by range on `{path}`: the plan holds no index with both the filtered and the summed field; `count` it, or fetch the documents"
        )));
    }
    if R::REVERSED {
        // No direction changes a sum: run it in the type's own, whose indexes hold the
        // aggregated fields.
        return aggregate_checked(&query.flipped(), db, asked).await;
    }
    aggregate_checked(query, db, asked).await
}

/// What one call asks of each chunk: a query per field (and whether its average is asked),
/// and a count of every document where the fields' own counts do not give it.
struct Request<T> {
    fields: Vec<(NumericField<T>, bool)>,
    count_every_document: bool,
}

impl<T> Request<T> {
    fn of(asked: &[Asked]) -> Request<T> {
        let mut fields: Vec<(NumericField<T>, bool)> = Vec::new();
        for asked in asked {
            let (field, average) = match asked {
                Asked::Count => continue,
                Asked::Sum(field) => (field.numeric::<T>(), false),
                Asked::Avg(field) => (field.numeric::<T>(), true),
            };
            match fields
                .iter_mut()
                .find(|(known, _)| known.path == field.path)
            {
                Some((_, known_average)) => *known_average |= average,
                None => fields.push((field, average)),
            }
        }
        // One field's query counts the documents that hold it: Firestore's count beside that
        // field's aggregations. With none or several, every document is counted too.
        let count_every_document = fields.len() != 1;
        Request {
            fields,
            count_every_document,
        }
    }

    fn queries_per_chunk(&self) -> usize {
        self.fields.len() + usize::from(self.count_every_document)
    }
}

/// [`aggregate_asked`] of a query checked already, in its own direction.
async fn aggregate_checked<T: Sharded, const QUERY: u64, R: Reach, W: Window>(
    query: &ShardedQuery<T, QUERY, R, W>,
    db: &FirestoreDb,
    asked: &[Asked],
) -> Result<(Totals, QueryStats)> {
    let span = query_span::<T, QUERY>("aggregate");
    async {
        let plan = query.plan()?.forward_only()?;
        let request = Request::<T>::of(asked);
        let queries = plan.chunks.len() * request.queries_per_chunk();
        let snapshot = begin_requests::<T>(db, &plan, &span, queries).await?;
        let cost = Cost::default();
        let totals = aggregate_in(snapshot.db(), &plan, &request, &cost).await;
        snapshot.release();
        let totals = totals?;
        let stats = cost.stats();
        span.record("documents_read", stats.documents_read);
        if stats.documents_read > 0 {
            let fields: Vec<&str> = request.fields.iter().map(|(field, _)| field.path).collect();
            tracing::warn!(
                target: "sharded_runtime::query",
                collection = T::COLLECTION,
                field = fields.join(", "),
                documents_read = stats.documents_read,
                "sharded: a chunk's aggregation could not be settled from Firestore's answers (a sum past i64::MAX, an average of 0, or documents without one of several aggregated fields), so the values of {} documents were read, one billed read each",
                stats.documents_read
            );
        }
        Ok((totals, stats))
    }
    .instrument(span.clone())
    .await
}

/// One chunk's first answers: each field's aggregation, and the count of every document.
struct ChunkAnswers {
    fields: Vec<ChunkAggregate>,
    every_document: Option<u64>,
}

impl ChunkAnswers {
    /// Whether a document of the chunk lacks one of several fields, so that the per-field
    /// answers are not the several-field ones.
    fn mixed(&self) -> bool {
        self.fields.len() > 1
            && self
                .fields
                .iter()
                .any(|field| Some(field.count) != self.every_document)
    }

    /// The count of documents holding every field, once not mixed.
    fn count(&self) -> u64 {
        match (self.every_document, self.fields.as_slice()) {
            (Some(count), _) => count,
            (None, [field]) => field.count,
            (None, _) => 0,
        }
    }
}

async fn aggregate_in<T: Sharded>(
    db: &FirestoreDb,
    plan: &QueryPlan,
    request: &Request<T>,
    cost: &Cost,
) -> Result<Totals> {
    let answers =
        futures::future::try_join_all(plan.chunks.iter().enumerate().map(|(i, chunk)| {
            chunk_answers(db, plan, *chunk, request, cost).instrument(chunk_span(i, *chunk))
        }))
        .await?;
    cost.round();
    let fields: Vec<NumericField<T>> = request.fields.iter().map(|(field, _)| *field).collect();
    let mixed: Vec<usize> = (0..answers.len()).filter(|&i| answers[i].mixed()).collect();
    let read = futures::future::try_join_all(mixed.iter().map(|&i| {
        let chunk = plan.chunks[i];
        read_subtotals(db, plan, chunk, &fields, cost).instrument(chunk_span(i, chunk))
    }))
    .await?;
    if !mixed.is_empty() {
        cost.round();
    }
    let count = (0..answers.len())
        .map(|i| match mixed.iter().position(|&m| m == i) {
            Some(m) => read[m].0,
            None => answers[i].count(),
        })
        .sum();
    let fields = futures::future::try_join_all(request.fields.iter().enumerate().map(
        |(j, &(field, average))| {
            let mut subtotals = Subtotals::new(
                field.integer,
                answers.iter().map(|answer| answer.fields[j]).collect(),
            );
            for (m, &i) in mixed.iter().enumerate() {
                subtotals.settle(i, read[m].1[j]);
            }
            async move {
                settle_open(db, plan, &mut subtotals, field, average, cost).await?;
                let (sum, avg) = subtotals.total();
                Ok::<_, Error>((field.path, sum, avg))
            }
        },
    ))
    .await?;
    Ok(Totals { count, fields })
}

/// The chunk's first answers: one aggregation query per field, and a count of every document
/// where the request needs one, sent together.
async fn chunk_answers<T: Sharded>(
    db: &FirestoreDb,
    plan: &QueryPlan,
    chunk: Chunk,
    request: &Request<T>,
    cost: &Cost,
) -> Result<ChunkAnswers> {
    let fields = futures::future::try_join_all(
        request
            .fields
            .iter()
            .map(|&(field, _)| aggregate_of(db, plan, chunk, field, cost)),
    );
    let every_document = async {
        if !request.count_every_document {
            return Ok(None);
        }
        cost.query();
        super::count::count_chunk(db, plan, chunk).await.map(Some)
    };
    let (fields, every_document) = futures::future::try_join(fields, every_document).await?;
    Ok(ChunkAnswers {
        fields,
        every_document,
    })
}

/// Settles the subtotals of `field` the first answers left open: the open sums first, then
/// the counts an average needs.
async fn settle_open<T: Sharded>(
    db: &FirestoreDb,
    plan: &QueryPlan,
    subtotals: &mut Subtotals,
    field: NumericField<T>,
    average: bool,
    cost: &Cost,
) -> Result<()> {
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
    Ok(())
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
        let sent = plan.structured_query_ordered(chunk, order.clone(), None, None, None)?;
        super::served::check_aggregation_served(&T::indexes(), &sent, field.path)?;
    }
    let rows = crate::wire::retry::retry_reads(&crate::wire::retry::QUERY_READS, || {
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
    let (_, subtotals) = read_subtotals(db, plan, chunk, &[field], cost).await?;
    Ok(subtotals[0])
}

/// How many documents of the shard values `chunk` hold every field of `fields`, and each
/// field's subtotal over those documents, from their values (a projection of the fields,
/// streamed: one billed read per document).
async fn read_subtotals<T: Sharded>(
    db: &FirestoreDb,
    plan: &QueryPlan,
    chunk: Chunk,
    fields: &[NumericField<T>],
    cost: &Cost,
) -> Result<(u64, Vec<Subtotal>)> {
    let paths: Vec<String> = fields.iter().map(|field| field.path.to_owned()).collect();
    // Read again whole when the stream breaks: a subtotal counts every document once.
    let backoff = crate::wire::retry::QUERY_READS;
    let mut attempts = 0;
    loop {
        attempts += 1;
        cost.query();
        let read = async {
            let documents = plan
                .select_ordered(db, chunk, plan.orders.clone(), Some(&paths))
                .stream_query_with_errors()
                .await?;
            let start = (0, vec![Subtotal::default(); fields.len()], 0);
            documents
                .try_fold(start, |(count, mut subtotals, read), document| async move {
                    let values: Vec<_> = fields
                        .iter()
                        .map(|field| crate::model::value_order::field_value(&document, field.path))
                        .collect();
                    if values.iter().all(Option::is_some) {
                        for (subtotal, value) in subtotals.iter_mut().zip(values) {
                            let value = value.and_then(|value| value.value_type.as_ref());
                            *subtotal = subtotal.add(Subtotal::of_documents([value]));
                        }
                        return Ok((count + 1, subtotals, read + 1));
                    }
                    Ok((count, subtotals, read + 1))
                })
                .await
        };
        match read.await {
            Ok((count, subtotals, read)) => {
                cost.documents(read);
                return Ok((count, subtotals));
            }
            Err(error)
                if attempts < backoff.max_attempts && crate::wire::retry::transient(&error) =>
            {
                tokio::time::sleep(
                    backoff.delay(attempts, crate::wire::status::StatusCode::Unavailable),
                )
                .await;
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

#[cfg(test)]
mod tests {
    use super::asked::hidden::Field;
    use super::*;

    const QTY: Field = Field {
        path: "qty",
        integer: true,
    };
    const PRICE: Field = Field {
        path: "price",
        integer: false,
    };

    fn fields(request: &Request<()>) -> Vec<(&'static str, bool)> {
        request
            .fields
            .iter()
            .map(|(field, average)| (field.path, *average))
            .collect()
    }

    #[test]
    fn a_request_asks_each_field_once_and_counts_every_document_unless_one_field_does() {
        let one = Request::<()>::of(&[Asked::Count, Asked::Sum(QTY), Asked::Avg(QTY)]);
        assert_eq!(fields(&one), [("qty", true)]);
        assert!(!one.count_every_document);
        assert_eq!(one.queries_per_chunk(), 1);

        let two = Request::<()>::of(&[Asked::Sum(QTY), Asked::Avg(PRICE), Asked::Sum(QTY)]);
        assert_eq!(fields(&two), [("qty", false), ("price", true)]);
        assert!(two.count_every_document);
        assert_eq!(two.queries_per_chunk(), 3);

        let count = Request::<()>::of(&[Asked::Count]);
        assert!(count.fields.is_empty());
        assert_eq!(count.queries_per_chunk(), 1);
    }

    fn answer(count: u64) -> ChunkAggregate {
        ChunkAggregate {
            count,
            sum: Number::Integer(0),
            avg: None,
        }
    }

    #[test]
    fn a_chunk_is_read_only_where_a_fields_count_falls_short_of_every_document() {
        let held = ChunkAnswers {
            fields: vec![answer(5), answer(5)],
            every_document: Some(5),
        };
        assert!(!held.mixed());
        assert_eq!(held.count(), 5);
        let short = ChunkAnswers {
            fields: vec![answer(5), answer(4)],
            every_document: Some(5),
        };
        assert!(short.mixed());
        // One field: its own count is Firestore's, whatever the other documents hold.
        let one = ChunkAnswers {
            fields: vec![answer(3)],
            every_document: None,
        };
        assert!(!one.mixed());
        assert_eq!(one.count(), 3);
    }
}
