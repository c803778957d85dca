//! Which Rust types a sharded collection can order by.

use std::fmt::Debug;

use firestore::FirestoreValue;
use firestore::gcloud_sdk::google::firestore::v1::Value;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A type whose stored Firestore value orders the way sharded's merge of chunk queries orders
/// it, so that a sharded query can return exactly what the unsharded query returns. The derive
/// requires it of the `order_by` field's type, and of a `#[sharded(range)]` field's (or the
/// type inside its `Option`), by which a filtered query orders next: a type alias, a wrapper
/// or a user struct that does not implement it is a compile error on that field's type.
///
/// Implemented for the types whose stored value is a scalar Firestore can range over:
///
/// | Rust type | stored as |
/// |---|---|
/// | [`FirestoreTimestamp`](firestore::FirestoreTimestamp), [`SystemTime`](std::time::SystemTime) | a timestamp (microseconds) |
/// | `i8`, `i16`, `i32`, `i64`, `isize`, `u8`, `u16`, `u32` | an integer |
/// | `f32`, `f64` | a double (NaN sorts first, `-0.0` equals `0.0`) |
/// | `String`, `char` | a string, ordered by its first 1,500 UTF-8 bytes, as Firestore does |
/// | `bool` | a boolean |
///
/// Not implemented, because the stored value would mis-sort or could not be ranged over:
/// `u64`/`usize` (values above `i64::MAX` are stored wrapped to negative numbers), `Option`
/// (`None` is not stored, so the document would drop out of every query), `chrono::DateTime`
/// and `FirestoreInstant` without a serde adapter (stored as RFC 3339 strings, which sort
/// wrongly when fraction digits differ), collections, maps and structs.
///
/// A newtype may implement it when it serializes and deserializes exactly as one of the
/// types above (a cursor token's value is checked by reading it back as the type; for
/// example `#[serde(transparent)] struct Millis(i64);`):
///
/// ```
/// # use serde::{Deserialize, Serialize};
/// #[derive(Clone, Debug, Serialize, Deserialize)]
/// #[serde(transparent)]
/// struct Millis(i64);
///
/// impl sharded_runtime::reads::OrderKey for Millis {}
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot order a sharded query (as its `order_by` field or a `range` field)",
    label = "its stored Firestore value does not order like a sharded query's merge orders it",
    note = "order (and filter by range) by `FirestoreTimestamp`, `SystemTime`, an integer that fits `i64`, `f64`, `String` or `bool`",
    note = "`Option` is not stored when `None`, `u64` wraps above `i64::MAX`, `chrono::DateTime` and `FirestoreInstant` are stored as strings, and collections, maps and structs cannot be ranged over",
    note = "a newtype that serializes exactly as one of those types can `impl sharded_runtime::reads::OrderKey`"
)]
pub trait OrderKey: Serialize + DeserializeOwned + Clone + Debug + Send + Sync + 'static {}

/// Whether `value` is a stored value of the order field type `V`: it reads as a `V` and that
/// `V` is stored as the same value (by Firestore's order, so a NaN is itself). A cursor
/// token's value is checked so: a string on a timestamp field would otherwise start a page
/// at the first document, or past the last.
pub(crate) fn is_stored_as<V: OrderKey>(value: &Value) -> bool {
    let Ok(read) = V::deserialize(FirestoreValue {
        value: value.clone(),
    }) else {
        return false;
    };
    let stored = <FirestoreValue as From<&V>>::from(&read).value;
    crate::model::value_order::compare_values(&stored, value) == std::cmp::Ordering::Equal
}

macro_rules! order_keys {
    ($($ty:ty),* $(,)?) => {
        $(impl OrderKey for $ty {})*
    };
}

order_keys!(
    firestore::FirestoreTimestamp,
    std::time::SystemTime,
    i8,
    i16,
    i32,
    i64,
    isize,
    u8,
    u16,
    u32,
    f32,
    f64,
    String,
    char,
    bool,
);

/// The order value of a type whose `order_by` did not validate: its error is reported, and
/// this keeps the rest of the user's code type-checking.
#[doc(hidden)]
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct NoOrderField;

impl OrderKey for NoOrderField {}

/// What a bound of [`ShardedQuery::range`](crate::query::ShardedQuery::range) may be given as, for
/// an order field of type `V`: a `V`, or a type that converts into it with nothing to choose.
/// The conversions are `&str` and `&String` into `String`, `f32` into `f64`, a narrower
/// integer into a wider signed one, and `jiff::Timestamp` into `FirestoreTimestamp`.
///
/// None converts into an unsigned type, so that an integer literal takes the field's own type
/// (`range(10..20)` on a `u32` field); give an unsigned bound in that type.
#[diagnostic::on_unimplemented(
    message = "a range bound of type `{Self}` cannot be compared with the order field's `{V}`",
    label = "not a `{V}`",
    note = "give the bounds as `{V}`: a range of the order field's own type"
)]
pub trait OrderBound<V> {
    /// The bound as the order field's type.
    fn into_order_value(self) -> V;
}

impl<V> OrderBound<V> for V {
    fn into_order_value(self) -> V {
        self
    }
}

impl OrderBound<String> for &str {
    fn into_order_value(self) -> String {
        self.to_owned()
    }
}

impl OrderBound<String> for &String {
    fn into_order_value(self) -> String {
        self.clone()
    }
}

impl OrderBound<f64> for f32 {
    fn into_order_value(self) -> f64 {
        f64::from(self)
    }
}

impl OrderBound<firestore::FirestoreTimestamp> for firestore::jiff::Timestamp {
    fn into_order_value(self) -> firestore::FirestoreTimestamp {
        self.into()
    }
}

/// Widenings into a signed integer type, which no literal needs to choose among.
macro_rules! widen {
    ($($to:ty: $($from:ty),*;)*) => {$($(
        impl OrderBound<$to> for $from {
            fn into_order_value(self) -> $to {
                <$to>::from(self)
            }
        }
    )*)*};
}

widen! {
    i16: i8, u8;
    i32: i8, i16, u8, u16;
    i64: i8, i16, i32, u8, u16, u32;
}

#[cfg(test)]
mod tests {
    use firestore::gcloud_sdk::google::firestore::v1::value::ValueType;
    use firestore::gcloud_sdk::prost_types::Timestamp;

    use super::*;

    fn stored<V: Serialize>(value: &V) -> Value {
        <FirestoreValue as From<&V>>::from(value).value
    }

    fn value(value_type: ValueType) -> Value {
        Value {
            value_type: Some(value_type),
        }
    }

    /// Every order key type takes its own stored values, edge values included, and refuses
    /// values of other kinds, and integers out of its range.
    #[test]
    fn order_values_are_checked_against_the_order_field_type() {
        let string = value(ValueType::StringValue("2024-01-01T00:00:00Z".into()));
        let integer = value(ValueType::IntegerValue(7));
        let double = value(ValueType::DoubleValue(1.5));
        let boolean = value(ValueType::BooleanValue(true));
        let timestamp = value(ValueType::TimestampValue(Timestamp {
            seconds: 1_700_000_000,
            nanos: 123_456_000,
        }));
        let null = value(ValueType::NullValue(0));

        assert!(is_stored_as::<firestore::FirestoreTimestamp>(&timestamp));
        assert!(is_stored_as::<std::time::SystemTime>(&timestamp));
        for timestamp_type in [
            is_stored_as::<firestore::FirestoreTimestamp> as fn(&Value) -> bool,
            is_stored_as::<std::time::SystemTime>,
        ] {
            for other in [&string, &integer, &double, &boolean, &null] {
                assert!(!timestamp_type(other), "{other:?}");
            }
        }

        for i in [i64::MIN, -1, 0, 7, i64::MAX] {
            assert!(is_stored_as::<i64>(&stored(&i)), "{i}");
        }
        assert!(is_stored_as::<i32>(&stored(&i32::MIN)));
        assert!(!is_stored_as::<i32>(&stored(&(i64::from(i32::MAX) + 1))));
        assert!(!is_stored_as::<u8>(&stored(&-1i64)));
        assert!(is_stored_as::<u32>(&stored(&u32::MAX)));
        for other in [&string, &double, &boolean, &timestamp, &null] {
            assert!(!is_stored_as::<i64>(other), "{other:?}");
        }

        for d in [f64::NAN, f64::NEG_INFINITY, -0.0, 1.5, f64::MAX] {
            assert!(is_stored_as::<f64>(&stored(&d)), "{d}");
        }
        assert!(is_stored_as::<f32>(&stored(&1.5f32)));
        for other in [&string, &boolean, &timestamp, &null] {
            assert!(!is_stored_as::<f64>(other), "{other:?}");
        }

        for s in ["", "a", "日本", "2024-01-01T00:00:00Z"] {
            assert!(is_stored_as::<String>(&stored(&s)), "{s}");
        }
        assert!(is_stored_as::<char>(&stored(&'x')));
        assert!(!is_stored_as::<char>(&stored(&"xy")));
        for other in [&integer, &double, &boolean, &timestamp, &null] {
            assert!(!is_stored_as::<String>(other), "{other:?}");
        }

        assert!(is_stored_as::<bool>(&boolean));
        for other in [&string, &integer, &double, &timestamp, &null] {
            assert!(!is_stored_as::<bool>(other), "{other:?}");
        }
    }
}
