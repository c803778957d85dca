//! Live sharded queries: one Listen stream with one target per chunk of ≤ 30 shard values,
//! merged into snapshots that each show every target at one read time.
//!
//! The Listen protocol sends, per target, document changes, then `CURRENT` once the target is
//! in sync, and a target-less `NO_CHANGE` with a read time whenever every current target is
//! consistent at that time. A snapshot is built only at such a point with every target current,
//! so it is never a mix of two moments; a document an upsert moved to another chunk is then in
//! exactly one target, and the merge keeps one copy of a name in any case.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{
    Document, ListenRequest, ListenResponse, StructuredQuery, Target, listen_request, target,
};
use firestore::gcloud_sdk::prost_types::Timestamp;
use firestore::gcloud_sdk::tonic;
use futures::stream::{BoxStream, StreamExt};
use tokio::sync::mpsc;

use crate::error::{Error, Result};
use crate::model::sharded::Sharded;
use crate::model::stored::Stored;

mod changes;
mod checkpoint;
pub(crate) mod connection;
mod entry;
mod targets;
mod verify;

pub use checkpoint::ListenCheckpoint;
pub(crate) use entry::listener;
pub(crate) use verify::ATTEMPTS as CHECK_ATTEMPTS;

use changes::Shown;
use targets::{ChunkTarget, ChunkTargets, Step};

/// One state of a live query's results.
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySnapshot<T> {
    /// The matching documents in query order: the first `limit` of them when limited. Each
    /// is shared with the snapshots before and after it that hold the same version of the
    /// document (as the Firebase SDKs share document snapshots), so a snapshot costs no copy
    /// of the documents that did not change.
    pub documents: Vec<Arc<Stored<T>>>,
    /// What changed since the previous snapshot of the stream (for the first, every document
    /// is `Added`; for the first of a listener resumed from a checkpoint, what changed since
    /// the checkpoint's snapshot), as the Firebase SDKs' `docChanges()`: applied one after the other, in
    /// this order, they turn the previous `documents` into these. Removals come first (in
    /// the old order), then additions, then modifications (in the new order).
    ///
    /// ```
    /// # use sharded_runtime::{Stored, listen::DocumentChange};
    /// # use std::sync::Arc;
    /// fn apply<T>(list: &mut Vec<Arc<Stored<T>>>, changes: &[DocumentChange<T>]) {
    ///     for change in changes {
    ///         if let Some(old) = change.old_index {
    ///             list.remove(old);
    ///         }
    ///         if let Some(new) = change.new_index {
    ///             list.insert(new, change.document.clone());
    ///         }
    ///     }
    /// }
    /// ```
    pub changes: Vec<DocumentChange<T>>,
    /// The moment every chunk's results were read at.
    pub read_time: SystemTime,
    /// Where a new listener can start from this snapshot
    /// ([`ShardedQuery::listen_from`](crate::query::ShardedQuery::listen_from)); `None` unless
    /// [`ListenOptions::checkpoints`] is on.
    pub checkpoint: Option<ListenCheckpoint>,
}

/// One document's change between two snapshots, in sequence with the others.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentChange<T> {
    /// Added, modified or removed.
    pub kind: ChangeKind,
    /// The document: as it is now, or as it was when removed (the same one the snapshots
    /// hold).
    pub document: Arc<Stored<T>>,
    /// Its position once every earlier change of the list is applied, before this one;
    /// `None` when added.
    pub old_index: Option<usize>,
    /// Its position once this change is applied too; `None` when removed.
    pub new_index: Option<usize>,
}

/// What happened to a document between two snapshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// It entered the results (written, or moved into a limited top N).
    Added,
    /// It stayed in the results with new contents (and perhaps a new position).
    Modified,
    /// It left the results (deleted, changed to no longer match, or pushed out of a top N).
    Removed,
}

/// The snapshots of a live query; an error ends it.
pub type SnapshotStream<T> = BoxStream<'static, Result<QuerySnapshot<T>>>;

/// How a live query reconnects when its Listen stream ends or fails. Built from
/// [`default`](Default::default) with the `with_*` methods, so that an option added later
/// breaks no one's code.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ListenOptions {
    /// Consecutive connections that may fail (with no response in between) before the stream
    /// ends with [`Error::Listen`]; `None` (the default) keeps trying as long as the failures
    /// are transient, as the Firebase SDKs do. A failure that is not transient (a permission,
    /// a missing index) ends the stream at once either way.
    pub reconnects: Option<u32>,
    /// The wait before the first reconnection, more than zero; each further one waits 1.5
    /// times longer.
    pub first_retry: Duration,
    /// The longest wait between connections.
    pub max_retry: Duration,
    /// How long the stream may stay silent (no message at all, or no answer to opening it)
    /// before it is given up and opened again from the committed resume tokens, over a
    /// fresh connection; `None` (the default) waits as long as the connection lives. A
    /// connection that died without closing (a NAT or load balancer that dropped its state)
    /// is otherwise noticed only by gRPC's HTTP/2 keepalive (the firestore crate's client
    /// pings every 60 s and gives up 60 s later), and a stream opened again on it is as
    /// silent; with this timeout the stream recovers after the timeout and one reconnection.
    /// A quiet query may be silent for a while (the emulator says nothing between changes):
    /// each timeout then costs a reconnection and a new connection.
    pub idle_timeout: Option<Duration>,
    /// Whether each snapshot carries a [`ListenCheckpoint`] (every target's documents and
    /// resume token, encoded: as costly as the snapshot itself). Off by default.
    pub checkpoints: bool,
}

impl Default for ListenOptions {
    /// Reconnecting as long as failures are transient, waiting 250 ms, then 1.5 times longer
    /// each time, at most 10 s.
    fn default() -> Self {
        ListenOptions {
            reconnects: None,
            first_retry: Duration::from_millis(250),
            max_retry: Duration::from_secs(10),
            idle_timeout: None,
            checkpoints: false,
        }
    }
}

impl ListenOptions {
    /// With at most `reconnects` consecutive failed connections (`None`: as long as failures
    /// are transient).
    pub fn with_reconnects(mut self, reconnects: Option<u32>) -> Self {
        self.reconnects = reconnects;
        self
    }

    /// With `first_retry` as the wait before the first reconnection.
    pub fn with_first_retry(mut self, first_retry: Duration) -> Self {
        self.first_retry = first_retry;
        self
    }

    /// With `max_retry` as the longest wait between connections.
    pub fn with_max_retry(mut self, max_retry: Duration) -> Self {
        self.max_retry = max_retry;
        self
    }

    /// With `idle_timeout` as how long the stream may stay silent before it is opened again.
    pub fn with_idle_timeout(mut self, idle_timeout: Option<Duration>) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }

    /// With or without a [`ListenCheckpoint`] on each snapshot.
    pub fn with_checkpoints(mut self, checkpoints: bool) -> Self {
        self.checkpoints = checkpoints;
        self
    }

    /// Whether a listener can run with these options:
    /// [`Error::InvalidOptions`] naming the first out of range.
    pub fn validate(&self) -> Result<()> {
        use crate::wire::option_check::check;
        let day = crate::wire::option_check::MAX_DURATION;
        check(
            self.max_retry <= day,
            "max_retry",
            "at most a day (MAX_DURATION)",
        )?;
        // A zero wait would retry a failing connection in a tight loop.
        check(
            !self.first_retry.is_zero() && self.first_retry <= self.max_retry,
            "first_retry",
            "more than zero and at most max_retry",
        )?;
        check(
            self.idle_timeout
                .is_none_or(|idle| !idle.is_zero() && idle <= day),
            "idle_timeout",
            "more than zero and at most a day (MAX_DURATION)",
        )
    }

    /// The waits between connections as the shared retry policy: 1.5 times longer each time,
    /// no jitter.
    pub(crate) fn backoff(&self) -> crate::wire::retry::Backoff {
        crate::wire::retry::Backoff {
            initial: self.first_retry,
            factor: 1.5,
            maximum: self.max_retry,
            jitter: 0.0,
            max_attempts: u32::MAX,
        }
    }
}

/// A live query: its connection, its targets' state, and the last snapshot.
pub(crate) struct Listener<T> {
    /// How a document reads as what the snapshots show.
    decode: Decode<T>,
    db: FirestoreDb,
    /// The full path the targets' queries run under: the database root or a parent document.
    parent: String,
    targets: ChunkTargets,
    limit: Option<usize>,
    order: crate::query::DocumentOrder,
    /// What the last snapshot showed (for a resumed listener, what its checkpoint did).
    shown: Vec<Shown<Arc<Stored<T>>>>,
    /// No snapshot emitted yet: the next is emitted even if nothing changed.
    first: bool,
    /// The query's identity in checkpoints.
    fingerprint: u64,
    /// What the stream and its checks go over ([`connection`]).
    connection: connection::Connection,
    /// The stream fell silent: the next one goes over a fresh connection.
    silenced: bool,
    requests: Option<mpsc::UnboundedSender<ListenRequest>>,
    responses: Option<tonic::Streaming<ListenResponse>>,
    options: ListenOptions,
    failures: u32,
}

impl<T: Send + Sync + 'static> crate::wire::until_error::Source for Listener<T> {
    type Item = QuerySnapshot<T>;

    async fn next_item(&mut self) -> Option<Result<QuerySnapshot<T>>> {
        Some(self.next_snapshot().await)
    }
}

impl<T: Send + Sync + 'static> Listener<T> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        decode: Decode<T>,
        db: &FirestoreDb,
        parent: String,
        queries: Vec<StructuredQuery>,
        limit: Option<usize>,
        order: crate::query::DocumentOrder,
        options: ListenOptions,
        resume: Option<ListenCheckpoint>,
    ) -> Result<Listener<T>> {
        let fingerprint = checkpoint::fingerprint(&parent, &queries);
        let mut targets = ChunkTargets::new(queries);
        let mut shown = Vec::new();
        if let Some(resume) = resume {
            let count = targets.iter().count();
            if resume.query != fingerprint || resume.targets.len() != count {
                return Err(Error::InvalidCheckpoint(
                    "taken from another query or database".to_owned(),
                ));
            }
            targets.restore(resume.targets);
            let documents = targets.merged(&order, limit);
            (_, shown) = changes::diff(Vec::new(), &documents, &order, decode)?;
        }
        Ok(Listener {
            decode,
            db: db.clone(),
            parent,
            targets,
            limit,
            order,
            shown,
            first: true,
            fingerprint,
            connection: db.client().clone(),
            silenced: false,
            requests: None,
            responses: None,
            options,
            failures: 0,
        })
    }

    pub(crate) fn into_stream(self) -> SnapshotStream<T> {
        crate::wire::until_error::until_error(self)
    }

    async fn next_snapshot(&mut self) -> Result<QuerySnapshot<T>> {
        loop {
            if self.responses.is_none() {
                self.connect().await?;
                continue;
            }
            let next = self.responses.as_mut().expect("connected").next();
            let Some(response) = connection::within(self.options.idle_timeout, next).await else {
                self.disconnect();
                self.silenced = true;
                self.failed(self.silence()).await?;
                continue;
            };
            match response {
                Some(Ok(response)) => {
                    self.failures = 0;
                    if let Some(snapshot) = self.receive(response).await? {
                        return Ok(snapshot);
                    }
                }
                Some(Err(status)) => {
                    self.disconnect();
                    self.failed(status).await?;
                }
                // The server ends a Listen stream now and then (about once a minute); open
                // another from the resume tokens, at once if this one delivered anything.
                None => {
                    self.disconnect();
                    if self.failures == 0 {
                        self.failures = 1;
                    } else {
                        self.failed(tonic::Status::unavailable("the Listen stream ended"))
                            .await?;
                    }
                }
            }
        }
    }

    /// The failure a silent stream counts as.
    fn silence(&self) -> tonic::Status {
        connection::silence(self.options.idle_timeout)
    }

    fn disconnect(&mut self) {
        self.requests = None;
        self.responses = None;
        self.targets.disconnected();
    }

    /// Waits before the next connection, or ends the stream with `status` when it is not
    /// transient or connections keep failing.
    async fn failed(&mut self, status: tonic::Status) -> Result<()> {
        self.failures = self.failures.saturating_add(1);
        let exhausted = self
            .options
            .reconnects
            .is_some_and(|reconnects| self.failures > reconnects);
        if !crate::wire::retry::retries_request(status.code()) || exhausted {
            return Err(Error::Listen {
                code: status.code().into(),
                message: cause(&status),
            });
        }
        let delay = self
            .options
            .backoff()
            .base_delay(self.failures, status.code().into());
        tracing::debug!(?status, ?delay, "sharded listener reconnects");
        tokio::time::sleep(delay).await;
        Ok(())
    }

    /// Opens a Listen stream with every target, resuming each from its token when it has one;
    /// after a silence, over a fresh connection.
    async fn connect(&mut self) -> Result<()> {
        if self.silenced {
            match connection::within(self.options.idle_timeout, connection::fresh(&self.db)).await {
                Some(Ok(fresh)) => {
                    tracing::debug!("sharded listener opens a fresh connection");
                    self.connection = fresh;
                    self.silenced = false;
                }
                Some(Err(status)) => return self.failed(status).await,
                None => return self.failed(self.silence()).await,
            }
        }
        let (sender, mut receiver) = mpsc::unbounded_channel();
        let resuming = self
            .targets
            .iter()
            .filter(|target| !target.resume_token.is_empty())
            .count();
        tracing::debug!(
            targets = self.targets.iter().count(),
            resuming,
            "sharded listener connects"
        );
        for target in self.targets.iter() {
            let _ = sender.send(add_target(&self.db, &self.parent, target));
        }
        let requests = futures::stream::poll_fn(move |cx| receiver.poll_recv(cx));
        let mut client = self.connection.get();
        let opened = connection::within(
            self.options.idle_timeout,
            client.listen(tonic::Request::new(requests)),
        )
        .await;
        match opened {
            None => {
                self.silenced = true;
                self.failed(self.silence()).await
            }
            Some(Err(status)) => self.failed(status).await,
            Some(Ok(response)) => {
                self.requests = Some(sender);
                self.responses = Some(response.into_inner());
                Ok(())
            }
        }
    }

    /// Applies one response; a snapshot when it completes a consistent one that differs from
    /// the last.
    async fn receive(&mut self, response: ListenResponse) -> Result<Option<QuerySnapshot<T>>> {
        match self.targets.receive(response)? {
            Step::Nothing => Ok(None),
            Step::Consistent { read_time, reset } => {
                let checked = verify::check_resets(
                    &self.connection,
                    &self.parent,
                    &mut self.targets,
                    read_time,
                    &reset,
                    crate::wire::retry::Backoff {
                        max_attempts: verify::ATTEMPTS,
                        ..self.options.backoff()
                    },
                    self.options.idle_timeout,
                );
                if let Err(status) = checked.await {
                    // Silent: the next stream goes over a fresh connection.
                    self.silenced |= connection::is_silence(&status);
                    // Unchecked, they are listened to afresh.
                    for id in reset {
                        self.targets.forget(id);
                    }
                    self.disconnect();
                    self.failed(status).await?;
                    return Ok(None);
                }
                self.snapshot(read_time)
            }
            Step::Reset { old_id, new_id } => {
                self.relisten(old_id, new_id);
                Ok(None)
            }
        }
    }

    /// Removes the target `old_id` from the stream and adds it again as `new_id`, without a
    /// resume token, so the server sends its whole result.
    fn relisten(&mut self, old_id: i32, new_id: i32) {
        let (Some(requests), Some(target)) = (&self.requests, self.targets.find(new_id)) else {
            return;
        };
        tracing::debug!(
            old_id,
            new_id,
            "sharded listener listens to a target afresh"
        );
        let _ = requests.send(ListenRequest {
            database: self.db.get_database_path().to_string(),
            labels: HashMap::new(),
            target_change: Some(listen_request::TargetChange::RemoveTarget(old_id)),
            ..Default::default()
        });
        let _ = requests.send(add_target(&self.db, &self.parent, target));
    }

    /// The merged results now, if they differ from the last snapshot (or there was none).
    fn snapshot(&mut self, read_time: Timestamp) -> Result<Option<QuerySnapshot<T>>> {
        let documents = self.targets.merged(&self.order, self.limit);
        let previous = std::mem::take(&mut self.shown);
        let (changes, shown) = changes::diff(previous, &documents, &self.order, self.decode)?;
        let first = std::mem::take(&mut self.first);
        let unchanged = changes.is_empty() && !first;
        let checkpoint = (self.options.checkpoints && !unchanged).then(|| ListenCheckpoint {
            query: self.fingerprint,
            read_time,
            targets: self.targets.checkpoint(),
        });
        let snapshot = QuerySnapshot {
            documents: shown.iter().map(|shown| Arc::clone(&shown.value)).collect(),
            changes: changes
                .into_iter()
                .map(|change| DocumentChange {
                    kind: change.kind,
                    document: change.value,
                    old_index: change.old_index,
                    new_index: change.new_index,
                })
                .collect(),
            read_time: crate::wire::server_clock::system_time(read_time),
            checkpoint,
        };
        self.shown = shown;
        Ok((!unchanged).then_some(snapshot))
    }
}

/// A status's message with the errors beneath it (a transport error's own cause: a refused
/// or reset connection), which the status alone does not say.
fn cause(status: &tonic::Status) -> String {
    let mut message = status.message().to_owned();
    let mut source = std::error::Error::source(status);
    while let Some(error) = source {
        let text = error.to_string();
        if !message.ends_with(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = error.source();
    }
    message
}

fn add_target(db: &FirestoreDb, parent: &str, target: &ChunkTarget) -> ListenRequest {
    ListenRequest {
        database: db.get_database_path().to_string(),
        labels: HashMap::new(),
        target_change: Some(listen_request::TargetChange::AddTarget(Target {
            target_id: target.id,
            target_type: Some(target::TargetType::Query(target::QueryTarget {
                parent: parent.to_owned(),
                query_type: Some(target::query_target::QueryType::StructuredQuery(
                    target.query.clone(),
                )),
            })),
            resume_type: (!target.resume_token.is_empty())
                .then(|| target::ResumeType::ResumeToken(target.resume_token.clone())),
            ..Default::default()
        })),
        ..Default::default()
    }
}

/// How a listener reads a document as its snapshots show it, shared by every snapshot that
/// holds this version of it: as the query's type, or a projection of it.
pub(crate) type Decode<T> = fn(&Document) -> Result<Arc<Stored<T>>>;

/// A document of a query of `S` read as `T` (`S` itself, or a projection of it).
pub(crate) fn shared<S: Sharded, T: serde::de::DeserializeOwned>(
    document: &Document,
) -> Result<Arc<Stored<T>>> {
    Stored::read_as::<S>(document).map(Arc::new)
}
