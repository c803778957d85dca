//! Whether a write whose answer was lost was applied: the stored document, read back, shows
//! it. A retried `create` whose first attempt landed meets ALREADY_EXISTS from itself; this is
//! how the writer tells that apart from a document that was there before.

use std::collections::HashMap;

use firestore::gcloud_sdk::google::firestore::v1::{
    Document, Value, Write, value::ValueType, write::Operation,
};

use crate::value_order::field_value;

/// Whether `stored` (the document now, `None` if missing) is what `write` leaves behind.
///
/// A write with transforms cannot be told from the document, so it never counts as landed.
pub(crate) fn shows(write: &Write, stored: Option<&Document>) -> bool {
    if !write.update_transforms.is_empty() {
        return false;
    }
    match (&write.operation, stored) {
        (Some(Operation::Delete(_)), stored) => stored.is_none(),
        (Some(Operation::Update(written)), Some(stored)) => match &write.update_mask {
            None => same_fields(&written.fields, &stored.fields),
            Some(mask) => mask.field_paths.iter().all(|path| {
                match (field_value(written, path), field_value(stored, path)) {
                    (None, None) => true,
                    (Some(written), Some(stored)) => same_value(written, stored),
                    _ => false,
                }
            }),
        },
        _ => false,
    }
}

fn same_fields(written: &HashMap<String, Value>, stored: &HashMap<String, Value>) -> bool {
    written.len() == stored.len()
        && written.iter().all(|(name, value)| {
            stored
                .get(name)
                .is_some_and(|stored| same_value(value, stored))
        })
}

/// Equality as Firestore stores values: timestamps to the microsecond, NaN equal to itself.
fn same_value(written: &Value, stored: &Value) -> bool {
    use ValueType::*;
    match (&written.value_type, &stored.value_type) {
        (Some(TimestampValue(a)), Some(TimestampValue(b))) => {
            a.seconds == b.seconds && a.nanos / 1_000 == b.nanos / 1_000
        }
        (Some(DoubleValue(a)), Some(DoubleValue(b))) => a == b || (a.is_nan() && b.is_nan()),
        (Some(MapValue(a)), Some(MapValue(b))) => same_fields(&a.fields, &b.fields),
        (Some(ArrayValue(a)), Some(ArrayValue(b))) => {
            a.values.len() == b.values.len()
                && a.values
                    .iter()
                    .zip(&b.values)
                    .all(|(a, b)| same_value(a, b))
        }
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use firestore::gcloud_sdk::google::firestore::v1::{DocumentMask, MapValue};
    use firestore::gcloud_sdk::prost_types::Timestamp;

    use super::*;

    fn value(value: ValueType) -> Value {
        Value {
            value_type: Some(value),
        }
    }

    fn document(fields: &[(&str, Value)]) -> Document {
        Document {
            name: "d".into(),
            fields: fields
                .iter()
                .map(|(name, value)| ((*name).to_owned(), value.clone()))
                .collect(),
            ..Document::default()
        }
    }

    fn update(fields: &[(&str, Value)]) -> Write {
        Write {
            operation: Some(Operation::Update(document(fields))),
            ..Write::default()
        }
    }

    #[test]
    fn a_whole_document_landed_when_every_field_is_as_written() {
        let at = |nanos| value(ValueType::TimestampValue(Timestamp { seconds: 7, nanos }));
        let nested = value(ValueType::MapValue(MapValue {
            fields: [("x".to_owned(), value(ValueType::DoubleValue(f64::NAN)))].into(),
        }));
        let write = update(&[("t", at(1_234_567)), ("m", nested.clone())]);
        let stored = document(&[("t", at(1_234_000)), ("m", nested.clone())]);
        assert!(shows(&write, Some(&stored)), "stored to the microsecond");
        let other = document(&[("t", at(1_235_000)), ("m", nested.clone())]);
        assert!(!shows(&write, Some(&other)));
        let more = document(&[("t", at(1_234_000)), ("m", nested), ("n", at(0))]);
        assert!(!shows(&write, Some(&more)), "a field it did not write");
        assert!(!shows(&write, None));
    }

    #[test]
    fn a_masked_write_landed_when_its_fields_are_as_written() {
        let write = Write {
            update_mask: Some(DocumentMask {
                field_paths: vec!["`shard-id`".into()],
            }),
            ..update(&[("shard-id", value(ValueType::StringValue("b".into())))])
        };
        let stored = |shard: &str| {
            document(&[
                ("shard-id", value(ValueType::StringValue(shard.into()))),
                ("other", value(ValueType::IntegerValue(1))),
            ])
        };
        assert!(shows(&write, Some(&stored("b"))));
        assert!(!shows(&write, Some(&stored("a"))));
    }

    #[test]
    fn a_delete_landed_when_the_document_is_gone() {
        let delete = Write {
            operation: Some(Operation::Delete("d".into())),
            ..Write::default()
        };
        assert!(shows(&delete, None));
        assert!(!shows(&delete, Some(&document(&[]))));
    }
}
