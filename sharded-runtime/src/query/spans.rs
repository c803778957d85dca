//! The tracing spans of a query and of its chunk queries.

use super::plan::Chunk;
use super::query_name;
use crate::model::sharded::Sharded;

/// The spans' target, as before they had a file of their own: what users' filters name.
const TARGET: &str = "sharded_runtime::query";

/// The span of one sharded query, at INFO: a production service keeps it, and a slow fan-out
/// shows as a long span with its chunks (DEBUG) inside. Fields: the collection, the indexed
/// field, the shard count, the chunk queries sent and the documents they read.
pub(super) fn query_span<T: Sharded, const QUERY: u64>(operation: &'static str) -> tracing::Span {
    tracing::info_span!(
        target: TARGET,
        "sharded_query",
        operation,
        collection = T::COLLECTION,
        field = query_name::<T>(QUERY),
        shards = T::READ_SHARD_VALUES.len(),
        chunks = tracing::field::Empty,
        documents_read = tracing::field::Empty,
    )
}

/// The span of one chunk query of a fan-out.
pub(super) fn chunk_span(index: usize, chunk: Chunk) -> tracing::Span {
    tracing::debug_span!(target: TARGET, "sharded_chunk", index, shards = chunk.shards.len())
}
