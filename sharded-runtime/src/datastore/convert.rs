//! Between the two APIs' values: a sharded type serializes to a Firestore document (the one
//! serializer every write path uses, shard drawn and write guard applied), which becomes a
//! Datastore entity here; an entity read back becomes a Firestore document, which the same
//! decoder and the same merge order as Native mode read. Both APIs have the same value types
//! (a map is an embedded entity, a reference a key), and within one type the same order.

use std::collections::HashMap;

use firestore::gcloud_sdk::google::datastore::v1 as ds;
use firestore::gcloud_sdk::google::firestore::v1 as fs;

use ds::key::PathElement;
use ds::key::path_element::IdType;

use crate::error::{Error, Result};
pub(super) use crate::model::document_id::numeric_id;

/// `value` as Datastore holds it, indexed unless `indexed` says otherwise for its path.
pub(super) fn to_datastore(value: &fs::Value, path: &str, indexed: &Indexed<'_>) -> ds::Value {
    use ds::value::ValueType as D;
    use fs::value::ValueType as F;
    let exclude = !indexed.covers(path);
    let value_type = value.value_type.as_ref().map(|value| match value {
        F::NullValue(null) => D::NullValue(*null),
        F::BooleanValue(b) => D::BooleanValue(*b),
        F::IntegerValue(i) => D::IntegerValue(*i),
        F::DoubleValue(d) => D::DoubleValue(*d),
        F::TimestampValue(t) => D::TimestampValue(*t),
        F::StringValue(s) => D::StringValue(s.clone()),
        F::BytesValue(b) => D::BlobValue(b.clone()),
        F::ReferenceValue(name) => D::KeyValue(reference_key(name, indexed.partition)),
        F::GeoPointValue(point) => D::GeoPointValue(*point),
        // Datastore refuses the flag on a list: each value of it carries its own.
        F::ArrayValue(array) => D::ArrayValue(ds::ArrayValue {
            values: array
                .values
                .iter()
                .map(|value| to_datastore(value, path, indexed))
                .collect(),
        }),
        F::MapValue(map) => D::EntityValue(ds::Entity {
            key: None,
            properties: properties(&map.fields, Some(path), indexed),
        }),
        // Pipeline-only expressions: never in a document.
        _ => D::NullValue(0),
    });
    let is_array = matches!(value_type, Some(D::ArrayValue(_)));
    ds::Value {
        meaning: 0,
        exclude_from_indexes: exclude && !is_array,
        value_type,
    }
}

/// The longest string or blob Datastore takes in an indexed property, in bytes (measured on
/// the emulator in Datastore mode: 1,500 bytes are taken, 1,501 refused with "The value of
/// property is longer than 1500 bytes", as the documented limit says).
pub(super) const MAX_INDEXED_BYTES: usize = 1500;

/// The first indexed string or blob of `properties` longer than Datastore indexes: its
/// property path and length.
pub(super) fn too_long_to_index(
    properties: &HashMap<String, ds::Value>,
) -> Option<(String, usize)> {
    fn check(value: &ds::Value, path: &str) -> Option<(String, usize)> {
        use ds::value::ValueType as D;
        match value.value_type.as_ref()? {
            D::StringValue(s) if !value.exclude_from_indexes && s.len() > MAX_INDEXED_BYTES => {
                Some((path.to_owned(), s.len()))
            }
            D::BlobValue(b) if !value.exclude_from_indexes && b.len() > MAX_INDEXED_BYTES => {
                Some((path.to_owned(), b.len()))
            }
            D::ArrayValue(array) => array.values.iter().find_map(|value| check(value, path)),
            D::EntityValue(entity) => {
                let mut names: Vec<&String> = entity.properties.keys().collect();
                names.sort();
                names
                    .into_iter()
                    .find_map(|name| check(&entity.properties[name], &format!("{path}.{name}")))
            }
            _ => None,
        }
    }
    let mut names: Vec<&String> = properties.keys().collect();
    names.sort();
    names
        .into_iter()
        .find_map(|name| check(&properties[name], name))
}

/// A Firestore document's fields as an entity's properties.
pub(super) fn properties(
    fields: &HashMap<String, fs::Value>,
    prefix: Option<&str>,
    indexed: &Indexed<'_>,
) -> HashMap<String, ds::Value> {
    fields
        .iter()
        .map(|(name, value)| {
            let path = match prefix {
                Some(prefix) => format!("{prefix}.{name}"),
                None => name.clone(),
            };
            (name.clone(), to_datastore(value, &path, indexed))
        })
        .collect()
}

/// `value` as Firestore holds it.
pub(super) fn to_firestore(value: &ds::Value, root: &str) -> fs::Value {
    use ds::value::ValueType as D;
    use fs::value::ValueType as F;
    let value_type = value.value_type.as_ref().map(|value| match value {
        D::NullValue(null) => F::NullValue(*null),
        D::BooleanValue(b) => F::BooleanValue(*b),
        D::IntegerValue(i) => F::IntegerValue(*i),
        D::DoubleValue(d) => F::DoubleValue(*d),
        D::TimestampValue(t) => F::TimestampValue(*t),
        D::StringValue(s) => F::StringValue(s.clone()),
        D::BlobValue(b) => F::BytesValue(b.clone()),
        D::KeyValue(key) => F::ReferenceValue(document_name(root, key)),
        D::GeoPointValue(point) => F::GeoPointValue(*point),
        D::ArrayValue(array) => F::ArrayValue(fs::ArrayValue {
            values: array
                .values
                .iter()
                .map(|value| to_firestore(value, root))
                .collect(),
        }),
        D::EntityValue(entity) => F::MapValue(fs::MapValue {
            fields: entity
                .properties
                .iter()
                .map(|(name, value)| (name.clone(), to_firestore(value, root)))
                .collect(),
        }),
    });
    fs::Value { value_type }
}

/// An entity read back as the Firestore document the runtime decodes and merges: named
/// `{root}/{kind}/{name}` by its key's path.
pub(super) fn to_document(entity: &ds::Entity, root: &str) -> Result<fs::Document> {
    let key = entity
        .key
        .as_ref()
        .ok_or_else(|| Error::UnexpectedAnswer("an entity without a key".into()))?;
    Ok(fs::Document {
        name: document_name(root, key),
        fields: entity
            .properties
            .iter()
            .map(|(name, value)| (name.clone(), to_firestore(value, root)))
            .collect(),
        create_time: None,
        update_time: None,
    })
}

/// The document name a key stands for below `root`: each path element a collection and id.
/// A numeric id (an allocated one) is written as Firestore writes Datastore's, `__id<N>__`.
pub(super) fn document_name(root: &str, key: &ds::Key) -> String {
    let mut name = root.to_owned();
    for element in &key.path {
        name.push('/');
        name.push_str(&element.kind);
        name.push('/');
        match &element.id_type {
            Some(IdType::Name(id)) => name.push_str(id),
            Some(IdType::Id(id)) => name.push_str(&format!("__id{id}__")),
            None => {}
        }
    }
    name
}

/// The key of a document path below the root (`rooms/lobby/Message/m1`): each collection a
/// kind, each id a name. A reference's own root (its project and database) is dropped: the
/// key lies in the entity's partition.
pub(super) fn path_key(relative: &str) -> Vec<PathElement> {
    let segments: Vec<&str> = relative.split('/').collect();
    segments
        .chunks(2)
        .map(|pair| PathElement {
            kind: pair[0].to_owned(),
            id_type: pair.get(1).map(|id| id_type(id)),
        })
        .collect()
}

/// The key id a document id stands for: `__id<N>__` (in the one form the id rule takes) is
/// the numeric id N, as Firestore names Datastore's numeric ids; any other is a name.
pub(super) fn id_type(id: &str) -> IdType {
    match numeric_id(id) {
        Some(number) => IdType::Id(number),
        None => IdType::Name(id.to_owned()),
    }
}

/// The key a reference names, in `partition`: the entity's own, so that a reference keeps
/// its namespace (a key without one would lie in the default namespace).
fn reference_key(name: &str, partition: &ds::PartitionId) -> ds::Key {
    let relative = crate::model::document_path::DocumentPath::parse(name).relative();
    ds::Key {
        partition_id: Some(partition.clone()),
        path: path_key(relative),
    }
}

/// How a document's values become an entity's: which property paths are indexed (those some
/// query reads, with everything inside them and the embedded entities on the way to them),
/// and the partition the keys of its references lie in.
pub(super) struct Indexed<'a> {
    /// `None`: every path (a filter's value).
    pub(super) paths: Option<&'a [String]>,
    /// The entity's project, database and namespace.
    pub(super) partition: &'a ds::PartitionId,
}

impl Indexed<'_> {
    fn covers(&self, path: &str) -> bool {
        let Some(paths) = self.paths else {
            return true;
        };
        paths.iter().any(|queried| {
            queried == path
                || queried
                    .strip_prefix(path)
                    .is_some_and(|rest| rest.starts_with('.'))
                || path
                    .strip_prefix(queried.as_str())
                    .is_some_and(|rest| rest.starts_with('.'))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fs::value::ValueType as F;

    fn value(value_type: F) -> fs::Value {
        fs::Value {
            value_type: Some(value_type),
        }
    }

    #[test]
    fn every_value_type_comes_back_as_it_went() {
        let root = "projects/p/databases/(default)/documents";
        let nested = fs::MapValue {
            fields: HashMap::from([
                ("a".to_owned(), value(F::IntegerValue(-3))),
                ("b".to_owned(), value(F::BytesValue(vec![0, 255]))),
            ]),
        };
        let values = [
            value(F::NullValue(0)),
            value(F::BooleanValue(true)),
            value(F::IntegerValue(i64::MIN)),
            value(F::DoubleValue(-0.5)),
            value(F::TimestampValue(
                firestore::gcloud_sdk::prost_types::Timestamp {
                    seconds: 1,
                    nanos: 2000,
                },
            )),
            value(F::StringValue("é\u{1F600}".into())),
            value(F::ReferenceValue(format!("{root}/rooms/lobby/Message/m1"))),
            value(F::ArrayValue(fs::ArrayValue {
                values: vec![
                    value(F::StringValue("x".into())),
                    value(F::MapValue(nested.clone())),
                ],
            })),
            value(F::MapValue(nested)),
        ];
        let partition = ds::PartitionId {
            namespace_id: "ns".into(),
            ..Default::default()
        };
        let indexed = Indexed {
            paths: Some(&[]),
            partition: &partition,
        };
        for original in values {
            let stored = to_datastore(&original, "f", &indexed);
            if let Some(ds::value::ValueType::KeyValue(key)) = &stored.value_type {
                assert_eq!(
                    key.partition_id.as_ref(),
                    Some(&partition),
                    "the namespace kept"
                );
            }
            assert_eq!(to_firestore(&stored, root), original);
        }
    }

    #[test]
    fn only_queried_paths_and_the_entities_on_their_way_are_indexed() {
        let paths = ["shard".to_owned(), "price.amount".to_owned()];
        let indexed = Indexed {
            paths: Some(&paths),
            partition: &ds::PartitionId::default(),
        };
        let fields = HashMap::from([
            ("shard".to_owned(), value(F::StringValue("0".into()))),
            ("note".to_owned(), value(F::StringValue("x".repeat(2000)))),
            (
                "price".to_owned(),
                value(F::MapValue(fs::MapValue {
                    fields: HashMap::from([
                        ("amount".to_owned(), value(F::IntegerValue(5))),
                        ("currency".to_owned(), value(F::StringValue("EUR".into()))),
                    ]),
                })),
            ),
            (
                "tags".to_owned(),
                value(F::ArrayValue(fs::ArrayValue {
                    values: vec![value(F::StringValue("t".into()))],
                })),
            ),
        ]);
        let properties = properties(&fields, None, &indexed);
        assert!(!properties["shard"].exclude_from_indexes);
        assert!(properties["note"].exclude_from_indexes);
        assert!(!properties["price"].exclude_from_indexes);
        let Some(ds::value::ValueType::EntityValue(price)) = &properties["price"].value_type else {
            panic!("an entity");
        };
        assert!(!price.properties["amount"].exclude_from_indexes);
        assert!(price.properties["currency"].exclude_from_indexes);
        // A list carries no flag; its values do.
        assert!(!properties["tags"].exclude_from_indexes);
        let Some(ds::value::ValueType::ArrayValue(tags)) = &properties["tags"].value_type else {
            panic!("a list");
        };
        assert!(tags.values[0].exclude_from_indexes);
    }

    #[test]
    fn only_canonical_non_zero_numbers_are_numeric_ids() {
        assert_eq!(numeric_id("__id42__"), Some(42));
        assert_eq!(numeric_id("__id-3__"), Some(-3));
        for name in [
            "__id0__",
            "__id-0__",
            "__id+3__",
            "__id042__",
            "__id9223372036854775808__",
            "__idx__",
            "id42",
            "__id42_",
        ] {
            assert_eq!(numeric_id(name), None, "{name}");
        }
        assert_eq!(id_type("__id7__"), IdType::Id(7));
        assert_eq!(id_type("a"), IdType::Name("a".into()));
    }

    #[test]
    fn a_key_names_the_document_its_path_stands_for() {
        let key = ds::Key {
            partition_id: None,
            path: path_key("rooms/lobby/Message/m1"),
        };
        assert_eq!(document_name("root", &key), "root/rooms/lobby/Message/m1");
        let allocated = ds::Key {
            partition_id: None,
            path: vec![PathElement {
                kind: "Message".into(),
                id_type: Some(IdType::Id(42)),
            }],
        };
        assert_eq!(document_name("root", &allocated), "root/Message/__id42__");
    }
}
