//! Live sharded queries: one Listen stream with one target per chunk of ≤ 30 shard values,
//! merged into snapshots that each show every target at one read time.
//!
//! The Listen protocol sends, per target, document changes, then `CURRENT` once the target is
//! in sync, and a target-less `NO_CHANGE` with a read time whenever every current target is
//! consistent at that time. A snapshot is built only at such a point with every target current,
//! so it is never a mix of two moments; a document an upsert moved to another chunk is then in
//! exactly one target, and the merge keeps one copy of a name in any case.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{
    Document, ListenRequest, ListenResponse, StructuredQuery, Target, TargetChange, listen_request,
    listen_response, target, target_change::TargetChangeType,
};
use firestore::gcloud_sdk::prost_types::Timestamp;
use firestore::gcloud_sdk::tonic::{self, Code};
use futures::stream::{BoxStream, StreamExt};
use tokio::sync::mpsc;

use crate::{Error, Result, Sharded, Stored};

/// One state of a live query's results.
#[derive(Debug, Clone, PartialEq)]
pub struct QuerySnapshot<T> {
    /// The matching documents in query order: the first `limit` of them when limited.
    pub documents: Vec<Stored<T>>,
    /// What changed since the previous snapshot of the stream (for the first, every document
    /// is `Added`). To turn the previous `documents` into these: remove every `Removed` and
    /// `Modified` document at its `old_index` (a position in the previous snapshot), then
    /// insert every `Added` and `Modified` one at its `new_index` (a position in this one), in
    /// ascending `new_index` order. They are listed in that order.
    pub changes: Vec<DocumentChange>,
    /// The moment every chunk's results were read at.
    pub read_time: SystemTime,
}

/// One document's change between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentChange {
    /// Added, modified or removed.
    pub kind: ChangeKind,
    /// The document id.
    pub id: String,
    /// Its position in the previous snapshot; `None` when added.
    pub old_index: Option<usize>,
    /// Its position in this snapshot; `None` when removed.
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

/// How a live query reconnects when its Listen stream ends or fails.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ListenOptions {
    /// Consecutive connections that may fail (with no response in between) before the stream
    /// ends with [`Error::Listen`].
    pub reconnects: u32,
    /// The wait before the first reconnection; each further one waits 1.5 times longer.
    pub first_retry: Duration,
    /// The longest wait between connections.
    pub max_retry: Duration,
}

impl Default for ListenOptions {
    /// 10 reconnections, waiting 250 ms, then 1.5 times longer each time, at most 10 s: about
    /// 28 s of failures before the stream gives up.
    fn default() -> Self {
        ListenOptions {
            reconnects: 10,
            first_retry: Duration::from_millis(250),
            max_retry: Duration::from_secs(10),
        }
    }
}

/// Codes after which the stream is opened again, from the resume tokens it holds.
fn reconnects_after(code: Code) -> bool {
    matches!(
        code,
        Code::Unavailable
            | Code::Unknown
            | Code::Internal
            | Code::DeadlineExceeded
            | Code::Cancelled
            | Code::ResourceExhausted
            | Code::Aborted
    )
}

/// One chunk's target and what it has received.
struct ChunkTarget {
    /// The id on the stream; a target reset after an existence-filter mismatch gets a new one.
    id: i32,
    query: StructuredQuery,
    documents: HashMap<String, Document>,
    current: bool,
    resume_token: Vec<u8>,
}

/// A document of the last snapshot: its name, update time and value.
struct Shown<T> {
    name: String,
    update_time: Option<Timestamp>,
    stored: Stored<T>,
}

pub(crate) struct Listener<T> {
    db: FirestoreDb,
    targets: Vec<ChunkTarget>,
    next_id: i32,
    limit: Option<usize>,
    order: fn(&Document, &Document) -> std::cmp::Ordering,
    shown: Option<Vec<Shown<T>>>,
    requests: Option<mpsc::UnboundedSender<ListenRequest>>,
    responses: Option<tonic::Streaming<ListenResponse>>,
    options: ListenOptions,
    failures: u32,
    done: bool,
}

impl<T: Sharded + Clone> Listener<T> {
    pub(crate) fn new(
        db: &FirestoreDb,
        queries: Vec<StructuredQuery>,
        limit: Option<usize>,
        order: fn(&Document, &Document) -> std::cmp::Ordering,
        options: ListenOptions,
    ) -> Listener<T> {
        let targets = queries
            .into_iter()
            .zip(1..)
            .map(|(query, id)| ChunkTarget {
                id,
                query,
                documents: HashMap::new(),
                current: false,
                resume_token: Vec::new(),
            })
            .collect::<Vec<_>>();
        Listener {
            db: db.clone(),
            next_id: targets.len() as i32 + 1,
            targets,
            limit,
            order,
            shown: None,
            requests: None,
            responses: None,
            options,
            failures: 0,
            done: false,
        }
    }

    pub(crate) fn into_stream(self) -> SnapshotStream<T> {
        futures::stream::unfold(self, |mut listener| async move {
            if listener.done {
                return None;
            }
            let next = listener.next_snapshot().await;
            if next.is_err() {
                listener.done = true;
                listener.requests = None;
                listener.responses = None;
            }
            Some((next, listener))
        })
        .boxed()
    }

    async fn next_snapshot(&mut self) -> Result<QuerySnapshot<T>> {
        loop {
            if self.responses.is_none() {
                self.connect().await?;
                continue;
            }
            let response = self.responses.as_mut().expect("connected").next().await;
            match response {
                Some(Ok(response)) => {
                    self.failures = 0;
                    if let Some(snapshot) = self.receive(response)? {
                        return Ok(snapshot);
                    }
                }
                Some(Err(status)) => {
                    self.disconnect();
                    self.failed(status).await?;
                }
                // The server ends a Listen stream now and then (about once a minute); open
                // another from the resume tokens.
                None => {
                    self.disconnect();
                    self.failed(tonic::Status::unavailable("the Listen stream ended"))
                        .await?;
                }
            }
        }
    }

    fn disconnect(&mut self) {
        self.requests = None;
        self.responses = None;
        for target in &mut self.targets {
            target.current = false;
        }
    }

    /// Waits before the next connection, or ends the stream with `status` when it is not
    /// transient or connections keep failing.
    async fn failed(&mut self, status: tonic::Status) -> Result<()> {
        self.failures += 1;
        if !reconnects_after(status.code()) || self.failures > self.options.reconnects {
            return Err(Error::Listen {
                code: status.code(),
                message: status.message().to_owned(),
            });
        }
        let delay = self
            .options
            .first_retry
            .mul_f64(1.5f64.powi(self.failures as i32 - 1))
            .min(self.options.max_retry);
        tracing::debug!(?status, ?delay, "sharded listener reconnects");
        tokio::time::sleep(delay).await;
        Ok(())
    }

    /// Opens a Listen stream with every target, resuming each from its token when it has one.
    async fn connect(&mut self) -> Result<()> {
        let (sender, mut receiver) = mpsc::unbounded_channel();
        let resuming = self
            .targets
            .iter()
            .filter(|target| !target.resume_token.is_empty())
            .count();
        tracing::debug!(
            targets = self.targets.len(),
            resuming,
            "sharded listener connects"
        );
        for target in &mut self.targets {
            if target.resume_token.is_empty() {
                // Without a token the server sends the whole result again.
                target.documents.clear();
            }
            let _ = sender.send(add_target(&self.db, target));
        }
        let requests = futures::stream::poll_fn(move |cx| receiver.poll_recv(cx));
        let opened = self
            .db
            .client()
            .get()
            .listen(tonic::Request::new(requests))
            .await;
        match opened {
            Ok(response) => {
                self.requests = Some(sender);
                self.responses = Some(response.into_inner());
                Ok(())
            }
            Err(status) => self.failed(status).await,
        }
    }

    fn target_mut(&mut self, id: i32) -> Option<&mut ChunkTarget> {
        self.targets.iter_mut().find(|target| target.id == id)
    }

    /// The targets a change names: all of them when it names none.
    fn named(&self, ids: &[i32]) -> Vec<usize> {
        (0..self.targets.len())
            .filter(|&i| ids.is_empty() || ids.contains(&self.targets[i].id))
            .collect()
    }

    /// Applies one response; a snapshot when it completes a consistent one that differs from
    /// the last.
    fn receive(&mut self, response: ListenResponse) -> Result<Option<QuerySnapshot<T>>> {
        let Some(response) = response.response_type else {
            return Ok(None);
        };
        match response {
            listen_response::ResponseType::TargetChange(change) => {
                return self.target_change(change);
            }
            listen_response::ResponseType::DocumentChange(change) => {
                let Some(document) = change.document else {
                    return Ok(None);
                };
                for id in change.removed_target_ids {
                    if let Some(target) = self.target_mut(id) {
                        target.documents.remove(&document.name);
                    }
                }
                for id in change.target_ids {
                    if let Some(target) = self.target_mut(id) {
                        target
                            .documents
                            .insert(document.name.clone(), document.clone());
                    }
                }
            }
            listen_response::ResponseType::DocumentDelete(delete) => {
                for i in self.named(&delete.removed_target_ids) {
                    self.targets[i].documents.remove(&delete.document);
                }
            }
            listen_response::ResponseType::DocumentRemove(remove) => {
                for i in self.named(&remove.removed_target_ids) {
                    self.targets[i].documents.remove(&remove.document);
                }
            }
            listen_response::ResponseType::Filter(filter) => {
                let mismatch = self
                    .target_mut(filter.target_id)
                    .is_some_and(|target| target.documents.len() != filter.count as usize);
                if mismatch {
                    self.reset_target(filter.target_id);
                }
            }
        }
        Ok(None)
    }

    /// The server says this target holds `count` documents and we hold another number (it
    /// could not tell us of some removals): listen to it afresh under a new id.
    fn reset_target(&mut self, id: i32) {
        let new_id = self.next_id;
        self.next_id += 1;
        let db = self.db.clone();
        let Some(requests) = self.requests.clone() else {
            return;
        };
        let Some(target) = self.target_mut(id) else {
            return;
        };
        tracing::debug!(id, new_id, "sharded listener resets a target");
        target.id = new_id;
        target.documents.clear();
        target.current = false;
        target.resume_token.clear();
        let _ = requests.send(ListenRequest {
            database: db.get_database_path().to_string(),
            labels: HashMap::new(),
            target_change: Some(listen_request::TargetChange::RemoveTarget(id)),
            ..Default::default()
        });
        let _ = requests.send(add_target(&db, target));
    }

    fn target_change(&mut self, change: TargetChange) -> Result<Option<QuerySnapshot<T>>> {
        let kind = TargetChangeType::try_from(change.target_change_type)
            .unwrap_or(TargetChangeType::NoChange);
        let named = self.named(&change.target_ids);
        match kind {
            TargetChangeType::Remove => {
                if let Some(cause) = change.cause {
                    return Err(Error::Listen {
                        code: Code::from_i32(cause.code),
                        message: cause.message,
                    });
                }
                // Our own removal of a reset target.
                return Ok(None);
            }
            TargetChangeType::Add => {
                for &i in &named {
                    self.targets[i].current = false;
                }
            }
            TargetChangeType::Reset => {
                for &i in &named {
                    self.targets[i].documents.clear();
                    self.targets[i].current = false;
                }
            }
            TargetChangeType::Current => {
                for &i in &named {
                    self.targets[i].current = true;
                }
            }
            TargetChangeType::NoChange => {}
        }
        if !change.resume_token.is_empty() {
            for &i in &named {
                self.targets[i].resume_token = change.resume_token.clone();
            }
        }
        let consistent = kind == TargetChangeType::NoChange
            && change.target_ids.is_empty()
            && self.targets.iter().all(|target| target.current);
        match change.read_time {
            Some(read_time) if consistent => self.snapshot(read_time),
            _ => Ok(None),
        }
    }

    /// The merged results now, if they differ from the last snapshot (or there was none).
    fn snapshot(&mut self, read_time: Timestamp) -> Result<Option<QuerySnapshot<T>>> {
        let mut merged: HashMap<&str, &Document> = HashMap::new();
        for document in self
            .targets
            .iter()
            .flat_map(|target| target.documents.values())
        {
            // At a consistent point a document is in one chunk; keep the newest if not.
            let newer = merged
                .get(document.name.as_str())
                .is_none_or(|kept| later(&document.update_time, &kept.update_time));
            if newer {
                merged.insert(&document.name, document);
            }
        }
        let mut documents: Vec<&Document> = merged.into_values().collect();
        documents.sort_by(|a, b| (self.order)(a, b));
        if let Some(limit) = self.limit {
            documents.truncate(limit);
        }
        let first = self.shown.is_none();
        let previous = self.shown.take().unwrap_or_default();
        let (changes, shown) = diff(previous, &documents)?;
        let unchanged = changes.is_empty() && !first;
        let snapshot = QuerySnapshot {
            documents: shown.iter().map(|shown| shown.stored.clone()).collect(),
            changes,
            read_time: to_system_time(&read_time),
        };
        self.shown = Some(shown);
        Ok((!unchanged).then_some(snapshot))
    }
}

/// The changes from `previous` to `next`, and `next` as shown; only documents that are new
/// or changed are deserialized.
fn diff<T: Sharded + Clone>(
    previous: Vec<Shown<T>>,
    next: &[&Document],
) -> Result<(Vec<DocumentChange>, Vec<Shown<T>>)> {
    let next_index: HashMap<&str, usize> = next
        .iter()
        .enumerate()
        .map(|(i, document)| (document.name.as_str(), i))
        .collect();
    let mut changes = Vec::new();
    let mut kept: HashMap<String, (usize, Shown<T>)> = HashMap::new();
    for (old_index, shown) in previous.into_iter().enumerate() {
        if next_index.contains_key(shown.name.as_str()) {
            kept.insert(shown.name.clone(), (old_index, shown));
        } else {
            changes.push(DocumentChange {
                kind: ChangeKind::Removed,
                id: shown.stored.id.clone(),
                old_index: Some(old_index),
                new_index: None,
            });
        }
    }
    let mut shown = Vec::with_capacity(next.len());
    for (new_index, document) in next.iter().enumerate() {
        let (change, entry) = match kept.remove(document.name.as_str()) {
            Some((_, same)) if same.update_time == document.update_time => (None, same),
            Some((old_index, _)) => (
                Some((ChangeKind::Modified, Some(old_index))),
                read(document)?,
            ),
            None => (Some((ChangeKind::Added, None)), read(document)?),
        };
        if let Some((kind, old_index)) = change {
            changes.push(DocumentChange {
                kind,
                id: entry.stored.id.clone(),
                old_index,
                new_index: Some(new_index),
            });
        }
        shown.push(entry);
    }
    Ok((changes, shown))
}

fn read<T: Sharded>(document: &Document) -> Result<Shown<T>> {
    Ok(Shown {
        name: document.name.clone(),
        update_time: document.update_time,
        stored: Stored::from_document(document)?,
    })
}

fn later(a: &Option<Timestamp>, b: &Option<Timestamp>) -> bool {
    let key = |t: &Option<Timestamp>| t.map(|t| (t.seconds, t.nanos));
    key(a) > key(b)
}

fn to_system_time(time: &Timestamp) -> SystemTime {
    let since_epoch = Duration::new(time.seconds.max(0) as u64, time.nanos.max(0) as u32);
    SystemTime::UNIX_EPOCH + since_epoch
}

fn add_target(db: &FirestoreDb, target: &ChunkTarget) -> ListenRequest {
    ListenRequest {
        database: db.get_database_path().to_string(),
        labels: HashMap::new(),
        target_change: Some(listen_request::TargetChange::AddTarget(Target {
            target_id: target.id,
            target_type: Some(target::TargetType::Query(target::QueryTarget {
                parent: db.get_documents_path().to_string(),
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
