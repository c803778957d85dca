//! The 500/50/5 ramp as a token bucket: Google's bulk writers' constants, with budgets that
//! hold per window.

use std::sync::Mutex;
use std::time::Duration;

/// How fast a bulk writer may issue operations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Throttling {
    /// No limit: operations go out as fast as batches and the in-flight bound allow.
    Off,
    /// Firestore's ramp-up rule for new key ranges ("500/50/5"): start at `initial`
    /// operations per second and multiply the rate by `growth` every `interval`, up to
    /// `maximum`.
    Ramp {
        /// Operations per second in the first interval. Google's writers: 500.
        initial: f64,
        /// The factor the rate grows by each interval. Google's writers: 1.5.
        growth: f64,
        /// How often the rate grows. Google's writers: 5 minutes.
        interval: Duration,
        /// The highest rate. Google's Node writer: 10,000; for a sharded type,
        /// [`BulkWriterOptions::for_type`](super::BulkWriterOptions::for_type) sets 500 per
        /// shard value, the rate the shards were sized for.
        maximum: f64,
    },
}

impl Throttling {
    /// Google's constants: 500 operations/s, × 1.5 every 5 minutes, at most 10,000/s.
    pub const fn ramp() -> Throttling {
        Throttling::Ramp {
            initial: 500.0,
            growth: 1.5,
            interval: Duration::from_secs(5 * 60),
            maximum: 10_000.0,
        }
    }

    /// Whether a writer can follow this throttling:
    /// [`Error::InvalidOptions`](crate::error::Error::InvalidOptions) naming the first setting out of
    /// range.
    pub fn validate(&self) -> crate::error::Result<()> {
        use crate::wire::option_check::{MAX_DURATION, check};
        let Throttling::Ramp {
            initial,
            growth,
            interval,
            maximum,
        } = *self
        else {
            return Ok(());
        };
        check(
            initial.is_finite() && initial > 0.0,
            "throttling.initial",
            "a finite number of operations per second above 0",
        )?;
        check(
            maximum.is_finite() && maximum >= initial,
            "throttling.maximum",
            "a finite number of operations per second, at least throttling.initial",
        )?;
        check(
            growth.is_finite() && growth >= 1.0,
            "throttling.growth",
            "a finite factor of at least 1",
        )?;
        check(
            !interval.is_zero() && interval <= MAX_DURATION,
            "throttling.interval",
            "more than zero and at most a day (MAX_DURATION)",
        )
    }

    /// This throttling with its ceiling set to `maximum` operations per second.
    pub fn with_maximum(self, maximum: f64) -> Throttling {
        match self {
            Throttling::Off => Throttling::Off,
            Throttling::Ramp {
                initial,
                growth,
                interval,
                ..
            } => Throttling::Ramp {
                initial: initial.min(maximum),
                growth,
                interval,
                maximum,
            },
        }
    }

    /// The rate allowed `elapsed` after the writer started, in operations per second;
    /// `None` when throttling is off.
    pub fn rate_at(&self, elapsed: Duration) -> Option<f64> {
        match *self {
            Throttling::Off => None,
            Throttling::Ramp {
                initial,
                growth,
                interval,
                maximum,
            } => {
                let steps = window(elapsed, interval);
                Some((initial * growth.powi(steps.min(i32::MAX as u64) as i32)).min(maximum))
            }
        }
    }

    /// How long after the start the rate first reaches `rate`, or its maximum if that is
    /// lower: for a sharded type's writer, when the ramp reaches 500 per shard value.
    pub fn time_to_reach(&self, rate: f64) -> Duration {
        match *self {
            Throttling::Off => Duration::ZERO,
            Throttling::Ramp {
                interval, maximum, ..
            } => {
                let target = rate.min(maximum);
                (0..10_000u32)
                    .map(|steps| interval.saturating_mul(steps))
                    .find(|&at| self.rate_at(at).is_some_and(|now| now >= target))
                    .unwrap_or(Duration::MAX)
            }
        }
    }
}

fn window(elapsed: Duration, interval: Duration) -> u64 {
    if interval.is_zero() {
        return 0;
    }
    (elapsed.as_nanos() / interval.as_nanos()) as u64
}

/// The longest a limiter asks to wait at once: after it, it is asked again.
const MAX_WAIT: Duration = crate::wire::option_check::MAX_DURATION;

/// When the `k`-th window of the ramp starts; saturating, so that no setting can overflow.
fn window_start(start: Duration, interval: Duration, k: u64) -> Duration {
    let k = u32::try_from(k).unwrap_or(u32::MAX);
    start.saturating_add(interval.saturating_mul(k))
}

/// A token bucket whose rate follows a [`Throttling`] ramp.
///
/// Tokens accrue at the current rate and are capped at one second's worth (or one batch, if
/// that is more). Each interval of the ramp starts with an empty bucket, so the operations
/// issued within an interval never exceed rate × interval: the budget the ramp gives it.
/// While work is queued the limiter issues all of that budget but the last batch's worth.
#[derive(Debug)]
pub struct RateLimiter {
    throttling: Throttling,
    start: Duration,
    largest_request: f64,
    bucket: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    window: u64,
    tokens: f64,
    updated: Duration,
}

impl RateLimiter {
    /// A limiter whose ramp starts at `start`, a time on the clock it will be asked with;
    /// requests take at most `largest_request` tokens at once.
    pub fn new(throttling: Throttling, start: Duration, largest_request: usize) -> Self {
        RateLimiter {
            throttling,
            start,
            largest_request: largest_request as f64,
            bucket: Mutex::new(Bucket {
                window: 0,
                tokens: 0.0,
                updated: start,
            }),
        }
    }

    /// The throttling this limiter follows.
    pub fn throttling(&self) -> Throttling {
        self.throttling
    }

    /// The rate allowed at `now`, in operations per second; `None` when throttling is off.
    pub fn rate(&self, now: Duration) -> Option<f64> {
        self.throttling.rate_at(now.saturating_sub(self.start))
    }

    /// Takes `n` tokens at `now`, or says how long to wait before asking again.
    pub fn try_acquire(&self, n: usize, now: Duration) -> Result<(), Duration> {
        let Throttling::Ramp { interval, .. } = self.throttling else {
            return Ok(());
        };
        let elapsed = now.saturating_sub(self.start);
        let rate = self.rate(now).unwrap_or(f64::INFINITY);
        let mut bucket = self.bucket.lock().expect("limiter lock");
        let current = window(elapsed, interval);
        if current != bucket.window {
            bucket.window = current;
            bucket.tokens = 0.0;
            bucket.updated = window_start(self.start, interval, current);
        }
        let accrued = now.saturating_sub(bucket.updated).as_secs_f64() * rate;
        bucket.tokens = (bucket.tokens + accrued).min(rate.max(self.largest_request));
        bucket.updated = bucket.updated.max(now);
        let n = n as f64;
        if bucket.tokens >= n {
            bucket.tokens -= n;
            return Ok(());
        }
        let refill = Duration::try_from_secs_f64((n - bucket.tokens) / rate).unwrap_or(MAX_WAIT);
        let next_window = window_start(self.start, interval, current + 1).saturating_sub(now);
        // A microsecond more, so that rounding never leaves the bucket a hair short.
        Err(refill.min(next_window).min(MAX_WAIT) + Duration::from_micros(1))
    }
}
