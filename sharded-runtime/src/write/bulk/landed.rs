//! Whether a write whose answer was lost was applied: the stored document, read back, shows
//! it. A retried `create` whose first attempt landed meets ALREADY_EXISTS from itself; this is
//! how the writer tells that apart from a document that was there before.

use std::collections::HashMap;

use firestore::gcloud_sdk::google::firestore::v1::document_transform::field_transform::TransformType;
use firestore::gcloud_sdk::google::firestore::v1::{
    Document, Value, Write, value::ValueType, write::Operation,
};
use sharded_indexes::field_path::unquoted_segment;

use crate::model::value_order::field_value;

/// Whether `stored` (the document now, `None` if missing) is what `write` leaves behind.
///
/// A path a server-value transform sets (a `server_timestamp` type's order field) holds a
/// value no one sent: it counts as landed when the path holds a timestamp and every field
/// that was sent is stored as sent. A write with any other transform cannot be told from
/// the document, so it never counts as landed.
pub(crate) fn shows(write: &Write, stored: Option<&Document>) -> bool {
    let mut filled = Vec::new();
    for transform in &write.update_transforms {
        match transform.transform_type {
            Some(TransformType::SetToServerValue(_)) => filled.push(transform.field_path.as_str()),
            _ => return false,
        }
    }
    let holds_times = |stored: &Document| {
        filled.iter().all(|path| {
            matches!(
                field_value(stored, path).and_then(|value| value.value_type.as_ref()),
                Some(ValueType::TimestampValue(_))
            )
        })
    };
    match (&write.operation, stored) {
        (Some(Operation::Delete(_)), stored) => stored.is_none(),
        (Some(Operation::Update(written)), Some(stored)) => {
            holds_times(stored)
                && match &write.update_mask {
                    None => {
                        let mut sent = stored.fields.clone();
                        sent.retain(|name, _| {
                            !filled.iter().any(|path| unquoted_segment(path) == name)
                        });
                        same_fields(&written.fields, &sent)
                    }
                    Some(mask) => mask.field_paths.iter().all(|path| {
                        match (field_value(written, path), field_value(stored, path)) {
                            (None, None) => true,
                            (Some(written), Some(stored)) => same_value(written, stored),
                            _ => false,
                        }
                    }),
                }
        }
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
pub(crate) fn same_value(written: &Value, stored: &Value) -> bool {
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
    fn a_server_timestamp_landed_when_its_path_holds_a_time_and_the_rest_is_as_sent() {
        use firestore::gcloud_sdk::google::firestore::v1::document_transform::FieldTransform;
        let at = |seconds| value(ValueType::TimestampValue(Timestamp { seconds, nanos: 0 }));
        let shard = value(ValueType::StringValue("2".into()));
        let filled = |transform_type| Write {
            update_transforms: vec![FieldTransform {
                field_path: "`created at`".into(),
                transform_type: Some(transform_type),
            }],
            ..update(&[("s", shard.clone())])
        };
        let write = filled(TransformType::SetToServerValue(1));
        assert!(shows(
            &write,
            Some(&document(&[("s", shard.clone()), ("created at", at(9))]))
        ));
        assert!(
            !shows(&write, Some(&document(&[("s", shard.clone())]))),
            "no time where the server fills one"
        );
        let text = value(ValueType::StringValue("9".into()));
        assert!(!shows(
            &write,
            Some(&document(&[("s", shard.clone()), ("created at", text)]))
        ));
        let other = value(ValueType::StringValue("0".into()));
        assert!(!shows(
            &write,
            Some(&document(&[("s", other), ("created at", at(9))]))
        ));
        let increment = filled(TransformType::Increment(value(ValueType::IntegerValue(1))));
        assert!(
            !shows(
                &increment,
                Some(&document(&[("s", shard), ("created at", at(9))]))
            ),
            "an increment cannot be told from the document"
        );
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
