//! The one retry policy: which failures are worth another attempt, and how long to wait
//! first (Google's bulk writers' rules), for the bulk writer, the shard job's reads and the
//! listener's reconnections.

use std::time::Duration;

use crate::wire::status::StatusCode;
use rand::Rng;

/// Backoff between attempts of one operation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The wait before the second attempt. Google's writers: 1 s.
    pub initial: Duration,
    /// The factor each further wait grows by. Google's writers: 1.5.
    pub factor: f64,
    /// The longest wait; also the wait after RESOURCE_EXHAUSTED. Google's writers: 60 s.
    pub maximum: Duration,
    /// Each wait is moved by up to this share of itself, either way. Google's writers: 0.3.
    pub jitter: f64,
    /// Attempts per operation, the first included. Google's writers: 10.
    pub max_attempts: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_secs(1),
            factor: 1.5,
            maximum: Duration::from_secs(60),
            jitter: 0.3,
            max_attempts: 10,
        }
    }
}

impl Backoff {
    /// The wait after an operation's `attempts`-th failed attempt with `code`, before jitter.
    pub fn base_delay(&self, attempts: u32, code: StatusCode) -> Duration {
        if code == StatusCode::ResourceExhausted {
            return self.maximum;
        }
        let exponent = attempts.saturating_sub(1).min(1_000) as i32;
        let secs = self.initial.as_secs_f64() * self.factor.powi(exponent);
        Duration::try_from_secs_f64(secs)
            .unwrap_or(self.maximum)
            .min(self.maximum)
    }

    /// [`base_delay`](Self::base_delay) with jitter.
    pub fn delay(&self, attempts: u32, code: StatusCode) -> Duration {
        let base = self.base_delay(attempts, code);
        if !(self.jitter > 0.0 && self.jitter < 1.0) {
            return base;
        }
        let shift = rand::rng().random_range(-self.jitter..=self.jitter);
        Duration::try_from_secs_f64(base.as_secs_f64() * (1.0 + shift)).unwrap_or(base)
    }

    /// Whether these settings can run: [`Error::InvalidOptions`](crate::error::Error::InvalidOptions)
    /// naming the first one out of range.
    pub fn validate(&self) -> crate::error::Result<()> {
        use crate::wire::option_check::{MAX_DURATION, check};
        check(
            self.maximum <= MAX_DURATION,
            "backoff.maximum",
            "at most a day (MAX_DURATION)",
        )?;
        check(
            self.initial <= self.maximum,
            "backoff.initial",
            "at most backoff.maximum",
        )?;
        check(
            self.factor.is_finite() && self.factor >= 1.0,
            "backoff.factor",
            "a finite number of at least 1",
        )?;
        check(
            (0.0..1.0).contains(&self.jitter),
            "backoff.jitter",
            "at least 0 and less than 1",
        )?;
        check(self.max_attempts >= 1, "backoff.max_attempts", "at least 1")
    }
}

/// Whether a single write that failed with `code` (gRPC's, or as this crate reports it) is
/// worth another attempt.
pub(crate) fn retries_write(code: impl Into<StatusCode>) -> bool {
    matches!(
        code.into(),
        StatusCode::ResourceExhausted | StatusCode::Aborted | StatusCode::Unavailable
    )
}

/// Whether a whole request that failed with `code` (a BatchWrite, a Listen stream) is worth
/// another attempt. A dropped connection surfaces as UNAVAILABLE, UNKNOWN or INTERNAL (a
/// broken HTTP/2 stream);
/// a deadline may have passed after the writes applied, which another attempt of the same
/// writes repeats harmlessly or fails by precondition.
pub(crate) fn retries_request(code: impl Into<StatusCode>) -> bool {
    let code = code.into();
    retries_write(code)
        || matches!(
            code,
            StatusCode::Unknown
                | StatusCode::Internal
                | StatusCode::DeadlineExceeded
                | StatusCode::Cancelled
        )
}

/// Whether a failed read is worth another attempt: what the firestore crate marks retryable,
/// and the codes a dropped connection surfaces as.
pub(crate) fn transient(err: &firestore::errors::FirestoreError) -> bool {
    use firestore::errors::FirestoreError;
    match err {
        FirestoreError::DatabaseError(err) => {
            err.retry_possible
                || [
                    "Unknown",
                    "Internal",
                    "Unavailable",
                    "DeadlineExceeded",
                    "Cancelled",
                ]
                .contains(&err.public.code.as_str())
        }
        FirestoreError::NetworkError(_) => true,
        _ => false,
    }
}

/// How a query's reads are retried: the same failures as every request, sooner, since a
/// caller waits on the answer (Google's clients start reads' retries at 100 ms or so).
pub(crate) const QUERY_READS: Backoff = Backoff {
    initial: std::time::Duration::from_millis(100),
    factor: 2.0,
    maximum: std::time::Duration::from_secs(10),
    jitter: 0.3,
    max_attempts: 8,
};

/// `read`, tried again while it fails in a way another attempt may fix (a dropped
/// connection, an overloaded or unavailable server), up to the backoff's attempts.
pub(crate) async fn retry_reads<R, F>(
    backoff: &Backoff,
    read: impl Fn() -> F,
) -> crate::error::Result<R>
where
    F: std::future::Future<Output = firestore::FirestoreResult<R>>,
{
    let mut attempts = 0;
    loop {
        attempts += 1;
        match read().await {
            Ok(value) => return Ok(value),
            Err(err) if attempts < backoff.max_attempts && transient(&err) => {
                tracing::debug!(%err, attempts, "sharded: a read failed; trying again");
                tokio::time::sleep(backoff.delay(attempts, StatusCode::Unavailable)).await;
            }
            Err(err) => return Err(err.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_follow_googles_constants() {
        let backoff = Backoff::default();
        let secs = |attempts| {
            backoff
                .base_delay(attempts, StatusCode::Unavailable)
                .as_secs_f64()
        };
        assert_eq!(secs(1), 1.0);
        assert_eq!(secs(2), 1.5);
        assert_eq!(secs(3), 2.25);
        assert_eq!(secs(30), 60.0);
        assert_eq!(
            backoff
                .base_delay(1, StatusCode::ResourceExhausted)
                .as_secs(),
            60
        );
        for _ in 0..1000 {
            let delay = backoff.delay(2, StatusCode::Aborted).as_secs_f64();
            assert!((1.05..=1.95).contains(&delay), "{delay}");
        }
    }
}
