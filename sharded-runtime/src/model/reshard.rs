//! Changing a live collection's shard set: which values writes draw while the set changes,
//! and how fast writes move to new values.
//!
//! While a type declares `previous(...)`, queries read the current and the previous values
//! and writes draw only current ones. Values that are new to the set are new, unsplit key
//! ranges in every composite index; Firestore's best practices warn that moving writes onto
//! a new range all at once makes it the next hotspot, and give the rule for ramping up
//! ("500/50/5"). So new values get a share of the writes that follows that rule:
//!
//! - the new values together start with 500 writes/s out of the 500 per previous value the
//!   collection was sized for, a share of 1 / (previous values);
//! - their share grows by half every 5 minutes,
//! - until it is their full, even share: (new values) / (current values).
//!
//! Growing from 3 to 6 values: the new three take 1/3 of the writes for the first 5 minutes,
//! then 1/2, their full share. From 3 to 30: 1/3, 1/2, 3/4, then 9/10 after 15 minutes.
//!
//! The schedule starts at `previous(since = "...")`, an RFC 3339 time declared on the type,
//! so that every process follows the same one. Before that time, writes draw only previous
//! values, as the type before the change did: a process still running the old type (a
//! rolling deploy) reads every document written meanwhile. Without `since`, the schedule
//! starts when this process first draws a shard for the type (each type its own), and
//! restarts with every process: slower, never faster.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use rand::Rng;

use crate::model::shard::draw_shard;
use crate::model::sharded::Sharded;
use crate::model::throttling::Throttling;

/// The writes per second one shard value takes: Firestore's limit for a sequentially indexed
/// range, which the shard count was sized by.
pub const WRITES_PER_SHARD: f64 = 500.0;

/// The ramp new shard values follow: Google's "500/50/5".
pub const NEW_VALUES_RAMP: Throttling = Throttling::Ramp {
    initial: WRITES_PER_SHARD,
    growth: 1.5,
    interval: Duration::from_secs(5 * 60),
    maximum: f64::INFINITY,
};

/// The share of `T`'s writes that go to its new shard values (current ones that are not
/// among the previous), `elapsed` after the resharding started: 0 when nothing is new, 1
/// when nothing is kept.
#[doc(hidden)] // A test hook: the tests drive the ramp through it.
pub fn new_values_share<T: Sharded>(elapsed: Duration) -> f64 {
    share(
        T::NEW_SHARD_VALUES.len(),
        T::KEPT_SHARD_VALUES.len(),
        T::PREVIOUS_SHARD_VALUES.len(),
        elapsed,
    )
}

fn share(new: usize, kept: usize, previous: usize, elapsed: Duration) -> f64 {
    if new == 0 {
        return 0.0;
    }
    if kept == 0 || previous == 0 {
        return 1.0;
    }
    let full = new as f64 / (new + kept) as f64;
    let rate = NEW_VALUES_RAMP.rate_at(elapsed).unwrap_or(f64::INFINITY);
    (rate / (WRITES_PER_SHARD * previous as f64)).min(full)
}

/// A shard value for a write of `T`, `elapsed` after the resharding started, or before it
/// started (`None`: only previous values, which readers of the type before the change know).
/// Ignored when `T` declares no previous set.
#[doc(hidden)] // A test hook: the tests drive the ramp through it.
pub fn draw_at<T: Sharded>(elapsed: Option<Duration>) -> &'static str {
    if T::PREVIOUS_SHARD_VALUES.is_empty() || T::NEW_SHARD_VALUES.is_empty() {
        return draw_shard(T::KEPT_SHARD_VALUES);
    }
    let Some(elapsed) = elapsed else {
        return draw_shard(T::PREVIOUS_SHARD_VALUES);
    };
    let from_new = T::KEPT_SHARD_VALUES.is_empty()
        || rand::rng().random_bool(new_values_share::<T>(elapsed).clamp(0.0, 1.0));
    draw_shard(if from_new {
        T::NEW_SHARD_VALUES
    } else {
        T::KEPT_SHARD_VALUES
    })
}

/// A shard value for a write of `T` now.
pub(crate) fn draw<T: Sharded>() -> &'static str {
    if T::PREVIOUS_SHARD_VALUES.is_empty() {
        return draw_shard(T::SHARD_VALUES);
    }
    draw_at::<T>(elapsed::<T>())
}

/// How long `T`'s resharding has been going now; `None` before its declared `since`.
pub fn elapsed<T: Sharded>() -> Option<Duration> {
    match T::RESHARD_SINCE {
        Some(_) => elapsed_at::<T>(SystemTime::now()),
        None => Some(first_draw::<T>().elapsed()),
    }
}

/// How long `T`'s resharding has been going at `now`, by its declared `since`: `None` before
/// it. Without `since`, since this process first drew a shard for `T`.
#[doc(hidden)] // A test hook: the tests drive the ramp through it.
pub fn elapsed_at<T: Sharded>(now: SystemTime) -> Option<Duration> {
    match T::RESHARD_SINCE {
        Some(since) => now
            .duration_since(SystemTime::UNIX_EPOCH + Duration::from_secs(since))
            .ok(),
        None => Some(first_draw::<T>().elapsed()),
    }
}

/// When this process first drew a shard for `T`: each type's schedule its own.
fn first_draw<T: Sharded>() -> Instant {
    static FIRST_DRAWS: OnceLock<Mutex<HashMap<TypeId, Instant>>> = OnceLock::new();
    *FIRST_DRAWS
        .get_or_init(Mutex::default)
        .lock()
        .expect("first draws lock")
        .entry(TypeId::of::<T>())
        .or_insert_with(Instant::now)
}

#[cfg_attr(not(feature = "jobs"), allow(dead_code))]
/// Whether `T` is moving onto new shard values whose schedule has not started: before its
/// `since`, nothing may be written to them, so a rebalance would have nothing to move to.
pub(crate) fn not_started<T: Sharded>() -> Option<SystemTime> {
    let since = T::RESHARD_SINCE?;
    (!T::NEW_SHARD_VALUES.is_empty() && elapsed::<T>().is_none())
        .then(|| SystemTime::UNIX_EPOCH + Duration::from_secs(since))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    #[test]
    fn new_values_follow_500_50_5_up_to_their_share() {
        // 3 → 6: a third of the writes, then a half.
        assert_eq!(share(3, 3, 3, Duration::ZERO), 1.0 / 3.0);
        assert_eq!(share(3, 3, 3, 4 * MINUTE), 1.0 / 3.0);
        assert_eq!(share(3, 3, 3, 5 * MINUTE), 0.5);
        assert_eq!(share(3, 3, 3, 500 * MINUTE), 0.5);
        // 3 → 30: 1/3, 1/2, 3/4, 9/10.
        let steps: Vec<f64> = (0..5).map(|k| share(27, 3, 3, k * 5 * MINUTE)).collect();
        assert_eq!(steps, [1.0 / 3.0, 0.5, 0.75, 0.9, 0.9]);
        // Nothing new, nothing kept.
        assert_eq!(share(0, 3, 6, Duration::ZERO), 0.0);
        assert_eq!(share(3, 0, 3, Duration::ZERO), 1.0);
    }
}
