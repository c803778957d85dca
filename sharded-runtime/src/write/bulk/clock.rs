//! Where the bulk writer and the resharding ramp read the time: the system's, or a virtual one
//! that tests move by sleeping.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A sleep on a [`Clock`].
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A monotonic clock with sleeps: time is a [`Duration`] since the clock's own start.
pub trait Clock: Debug + Send + Sync + 'static {
    /// The time since this clock started.
    fn now(&self) -> Duration;
    /// Completes once `duration` has passed on this clock.
    fn sleep(&self, duration: Duration) -> Sleep;
}

/// The system's monotonic clock, with tokio's timers.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    start: Instant,
}

impl SystemClock {
    /// A clock that starts now.
    pub fn new() -> Self {
        SystemClock {
            start: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// Virtual time for tests of schedules: it stands still until something sleeps on it, and a
/// sleep completes at once, moving the clock to its end. Clones share one time.
///
/// With it, a rate limiter or a ramp that would take hours runs in milliseconds, and the time
/// of every event is exact.
#[derive(Debug, Clone, Default)]
pub struct VirtualClock {
    now: Arc<Mutex<Duration>>,
}

impl VirtualClock {
    /// A clock at zero.
    pub fn new() -> Self {
        VirtualClock::default()
    }

    /// Moves the clock forward by `duration`.
    pub fn advance(&self, duration: Duration) {
        *self.now.lock().expect("clock lock") += duration;
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Duration {
        *self.now.lock().expect("clock lock")
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        let clock = self.clone();
        let until = self.now() + duration;
        // The clock moves when the sleep is polled, not when it is made: a sleep that loses a
        // `select!` leaves the time alone.
        Box::pin(async move {
            let mut now = clock.now.lock().expect("clock lock");
            if *now < until {
                *now = until;
            }
        })
    }
}
