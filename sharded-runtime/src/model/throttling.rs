//! How fast writes may go: no limit, or Firestore's ramp-up rule for new key ranges
//! ("500/50/5"). The bulk writer throttles by it, and a reshard ramps new shard values by it.

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
        /// [`BulkWriterOptions::for_type`](crate::bulk::BulkWriterOptions::for_type) sets 500 per
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

/// The index of the ramp's interval `elapsed` falls in.
pub(crate) fn window(elapsed: Duration, interval: Duration) -> u64 {
    if interval.is_zero() {
        return 0;
    }
    (elapsed.as_nanos() / interval.as_nanos()) as u64
}
