//! Options are checked where they enter, each failure a typed error naming the option and
//! its range, so that no background task meets a value it cannot handle.

use std::time::Duration;

use crate::error::{Error, Result};

/// The longest `linger`, `request_timeout`, backoff wait or ramp interval a writer, a listener or a backoff accepts:
/// a day. Longer ones are mistakes, and would overflow deadlines.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 60 * 60);

/// `Ok` if `valid`, else the typed error naming `option` and its range.
pub(crate) fn check(valid: bool, option: &'static str, range: &'static str) -> Result<()> {
    if valid {
        Ok(())
    } else {
        Err(Error::InvalidOptions {
            option,
            expected: range,
        })
    }
}
