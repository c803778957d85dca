//! A `FirestoreTimestamp` field stored without a heap string and a general-purpose parse.
//!
//! The firestore crate stores a `FirestoreTimestamp` by formatting the instant to an RFC 3339
//! string on the heap and parsing it back with a general parser: a struct of one such field
//! took 185–195 ns to serialize against 90 ns for one `String` field (a one-off probe; about a
//! sixth of a recipe instrument's serialization). A document's
//! top-level field is first offered to [`stored_timestamp`]: the text goes to a buffer on the
//! stack and the exact form the instant prints (`YYYY-MM-DDTHH:MM:SS[.f…]Z`) is read back
//! directly. Anything else (another shape, another form of the text, a year out of the fast
//! range) is left to the firestore crate, so every value is stored exactly as it stores it;
//! the tests hold the two to the same result.

use std::fmt::{self, Display, Write as _};

use firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};
use firestore::gcloud_sdk::prost_types::Timestamp;
use serde::ser::{Serialize, Serializer};

use crate::declined::Declined;

/// The newtype name the firestore crate stores as a timestamp (`FirestoreTimestamp` and
/// `#[serde(with = "firestore::serialize_as_timestamp")]`).
const TIMESTAMP_TAG: &str = "FirestoreTimestamp";

/// `value` as a timestamp, when it is a timestamp in the form the fast path reads; `None`
/// otherwise, and the caller serializes it the firestore crate's way.
pub(super) fn stored_timestamp<V: Serialize + ?Sized>(value: &V) -> Option<Value> {
    value.serialize(Probe::Field).ok()
}

/// A field's value (`Field`): a timestamp newtype, possibly in an `Option`, or declined; and
/// the inside of that newtype (`Text`): the instant's text, as the firestore crate's timestamp
/// serializer takes it (through an `Option` or a newtype too).
#[derive(Clone, Copy, PartialEq)]
enum Probe {
    Field,
    Text,
}

impl Serializer for Probe {
    type Ok = Value;
    // Not read here: left to the firestore crate.
    type Error = Declined;

    fn serialize_some<V: Serialize + ?Sized>(self, value: &V) -> Result<Value, Declined> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &V,
    ) -> Result<Value, Declined> {
        match self {
            Probe::Field if name != TIMESTAMP_TAG => Err(Declined),
            _ => value.serialize(Probe::Text),
        }
    }

    fn serialize_str(self, text: &str) -> Result<Value, Declined> {
        match self {
            Probe::Field => Err(Declined),
            Probe::Text => timestamp_value(text.as_bytes()),
        }
    }

    fn collect_str<T: Display + ?Sized>(self, value: &T) -> Result<Value, Declined> {
        if self == Probe::Field {
            return Err(Declined);
        }
        let mut text = StackText::default();
        write!(text, "{value}").map_err(|_| Declined)?;
        timestamp_value(&text.bytes[..text.len])
    }

    declines_all_but_strings!();
}

fn timestamp_value(text: &[u8]) -> Result<Value, Declined> {
    let timestamp = parse_utc(text).ok_or(Declined)?;
    Ok(Value {
        value_type: Some(ValueType::TimestampValue(timestamp)),
    })
}

/// The longest text the fast path reads: `YYYY-MM-DDTHH:MM:SS.fffffffffZ`.
const LONGEST: usize = 30;

/// Text formatted on the stack; longer text is not a form the fast path reads.
#[derive(Default)]
struct StackText {
    bytes: [u8; LONGEST],
    len: usize,
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.bytes
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z`, a valid date and time with a year in 0000–9998 (inside
/// the range of the firestore crate's instant), as protobuf's timestamp: seconds since the
/// epoch rounded down, nanoseconds in 0..1e9. `None` for any other text, which
/// `FirestoreInstant`'s parser then reads (or refuses) instead.
pub(super) fn parse_utc(text: &[u8]) -> Option<Timestamp> {
    if text.len() < 20
        || text[4] != b'-'
        || text[7] != b'-'
        || text[10] != b'T'
        || text[13] != b':'
        || text[16] != b':'
        || text[text.len() - 1] != b'Z'
    {
        return None;
    }
    let year = digits(&text[0..4])?;
    let month = digits(&text[5..7])?;
    let day = digits(&text[8..10])?;
    let hour = digits(&text[11..13])?;
    let minute = digits(&text[14..16])?;
    let second = digits(&text[17..19])?;
    let nanos = match &text[19..text.len() - 1] {
        [] => 0,
        [b'.', fraction @ ..] if (1..=9).contains(&fraction.len()) => {
            digits(fraction)? * 10u32.pow(9 - fraction.len() as u32)
        }
        _ => return None,
    };
    if year > 9998
        || !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let seconds =
        days_from_civil(year, month, day) * 86_400 + i64::from(hour * 3600 + minute * 60 + second);
    Some(Timestamp {
        seconds,
        nanos: nanos as i32,
    })
}

fn digits(text: &[u8]) -> Option<u32> {
    text.iter().try_fold(0u32, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
    })
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`, for years from 0).
fn days_from_civil(year: u32, month: u32, day: u32) -> i64 {
    let year = i64::from(year) - i64::from(month <= 2);
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use serde::Serialize;

    use super::*;
    use firestore::{FirestoreInstant, FirestoreTimestamp, FirestoreValue};

    /// What the firestore crate stores for the instant `text` names.
    fn firestore_parse(text: &str) -> Option<Timestamp> {
        text.parse::<FirestoreInstant>()
            .ok()
            .map(firestore::timestamp_utils::to_timestamp)
    }

    fn firestore_value<V: Serialize>(value: &V) -> Value {
        <FirestoreValue as From<&V>>::from(value).value
    }

    /// Instants across the whole range the firestore crate's instant holds.
    fn instant(rng: &mut StdRng) -> FirestoreInstant {
        let min = FirestoreInstant::MIN.as_second();
        let max = FirestoreInstant::MAX.as_second();
        let nanos = match rng.random_range(0..4) {
            0 => 0,
            1 => rng.random_range(0..1_000) * 1_000_000,
            2 => rng.random_range(0..1_000_000) * 1_000,
            _ => rng.random_range(0..1_000_000_000),
        };
        let seconds = match rng.random_range(0..3) {
            0 => rng.random_range(min..max),
            1 => rng.random_range(-100_000_000_000i64..100_000_000_000),
            _ => rng.random_range(-2_000_000..2_000_000),
        };
        FirestoreInstant::new(seconds, nanos).unwrap_or(FirestoreInstant::UNIX_EPOCH)
    }

    #[test]
    fn reads_every_instant_as_the_firestore_crate_does() {
        let mut rng = StdRng::seed_from_u64(19);
        let mut fast = 0;
        for _ in 0..200_000 {
            let instant = instant(&mut rng);
            let text = instant.to_string();
            let expected = firestore_parse(&text);
            assert!(expected.is_some(), "{text}");
            if let Some(read) = parse_utc(text.as_bytes()) {
                assert_eq!(Some(read), expected, "{text}");
                fast += 1;
            }
        }
        // Every year from 0 to 9998 is read on the fast path; the rest of the range is not.
        assert!(fast > 100_000, "{fast}");
    }

    /// Texts near the form, one byte changed or cut: the fast path reads a text only when
    /// the firestore crate reads it to the same instant.
    #[test]
    fn reads_no_text_the_firestore_crate_reads_otherwise() {
        let mut rng = StdRng::seed_from_u64(20);
        const BYTES: &[u8] = b"0123456789-T:.Zzt +,";
        let mut fast = 0;
        for _ in 0..200_000 {
            let mut text = instant(&mut rng).to_string().into_bytes();
            for _ in 0..rng.random_range(0..3) {
                match rng.random_range(0..3) {
                    0 if !text.is_empty() => {
                        let at = rng.random_range(0..text.len());
                        text[at] = BYTES[rng.random_range(0..BYTES.len())];
                    }
                    1 if !text.is_empty() => {
                        text.remove(rng.random_range(0..text.len()));
                    }
                    _ => text.insert(
                        rng.random_range(0..=text.len()),
                        BYTES[rng.random_range(0..BYTES.len())],
                    ),
                }
            }
            let text = String::from_utf8(text).unwrap();
            if let Some(read) = parse_utc(text.as_bytes()) {
                assert_eq!(Some(read), firestore_parse(&text), "{text}");
                fast += 1;
            }
        }
        assert!(fast > 10_000, "{fast}");
    }

    #[test]
    fn leap_seconds_and_invalid_dates_are_left_to_the_firestore_crate() {
        for text in [
            "2016-12-31T23:59:60Z",
            "2023-02-29T00:00:00Z",
            "2024-02-30T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-00-01T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "9999-12-30T22:00:00Z",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T00:00:00.1234567890Z",
            "2024-01-01t00:00:00Z",
            "2024-01-01T00:00:00+00:00",
        ] {
            assert_eq!(parse_utc(text.as_bytes()), None, "{text}");
        }
        assert_eq!(
            parse_utc(b"2024-02-29T12:34:56.5Z"),
            firestore_parse("2024-02-29T12:34:56.5Z")
        );
        assert_eq!(
            parse_utc(b"0000-01-01T00:00:00Z"),
            firestore_parse("0000-01-01T00:00:00Z")
        );
    }

    #[derive(Serialize)]
    struct Tagged {
        #[serde(with = "firestore::serialize_as_timestamp")]
        at: FirestoreInstant,
    }

    #[derive(Serialize)]
    struct Wrapped(FirestoreTimestamp);

    #[test]
    fn a_timestamp_field_is_stored_as_the_firestore_crate_stores_it() {
        let mut rng = StdRng::seed_from_u64(21);
        for _ in 0..10_000 {
            let instant = instant(&mut rng);
            let timestamp = FirestoreTimestamp(instant);
            let expected = firestore_value(&timestamp);
            let text = instant.to_string();
            match stored_timestamp(&timestamp) {
                Some(value) => assert_eq!(value, expected, "{text}"),
                // Only years outside 0000–9998 are left to the firestore crate.
                None => assert!(
                    text.starts_with(['-', '+']) || text.starts_with("9999"),
                    "{text}"
                ),
            }
            assert_eq!(
                stored_timestamp(&Some(timestamp)),
                stored_timestamp(&timestamp)
            );
        }
        let now = FirestoreInstant::now();
        let tagged = Tagged { at: now };
        let by_attribute = {
            let document = firestore::firestore_document_from_serializable("", &tagged).unwrap();
            document.fields["at"].clone()
        };
        assert_eq!(
            stored_timestamp(&FirestoreTimestamp(now)),
            Some(by_attribute)
        );
        // Other shapes, other newtypes, `None`: declined.
        assert_eq!(stored_timestamp(&None::<FirestoreTimestamp>), None);
        assert_eq!(stored_timestamp(&Wrapped(FirestoreTimestamp(now))), None);
        assert_eq!(stored_timestamp(&now), None);
        assert_eq!(stored_timestamp("2024-01-01T00:00:00Z"), None);
        assert_eq!(stored_timestamp(&7), None);
    }
}
