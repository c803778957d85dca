//! The bulk writer's loop: batches out, the ramp's tokens, per-operation retries, and every
//! outcome back to whoever wrote.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{
    BatchWriteRequest, BatchWriteResponse, Precondition, Write, precondition, write::Operation,
};
use firestore::gcloud_sdk::tonic::{self, Code, Status};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;

use super::clock::{Clock, SystemClock};
use super::rate_limiter::{RateLimiter, Throttling};
use super::retry::{Backoff, retries_request, retries_write};
use super::sequential_ids::SequentialIds;
use crate::collection::serialize;
use crate::document_id::check_document_id;
use crate::{Error, Result, Sharded};

/// How a [`BulkWriter`] batches, throttles and retries. [`Default`] is Google's bulk writers'
/// settings; [`for_type`](Self::for_type) caps the ramp at the rate a sharded type was sized
/// for.
#[derive(Debug, Clone)]
pub struct BulkWriterOptions {
    /// The ramp operations are issued at; [`Throttling::ramp`] by default.
    pub throttling: Throttling,
    /// Writes per BatchWrite request. Google's writers: 20.
    pub batch_size: usize,
    /// Writes per request of retried writes. Google's writers: 10.
    pub retry_batch_size: usize,
    /// Operations sent and not yet answered, at most; further writes wait in a buffer of one
    /// batch, and then the caller's `write` waits. Google's writers: 500.
    pub max_pending: usize,
    /// Retries of each operation.
    pub backoff: Backoff,
    /// How long a write waits for its batch to fill before the batch goes out part-full
    /// (so that awaiting a single write's outcome needs no flush).
    pub linger: Duration,
    /// How long one BatchWrite request may take before it counts as failed (and is retried).
    pub request_timeout: Duration,
    /// The clock the ramp and the backoff read.
    pub clock: Arc<dyn Clock>,
}

impl Default for BulkWriterOptions {
    fn default() -> Self {
        BulkWriterOptions {
            throttling: Throttling::ramp(),
            batch_size: 20,
            retry_batch_size: 10,
            max_pending: 500,
            backoff: Backoff::default(),
            linger: Duration::from_millis(10),
            request_timeout: Duration::from_secs(60),
            clock: Arc::new(SystemClock::new()),
        }
    }
}

impl BulkWriterOptions {
    /// Google's settings with the ramp capped at 500 writes/s per shard value of `T`: the rate
    /// its shards were sized for, which the ramp reaches after
    /// [`Throttling::time_to_reach`] (15 minutes for 3 values, 45 for 30).
    pub fn for_type<T: Sharded>() -> Self {
        let ceiling = crate::reshard::WRITES_PER_SHARD * T::SHARD_VALUES.len() as f64;
        BulkWriterOptions {
            throttling: Throttling::ramp().with_maximum(ceiling),
            ..BulkWriterOptions::default()
        }
    }

    /// For the highest throughput, where nothing needs ramping (a collection nobody reads
    /// yet, the emulator): throttling off and requests of up to 500 writes, the old
    /// per-commit limit; retries as by default.
    pub fn unthrottled() -> Self {
        BulkWriterOptions {
            throttling: Throttling::Off,
            batch_size: 500,
            ..BulkWriterOptions::default()
        }
    }

    /// These options with `throttling`.
    pub fn with_throttling(self, throttling: Throttling) -> Self {
        BulkWriterOptions { throttling, ..self }
    }

    /// These options with `backoff`.
    pub fn with_backoff(self, backoff: Backoff) -> Self {
        BulkWriterOptions { backoff, ..self }
    }

    /// These options reading `clock`.
    pub fn with_clock(self, clock: impl Clock) -> Self {
        BulkWriterOptions {
            clock: Arc::new(clock),
            ..self
        }
    }

    /// These options with `batch_size` writes per request.
    pub fn with_batch_size(self, batch_size: usize) -> Self {
        BulkWriterOptions { batch_size, ..self }
    }
}

/// A write the bulk writer gave up on: a status Firestore will not change on retry, or the
/// last of [`Backoff::max_attempts`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("write of `{document}` failed after {attempts} attempt(s): {code:?}: {message}")]
pub struct WriteFailure {
    /// The document's full name.
    pub document: String,
    /// The last status.
    pub code: Code,
    /// The last status's message.
    pub message: String,
    /// Attempts made.
    pub attempts: u32,
}

/// A write that succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOutcome {
    /// When Firestore applied it; `None` for a delete of a document that did not exist.
    pub update_time: Option<SystemTime>,
    /// Attempts it took.
    pub attempts: u32,
}

/// What a [`BulkWriter`] has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkStats {
    /// Writes that succeeded.
    pub written: u64,
    /// Writes given up on.
    pub failed: u64,
    /// Attempts after a first one.
    pub retried: u64,
    /// BatchWrite requests sent.
    pub requests: u64,
    /// The writer saw a long run of increasing document ids and warned about it.
    pub sequential_ids: bool,
}

/// The outcome of one queued write: await it, or drop it and let
/// [`flush`](BulkWriter::flush) report a failure.
#[derive(Debug)]
#[must_use = "drop it to have `flush` report this write's failure"]
pub struct PendingWrite {
    document: String,
    outcome: oneshot::Receiver<std::result::Result<WriteOutcome, WriteFailure>>,
}

impl PendingWrite {
    /// The full name of the document written.
    pub fn document(&self) -> &str {
        &self.document
    }
}

impl Future for PendingWrite {
    type Output = std::result::Result<WriteOutcome, WriteFailure>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.outcome).poll(cx).map(|outcome| {
            outcome.unwrap_or_else(|_| {
                Err(WriteFailure {
                    document: self.document.clone(),
                    code: Code::Internal,
                    message: "the bulk writer stopped before this write finished".into(),
                    attempts: 0,
                })
            })
        })
    }
}

/// Writes many documents at the rate Firestore's best practices allow, with Google's bulk
/// writers' batching and retries.
///
/// - **Ramp-up ("500/50/5"):** operations start at 500/s and grow by half every 5 minutes
///   ([`Throttling::ramp`]); [`BulkWriterOptions::for_type`] stops the ramp at 500 per shard
///   value, the rate the type's shards were sized for. Throttling can be turned off.
/// - **Batches:** BatchWrite requests of 20 writes and at most 9 MiB (not atomic: each write
///   succeeds or fails on its own), at most one write per document per request, at most 500
///   operations in flight; beyond that, `upsert` and the other writes wait. A part-full batch
///   goes out after 10 ms, so awaiting one write needs no flush.
/// - **Retries:** each write that fails with RESOURCE_EXHAUSTED, ABORTED or UNAVAILABLE (or
///   whose whole request failed, as a dropped connection does) is retried on its own, after
///   1 s × 1.5 per attempt (60 s at most, and after RESOURCE_EXHAUSTED), ±30 % jitter, up to
///   10 attempts.
/// - **Outcomes:** every write returns a [`PendingWrite`]. Await it for that write's outcome,
///   or drop it: [`flush`](Self::flush) and [`close`](Self::close) wait for every write and
///   return [`Error::BulkWrite`] with each failure no one awaited. Nothing is dropped.
/// - **Ids:** the writer warns once (a `tracing` warning, and [`BulkStats::sequential_ids`])
///   when the ids it creates keep increasing: sequential ids (`gen-0001`, timestamps)
///   hotspot the document-name index however well the fields are sharded. Use
///   [`insert`](Self::insert), which draws ids as Firestore does.
///
/// Needs a tokio runtime: the batches go out from a task of their own.
#[derive(Debug)]
pub struct BulkWriter {
    messages: mpsc::Sender<Message>,
    shared: Arc<Shared>,
    documents_path: String,
    task: Option<tokio::task::JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct Shared {
    unclaimed: Mutex<Vec<WriteFailure>>,
    stats: Mutex<BulkStats>,
    ids: Mutex<SequentialIds>,
}

impl Shared {
    fn stats(&self) -> std::sync::MutexGuard<'_, BulkStats> {
        self.stats.lock().expect("stats lock")
    }
}

#[derive(Debug)]
enum Message {
    Write(Box<Op>),
    Flush(oneshot::Sender<()>),
}

#[derive(Debug)]
struct Op {
    document: String,
    write: Write,
    /// The write's encoded size, which bounds a request's.
    bytes: usize,
    attempts: u32,
    /// When it was queued, for a new write; when its wait ends, for a retry.
    not_before: Duration,
    reply: Option<oneshot::Sender<std::result::Result<WriteOutcome, WriteFailure>>>,
}

impl BulkWriter {
    /// A writer into `db` with `options`.
    pub fn new(db: &FirestoreDb, options: BulkWriterOptions) -> BulkWriter {
        let shared = Arc::new(Shared::default());
        let (messages, receiver) = mpsc::channel(options.batch_size.max(1));
        let task = tokio::spawn(Batcher::new(db.clone(), options, shared.clone(), receiver).run());
        BulkWriter {
            messages,
            shared,
            documents_path: db.get_documents_path().clone(),
            task: Some(task),
        }
    }

    /// Creates or replaces the sharded document `id`, its shard drawn as on every write path.
    /// The id and the document are checked now; on an error nothing is queued.
    pub async fn upsert<T: Sharded>(&self, id: &str, document: &T) -> Result<PendingWrite> {
        self.write_sharded(id, document, None).await
    }

    /// Creates the sharded document `id`; fails (in its [`PendingWrite`]) if it exists.
    pub async fn create<T: Sharded>(&self, id: &str, document: &T) -> Result<PendingWrite> {
        self.write_sharded(
            id,
            document,
            Some(precondition::ConditionType::Exists(false)),
        )
        .await
    }

    /// A whole sharded document under `id`, checked and with its shard drawn, queued.
    async fn write_sharded<T: Sharded>(
        &self,
        id: &str,
        document: &T,
        condition: Option<precondition::ConditionType>,
    ) -> Result<PendingWrite> {
        check_document_id(id)?;
        let name = self.document_name(T::COLLECTION, id);
        let document = serialize(document, &name)?;
        self.note_created(id);
        self.queue(Write {
            operation: Some(Operation::Update(document)),
            current_document: condition.map(|condition| Precondition {
                condition_type: Some(condition),
            }),
            ..Write::default()
        })
        .await
    }

    /// Creates a sharded document under a new random id, drawn as Firestore's own clients
    /// draw them (20 letters and digits), which spread over the document-name index. Returns
    /// the id. Fails (in its [`PendingWrite`]) if the id exists, which is as likely as
    /// guessing 119 random bits.
    pub async fn insert<T: Sharded>(&self, document: &T) -> Result<(String, PendingWrite)> {
        let id = crate::document_id::generate_document_id();
        let name = self.document_name(T::COLLECTION, &id);
        let document = serialize(document, &name)?;
        let pending = self
            .queue(Write {
                operation: Some(Operation::Update(document)),
                current_document: Some(Precondition {
                    condition_type: Some(precondition::ConditionType::Exists(false)),
                }),
                ..Write::default()
            })
            .await?;
        Ok((id, pending))
    }

    /// Deletes the sharded document `id`; deleting a missing document succeeds.
    pub async fn delete<T: Sharded>(&self, id: &str) -> Result<PendingWrite> {
        check_document_id(id)?;
        let name = self.document_name(T::COLLECTION, id);
        self.queue(Write {
            operation: Some(Operation::Delete(name)),
            ..Write::default()
        })
        .await
    }

    /// Creates or replaces a plain (unsharded) document `collection/id`.
    pub async fn set<S: Serialize + Sync>(
        &self,
        collection: &str,
        id: &str,
        document: &S,
    ) -> Result<PendingWrite> {
        check_document_id(id)?;
        let name = self.document_name(collection, id);
        let document = firestore::firestore_document_from_serializable(&name, document)?;
        self.note_created(id);
        self.queue(Write {
            operation: Some(Operation::Update(document)),
            ..Write::default()
        })
        .await
    }

    /// Queues `write` as it is: for the backfill and rebalance jobs.
    pub(crate) async fn queue(&self, write: Write) -> Result<PendingWrite> {
        let document = match &write.operation {
            Some(Operation::Update(document)) => document.name.clone(),
            Some(Operation::Delete(name)) => name.clone(),
            _ => String::new(),
        };
        let (reply, outcome) = oneshot::channel();
        let op = Op {
            document: document.clone(),
            bytes: firestore::gcloud_sdk::prost::Message::encoded_len(&write),
            write,
            attempts: 0,
            not_before: Duration::ZERO,
            reply: Some(reply),
        };
        self.messages
            .send(Message::Write(Box::new(op)))
            .await
            .map_err(|_| Error::BulkWriterStopped)?;
        Ok(PendingWrite { document, outcome })
    }

    /// Waits until every write queued so far has succeeded or failed. Errs with each failure
    /// whose [`PendingWrite`] was dropped.
    pub async fn flush(&self) -> Result<BulkStats> {
        let (done, flushed) = oneshot::channel();
        self.messages
            .send(Message::Flush(done))
            .await
            .map_err(|_| Error::BulkWriterStopped)?;
        flushed.await.map_err(|_| Error::BulkWriterStopped)?;
        let failures = std::mem::take(&mut *self.shared.unclaimed.lock().expect("failures lock"));
        if failures.is_empty() {
            Ok(self.stats())
        } else {
            Err(Error::BulkWrite { failures })
        }
    }

    /// [`flush`](Self::flush), then stops the writer.
    pub async fn close(mut self) -> Result<BulkStats> {
        let flushed = self.flush().await;
        let task = self.task.take();
        drop(self);
        if let Some(task) = task {
            task.await.map_err(|_| Error::BulkWriterStopped)?;
        }
        flushed
    }

    /// What the writer has done so far.
    pub fn stats(&self) -> BulkStats {
        self.shared.stats().clone()
    }

    fn document_name(&self, collection: &str, id: &str) -> String {
        crate::stored::document_name(&self.documents_path, collection, id)
    }

    fn note_created(&self, id: &str) {
        let run = self.shared.ids.lock().expect("ids lock").note(id);
        if let Some(run) = run {
            self.shared.stats().sequential_ids = true;
            tracing::warn!(
                ids = %run,
                "sharded: the last {} document ids written increase monotonically ({run}). \
                 Sequential ids hotspot the document-name index however the fields are sharded \
                 (Firestore best practices: avoid monotonically increasing document IDs); \
                 use `BulkWriter::insert` or random ids",
                super::sequential_ids::RUN,
            );
        }
    }
}

/// The task that owns the queues and the requests in flight.
struct Batcher {
    db: FirestoreDb,
    options: BulkWriterOptions,
    limiter: Option<RateLimiter>,
    shared: Arc<Shared>,
    messages: mpsc::Receiver<Message>,
    /// New writes, in the order they came.
    ready: VecDeque<Op>,
    /// Retries whose wait is over.
    retries: VecDeque<Op>,
    /// Retries still waiting.
    waiting: Vec<Op>,
    in_flight: FuturesUnordered<BoxFuture<'static, Sent>>,
    in_flight_ops: usize,
    flushes: Vec<oneshot::Sender<()>>,
    open: bool,
    /// The sleep until the next deadline (the ramp, a backoff, a linger), and that deadline.
    timer: Option<(Duration, super::clock::Sleep)>,
}

type Sent = (Vec<Op>, std::result::Result<BatchWriteResponse, Status>);

impl Batcher {
    fn new(
        db: FirestoreDb,
        options: BulkWriterOptions,
        shared: Arc<Shared>,
        messages: mpsc::Receiver<Message>,
    ) -> Self {
        let limiter = match options.throttling {
            Throttling::Off => None,
            throttling => Some(RateLimiter::new(
                throttling,
                options.clock.now(),
                options.batch_size.max(options.retry_batch_size),
            )),
        };
        Batcher {
            db,
            options,
            limiter,
            shared,
            messages,
            ready: VecDeque::new(),
            retries: VecDeque::new(),
            waiting: Vec::new(),
            in_flight: FuturesUnordered::new(),
            in_flight_ops: 0,
            flushes: Vec::new(),
            open: true,
            timer: None,
        }
    }

    async fn run(mut self) {
        loop {
            let now = self.options.clock.now();
            self.wake_retries(now);
            let wake = self.dispatch(now);
            let idle = self.ready.is_empty()
                && self.retries.is_empty()
                && self.waiting.is_empty()
                && self.in_flight.is_empty();
            if idle {
                for flush in self.flushes.drain(..) {
                    let _ = flush.send(());
                }
                if !self.open {
                    break;
                }
            }
            let held =
                self.ready.len() + self.retries.len() + self.waiting.len() + self.in_flight_ops;
            let accepting = self.open && held < self.options.max_pending + self.options.batch_size;
            // One timer per deadline, kept across turns of the loop: a new write does not
            // re-arm the linger of the batch it joins.
            let mut timer = self.timer.take().filter(|(at, _)| Some(*at) == wake);
            if let (None, Some(at)) = (&timer, wake) {
                timer = Some((at, self.options.clock.sleep(at.saturating_sub(now))));
            }
            let fired = async {
                match &mut timer {
                    Some((_, sleep)) => sleep.as_mut().await,
                    None => std::future::pending().await,
                }
            };
            let timed_out = tokio::select! {
                biased;
                Some((ops, response)) = self.in_flight.next(), if !self.in_flight.is_empty() => {
                    self.answer(ops, response);
                    false
                }
                message = self.messages.recv(), if accepting => {
                    match message {
                        Some(Message::Write(mut op)) => {
                            op.not_before = self.options.clock.now();
                            self.ready.push_back(*op);
                        }
                        Some(Message::Flush(done)) => self.flushes.push(done),
                        None => self.open = false,
                    }
                    false
                }
                () = fired, if wake.is_some() => true,
            };
            if !timed_out {
                self.timer = timer;
            }
        }
        let unclaimed = self.shared.unclaimed.lock().expect("failures lock");
        for failure in unclaimed.iter() {
            tracing::error!(%failure, "sharded: a bulk write failed and the writer was dropped without `close`");
        }
    }

    fn wake_retries(&mut self, now: Duration) {
        let mut i = 0;
        while i < self.waiting.len() {
            if self.waiting[i].not_before <= now {
                let op = self.waiting.swap_remove(i);
                self.retries.push_back(op);
            } else {
                i += 1;
            }
        }
    }

    /// Sends what may go now; returns when to look again, if waiting on the ramp or a backoff.
    fn dispatch(&mut self, now: Duration) -> Option<Duration> {
        let draining = !self.open || !self.flushes.is_empty();
        let mut wake = self.waiting.iter().map(|op| op.not_before).min();
        while self.in_flight_ops < self.options.max_pending {
            let retrying = !self.retries.is_empty();
            let (queue, size) = if retrying {
                (&mut self.retries, self.options.retry_batch_size.max(1))
            } else {
                (&mut self.ready, self.options.batch_size.max(1))
            };
            if queue.is_empty() {
                break;
            }
            // New writes wait for a full batch, unless a flush asks for everything or the
            // oldest has waited its linger; retries go as soon as their wait is over.
            let send_by = queue[0].not_before + self.options.linger;
            if !retrying && queue.len() < size && !draining && now < send_by {
                wake = Some(wake.map_or(send_by, |at: Duration| at.min(send_by)));
                break;
            }
            let count = distinct_prefix(queue, size);
            if let Some(limiter) = &self.limiter
                && let Err(wait) = limiter.try_acquire(count, now)
            {
                wake = Some(wake.map_or(now + wait, |at: Duration| at.min(now + wait)));
                break;
            }
            let mut batch: Vec<Op> = queue.drain(..count).collect();
            for op in &mut batch {
                op.attempts += 1;
            }
            self.in_flight_ops += batch.len();
            self.shared.stats().requests += 1;
            self.in_flight.push(Box::pin(send(
                self.db.clone(),
                batch,
                self.options.request_timeout,
            )));
        }
        wake
    }

    fn answer(&mut self, ops: Vec<Op>, response: std::result::Result<BatchWriteResponse, Status>) {
        self.in_flight_ops -= ops.len();
        match response {
            Ok(response) => {
                for (i, op) in ops.into_iter().enumerate() {
                    let (code, message) = response.status.get(i).map_or(
                        (Code::Unknown, "no status for this write".to_owned()),
                        |status| (Code::from(status.code), status.message.clone()),
                    );
                    if code == Code::Ok {
                        let update_time = response
                            .write_results
                            .get(i)
                            .and_then(|result| result.update_time)
                            .map(crate::stored::system_time);
                        self.succeed(op, update_time);
                    } else if retries_write(code) {
                        self.retry(op, code, message);
                    } else {
                        self.fail(op, code, message);
                    }
                }
            }
            Err(status) => {
                let retry = retries_request(status.code());
                for op in ops {
                    if retry {
                        self.retry(op, status.code(), status.message().to_owned());
                    } else {
                        self.fail(op, status.code(), status.message().to_owned());
                    }
                }
            }
        }
    }

    fn succeed(&mut self, mut op: Op, update_time: Option<SystemTime>) {
        self.shared.stats().written += 1;
        if let Some(reply) = op.reply.take() {
            let _ = reply.send(Ok(WriteOutcome {
                update_time,
                attempts: op.attempts,
            }));
        }
    }

    fn retry(&mut self, mut op: Op, code: Code, message: String) {
        if op.attempts >= self.options.backoff.max_attempts {
            return self.fail(op, code, message);
        }
        self.shared.stats().retried += 1;
        op.not_before = self.options.clock.now() + self.options.backoff.delay(op.attempts, code);
        tracing::debug!(document = %op.document, ?code, attempts = op.attempts, "sharded: bulk write retried");
        self.waiting.push(op);
    }

    fn fail(&mut self, mut op: Op, code: Code, message: String) {
        self.shared.stats().failed += 1;
        let failure = WriteFailure {
            document: std::mem::take(&mut op.document),
            code,
            message,
            attempts: op.attempts,
        };
        let unclaimed = match op.reply.take() {
            Some(reply) => reply.send(Err(failure)).err().and_then(Result::err),
            None => Some(failure),
        };
        if let Some(failure) = unclaimed {
            self.shared
                .unclaimed
                .lock()
                .expect("failures lock")
                .push(failure);
        }
    }
}

/// The largest BatchWrite request this writer sends, in encoded bytes: under Firestore's 10 MiB
/// limit on a request, with room for its envelope.
const MAX_REQUEST_BYTES: usize = 9 * 1024 * 1024;

/// How many ops from the front of `queue` go in the next request: at most `size`, each naming
/// a document none before it names (a BatchWrite request takes one write per document), and
/// at most [`MAX_REQUEST_BYTES`] together (a larger write goes alone, to fail on its own).
fn distinct_prefix(queue: &VecDeque<Op>, size: usize) -> usize {
    let mut seen = std::collections::HashSet::with_capacity(size);
    let mut bytes = 0;
    let count = queue
        .iter()
        .take(size)
        .take_while(|op| {
            bytes += op.bytes;
            bytes <= MAX_REQUEST_BYTES && seen.insert(op.document.as_str())
        })
        .count();
    count.max(1)
}

async fn send(db: FirestoreDb, ops: Vec<Op>, timeout: Duration) -> Sent {
    let span = tracing::debug_span!("sharded_bulk_request", writes = ops.len());
    let mut request = tonic::Request::new(BatchWriteRequest {
        database: db.get_database_path().clone(),
        writes: ops.iter().map(|op| op.write.clone()).collect(),
        ..BatchWriteRequest::default()
    });
    request.set_timeout(timeout);
    let response = db
        .client()
        .get()
        .batch_write(request)
        .instrument(span)
        .await
        .map(tonic::Response::into_inner);
    (ops, response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(document: &str, bytes: usize) -> Op {
        Op {
            document: document.into(),
            write: Write::default(),
            bytes,
            attempts: 0,
            not_before: Duration::ZERO,
            reply: None,
        }
    }

    #[test]
    fn a_request_holds_one_write_per_document_within_the_size_limit() {
        let queue = VecDeque::from([op("a", 10), op("b", 10), op("a", 10), op("c", 10)]);
        assert_eq!(
            distinct_prefix(&queue, 20),
            2,
            "a second write to `a` waits"
        );
        assert_eq!(distinct_prefix(&queue, 1), 1);
        let big = VecDeque::from([op("a", 5 << 20), op("b", 5 << 20)]);
        assert_eq!(distinct_prefix(&big, 20), 1, "9 MiB at most");
        let huge = VecDeque::from([op("a", 20 << 20)]);
        assert_eq!(distinct_prefix(&huge, 20), 1, "alone, to fail on its own");
    }
}
