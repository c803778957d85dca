//! Firestore's ordering of values, so results of several chunk queries merge in exactly the
//! order one query would have returned them.

use std::cmp::Ordering;

use firestore::gcloud_sdk::google::firestore::v1::{Document, Value, value::ValueType};
use sharded_indexes::Direction;

/// Firestore's type order: null < booleans < numbers < timestamps < strings < bytes <
/// references < geo points < arrays < vectors/maps. Within numbers, NaN sorts first and
/// integers compare with doubles by value.
fn type_rank(value: &ValueType) -> u8 {
    match value {
        ValueType::NullValue(_) => 0,
        ValueType::BooleanValue(_) => 1,
        ValueType::IntegerValue(_) | ValueType::DoubleValue(_) => 2,
        ValueType::TimestampValue(_) => 3,
        ValueType::StringValue(_) => 4,
        ValueType::BytesValue(_) => 5,
        ValueType::ReferenceValue(_) => 6,
        ValueType::GeoPointValue(_) => 7,
        ValueType::ArrayValue(_) => 8,
        ValueType::MapValue(_) => 9,
        #[allow(unreachable_patterns)]
        _ => 10,
    }
}

/// Compares two values the way Firestore orders them.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    compare_present(a, b, compare_types)
}

/// Two values by `types`, a value without a type first.
pub(crate) fn compare_present(
    a: &Value,
    b: &Value,
    types: fn(&ValueType, &ValueType) -> Ordering,
) -> Ordering {
    match (&a.value_type, &b.value_type) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => types(a, b),
    }
}

fn compare_types(a: &ValueType, b: &ValueType) -> Ordering {
    use ValueType::*;
    let by_rank = type_rank(a).cmp(&type_rank(b));
    if by_rank != Ordering::Equal {
        return by_rank;
    }
    match (a, b) {
        (BooleanValue(a), BooleanValue(b)) => a.cmp(b),
        (IntegerValue(a), IntegerValue(b)) => a.cmp(b),
        (DoubleValue(a), DoubleValue(b)) => compare_doubles(*a, *b),
        (IntegerValue(a), DoubleValue(b)) => compare_int_double(*a, *b),
        (DoubleValue(a), IntegerValue(b)) => compare_int_double(*b, *a).reverse(),
        (TimestampValue(a), TimestampValue(b)) => (a.seconds, a.nanos).cmp(&(b.seconds, b.nanos)),
        (StringValue(a), StringValue(b)) => indexed_string(a).cmp(&indexed_string(b)),
        (BytesValue(a), BytesValue(b)) => indexed_bytes(a).cmp(&indexed_bytes(b)),
        (ReferenceValue(a), ReferenceValue(b)) => compare_references(a, b),
        (GeoPointValue(a), GeoPointValue(b)) => compare_doubles(a.latitude, b.latitude)
            .then_with(|| compare_doubles(a.longitude, b.longitude)),
        (ArrayValue(a), ArrayValue(b)) => compare_lists(&a.values, &b.values),
        (MapValue(a), MapValue(b)) => {
            let mut a: Vec<_> = a.fields.iter().collect();
            let mut b: Vec<_> = b.fields.iter().collect();
            a.sort_by(|x, y| x.0.cmp(y.0));
            b.sort_by(|x, y| x.0.cmp(y.0));
            for ((ka, va), (kb, vb)) in a.iter().zip(&b) {
                let ord = ka.cmp(kb).then_with(|| compare_values(va, vb));
                if ord != Ordering::Equal {
                    return ord;
                }
            }
            a.len().cmp(&b.len())
        }
        _ => Ordering::Equal,
    }
}

/// How many leading UTF-8 bytes of a string queries compare (measured on the emulator in
/// `tests/tests/suite/server_order.rs`, with and without other filters, for short and long field names
/// and filter values alike); also the longest string a filter takes.
pub const INDEXED_STRING_BYTES: usize = 1499;
/// The same for a bytes value: one byte more.
pub const INDEXED_BYTES_BYTES: usize = 1500;

/// A bytes value as queries compare it: a longer value is cut to its first 1,500 bytes and
/// marked as cut. Values compare by those bytes; at equal bytes a cut value sorts after a whole
/// one, and two cut values tie (then the document name decides).
fn indexed_bytes(value: &[u8]) -> (&[u8], bool) {
    (
        &value[..value.len().min(INDEXED_BYTES_BYTES)],
        value.len() > INDEXED_BYTES_BYTES,
    )
}

/// Whether the server takes `value` in a cursor: not a string longer than 1,499 bytes that is
/// compared whole, which it refuses as "too large" (a character across byte 1,499 ending the
/// string), nor an array or map holding one; a longer, cut string is taken, and so are bytes
/// of any length (measured in `tests/tests/suite/server_order.rs`, in every place of a cursor,
/// with and without an inequality, both directions).
pub fn usable_in_cursor(value: &Value) -> bool {
    match &value.value_type {
        Some(ValueType::StringValue(s)) => s.len() <= INDEXED_STRING_BYTES || indexed_string(s).1,
        Some(ValueType::ArrayValue(array)) => array.values.iter().all(usable_in_cursor),
        Some(ValueType::MapValue(map)) => map.fields.values().all(usable_in_cursor),
        _ => true,
    }
}

/// A string as queries compare it: as [`indexed_bytes`], at its first 1,499 UTF-8 bytes, and a
/// cut inside a character moves on to the character's end, so the kept UTF-8 is whole.
fn indexed_string(value: &str) -> (&[u8], bool) {
    let mut cut = INDEXED_STRING_BYTES.min(value.len());
    while !value.is_char_boundary(cut) {
        cut += 1;
    }
    (&value.as_bytes()[..cut], cut < value.len())
}

/// NaN first, then by value; -0.0 equals 0.0.
fn compare_doubles(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// An integer against a double by exact numeric value, as the server compares them.
fn compare_int_double(a: i64, b: f64) -> Ordering {
    // 2^63: the first double above every i64; -2^63 is i64::MIN exactly.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if b.is_nan() {
        return Ordering::Greater;
    }
    if b >= TWO_63 {
        return Ordering::Less;
    }
    if b < -TWO_63 {
        return Ordering::Greater;
    }
    // In range, so the truncation is exact; the fraction breaks a tie of the integer parts.
    let whole = b.trunc();
    a.cmp(&(whole as i64))
        .then_with(|| 0.0_f64.partial_cmp(&(b - whole)).unwrap_or(Ordering::Equal))
}

fn compare_lists(a: &[Value], b: &[Value]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let ord = compare_values(x, y);
        if ord != Ordering::Equal {
            return ord;
        }
    }
    a.len().cmp(&b.len())
}

/// Document names compare segment by segment: legacy numeric ids (`__id<N>__`, from
/// Datastore) first, by number, then string ids by UTF-8 bytes.
pub fn compare_references(a: &str, b: &str) -> Ordering {
    a.split('/')
        .map(Segment::of)
        .cmp(b.split('/').map(Segment::of))
}

/// A name segment as the server orders it; numeric ids sort before every string id.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum Segment<'a> {
    Numeric(i64),
    Text(&'a str),
}

impl<'a> Segment<'a> {
    fn of(segment: &'a str) -> Self {
        segment
            .strip_prefix("__id")
            .and_then(|rest| rest.strip_suffix("__"))
            .filter(|digits| {
                let digits = digits.strip_prefix('-').unwrap_or(digits);
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
            })
            .and_then(|digits| digits.parse().ok())
            .map_or(Segment::Text(segment), Segment::Numeric)
    }
}

/// The position of a document in a sharded query's order: (order field, document name).
pub fn compare_documents(
    a: &Document,
    b: &Document,
    order_field: &str,
    direction: Direction,
) -> Ordering {
    compare_documents_then(a, b, order_field, &[], direction, compare_values)
}

/// The position of a document in a sharded query's order with filters on other fields:
/// (order field, each of `then_by`, document name), all in `direction`, as Firestore orders
/// a query with inequalities on `then_by`.
pub(crate) fn compare_documents_then(
    a: &Document,
    b: &Document,
    order_field: &str,
    then_by: &[&str],
    direction: Direction,
    values: fn(&Value, &Value) -> Ordering,
) -> Ordering {
    let by = |field: &str| match (field_value(a, field), field_value(b, field)) {
        (Some(x), Some(y)) => values(x, y),
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
    };
    let ord = by(order_field)
        .then_with(|| {
            then_by
                .iter()
                .map(|field| by(field))
                .find(|ord| ord.is_ne())
                .unwrap_or(Ordering::Equal)
        })
        .then_with(|| compare_references(&a.name, &b.name));
    match direction {
        Direction::Ascending => ord,
        Direction::Descending => ord.reverse(),
    }
}

/// The value at a (possibly dotted, possibly backtick-quoted) field path.
pub fn field_value<'d>(document: &'d Document, path: &str) -> Option<&'d Value> {
    // Runs once per comparison in a merge: plain paths are split without allocating.
    if path.contains('`') {
        lookup(
            document,
            sharded_indexes::field_path::segments(path)
                .iter()
                .map(String::as_str),
        )
    } else {
        lookup(document, path.split('.'))
    }
}

fn lookup<'d, 'p>(
    document: &'d Document,
    mut segments: impl Iterator<Item = &'p str>,
) -> Option<&'d Value> {
    let mut value = document.fields.get(segments.next()?)?;
    for segment in segments {
        match &value.value_type {
            Some(ValueType::MapValue(map)) => value = map.fields.get(segment)?,
            _ => return None,
        }
    }
    Some(value)
}

/// `value` as Firestore stores it: a timestamp truncated to whole microseconds (in arrays and
/// maps too), so that a cursor at a value kept with nanoseconds (a `SystemTime`) starts where
/// the stored value does, not after the documents stored in the same microsecond.
pub(crate) fn stored_precision(mut value: Value) -> Value {
    match &mut value.value_type {
        Some(ValueType::TimestampValue(timestamp)) => {
            timestamp.nanos -= timestamp.nanos.rem_euclid(1_000);
        }
        Some(ValueType::ArrayValue(array)) => {
            array.values = std::mem::take(&mut array.values)
                .into_iter()
                .map(stored_precision)
                .collect();
        }
        Some(ValueType::MapValue(map)) => {
            for field in map.fields.values_mut() {
                *field = stored_precision(std::mem::take(field));
            }
        }
        _ => {}
    }
    value
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
    fn values_order_like_firestore() {
        use ValueType::*;
        let ascending = [
            v(NullValue(0)),
            v(BooleanValue(false)),
            v(BooleanValue(true)),
            v(DoubleValue(f64::NAN)),
            v(DoubleValue(-1.5)),
            v(IntegerValue(-1)),
            v(DoubleValue(0.5)),
            v(IntegerValue(1)),
            v(IntegerValue(i64::MAX)),
            v(TimestampValue(Timestamp {
                seconds: 1,
                nanos: 0,
            })),
            v(TimestampValue(Timestamp {
                seconds: 1,
                nanos: 1000,
            })),
            v(StringValue("B".into())),
            v(StringValue("a".into())),
            v(StringValue("é".into())),
            v(BytesValue(vec![0])),
            v(ReferenceValue(
                "projects/p/databases/d/documents/c/a".into(),
            )),
        ];
        for (i, a) in ascending.iter().enumerate() {
            for (j, b) in ascending.iter().enumerate() {
                assert_eq!(compare_values(a, b), i.cmp(&j), "{a:?} vs {b:?}");
            }
        }
        assert_eq!(
            compare_values(&v(IntegerValue(2)), &v(DoubleValue(2.0))),
            Ordering::Equal
        );
    }

    #[test]
    fn references_compare_by_segment() {
        // Byte-wise, "a-b" < "a/b"; by segment, "a" < "a-b".
        assert_eq!(compare_references("c/a/x", "c/a-b"), Ordering::Less);
        assert_eq!(compare_references("c/b", "c/a"), Ordering::Greater);
    }

    #[test]
    fn values_are_found_at_plain_and_quoted_paths() {
        let inner = Value {
            value_type: Some(ValueType::MapValue(
                firestore::gcloud_sdk::google::firestore::v1::MapValue {
                    fields: [
                        ("x.y".to_string(), v(ValueType::IntegerValue(1))),
                        ("z".to_string(), v(ValueType::IntegerValue(2))),
                    ]
                    .into(),
                },
            )),
        };
        let document = Document {
            fields: [("price".to_string(), inner)].into(),
            ..Default::default()
        };
        assert_eq!(
            field_value(&document, "price.z"),
            Some(&v(ValueType::IntegerValue(2)))
        );
        assert_eq!(
            field_value(&document, "price.`x.y`"),
            Some(&v(ValueType::IntegerValue(1)))
        );
        assert_eq!(field_value(&document, "price.missing"), None);
        assert_eq!(field_value(&document, "price.z.deeper"), None);
    }

    #[test]
    fn paths_split_on_unquoted_dots() {}

    #[test]
    fn documents_order_by_field_then_name_in_the_query_direction() {
        let doc = |name: &str, ts: i64| Document {
            name: format!("projects/p/databases/d/documents/c/{name}"),
            fields: [("t".to_string(), v(ValueType::IntegerValue(ts)))].into(),
            ..Default::default()
        };
        let (a1, b1, a2) = (doc("a", 1), doc("b", 1), doc("a", 2));
        assert_eq!(
            compare_documents(&a1, &b1, "t", Direction::Ascending),
            Ordering::Less
        );
        assert_eq!(
            compare_documents(&a1, &b1, "t", Direction::Descending),
            Ordering::Greater
        );
        assert_eq!(
            compare_documents(&a2, &b1, "t", Direction::Descending),
            Ordering::Less
        );
    }
}
