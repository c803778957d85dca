//! What a bulk write comes to, and how it reaches the caller: its [`PendingWrite`], or the
//! next [`flush`](super::BulkWriter::flush) when no one took it from there.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::SystemTime;

use crate::wire::status::StatusCode;
use tokio::sync::oneshot;

use super::sequential_ids::SequentialIds;

/// A write the bulk writer gave up on: a status Firestore will not change on retry, the last
/// of [`Backoff::max_attempts`](super::Backoff::max_attempts), or the writer dropped before
/// the write had an outcome ([`StatusCode::Cancelled`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("write of `{document}` failed after {attempts} attempt(s): {code:?}: {message}{}",
    if *maybe_applied { " (an earlier attempt's answer was lost: it may have been applied)" } else { "" })]
pub struct WriteFailure {
    /// The document's full name.
    pub document: String,
    /// The last status.
    pub code: StatusCode,
    /// The last status's message.
    pub message: String,
    /// Attempts made.
    pub attempts: u32,
    /// `false`: the write was not applied. `true`: an attempt's answer was lost (a dropped
    /// connection, a deadline) and reading the document back could not show that it was
    /// applied, so it may have been. A write that reading back shows applied is never a
    /// failure.
    pub maybe_applied: bool,
}

/// A write that succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOutcome {
    /// When Firestore applied it; `None` for a delete.
    pub update_time: Option<SystemTime>,
    /// Attempts it took.
    pub attempts: u32,
}

/// What a [`BulkWriter`](super::BulkWriter) has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BulkStats {
    /// Writes that succeeded.
    pub written: u64,
    /// Writes given up on.
    pub failed: u64,
    /// Attempts after a first one.
    pub retried: u64,
    /// Requests sent: BatchWrites, and a counter increment's Commit each.
    pub requests: u64,
    /// Writes whose answer was lost and that were settled by reading the document back.
    pub read_back: u64,
    /// The writer saw a long run of increasing document ids and warned about it.
    pub sequential_ids: bool,
}

pub(super) type Reply = oneshot::Sender<Result<WriteOutcome, WriteFailure>>;

/// A failure no [`PendingWrite`] has yielded yet, with the write's place in the queue.
#[derive(Debug)]
pub(super) struct Unclaimed {
    pub(super) received: u64,
    pub(super) failure: WriteFailure,
}

/// What the writer's handle, its handles of writes and its task share.
#[derive(Debug, Default)]
pub(super) struct Shared {
    /// Failures not yet yielded by their [`PendingWrite`], by the write's number.
    pub(super) unclaimed: Mutex<BTreeMap<u64, Unclaimed>>,
    pub(super) stats: Mutex<BulkStats>,
    pub(super) ids: Mutex<SequentialIds>,
}

impl Shared {
    pub(super) fn stats(&self) -> std::sync::MutexGuard<'_, BulkStats> {
        self.stats.lock().expect("stats lock")
    }

    pub(super) fn unclaimed(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Unclaimed>> {
        self.unclaimed.lock().expect("failures lock")
    }

    /// Takes every failure of a write received before `mark` that no handle has yielded.
    pub(super) fn take_unclaimed(&self, mark: u64) -> Vec<WriteFailure> {
        let mut unclaimed = self.unclaimed();
        let taken: Vec<u64> = unclaimed
            .iter()
            .filter(|(_, entry)| entry.received < mark)
            .map(|(seq, _)| *seq)
            .collect();
        taken
            .into_iter()
            .filter_map(|seq| unclaimed.remove(&seq))
            .map(|entry| entry.failure)
            .collect()
    }
}

/// The outcome of one queued write. Await it for that outcome; a failure that no handle has
/// yielded is reported by the next [`flush`](super::BulkWriter::flush) or
/// [`close`](super::BulkWriter::close) too, so dropping a handle loses nothing.
#[derive(Debug)]
#[must_use = "await it, or drop it and let `flush` report this write's failure"]
pub struct PendingWrite {
    pub(super) document: String,
    pub(super) seq: u64,
    pub(super) shared: Arc<Shared>,
    pub(super) outcome: oneshot::Receiver<Result<WriteOutcome, WriteFailure>>,
}

impl PendingWrite {
    /// The full name of the document written.
    pub fn document(&self) -> &str {
        &self.document
    }
}

impl Future for PendingWrite {
    type Output = Result<WriteOutcome, WriteFailure>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let outcome = std::task::ready!(Pin::new(&mut self.outcome).poll(cx));
        // The writer's task replies to every write it holds, even when it is dropped; a
        // closed channel means that task panicked.
        let outcome = outcome.unwrap_or_else(|_| {
            Err(WriteFailure {
                document: self.document.clone(),
                code: StatusCode::Internal,
                message: "the bulk writer's task ended before this write had an outcome".into(),
                attempts: 0,
                maybe_applied: true,
            })
        });
        if outcome.is_err() {
            self.shared.unclaimed().remove(&self.seq);
        }
        Poll::Ready(outcome)
    }
}
