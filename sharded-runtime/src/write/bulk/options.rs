//! How a bulk writer batches, throttles and retries, checked where the options enter.

use std::sync::Arc;
use std::time::Duration;

use super::clock::{Clock, SystemClock};
use crate::error::Result;
use crate::model::sharded::Sharded;
use crate::model::throttling::Throttling;
use crate::wire::option_check::{MAX_DURATION, check};
use crate::wire::retry::Backoff;

/// The most writes one BatchWrite request carries.
pub const MAX_BATCH_SIZE: usize = 500;

/// The most operations a writer keeps sent and unanswered ([`BulkWriterOptions::max_pending`]):
/// a hundred times Google's 500. Each one holds its document in memory until answered.
pub const MAX_PENDING: usize = 50_000;

/// How a [`BulkWriter`](super::BulkWriter) batches, throttles and retries. [`Default`] is
/// Google's bulk writers' settings; [`for_type`](Self::for_type) caps the ramp at the rate a
/// sharded type was sized for. [`BulkWriter::new`](super::BulkWriter::new) checks them
/// ([`validate`](Self::validate)) and refuses options it cannot run with.
///
/// Built from [`default`](Default::default), [`for_type`](Self::for_type) or
/// [`unthrottled`](Self::unthrottled) with the `with_*` methods, so that an option added later
/// breaks no one's code.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BulkWriterOptions {
    /// The ramp operations are issued at; [`Throttling::ramp`] by default.
    pub throttling: Throttling,
    /// Writes per BatchWrite request, 1 to [`MAX_BATCH_SIZE`]. Google's writers: 20.
    pub batch_size: usize,
    /// Writes per request of retried writes, 1 to [`MAX_BATCH_SIZE`]. Google's writers: 10.
    pub retry_batch_size: usize,
    /// Operations sent and not yet answered, at most (1 to [`MAX_PENDING`]); further writes
    /// wait in a buffer of one batch, and then the caller's `write` waits. Google's writers: 500.
    pub max_pending: usize,
    /// Retries of each operation.
    pub backoff: Backoff,
    /// How long a write waits for its batch to fill before the batch goes out part-full
    /// (so that awaiting a single write's outcome needs no flush); at most [`MAX_DURATION`].
    pub linger: Duration,
    /// How long one BatchWrite request may take before it counts as failed (and is retried);
    /// more than zero and at most [`MAX_DURATION`]. It is also the request's deadline on the
    /// server: after a request of a write lost its answer, the next write to that document
    /// waits until that deadline (and 1 s more) has passed, so that the lost request, if the
    /// server applies it, cannot land after it.
    pub request_timeout: Duration,
    /// The clock the ramp and the backoff read: a test hook (hidden).
    #[doc(hidden)]
    pub clock: Arc<dyn Clock>,
    /// How whole-document writes of a `server_timestamp` type set its order field:
    /// [`OrderStamp::OnCreate`](crate::model::order_stamp::OrderStamp::OnCreate) by default (the server's time on
    /// `create` and `insert`, the stored time kept on `update`, `upsert` refused);
    /// [`OrderStamp::FromDocument`](crate::model::order_stamp::OrderStamp::FromDocument) to import documents with
    /// their own times.
    pub order_stamp: crate::model::order_stamp::OrderStamp,
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
            order_stamp: crate::model::order_stamp::OrderStamp::default(),
        }
    }
}

impl BulkWriterOptions {
    /// Google's settings with the ramp capped at 500 writes/s per shard value of `T`: the rate
    /// its shards were sized for, which the ramp reaches after
    /// [`Throttling::time_to_reach`] (15 minutes for 3 values, 45 for 30).
    pub fn for_type<T: Sharded>() -> Self {
        let ceiling = crate::model::reshard::WRITES_PER_SHARD * T::SHARD_VALUES.len() as f64;
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
            batch_size: MAX_BATCH_SIZE,
            ..BulkWriterOptions::default()
        }
    }

    /// These options for one of `workers` writers sharing the write budget (a job split with
    /// [`IdRange::part`](crate::model::partition::IdRange::part) across processes): the ramp starts at, and
    /// stops at, 1/`workers` of its rates, so that together they ramp as one writer would.
    /// [`Error::InvalidOptions`](crate::error::Error::InvalidOptions) unless `1 <= workers <=` [`MAX_PARTS`](crate::model::partition::MAX_PARTS), the
    /// most parts a job splits into, with or without throttling.
    pub fn share_of(self, workers: u32) -> Result<Self> {
        check(
            (1..=crate::model::partition::MAX_PARTS).contains(&workers),
            "share_of",
            "from 1 to MAX_PARTS (3,844) workers",
        )?;
        let throttling = match self.throttling {
            Throttling::Off => Throttling::Off,
            Throttling::Ramp {
                initial,
                growth,
                interval,
                maximum,
            } => Throttling::Ramp {
                initial: initial / f64::from(workers),
                growth,
                interval,
                maximum: maximum / f64::from(workers),
            },
        };
        Ok(BulkWriterOptions { throttling, ..self })
    }

    /// These options with `order_stamp`: how a `server_timestamp` type's order field is
    /// set ([`OrderStamp`](crate::model::order_stamp::OrderStamp)).
    pub fn with_order_stamp(self, order_stamp: crate::model::order_stamp::OrderStamp) -> Self {
        BulkWriterOptions {
            order_stamp,
            ..self
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

    /// These options reading `clock`: a test hook (hidden).
    #[doc(hidden)]
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

    /// These options with `retry_batch_size` writes per request of retried writes.
    pub fn with_retry_batch_size(self, retry_batch_size: usize) -> Self {
        BulkWriterOptions {
            retry_batch_size,
            ..self
        }
    }

    /// These options with at most `max_pending` operations sent and not yet answered.
    pub fn with_max_pending(self, max_pending: usize) -> Self {
        BulkWriterOptions {
            max_pending,
            ..self
        }
    }

    /// These options with a batch going out part-full after `linger`.
    pub fn with_linger(self, linger: Duration) -> Self {
        BulkWriterOptions { linger, ..self }
    }

    /// These options with `request_timeout` for one BatchWrite request.
    pub fn with_request_timeout(self, request_timeout: Duration) -> Self {
        BulkWriterOptions {
            request_timeout,
            ..self
        }
    }

    /// Whether a writer can run with these options: [`Error::InvalidOptions`](crate::error::Error::InvalidOptions) naming the
    /// first option out of range.
    pub fn validate(&self) -> Result<()> {
        let sizes = 1..=MAX_BATCH_SIZE;
        check(
            sizes.contains(&self.batch_size),
            "batch_size",
            "from 1 to 500",
        )?;
        check(
            sizes.contains(&self.retry_batch_size),
            "retry_batch_size",
            "from 1 to 500",
        )?;
        check(
            (1..=MAX_PENDING).contains(&self.max_pending),
            "max_pending",
            "from 1 to MAX_PENDING (50,000)",
        )?;
        check(
            self.linger <= MAX_DURATION,
            "linger",
            "at most a day (MAX_DURATION)",
        )?;
        check(
            !self.request_timeout.is_zero() && self.request_timeout <= MAX_DURATION,
            "request_timeout",
            "more than zero and at most a day (MAX_DURATION)",
        )?;
        self.throttling.validate()?;
        self.backoff.validate()
    }
}
