//! The 500/50/5 ramp as a token bucket: Google's bulk writers' constants, with budgets that
//! hold per window.

use std::sync::Mutex;
use std::time::Duration;

use crate::model::throttling::{Throttling, window};

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
