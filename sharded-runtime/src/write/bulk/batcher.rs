//! The bulk writer's task: one write per document at a time, batches out on the ramp's
//! tokens, per-operation retries, and every outcome back to whoever wrote.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{BatchWriteResponse, CommitResponse, Document};
use firestore::gcloud_sdk::tonic::{Code, Status};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use tokio::sync::{mpsc, oneshot};

pub(super) use super::op::{Op, Payload};
use super::options::BulkWriterOptions;
use super::outcome::{Shared, Unclaimed, WriteFailure, WriteOutcome};
use super::rate_limiter::RateLimiter;
use super::requests::{Cut, commit_increment, read_back, send, settle_cut};
use crate::model::throttling::Throttling;
use crate::wire::retry::{retries_request, retries_write};

#[derive(Debug)]
pub(super) enum Message {
    Write(Box<Op>),
    /// Answered, once every write received before it has an outcome, with the number of
    /// writes received before it.
    Flush(oneshot::Sender<u64>),
}

/// How long past its deadline a request whose answer was lost is still taken as possibly
/// applied: the server counts the deadline from when it received the request, which is
/// later than when it was sent by the request's trip there.
pub(super) const LOST_REQUEST_SLACK: Duration = Duration::from_secs(1);

/// What a request in flight came back with.
enum Answer {
    Batch(Result<BatchWriteResponse, Status>),
    /// An increment's own Commit.
    Commit(Result<CommitResponse, Status>),
    /// The document read back to settle a write whose answer was lost, and the status the
    /// write would otherwise fail with.
    ReadBack {
        stored: Result<Option<Document>, Status>,
        code: Code,
        message: String,
        /// For an increment its marker shows landed: how it ends if it was cut at the end
        /// of Firestore's integers, or its check could not be made ([`settle_cut`]).
        cut: Option<Cut>,
    },
}

/// The task that owns the queues and the requests in flight.
pub(super) struct Batcher {
    db: FirestoreDb,
    options: BulkWriterOptions,
    limiter: Option<RateLimiter>,
    shared: Arc<Shared>,
    messages: mpsc::Receiver<Message>,
    /// Writes ready to go, in the order they became ready; at most one per document.
    ready: VecDeque<Op>,
    /// Retries whose wait is over.
    retries: VecDeque<Op>,
    /// Retries still waiting.
    waiting: Vec<Op>,
    /// Per document with a write held above or in flight, the later writes to it, in the
    /// order queued: each goes once the one before it has an outcome.
    behind: HashMap<String, VecDeque<Op>>,
    behind_count: usize,
    /// The writes of each request in flight, by request number.
    sent: HashMap<u64, Vec<Op>>,
    /// Per document, until when a lost attempt of a settled write to it may still be
    /// applied ([`Op::stale_until`]); entries past are dropped as writes are released.
    stale: HashMap<String, Duration>,
    in_flight: FuturesUnordered<BoxFuture<'static, (u64, Answer)>>,
    in_flight_ops: usize,
    next_request: u64,
    /// Writes received so far.
    received: u64,
    /// The received numbers of the writes without an outcome.
    outstanding: BTreeSet<u64>,
    flushes: Vec<(u64, oneshot::Sender<u64>)>,
    open: bool,
    /// The sleep until the next deadline (the ramp, a backoff, a linger), and that deadline.
    timer: Option<(Duration, super::clock::Sleep)>,
}

impl Batcher {
    pub(super) fn new(
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
            behind: HashMap::new(),
            behind_count: 0,
            sent: HashMap::new(),
            stale: HashMap::new(),
            in_flight: FuturesUnordered::new(),
            in_flight_ops: 0,
            next_request: 0,
            received: 0,
            outstanding: BTreeSet::new(),
            flushes: Vec::new(),
            open: true,
            timer: None,
        }
    }

    pub(super) async fn run(mut self) {
        loop {
            let now = self.options.clock.now();
            self.wake_retries(now);
            let wake = self.dispatch(now);
            self.answer_flushes();
            if !self.open && self.outstanding.is_empty() {
                break;
            }
            let held = self.ready.len()
                + self.retries.len()
                + self.waiting.len()
                + self.behind_count
                + self.in_flight_ops;
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
                Some((request, answer)) = self.in_flight.next(), if !self.in_flight.is_empty() => {
                    self.answer(request, answer);
                    false
                }
                message = self.messages.recv(), if accepting => {
                    match message {
                        Some(Message::Write(op)) => self.receive(*op),
                        Some(Message::Flush(done)) => self.flushes.push((self.received, done)),
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
    }

    /// A new write: ready, or behind the write to its document that is held already.
    fn receive(&mut self, mut op: Op) {
        op.received = self.received;
        self.received += 1;
        op.not_before = self.options.clock.now();
        self.outstanding.insert(op.received);
        match self.behind.get_mut(&op.document) {
            Some(queue) => {
                queue.push_back(op);
                self.behind_count += 1;
            }
            None => {
                self.behind.insert(op.document.clone(), VecDeque::new());
                self.release(op);
            }
        }
    }

    /// Answers each flush whose writes all have an outcome.
    fn answer_flushes(&mut self) {
        let oldest = self.outstanding.first().copied().unwrap_or(u64::MAX);
        let (done, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.flushes)
            .into_iter()
            .partition(|(mark, _)| *mark <= oldest);
        self.flushes = waiting;
        for (mark, flush) in done {
            let _ = flush.send(mark);
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

    /// Sends what may go now; returns when to look again, if waiting on the ramp, a backoff
    /// or a linger.
    fn dispatch(&mut self, now: Duration) -> Option<Duration> {
        let draining = !self.open || !self.flushes.is_empty();
        let mut wake = self.waiting.iter().map(|op| op.not_before).min();
        let earliest = |wake: Option<Duration>, at: Duration| Some(wake.map_or(at, |w| w.min(at)));
        while self.in_flight_ops < self.options.max_pending {
            let retrying = !self.retries.is_empty();
            let (queue, size) = if retrying {
                (&mut self.retries, self.options.retry_batch_size)
            } else {
                (&mut self.ready, self.options.batch_size)
            };
            if queue.is_empty() {
                break;
            }
            // New writes wait for a full batch, unless a flush asks for everything or the
            // oldest has waited its linger; retries go as soon as their wait is over.
            let send_by = queue[0].not_before.saturating_add(self.options.linger);
            if !retrying && queue.len() < size && !draining && now < send_by {
                wake = earliest(wake, send_by);
                break;
            }
            let count = request_prefix(queue, size);
            if let Some(limiter) = &self.limiter
                && let Err(wait) = limiter.try_acquire(count, now)
            {
                wake = earliest(wake, now.saturating_add(wait));
                break;
            }
            let mut batch: Vec<Op> = queue.drain(..count).collect();
            for op in &mut batch {
                op.attempts += 1;
                op.sent_at = now;
            }
            self.shared.stats().requests += 1;
            let db = self.db.clone();
            let timeout = self.options.request_timeout;
            let sending: BoxFuture<'static, Answer> = match &batch[0].payload {
                Payload::Increment(placed) => {
                    let placed = placed.clone();
                    Box::pin(
                        async move { Answer::Commit(commit_increment(db, placed, timeout).await) },
                    )
                }
                Payload::Write(_) => {
                    let writes = batch
                        .iter()
                        .filter_map(|op| match &op.payload {
                            Payload::Write(write) => Some(write.clone()),
                            Payload::Increment(_) => None,
                        })
                        .collect();
                    Box::pin(async move { Answer::Batch(send(db, writes, timeout).await) })
                }
            };
            let request = self.track(batch);
            self.in_flight
                .push(Box::pin(async move { (request, sending.await) }));
        }
        wake
    }

    /// Holds `ops` as in flight; returns their request's number.
    fn track(&mut self, ops: Vec<Op>) -> u64 {
        let request = self.next_request;
        self.next_request += 1;
        self.in_flight_ops += ops.len();
        self.sent.insert(request, ops);
        request
    }

    fn answer(&mut self, request: u64, answer: Answer) {
        let ops = self.sent.remove(&request).unwrap_or_default();
        self.in_flight_ops -= ops.len();
        match answer {
            Answer::Batch(Ok(response)) => {
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
                            .map(crate::wire::server_clock::system_time);
                        self.succeed(op, update_time);
                    } else if retries_write(code) {
                        self.retry(op, code, message);
                    } else {
                        self.give_up(op, code, message);
                    }
                }
            }
            // A request refused as a whole applied nothing: its writes go again one by one,
            // so that only the one at fault fails.
            Answer::Batch(Err(status))
                if status.code() == Code::InvalidArgument && ops.len() > 1 =>
            {
                for mut op in ops.into_iter().rev() {
                    op.attempts -= 1;
                    op.alone = true;
                    self.retries.push_front(op);
                }
            }
            Answer::Batch(Err(status)) => {
                for op in ops {
                    self.request_failed(op, &status);
                }
            }
            Answer::Commit(Ok(response)) => {
                let commit_time = response
                    .commit_time
                    .map(crate::wire::server_clock::system_time);
                for op in ops {
                    self.succeed(op, commit_time);
                }
            }
            // Only the marker has a precondition: the increment landed before (an earlier
            // attempt, or an earlier application of the same `Increment`). The marker read
            // back says when.
            Answer::Commit(Err(status)) if status.code() == Code::AlreadyExists => {
                for op in ops {
                    self.read_back(op, status.code(), status.message().to_owned());
                }
            }
            // Cut at the end of Firestore's integers and undone: this attempt applied
            // nothing, so only an earlier lost one may have.
            Answer::Commit(Err(status)) if status.code() == Code::OutOfRange => {
                for op in ops {
                    self.fail(op, status.code(), status.message().to_owned());
                }
            }
            Answer::Commit(Err(status)) => {
                for op in ops {
                    self.request_failed(op, &status);
                }
            }
            Answer::ReadBack { cut: Some(cut), .. } => {
                for op in ops {
                    self.fail_as(op, cut.code, cut.message.clone(), cut.maybe_applied);
                }
            }
            Answer::ReadBack {
                stored,
                code,
                message,
                cut: None,
            } => {
                for op in ops {
                    let shown = match &stored {
                        Ok(stored) => op.shown_by(stored.as_ref()),
                        Err(_) => None,
                    };
                    match (
                        shown,
                        op.conflict(stored.as_ref().ok().and_then(Option::as_ref)),
                    ) {
                        (Some(time), _) => self.succeed(op, time),
                        (None, Some(conflict)) => self.fail(op, Code::AlreadyExists, conflict),
                        (None, None) => self.fail(op, code, message.clone()),
                    }
                }
            }
        }
    }

    /// `op`'s whole request failed with `status`: retried, or given up on.
    fn request_failed(&mut self, mut op: Op, status: &Status) {
        let (code, message) = (status.code(), status.message().to_owned());
        // The request may have been applied before its answer was lost, or be applied
        // still, until its deadline.
        if code != Code::InvalidArgument {
            let until = op
                .sent_at
                .saturating_add(self.options.request_timeout)
                .saturating_add(LOST_REQUEST_SLACK);
            op.stale_until = op.stale_until.max(Some(until));
        }
        if retries_request(code) {
            self.retry(op, code, message);
        } else {
            self.give_up(op, code, message);
        }
    }

    fn retry(&mut self, mut op: Op, code: Code, message: String) {
        if op.attempts >= self.options.backoff.max_attempts {
            return self.give_up(op, code, message);
        }
        self.shared.stats().retried += 1;
        let delay = self.options.backoff.delay(op.attempts, code.into());
        op.not_before = self.options.clock.now().saturating_add(delay);
        tracing::debug!(document = %op.document, ?code, attempts = op.attempts, "sharded: bulk write retried");
        self.waiting.push(op);
    }

    /// Fails `op`, unless an earlier attempt's answer was lost: then the document is read
    /// back first, and a document that shows the write makes it a success.
    fn give_up(&mut self, op: Op, code: Code, message: String) {
        if !op.maybe_applied() {
            return self.fail(op, code, message);
        }
        self.read_back(op, code, message);
    }

    /// Reads `op`'s document back: one that shows the write makes it a success; otherwise
    /// it fails with `code`.
    fn read_back(&mut self, op: Op, code: Code, message: String) {
        self.shared.stats().read_back += 1;
        let name = op.document.clone();
        let increment = match &op.payload {
            Payload::Increment(placed) => Some(placed.clone()),
            Payload::Write(_) => None,
        };
        let request = self.track(vec![op]);
        let db = self.db.clone();
        let clock = self.options.clock.clone();
        let backoff = self.options.backoff;
        let timeout = self.options.request_timeout;
        self.in_flight.push(Box::pin(async move {
            let stored = read_back(db.clone(), name, clock, backoff, timeout).await;
            let cut = match (increment, &stored) {
                (Some(placed), Ok(Some(marker))) => settle_cut(&db, placed, marker).await,
                _ => None,
            };
            let answer = Answer::ReadBack {
                stored,
                code,
                message,
                cut,
            };
            (request, answer)
        }));
    }

    fn succeed(&mut self, mut op: Op, update_time: Option<SystemTime>) {
        self.shared.stats().written += 1;
        if let Some(reply) = op.reply.take() {
            let _ = reply.send(Ok(WriteOutcome {
                update_time,
                attempts: op.attempts,
            }));
        }
        self.settled(op);
    }

    fn fail(&mut self, op: Op, code: Code, message: String) {
        let maybe_applied = op.maybe_applied();
        self.fail_as(op, code, message, maybe_applied);
    }

    /// [`fail`](Self::fail), with what is known of whether it was applied.
    fn fail_as(&mut self, mut op: Op, code: Code, message: String, maybe_applied: bool) {
        self.shared.stats().failed += 1;
        let failure = WriteFailure {
            document: op.document.clone(),
            code: code.into(),
            message,
            attempts: op.attempts,
            maybe_applied,
        };
        // Recorded before it is sent, so that a handle that yields it finds it to claim.
        self.shared.unclaimed().insert(
            op.seq,
            Unclaimed {
                received: op.received,
                failure: failure.clone(),
            },
        );
        if let Some(reply) = op.reply.take() {
            let _ = reply.send(Err(failure));
        }
        self.settled(op);
    }

    /// `op` is the next write to its document: ready, or, while a lost attempt of an
    /// earlier write to it may still be applied, waiting until that attempt's deadline has
    /// passed, so that the order per document does not rest on a backoff outlasting a
    /// stale request.
    fn release(&mut self, mut op: Op) {
        let now = self.options.clock.now();
        self.stale.retain(|_, until| *until > now);
        match self.stale.get(&op.document) {
            Some(&until) => {
                tracing::debug!(document = %op.document, "sharded: bulk write waits out a lost request's deadline");
                op.not_before = until;
                self.waiting.push(op);
            }
            None => self.ready.push_back(op),
        }
    }

    /// `op` has its outcome: the next write to its document may go ([`release`](Self::release)).
    fn settled(&mut self, op: Op) {
        self.outstanding.remove(&op.received);
        if let Some(until) = op.stale_until {
            let until = self
                .stale
                .get(&op.document)
                .map_or(until, |&at| at.max(until));
            self.stale.insert(op.document.clone(), until);
        }
        let next = self
            .behind
            .get_mut(&op.document)
            .and_then(VecDeque::pop_front);
        match next {
            Some(next) => {
                self.behind_count -= 1;
                self.release(next);
            }
            None => {
                self.behind.remove(&op.document);
            }
        }
    }

    /// Every op the task holds, wherever it is.
    fn held(&mut self) -> impl Iterator<Item = (Op, bool)> + '_ {
        let in_flight = self
            .sent
            .drain()
            .flat_map(|(_, ops)| ops)
            .map(|op| (op, true));
        let queued = self
            .ready
            .drain(..)
            .chain(self.retries.drain(..))
            .chain(self.waiting.drain(..))
            .chain(self.behind.drain().flat_map(|(_, ops)| ops))
            .map(|op| (op, false));
        in_flight.chain(queued)
    }
}

/// Dropped (the writer was dropped, or its runtime shut down): every write without an
/// outcome gets one, and nothing more is sent.
impl Drop for Batcher {
    fn drop(&mut self) {
        for (mut op, in_flight) in self.held().collect::<Vec<_>>() {
            if let Some(reply) = op.reply.take() {
                let _ = reply.send(Err(WriteFailure {
                    document: std::mem::take(&mut op.document),
                    code: crate::wire::status::StatusCode::Cancelled,
                    message: "the bulk writer was dropped before this write had an outcome".into(),
                    attempts: op.attempts,
                    maybe_applied: op.maybe_applied() || in_flight,
                }));
            }
        }
    }
}

/// The largest BatchWrite request this writer sends, in encoded bytes: under Firestore's 10 MiB
/// limit on a request, with room for its envelope.
const MAX_REQUEST_BYTES: usize = 9 * 1024 * 1024;

/// How many ops from the front of `queue` go in the next request: at most `size`, at most
/// [`MAX_REQUEST_BYTES`] together (a larger write goes alone, to fail on its own), and an op
/// whose last request was refused as a whole alone. The queues hold one op per document, as
/// a BatchWrite request must.
fn request_prefix(queue: &VecDeque<Op>, size: usize) -> usize {
    if queue.front().is_some_and(Op::alone) {
        return 1;
    }
    let mut bytes = 0;
    let count = queue
        .iter()
        .take(size)
        .take_while(|op| {
            bytes += op.bytes;
            bytes <= MAX_REQUEST_BYTES && !op.alone()
        })
        .count();
    count.max(1)
}

#[cfg(test)]
mod tests {
    use firestore::gcloud_sdk::google::firestore::v1::Write;

    use super::*;

    fn op(document: &str, bytes: usize, alone: bool) -> Op {
        Op {
            bytes,
            alone,
            ..Op::new(
                document.into(),
                Payload::Write(Write::default()),
                0,
                oneshot::channel().0,
            )
        }
    }

    fn increment(marker: &str) -> Op {
        Op::new(
            marker.into(),
            Payload::Increment(crate::write::increment::Placed {
                document: "projects/p/databases/(default)/documents/posts/p".into(),
                id: marker.into(),
                field: "likes",
                amount: 5,
                shard: 0,
            }),
            0,
            oneshot::channel().0,
        )
    }

    #[test]
    fn a_request_holds_what_fits_and_a_refused_write_alone() {
        let queue = VecDeque::from([op("a", 10, false), op("b", 10, false), op("c", 10, true)]);
        assert_eq!(request_prefix(&queue, 20), 2, "up to the write to go alone");
        assert_eq!(request_prefix(&queue, 1), 1);
        let alone = VecDeque::from([op("a", 10, true), op("b", 10, false)]);
        assert_eq!(request_prefix(&alone, 20), 1);
        let big = VecDeque::from([op("a", 5 << 20, false), op("b", 5 << 20, false)]);
        assert_eq!(request_prefix(&big, 20), 1, "9 MiB at most");
        let huge = VecDeque::from([op("a", 20 << 20, false)]);
        assert_eq!(request_prefix(&huge, 20), 1, "alone, to fail on its own");
    }

    #[test]
    fn an_increment_goes_in_a_commit_of_its_own() {
        let queue = VecDeque::from([op("a", 10, false), increment("m"), op("b", 10, false)]);
        assert_eq!(request_prefix(&queue, 20), 1, "batched writes up to it");
        let queue = VecDeque::from([increment("m"), op("b", 10, false)]);
        assert_eq!(request_prefix(&queue, 20), 1, "then it alone");
    }

    #[test]
    fn an_increment_is_shown_applied_by_its_marker_from_its_creation() {
        use firestore::gcloud_sdk::google::firestore::v1::value::ValueType;
        let op = increment("m");
        assert_eq!(op.shown_by(None), None);
        let created = firestore::gcloud_sdk::prost_types::Timestamp {
            seconds: 1_700_000_000,
            nanos: 0,
        };
        let marker = Document {
            create_time: Some(created),
            update_time: None,
            ..Document::default()
        };
        assert_eq!(
            op.shown_by(Some(&marker)),
            Some(Some(crate::wire::server_clock::system_time(created))),
            "a marker that records nothing (an older one) shows any increment"
        );
        assert_eq!(op.conflict(Some(&marker)), None);
        let recording = |amount: i64| {
            let mut marker = marker.clone();
            marker.fields = [
                ("field", ValueType::StringValue("likes".into())),
                ("amount", ValueType::IntegerValue(amount)),
            ]
            .into_iter()
            .map(|(name, value)| {
                let value = firestore::gcloud_sdk::google::firestore::v1::Value {
                    value_type: Some(value),
                };
                (name.to_owned(), value)
            })
            .collect();
            marker
        };
        assert!(op.shown_by(Some(&recording(5))).is_some());
        assert_eq!(op.shown_by(Some(&recording(6))), None);
        let conflict = op.conflict(Some(&recording(6))).unwrap();
        assert!(conflict.contains("`likes` +6"), "{conflict}");
    }
}
