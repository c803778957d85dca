//! `explain`: Firestore's query explain for every chunk query of a plan, beside the plan, so a
//! user sees what a sharded query costs next to the unsharded one.
//!
//! Firestore answers explain options with the query's plan summary (the indexes used) and,
//! when asked to analyze, its execution stats (results returned, read operations, duration);
//! a sharded query's cost is its chunk queries' added up. The emulator runs an explained query
//! but answers no metrics at all (measured in `tests/tests/suite/server_explain_and_vectors.rs`),
//! so there each chunk's metrics are `None`, and so are the totals.

use firestore::{FirestoreDb, FirestoreDuration, FirestoreExplainMetrics, FirestoreExplainOptions};
use futures::TryStreamExt;
use tracing::Instrument as _;

use super::fetch::in_every_chunk;
use super::plan::QueryPlan;
use super::spans::query_span;
use super::{Reach, ShardedQuery, Window};
use crate::error::Result;
use crate::model::sharded::Sharded;

/// A sharded query explained: its plan, and Firestore's explain metrics of each chunk query
/// ([`ShardedQuery::explain`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExplainedQuery {
    /// What the query sends ([`ShardedQuery::plan`]).
    pub plan: QueryPlan,
    /// Each chunk query's metrics, in the plan's order.
    pub chunks: Vec<ExplainedChunk>,
}

/// One chunk query explained.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExplainedChunk {
    /// The shard values it reads.
    pub shards: &'static [&'static str],
    /// The documents it returned (none unless analyzed).
    pub documents: usize,
    /// Firestore's metrics for it, as the firestore crate reads them; `None` where the server
    /// answers none (the emulator).
    pub metrics: Option<FirestoreExplainMetrics>,
}

impl ExplainedQuery {
    /// The read operations every chunk query was billed, added up: what one round of the
    /// sharded query costs. `None` unless every chunk was analyzed and answered its stats.
    pub fn read_operations(&self) -> Option<usize> {
        total(&self.chunks, |stats| stats.read_operations)
    }

    /// The results every chunk query returned, added up (before the merge keeps the limit).
    pub fn results_returned(&self) -> Option<usize> {
        total(&self.chunks, |stats| stats.results_returned)
    }

    /// The longest chunk query's execution on the server: the chunk queries run at once.
    pub fn longest_execution(&self) -> Option<FirestoreDuration> {
        longest_execution(&self.chunks)
    }

    /// How many chunk queries each index served, by the index as Firestore describes it
    /// (its `query_scope` and `properties`); `None` where a chunk has no plan summary.
    pub fn indexes_used(&self) -> Option<Vec<(String, usize)>> {
        indexes_used(&self.chunks)
    }
}

fn total(
    chunks: &[ExplainedChunk],
    of: impl Fn(&firestore::FirestoreExecutionStats) -> usize,
) -> Option<usize> {
    chunks
        .iter()
        .map(|chunk| {
            let stats = chunk.metrics.as_ref()?.execution_stats.as_ref()?;
            Some(of(stats))
        })
        .sum()
}

fn longest_execution(chunks: &[ExplainedChunk]) -> Option<FirestoreDuration> {
    chunks
        .iter()
        .map(|chunk| {
            chunk
                .metrics
                .as_ref()?
                .execution_stats
                .as_ref()?
                .execution_duration
        })
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .max()
}

fn indexes_used(chunks: &[ExplainedChunk]) -> Option<Vec<(String, usize)>> {
    let mut used: Vec<(String, usize)> = Vec::new();
    for chunk in chunks {
        let summary = chunk.metrics.as_ref()?.plan_summary.as_ref()?;
        for index in &summary.indexes_used {
            let described = format!("{index:?}");
            match used.iter_mut().find(|(known, _)| *known == described) {
                Some((_, count)) => *count += 1,
                None => used.push((described, 1)),
            }
        }
    }
    Some(used)
}

/// Every chunk query of `query`'s plan sent with explain options, at one snapshot.
pub(super) async fn explain<T: Sharded, const QUERY: u64, R: Reach, W: Window>(
    query: &ShardedQuery<T, QUERY, R, W>,
    db: &FirestoreDb,
    analyze: bool,
) -> Result<ExplainedQuery> {
    let span = query_span::<T, QUERY>("explain");
    async {
        let plan = query.plan()?;
        let chunks = in_every_chunk::<T, _>(db, &plan, &span, |db, plan, chunk| {
            let select = plan
                .select(db, chunk)
                .explain_with_options(FirestoreExplainOptions {
                    analyze: Some(analyze),
                });
            Box::pin(async move {
                let responses: Vec<_> =
                    crate::wire::retry::retry_reads(&crate::wire::retry::QUERY_READS, || async {
                        select
                            .clone()
                            .stream_query_with_metadata()
                            .await?
                            .try_collect()
                            .await
                    })
                    .await?;
                Ok(ExplainedChunk {
                    shards: chunk.shards,
                    documents: responses.iter().filter(|r| r.document.is_some()).count(),
                    metrics: responses
                        .into_iter()
                        .find_map(|response| response.metadata.explain_metrics),
                })
            })
        })
        .await?;
        Ok(ExplainedQuery { plan, chunks })
    }
    .instrument(span.clone())
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use firestore::{FirestoreExecutionStats, FirestorePlanSummary};

    fn chunk(stats: Option<(usize, usize, i64)>) -> ExplainedChunk {
        ExplainedChunk {
            shards: &["0"],
            documents: 0,
            metrics: Some(FirestoreExplainMetrics {
                plan_summary: Some(FirestorePlanSummary {
                    indexes_used: Vec::new(),
                }),
                execution_stats: stats.map(|(results, reads, millis)| FirestoreExecutionStats {
                    results_returned: results,
                    execution_duration: Some(FirestoreDuration::from_millis(millis)),
                    read_operations: reads,
                    debug_stats: None,
                }),
            }),
        }
    }

    #[test]
    fn totals_add_every_chunk_and_are_none_where_one_has_no_stats() {
        let both = [chunk(Some((3, 4, 20))), chunk(Some((5, 6, 35)))];
        assert_eq!(total(&both, |stats| stats.results_returned), Some(8));
        assert_eq!(total(&both, |stats| stats.read_operations), Some(10));
        assert_eq!(
            longest_execution(&both),
            Some(FirestoreDuration::from_millis(35))
        );
        assert_eq!(indexes_used(&both), Some(Vec::new()));
        let planned_only = [chunk(Some((3, 4, 20))), chunk(None)];
        assert_eq!(total(&planned_only, |stats| stats.read_operations), None);
        assert_eq!(longest_execution(&planned_only), None);
        let emulator = [ExplainedChunk {
            shards: &["0"],
            documents: 2,
            metrics: None,
        }];
        assert_eq!(total(&emulator, |stats| stats.results_returned), None);
        assert_eq!(indexes_used(&emulator), None);
    }
}
