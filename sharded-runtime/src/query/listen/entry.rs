//! `listen()`: a query's chunk queries as the targets of one Listen stream, behind the check
//! that no document holds a retired shard value.

use firestore::FirestoreDb;
use futures::stream::StreamExt;

use super::{Decode, ListenCheckpoint, ListenOptions, Listener, SnapshotStream};
use crate::error::Result;
use crate::model::sharded::Sharded;
use crate::query::{Reach, ShardedQuery, Window};

/// The listener of `query`'s plan: its chunk queries as the targets of one Listen stream,
/// starting from `checkpoint` if given, behind the check that no document holds a retired
/// shard value; each document read by `decode` (as `T`, or a projection `I` of it).
pub(crate) fn listener<T: Sharded, const QUERY: u64, R: Reach, W: Window, I>(
    query: &ShardedQuery<T, QUERY, R, W>,
    db: &FirestoreDb,
    options: ListenOptions,
    checkpoint: Option<ListenCheckpoint>,
    decode: Decode<I>,
) -> Result<SnapshotStream<I>>
where
    I: Send + Sync + 'static,
{
    options.validate()?;
    if db.get_session_params().consistency_selector.is_some() {
        // A Listen stream has no read time or transaction: it would show the present.
        return Err(crate::error::Error::InvalidQuery(
            "a live query shows the present; this client reads at a fixed read time or in a transaction: listen with the database handle itself".into(),
        ));
    }
    let plan = query.plan()?.forward_only()?;
    let start = plan.start_cursor(db);
    let queries = plan
        .chunks
        .iter()
        .map(|chunk| plan.structured_query(db, *chunk, start.clone(), plan.limit))
        .collect::<Result<Vec<_>>>()?;
    let limit = plan.limit.map(|limit| limit as usize);
    let order = plan.document_order();
    let parent = plan.scope.parent_path(db);
    let listener = Listener::<I>::new(
        decode, db, parent, queries, limit, order, options, checkpoint,
    )?;
    let snapshots = listener.into_stream();
    if T::RETIRED_SHARD_VALUES.is_empty() {
        return Ok(snapshots);
    }
    // No snapshot before the check that no document holds a retired value.
    let (db, scope) = (db.clone(), plan.scope.clone());
    Ok(futures::stream::once(async move {
        match crate::query::retired::check::<T>(&db, &scope).await {
            Ok(()) => snapshots,
            Err(error) => futures::stream::iter([Err(error)]).boxed(),
        }
    })
    .flatten()
    .boxed())
}
