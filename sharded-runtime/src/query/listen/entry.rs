//! `listen()`: a query's chunk queries as the targets of one Listen stream, behind the check
//! that no document holds a retired shard value.

use firestore::FirestoreDb;
use futures::stream::StreamExt;

use super::{ListenCheckpoint, ListenOptions, Listener, SnapshotStream};
use crate::query::{Reach, ShardedQuery, Window};
use crate::{Result, Sharded};

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// The query, live: a stream of snapshots, the first once every chunk's results are in,
    /// then one whenever the results change. Each snapshot holds the documents in order (the
    /// first `limit` when limited) and the changes since the one before.
    ///
    /// Every chunk query is a target of one Listen stream, and a snapshot shows every target
    /// at the same read time: never a mix of two moments, and a document an upsert moved to
    /// another chunk appears once. When the server or the network closes the stream, it is
    /// opened again and each target resumes from its resume token; a target the server
    /// removes (a missing index) or connections that keep failing end the stream with
    /// [`Error::Listen`](crate::Error::Listen). The query is checked before anything is sent.
    ///
    /// What each snapshot is, as the Firebase SDKs keep it: each target's documents and its
    /// resume token are committed together at a point the server declares consistent, and a
    /// broken stream goes back to the last such point before resuming from its token, so a
    /// snapshot never shows half a resend. A target the server sends afresh (a reset) is
    /// counted at that point's read time before it is shown (one read per thousand matches)
    /// and read again if the stream left it short, which the emulator was seen to do.
    /// [`ListenOptions`] set the reconnections, an idle timeout, and checkpoints to resume
    /// from after a restart ([`listen_from`](Self::listen_from)).
    pub fn listen(&self, db: &FirestoreDb) -> Result<SnapshotStream<T>> {
        self.listen_with(db, ListenOptions::default())
    }

    /// [`listen`](Self::listen), reconnecting as `options` say.
    pub fn listen_with(
        &self,
        db: &FirestoreDb,
        options: ListenOptions,
    ) -> Result<SnapshotStream<T>> {
        self.listener(db, options, None)
    }

    /// [`listen_with`](Self::listen_with), starting where `checkpoint` (taken from a snapshot
    /// of this same query, in this process or an earlier one) left off: each target resumes
    /// from the checkpoint's resume token, so the server sends only the documents changed
    /// since, not the whole result. The first snapshot holds every document, and its changes
    /// are those since the checkpoint's snapshot. A checkpoint of another query or database is
    /// [`Error::InvalidCheckpoint`](crate::Error::InvalidCheckpoint). The server may decline an old token; it then sends the
    /// whole result again (with a reset), which costs reads but is exact all the same.
    pub fn listen_from(
        &self,
        db: &FirestoreDb,
        checkpoint: ListenCheckpoint,
        options: ListenOptions,
    ) -> Result<SnapshotStream<T>> {
        self.listener(db, options, Some(checkpoint))
    }

    pub(super) fn listener(
        &self,
        db: &FirestoreDb,
        options: ListenOptions,
        checkpoint: Option<ListenCheckpoint>,
    ) -> Result<SnapshotStream<T>> {
        options.validate()?;
        let plan = self.plan()?.forward_only()?;
        let start_after = plan.start_after(db);
        let queries = plan
            .chunks
            .iter()
            .map(|chunk| plan.structured_query(*chunk, start_after.clone(), plan.limit))
            .collect::<Result<Vec<_>>>()?;
        let limit = plan.limit.map(|limit| limit as usize);
        let order = plan.document_order();
        let parent = plan.scope.parent_path(db);
        let listener = Listener::<T>::new(db, parent, queries, limit, order, options, checkpoint)?;
        let snapshots = listener.into_stream();
        if T::RETIRED_SHARD_VALUES.is_empty() {
            return Ok(snapshots);
        }
        // No snapshot before the check that no document holds a retired value.
        let (db, scope) = (db.clone(), self.scope.clone());
        Ok(futures::stream::once(async move {
            match crate::retired::check::<T>(&db, &scope).await {
                Ok(()) => snapshots,
                Err(error) => futures::stream::iter([Err(error)]).boxed(),
            }
        })
        .flatten()
        .boxed())
    }
}
