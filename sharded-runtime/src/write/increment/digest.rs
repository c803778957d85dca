//! The digest of a commit that holds increments, which each of its markers records: a batch
//! sent again (its own retry, or the caller's same batch rebuilt) has the same digest and
//! finds its markers as it left them; another commit that holds one of its increments has
//! another, and is told so instead of answered as if it had landed.
//!
//! What goes in is what the commit does, in order, not its bytes as sent: an increment is
//! its document, counter, amount and id (not the shard drawn for it, nor its marker's
//! expiry); a sharded document is its fields without the shard value (drawn anew each time a
//! batch is built); a document's fields in the order of their names, as prost keeps them in
//! a map of no order.

use firestore::gcloud_sdk::google::firestore::v1::document_transform::field_transform::TransformType;
use firestore::gcloud_sdk::google::firestore::v1::{
    Document, MapValue, Precondition, Value, Write, precondition, value::ValueType,
    write::Operation,
};
use sha2::{Digest as _, Sha256};

/// A commit's digest, fed one write at a time, in the commit's order.
#[derive(Debug, Clone, Default)]
pub(crate) struct CommitDigest(Sha256);

impl CommitDigest {
    /// An increment of `amount` to the counter `field` of `document`, under the id `id`.
    pub(crate) fn increment(&mut self, document: &str, field: &str, amount: i64, id: &str) {
        self.tag(b'i');
        self.text(document);
        self.text(field);
        self.0.update(amount.to_be_bytes());
        self.text(id);
    }

    /// Any other write; `shard_field`, the top-level field a sharded document draws its shard
    /// into, is left out of a written document's fields.
    pub(crate) fn write(&mut self, write: &Write, shard_field: Option<&str>) {
        self.tag(b'w');
        match &write.operation {
            Some(Operation::Update(document)) => {
                self.tag(b'u');
                self.document(document, shard_field);
            }
            Some(Operation::Delete(name)) => {
                self.tag(b'd');
                self.text(name);
            }
            Some(Operation::Transform(transform)) => {
                self.tag(b't');
                self.text(&transform.document);
            }
            None => self.tag(b'n'),
        }
        match &write.update_mask {
            Some(mask) => {
                let mut paths: Vec<&String> = mask.field_paths.iter().collect();
                paths.sort();
                self.0.update((paths.len() as u64).to_be_bytes());
                for path in paths {
                    self.text(path);
                }
            }
            None => self.tag(b'-'),
        }
        self.0
            .update((write.update_transforms.len() as u64).to_be_bytes());
        for transform in &write.update_transforms {
            self.text(&transform.field_path);
            match &transform.transform_type {
                Some(TransformType::SetToServerValue(value)) => {
                    self.tag(b's');
                    self.0.update(value.to_be_bytes());
                }
                Some(TransformType::Increment(value)) => self.transform(b'+', value),
                Some(TransformType::Maximum(value)) => self.transform(b'>', value),
                Some(TransformType::Minimum(value)) => self.transform(b'<', value),
                Some(TransformType::AppendMissingElements(values)) => {
                    self.tag(b'a');
                    self.array(&values.values);
                }
                Some(TransformType::RemoveAllFromArray(values)) => {
                    self.tag(b'r');
                    self.array(&values.values);
                }
                None => self.tag(b'n'),
            }
        }
        self.precondition(write.current_document.as_ref());
    }

    /// The digest, as 64 hex digits.
    pub(crate) fn finish(self) -> String {
        self.0
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    fn tag(&mut self, tag: u8) {
        self.0.update([tag]);
    }

    /// A string, its length first, so that no two sequences of strings feed the same bytes.
    fn text(&mut self, text: &str) {
        self.0.update((text.len() as u64).to_be_bytes());
        self.0.update(text.as_bytes());
    }

    fn transform(&mut self, tag: u8, value: &Value) {
        self.tag(tag);
        self.value(value);
    }

    fn document(&mut self, document: &Document, shard_field: Option<&str>) {
        self.text(&document.name);
        let mut fields: Vec<(&String, &Value)> = document
            .fields
            .iter()
            .filter(|(name, _)| Some(name.as_str()) != shard_field)
            .collect();
        fields.sort_by(|a, b| a.0.cmp(b.0));
        self.fields(&fields);
    }

    fn fields(&mut self, fields: &[(&String, &Value)]) {
        self.0.update((fields.len() as u64).to_be_bytes());
        for (name, value) in fields {
            self.text(name);
            self.value(value);
        }
    }

    fn map(&mut self, map: &MapValue) {
        let mut fields: Vec<(&String, &Value)> = map.fields.iter().collect();
        fields.sort_by(|a, b| a.0.cmp(b.0));
        self.fields(&fields);
    }

    fn array(&mut self, values: &[Value]) {
        self.0.update((values.len() as u64).to_be_bytes());
        for value in values {
            self.value(value);
        }
    }

    fn value(&mut self, value: &Value) {
        match &value.value_type {
            None => self.tag(0),
            Some(ValueType::NullValue(_)) => self.tag(1),
            Some(ValueType::BooleanValue(b)) => {
                self.tag(2);
                self.tag(u8::from(*b));
            }
            Some(ValueType::IntegerValue(n)) => {
                self.tag(3);
                self.0.update(n.to_be_bytes());
            }
            Some(ValueType::DoubleValue(x)) => {
                self.tag(4);
                self.0.update(x.to_bits().to_be_bytes());
            }
            Some(ValueType::TimestampValue(t)) => {
                self.tag(5);
                self.0.update(t.seconds.to_be_bytes());
                self.0.update(t.nanos.to_be_bytes());
            }
            Some(ValueType::StringValue(s)) => {
                self.tag(6);
                self.text(s);
            }
            Some(ValueType::BytesValue(b)) => {
                self.tag(7);
                self.0.update((b.len() as u64).to_be_bytes());
                self.0.update(b);
            }
            Some(ValueType::ReferenceValue(r)) => {
                self.tag(8);
                self.text(r);
            }
            Some(ValueType::GeoPointValue(g)) => {
                self.tag(9);
                self.0.update(g.latitude.to_bits().to_be_bytes());
                self.0.update(g.longitude.to_bits().to_be_bytes());
            }
            Some(ValueType::ArrayValue(a)) => {
                self.tag(10);
                self.array(&a.values);
            }
            Some(ValueType::MapValue(m)) => {
                self.tag(11);
                self.map(m);
            }
            // Query-only values (field and variable references, functions, pipelines), which
            // no write holds: their encoding.
            Some(other) => {
                self.tag(12);
                let value = Value {
                    value_type: Some(other.clone()),
                };
                self.0
                    .update(firestore::gcloud_sdk::prost::Message::encode_to_vec(&value));
            }
        }
    }

    fn precondition(&mut self, precondition: Option<&Precondition>) {
        match precondition.and_then(|p| p.condition_type.as_ref()) {
            None => self.tag(b'-'),
            Some(precondition::ConditionType::Exists(exists)) => {
                self.tag(b'e');
                self.tag(u8::from(*exists));
            }
            Some(precondition::ConditionType::UpdateTime(t)) => {
                self.tag(b't');
                self.0.update(t.seconds.to_be_bytes());
                self.0.update(t.nanos.to_be_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn string(s: &str) -> Value {
        Value {
            value_type: Some(ValueType::StringValue(s.to_owned())),
        }
    }

    fn upsert(fields: &[(&str, Value)]) -> Write {
        Write {
            operation: Some(Operation::Update(Document {
                name: "projects/p/databases/(default)/documents/c/d".into(),
                fields: fields
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), v.clone()))
                    .collect::<HashMap<_, _>>(),
                ..Default::default()
            })),
            ..Default::default()
        }
    }

    fn digest(feed: impl FnOnce(&mut CommitDigest)) -> String {
        let mut digest = CommitDigest::default();
        feed(&mut digest);
        digest.finish()
    }

    #[test]
    fn the_same_commit_has_the_same_digest_whatever_its_shard_draws_and_map_orders() {
        let fields = |shard: &str| {
            [
                ("a", string("x")),
                ("shard", string(shard)),
                ("b", string("y")),
                ("c", string("z")),
            ]
        };
        let one = digest(|d| {
            d.write(&upsert(&fields("0")), Some("shard"));
            d.increment("doc", "likes", 5, "r");
        });
        for shard in ["1", "2"] {
            // A HashMap of other capacity iterates in another order.
            let mut write = upsert(&fields(shard));
            if let Some(Operation::Update(document)) = &mut write.operation {
                let mut roomy = HashMap::with_capacity(64);
                roomy.extend(document.fields.drain());
                document.fields = roomy;
            }
            let other = digest(|d| {
                d.write(&write, Some("shard"));
                d.increment("doc", "likes", 5, "r");
            });
            assert_eq!(one, other);
        }
        assert_eq!(one.len(), 64);
    }

    #[test]
    fn a_commit_that_does_anything_else_has_another_digest() {
        let base = |d: &mut CommitDigest| d.increment("doc", "likes", 5, "r");
        let one = digest(base);
        let others = [
            digest(|d| d.increment("doc", "likes", 6, "r")),
            digest(|d| d.increment("doc", "stock", 5, "r")),
            digest(|d| d.increment("doc", "likes", 5, "s")),
            digest(|d| d.increment("dod", "likes", 5, "r")),
            digest(|d| {
                base(d);
                d.increment("doc", "likes", 100, "n");
            }),
            digest(|d| {
                base(d);
                d.write(&upsert(&[("a", string("x"))]), None);
            }),
            digest(|d| {
                d.write(&upsert(&[("a", string("x"))]), None);
                base(d);
            }),
            // The shard field is left out only where it is named.
            digest(|d| {
                base(d);
                d.write(&upsert(&[("a", string("x")), ("shard", string("0"))]), None);
            }),
        ];
        for (n, other) in others.iter().enumerate() {
            assert_ne!(&one, other, "{n}");
        }
        // Lengths keep strings apart: ("ab", "c") is not ("a", "bc").
        assert_ne!(
            digest(|d| d.increment("ab", "c", 1, "i")),
            digest(|d| d.increment("a", "bc", 1, "i"))
        );
    }
}
