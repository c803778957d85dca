//! Writing many documents: a ramped, retrying bulk writer (Google's BulkWriter, for Rust and
//! for sharded types).

mod clock;
mod rate_limiter;
mod retry;
mod sequential_ids;
mod writer;

pub use clock::{Clock, Sleep, SystemClock, VirtualClock};
pub use rate_limiter::{RateLimiter, Throttling};
pub use retry::Backoff;
pub(crate) use retry::{retries_request, transient};
pub use writer::{
    BulkStats, BulkWriter, BulkWriterOptions, PendingWrite, WriteFailure, WriteOutcome,
};
