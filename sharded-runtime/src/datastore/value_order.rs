//! Datastore mode's order of values, which is not Native mode's: the merge of a sharded
//! query's chunks compares in it, so that the merged results come in the order the same query
//! on an unsharded kind returns them.
//!
//! Measured on the emulator in Datastore mode with Google's Python client and kept as a test
//! (`tests/tests/suite/datastore_mode.rs`, `datastore_orders_values_as_measured`): null, then
//! integers and timestamps together (a timestamp as its microseconds since the epoch), then
//! booleans, then strings and blobs together by their bytes, then doubles (−0.0 before 0.0,
//! NaN after +∞), then geo points (latitude, then longitude), then keys. Native mode instead
//! orders booleans first, numbers as one type with NaN first and −0.0 equal to 0.0, and
//! strings apart from bytes.

use std::cmp::Ordering;

use firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};

/// Where a value's type sorts among the others.
fn rank(value: &ValueType) -> u8 {
    use ValueType::*;
    match value {
        NullValue(_) => 0,
        IntegerValue(_) | TimestampValue(_) => 1,
        BooleanValue(_) => 2,
        StringValue(_) | BytesValue(_) => 3,
        DoubleValue(_) => 4,
        GeoPointValue(_) => 5,
        ReferenceValue(_) => 6,
        // Lists and embedded entities are no order values of a sharded type; kept apart.
        ArrayValue(_) => 7,
        _ => 8,
    }
}

/// Compares two values (as Firestore values: a blob as bytes, a key as a reference) as
/// Datastore mode orders them: the order a sharded kind's chunks merge in.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    crate::model::value_order::compare_present(a, b, compare_types)
}

fn compare_types(a: &ValueType, b: &ValueType) -> Ordering {
    use ValueType::*;
    rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
        (BooleanValue(a), BooleanValue(b)) => a.cmp(b),
        (IntegerValue(_) | TimestampValue(_), IntegerValue(_) | TimestampValue(_)) => {
            fixed_point(a).cmp(&fixed_point(b))
        }
        (StringValue(_) | BytesValue(_), StringValue(_) | BytesValue(_)) => bytes(a).cmp(bytes(b)),
        (DoubleValue(a), DoubleValue(b)) => compare_doubles(*a, *b),
        (GeoPointValue(a), GeoPointValue(b)) => compare_doubles(a.latitude, b.latitude)
            .then_with(|| compare_doubles(a.longitude, b.longitude)),
        (ReferenceValue(a), ReferenceValue(b)) => {
            crate::model::value_order::compare_references(a, b)
        }
        (ArrayValue(a), ArrayValue(b)) => a
            .values
            .iter()
            .zip(&b.values)
            .map(|(x, y)| compare_values(x, y))
            .find(|ord| ord.is_ne())
            .unwrap_or_else(|| a.values.len().cmp(&b.values.len())),
        _ => Ordering::Equal,
    })
}

/// An integer, or a timestamp as its microseconds since the epoch: Datastore's "fixed-point
/// numbers", one type in its order.
fn fixed_point(value: &ValueType) -> i128 {
    match value {
        ValueType::IntegerValue(n) => i128::from(*n),
        ValueType::TimestampValue(t) => {
            i128::from(t.seconds) * 1_000_000 + i128::from(t.nanos / 1_000)
        }
        _ => 0,
    }
}

fn bytes(value: &ValueType) -> &[u8] {
    match value {
        ValueType::StringValue(s) => s.as_bytes(),
        ValueType::BytesValue(b) => b,
        _ => &[],
    }
}

/// By value with −0.0 before 0.0, and NaN (whatever its sign) after +∞.
fn compare_doubles(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.total_cmp(&b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use firestore::gcloud_sdk::prost_types::Timestamp;

    fn v(value: ValueType) -> Value {
        Value {
            value_type: Some(value),
        }
    }

    #[test]
    fn values_order_as_datastore_mode_orders_them() {
        use ValueType::*;
        let at = |seconds, nanos| TimestampValue(Timestamp { seconds, nanos });
        let ascending = [
            v(NullValue(0)),
            v(IntegerValue(i64::MIN)),
            v(at(0, 1_000)),
            v(IntegerValue(3)),
            v(at(1_577_836_800, 0)),
            v(IntegerValue(1_000_000_000_000_000_000)),
            v(BooleanValue(false)),
            v(BooleanValue(true)),
            v(BytesValue(vec![0])),
            v(StringValue("a".into())),
            v(BytesValue(b"ab".to_vec())),
            v(StringValue("é".into())),
            v(BytesValue(vec![0xff])),
            v(DoubleValue(f64::NEG_INFINITY)),
            v(DoubleValue(-0.0)),
            v(DoubleValue(0.0)),
            v(DoubleValue(1.5)),
            v(DoubleValue(f64::INFINITY)),
            v(DoubleValue(f64::NAN)),
        ];
        for (i, a) in ascending.iter().enumerate() {
            for (j, b) in ascending.iter().enumerate() {
                assert_eq!(compare_values(a, b), i.cmp(&j), "{a:?} against {b:?}");
            }
        }
        // A string and a blob of the same bytes tie: the key decides.
        assert_eq!(
            compare_values(&v(StringValue("a".into())), &v(BytesValue(b"a".to_vec()))),
            Ordering::Equal
        );
        assert_eq!(
            compare_values(&v(DoubleValue(f64::NAN)), &v(DoubleValue(-f64::NAN))),
            Ordering::Equal
        );
    }
}
