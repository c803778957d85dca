//! Writing many documents: a ramped, retrying bulk writer (Google's BulkWriter, for Rust and
//! for sharded types).

mod batcher;
mod clock;
mod field_names;
mod landed;
mod options;
mod outcome;
mod rate_limiter;
mod retry;
mod sequential_ids;
mod writer;

pub use clock::{Clock, Sleep, SystemClock, VirtualClock};
pub use options::{BulkWriterOptions, MAX_BATCH_SIZE, MAX_DURATION};
pub use outcome::{BulkStats, PendingWrite, WriteFailure, WriteOutcome};
pub use rate_limiter::{RateLimiter, Throttling};
pub use retry::Backoff;
pub(crate) use retry::{retries_request, transient};
pub use writer::BulkWriter;
