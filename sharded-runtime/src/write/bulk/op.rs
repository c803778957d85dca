//! One write the bulk writer holds, from the call that queued it to its outcome: what it
//! sends, where it is in its retries, and whom to answer.

use std::time::{Duration, SystemTime};

use firestore::gcloud_sdk::google::firestore::v1::{Document, Write};

use super::outcome::Reply;
use crate::write::increment::{Placed, Recorded};

/// What an op sends.
#[derive(Debug)]
pub(super) enum Payload {
    /// One write, batched with others in a BatchWrite (each write applied on its own).
    Write(Write),
    /// An increment, placed: its two writes (its marker's creation on `exists: false`, its
    /// shard's addition), made as it is sent, must land together: a Commit of their own. The
    /// op's document is the marker, which says whether it landed.
    Increment(Placed),
}

#[derive(Debug)]
pub(super) struct Op {
    /// The document the op is ordered by and read back from: the written document, or an
    /// increment's marker.
    pub(super) document: String,
    pub(super) payload: Payload,
    /// The write's encoded size, which bounds a request's.
    pub(super) bytes: usize,
    /// Its number among the writes queued, which its handle knows it by.
    pub(super) seq: u64,
    /// Its number among the writes the task received, which flushes count by.
    pub(super) received: u64,
    pub(super) attempts: u32,
    /// When it was queued, for a new write; when its wait ends, for a retry.
    pub(super) not_before: Duration,
    /// When its last attempt was sent.
    pub(super) sent_at: Duration,
    /// Set once an attempt's answer was lost (so the write may have been applied): until
    /// when such an attempt may still be applied by the server, its deadline
    /// ([`BulkWriterOptions::request_timeout`] after it was sent) and
    /// [`LOST_REQUEST_SLACK`]. The document's next write waits until then.
    pub(super) stale_until: Option<Duration>,
    /// Goes in a request of its own: its last request was refused as a whole.
    pub(super) alone: bool,
    pub(super) reply: Option<Reply>,
}

impl Op {
    pub(super) fn new(document: String, payload: Payload, seq: u64, reply: Reply) -> Op {
        let bytes = match &payload {
            Payload::Write(write) => firestore::gcloud_sdk::prost::Message::encoded_len(write),
            Payload::Increment(placed) => {
                placed
                .writes("", SystemTime::UNIX_EPOCH)
                .iter()
                .map(firestore::gcloud_sdk::prost::Message::encoded_len)
                .sum::<usize>()
                // The digest its marker records: 64 hex digits.
                + 64
            }
        };
        Op {
            document,
            bytes,
            payload,
            seq,
            received: 0,
            attempts: 0,
            not_before: Duration::ZERO,
            sent_at: Duration::ZERO,
            stale_until: None,
            alone: false,
            reply: Some(reply),
        }
    }

    /// Whether an attempt's answer was lost, so that the write may have been applied.
    pub(super) fn maybe_applied(&self) -> bool {
        self.stale_until.is_some()
    }

    /// Whether it goes in a request of its own.
    pub(super) fn alone(&self) -> bool {
        self.alone || matches!(self.payload, Payload::Increment(_))
    }

    /// Whether `stored` (its document read back, `None` if missing) shows it applied, and
    /// when: an increment's marker exists from its commit on.
    pub(super) fn shown_by(&self, stored: Option<&Document>) -> Option<Option<SystemTime>> {
        let applied = match &self.payload {
            Payload::Write(write) => super::landed::shows(write, stored),
            Payload::Increment(placed) => {
                stored.is_some_and(|marker| Recorded::of(marker).is_of(placed))
            }
        };
        let time = |document: &Document| match self.payload {
            Payload::Write(_) => document.update_time,
            Payload::Increment(_) => document.create_time,
        };
        applied.then(|| {
            stored
                .and_then(time)
                .map(crate::wire::server_clock::system_time)
        })
    }

    /// For an increment whose marker `stored` holds another increment under its id, what
    /// the failure says ([`Error::IncrementConflict`](crate::error::Error::IncrementConflict)'s
    /// text).
    pub(super) fn conflict(&self, stored: Option<&Document>) -> Option<String> {
        let (Payload::Increment(placed), Some(marker)) = (&self.payload, stored) else {
            return None;
        };
        let recorded = Recorded::of(marker);
        (!recorded.is_of(placed)).then(|| recorded.conflict(placed).to_string())
    }
}
