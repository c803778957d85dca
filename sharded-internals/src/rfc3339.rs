//! `previous(since = "...")`: an RFC 3339 time, read at compile time into Unix seconds.

/// Seconds since the Unix epoch of `text`, an RFC 3339 date-time such as
/// `2026-11-22T19:00:00Z` or `2026-11-22T20:00:00+01:00` (fractions of a second are dropped).
pub fn unix_seconds(text: &str) -> Result<u64, String> {
    let bytes = text.as_bytes();
    let number = |range: std::ops::Range<usize>| -> Result<i64, String> {
        text.get(range.clone())
            .filter(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|digits| digits.parse().ok())
            .ok_or_else(|| format!("expected digits at byte {}", range.start))
    };
    let separator = |at: usize, expected: &[u8]| -> Result<(), String> {
        match bytes.get(at) {
            Some(b) if expected.contains(b) => Ok(()),
            _ => Err(format!("expected `{}` at byte {at}", expected[0] as char)),
        }
    };
    let year = number(0..4)?;
    separator(4, b"-")?;
    let month = number(5..7)?;
    separator(7, b"-")?;
    let day = number(8..10)?;
    separator(10, b"Tt ")?;
    let hour = number(11..13)?;
    separator(13, b":")?;
    let minute = number(14..16)?;
    separator(16, b":")?;
    let second = number(17..19)?;
    let mut at = 19;
    if bytes.get(at) == Some(&b'.') {
        at += 1;
        let digits = bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if digits == 0 {
            return Err("expected digits after `.`".into());
        }
        at += digits;
    }
    let offset = match bytes.get(at) {
        Some(b'Z' | b'z') if at + 1 == bytes.len() => 0,
        Some(sign @ (b'+' | b'-')) if at + 6 == bytes.len() => {
            separator(at + 3, b":")?;
            let minutes = number(at + 1..at + 3)? * 60 + number(at + 4..at + 6)?;
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return Err("expected `Z` or an offset such as `+01:00` at the end".into()),
    };
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => return Err(format!("month {month} does not exist")),
    };
    if !(1..=days_in_month).contains(&day) {
        return Err(format!("day {day} does not exist in month {month}"));
    }
    if hour > 23 || minute > 59 || second > 60 {
        return Err("the time of day is out of range".into());
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second
        - offset * 60;
    u64::try_from(seconds).map_err(|_| "the time is before 1970".into())
}

/// Days from 1970-01-01 to `year-month-day` in the proleptic Gregorian calendar (Howard
/// Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::unix_seconds;

    #[test]
    fn reads_utc_and_offsets() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(unix_seconds("2026-11-22T19:00:00Z"), Ok(1_795_374_000));
        assert_eq!(unix_seconds("2026-11-22T20:00:00+01:00"), Ok(1_795_374_000));
        assert_eq!(unix_seconds("2026-11-22T19:00:00.250Z"), Ok(1_795_374_000));
        assert_eq!(unix_seconds("2000-02-29T00:00:00Z"), Ok(951_782_400));
        assert!(unix_seconds("2026-02-29T00:00:00Z").is_err());
        assert!(unix_seconds("2026-11-22 19:00").is_err());
        assert!(unix_seconds("2026-11-22T19:00:00").is_err());
        assert!(unix_seconds("1969-12-31T23:59:59Z").is_err());
    }
}
