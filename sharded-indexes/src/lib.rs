//! The index plan of a sharded collection (recipe steps 4 and 5), and the types of
//! `firestore.indexes.json`.
//!
//! One function, [`plan`], decides the indexes: the runtime calls it for `T::indexes()` and the
//! build-time crate calls it for the file, so the two cannot disagree.

use serde::{Deserialize, Serialize};

pub mod datastore;
mod description;
pub mod field_path;
mod plan;
mod query_id;
mod serving;

pub use description::{
    CollectionDescription, CollectionDescriptionBuf, Counter, CounterBuf, FieldOfQuery,
    FieldOfQueryBuf, StoredField, StoredFieldBuf, StoredType, VectorField, VectorFieldBuf,
};
pub use plan::plan;
pub use query_id::query_id;
pub use serving::IndexNeed;

/// The most shard values a collection may have: ⌈1000/30⌉ = 34 chunk queries per read. The
/// derive refuses more, and the runtime holds the values of every numbered set up to it.
pub const MAX_SHARDS: u64 = 1000;

/// The start of the collection ids sharded keeps its own state in (a tracked job's, in
/// `_sharded_jobs`); the derive refuses it as a type's collection or parent.
pub const RESERVED_COLLECTION_PREFIX: &str = "_sharded";

/// The collection id of a counter increment's marker, under the counted document.
pub const INCREMENTS_COLLECTION: &str = "_sharded_increments";
/// The field of an increment's marker that says when it may be deleted: its TTL field.
pub const MARKER_EXPIRY_FIELD: &str = "expire_at";
/// The field of an increment's marker naming the counter it adds to (its stored path).
pub const MARKER_COUNTER_FIELD: &str = "field";
/// The field of an increment's marker naming the shard document its addition went to.
pub const MARKER_SHARD_FIELD: &str = "shard";
/// The field of an increment's marker holding what it adds.
pub const MARKER_AMOUNT_FIELD: &str = "amount";
/// The field of an increment's marker holding a digest of the commit it landed in: every
/// marker of one atomic batch holds the same, which tells the batch sent again from another.
pub const MARKER_COMMIT_FIELD: &str = "commit";
/// How long after its creation an increment's marker expires (its `expire_at`): 7 days, the
/// window in which the same increment applied again is known to count nothing.
pub const MARKER_LIFETIME_SECONDS: u64 = 604_800;
/// How far a marker's `expire_at` may be from its creation time plus
/// [`MARKER_LIFETIME_SECONDS`], in either direction, under the generated security rules: one
/// hour, for a client whose clock is that far off.
pub const MARKER_EXPIRY_TOLERANCE_SECONDS: u64 = 3600;
/// The start of a counter's shard collection id, under the counted document: the field path
/// follows (`_sharded_counter_likes`).
pub const COUNTER_COLLECTION_PREFIX: &str = "_sharded_counter_";
/// The collection id of the shard documents of the counter `field` (a stored path), under
/// the counted document.
pub fn counter_collection_id(field: &str) -> String {
    format!("{COUNTER_COLLECTION_PREFIX}{field}")
}
/// The field of a shard document that holds its part of the value.
pub const SHARD_VALUE_FIELD: &str = "value";
/// The field of a shard document in which a client governed by security rules names the
/// marker its increment creates in the same commit (the generated rules check that it does).
pub const SHARD_INCREMENT_FIELD: &str = "increment";

/// Sort direction of an order field or an index field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Direction {
    Ascending,
    Descending,
}

impl Direction {
    /// The other direction.
    pub const fn reversed(self) -> Direction {
        match self {
            Direction::Ascending => Direction::Descending,
            Direction::Descending => Direction::Ascending,
        }
    }
}

/// A composite index, as `firestore.indexes.json` writes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompositeIndex {
    pub collection_group: String,
    pub query_scope: QueryScope,
    pub fields: Vec<IndexField>,
}

/// One field of a composite index: ordered, or (an array field) its elements for
/// `array-contains`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexField {
    pub field_path: String,
    #[serde(flatten)]
    pub mode: IndexMode,
}

/// How an index holds a field, as `firestore.indexes.json` writes it: `"order"`,
/// `"arrayConfig"` or `"vectorConfig"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IndexMode {
    /// Ordered, for equality, range and order by.
    Order(Direction),
    /// Each element of an array, for `array-contains` and `array-contains-any`.
    ArrayConfig(ArrayConfig),
    /// A vector of `dimension` numbers, for `find_nearest`: the last field of a vector index.
    VectorConfig(VectorConfig),
}

/// A vector index's configuration: the vectors' dimension, searched exhaustively (`flat`, the
/// one kind Firestore has).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct VectorConfig {
    pub dimension: u32,
    pub flat: Flat,
}

/// `"flat": {}`: the one vector index type Firestore has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Flat {}

/// The one array configuration Firestore has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ArrayConfig {
    Contains,
}

impl IndexField {
    /// `field_path`, ordered in `direction`.
    pub fn ordered(field_path: &str, direction: Direction) -> IndexField {
        IndexField {
            field_path: field_path.to_owned(),
            mode: IndexMode::Order(direction),
        }
    }

    /// The array field `field_path`'s elements, for `array-contains`.
    pub fn contains(field_path: &str) -> IndexField {
        IndexField {
            field_path: field_path.to_owned(),
            mode: IndexMode::ArrayConfig(ArrayConfig::Contains),
        }
    }

    /// The vector field `field_path`, of `dimension` numbers, for `find_nearest`.
    pub fn vector(field_path: &str, dimension: u32) -> IndexField {
        IndexField {
            field_path: field_path.to_owned(),
            mode: IndexMode::VectorConfig(VectorConfig {
                dimension,
                flat: Flat {},
            }),
        }
    }

    /// The direction, for an ordered field.
    pub fn order(&self) -> Option<Direction> {
        match self.mode {
            IndexMode::Order(direction) => Some(direction),
            IndexMode::ArrayConfig(_) | IndexMode::VectorConfig(_) => None,
        }
    }
}

/// Whether an index serves queries on one collection or on a collection group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum QueryScope {
    Collection,
    CollectionGroup,
}

/// A `fieldOverrides` entry with `"indexes": []`: no single-field indexes on this field.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldOverride {
    pub collection_group: String,
    pub field_path: String,
    /// Whether the field is the collection group's TTL field: Firestore deletes a document
    /// some time after the time it holds.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ttl: bool,
    pub indexes: Vec<serde_json::Value>,
}

/// Everything one sharded collection needs deployed; also reads a whole
/// `firestore.indexes.json` (other keys are ignored).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexPlan {
    #[serde(default)]
    pub indexes: Vec<CompositeIndex>,
    #[serde(default)]
    pub field_overrides: Vec<FieldOverride>,
}

impl IndexPlan {
    /// What of this plan the `firestore.indexes.json` document `file` lacks, described one
    /// entry per line; empty when the file covers the plan. Lets a test assert that a
    /// committed file serves a set of types:
    ///
    /// ```ignore
    /// assert_eq!(Instrument::indexes().missing_from(include_str!("../firestore.indexes.json"))?, Vec::<String>::new());
    /// ```
    ///
    /// The file may hold anything else Firestore accepts: other indexes (array, vector),
    /// entries without a `queryScope` (which defaults to `COLLECTION`), and settings of its own
    /// on the overrides this plan needs (`ttl`, array indexes), as long as they leave the
    /// ascending and descending single-field indexes disabled.
    pub fn missing_from(&self, file: &str) -> Result<Vec<String>, serde_json::Error> {
        let file: serde_json::Value = serde_json::from_str(file)?;
        let entries = |key: &str| {
            file.get(key)
                .and_then(serde_json::Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let (indexes, overrides) = (entries("indexes"), entries("fieldOverrides"));
        let mut missing = Vec::new();
        for index in &self.indexes {
            if !indexes.iter().any(|entry| index.is_served_by(entry)) {
                let fields: Vec<String> = index
                    .fields
                    .iter()
                    .map(|f| match f.mode {
                        IndexMode::Order(direction) => format!("{} {direction:?}", f.field_path),
                        IndexMode::ArrayConfig(_) => format!("{} CONTAINS", f.field_path),
                        IndexMode::VectorConfig(config) => {
                            format!("{} VECTOR({})", f.field_path, config.dimension)
                        }
                    })
                    .collect();
                missing.push(format!(
                    "composite index on {} in {} scope ({})",
                    index.collection_group,
                    match index.query_scope {
                        QueryScope::Collection => "COLLECTION",
                        QueryScope::CollectionGroup => "COLLECTION_GROUP",
                    },
                    fields.join(", ")
                ));
            }
        }
        for field_override in &self.field_overrides {
            if !overrides
                .iter()
                .any(|entry| field_override.is_met_by(entry))
            {
                missing.push(format!(
                    "field override disabling the single-field indexes of {}.{}",
                    field_override.collection_group, field_override.field_path
                ));
            }
        }
        Ok(missing)
    }

    /// The plan as a `firestore.indexes.json` document.
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string_pretty(self).expect("index plans serialize");
        json.push('\n');
        json
    }
}

fn str_at<'v>(value: &'v serde_json::Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(serde_json::Value::as_str)
}

impl CompositeIndex {
    /// Whether the file's index `entry` is this index: same collection group and scope (absent
    /// means `COLLECTION`), the same fields in the same order, each with the same direction.
    fn is_served_by(&self, entry: &serde_json::Value) -> bool {
        let scope = match self.query_scope {
            QueryScope::Collection => "COLLECTION",
            QueryScope::CollectionGroup => "COLLECTION_GROUP",
        };
        let fields = entry.get("fields").and_then(serde_json::Value::as_array);
        str_at(entry, "collectionGroup") == Some(self.collection_group.as_str())
            && str_at(entry, "queryScope").unwrap_or("COLLECTION") == scope
            && fields.is_some_and(|fields| {
                fields.len() == self.fields.len()
                    && fields.iter().zip(&self.fields).all(|(entry, field)| {
                        let (key, value) = match field.mode {
                            IndexMode::Order(direction) => {
                                ("order", serde_json::to_value(direction))
                            }
                            IndexMode::ArrayConfig(config) => {
                                ("arrayConfig", serde_json::to_value(config))
                            }
                            IndexMode::VectorConfig(config) => {
                                ("vectorConfig", serde_json::to_value(config))
                            }
                        };
                        str_at(entry, "fieldPath") == Some(field.field_path.as_str())
                            && entry.get(key) == Some(&value.expect("serializes"))
                    })
            })
    }
}

impl FieldOverride {
    /// Whether the file's override `entry` disables what this one does: same collection group
    /// and field, and no ascending or descending index among its configurations.
    fn is_met_by(&self, entry: &serde_json::Value) -> bool {
        str_at(entry, "collectionGroup") == Some(self.collection_group.as_str())
            && str_at(entry, "fieldPath") == Some(self.field_path.as_str())
            && entry
                .get("indexes")
                .and_then(serde_json::Value::as_array)
                .is_some_and(|indexes| indexes.iter().all(|index| index.get("order").is_none()))
            && (!self.ttl || entry.get("ttl") == Some(&serde_json::Value::Bool(true)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECIPE: CollectionDescription<'static> = CollectionDescription {
        collection: "instruments",
        parent_collections: &[],
        collection_group: false,
        shard_field: "shard",
        shard_values: &["0", "1", "2"],
        previous_shard_values: &[],
        retired_shard_values: &[],
        reshard_since: None,
        order_field: "timestamp",
        direction: Direction::Descending,
        indexed_fields: &["exchange", "instrumentType", "price.currency"],
        field_sets: &[],
        aggregate_fields: &[],
        aggregations: &[],
        range_fields: &[],
        ranges: &[],
        range_sets: &[],
        array_fields: &[],
        vector_fields: &[],
        counter_fields: &[],
        fields: &[],
        reversible: false,
        server_timestamp: false,
        order_type: crate::StoredType::Timestamp,
        expiry_field: None,
    };

    #[test]
    fn a_collection_group_gets_every_index_in_both_scopes() {
        let collection = plan(&RECIPE);
        let group = plan(&CollectionDescription {
            parent_collections: &["markets"],
            collection_group: true,
            ..RECIPE
        });
        assert_eq!(group.indexes.len(), 2 * collection.indexes.len());
        for index in &collection.indexes {
            assert!(group.indexes.contains(index));
            let in_group = CompositeIndex {
                query_scope: QueryScope::CollectionGroup,
                ..index.clone()
            };
            assert!(group.indexes.contains(&in_group));
        }
        assert_eq!(group.field_overrides, collection.field_overrides);
    }

    #[test]
    fn recipe_instruments_get_the_recipe_indexes() {
        let plan = plan(&RECIPE);
        let json: serde_json::Value = serde_json::from_str(&plan.to_json()).unwrap();
        let index = |field: &str| {
            serde_json::json!({
                "collectionGroup": "instruments",
                "queryScope": "COLLECTION",
                "fields": [
                    { "fieldPath": "shard", "order": "DESCENDING" },
                    { "fieldPath": field, "order": "ASCENDING" },
                    { "fieldPath": "timestamp", "order": "DESCENDING" }
                ]
            })
        };
        let whole_collection = serde_json::json!({
            "collectionGroup": "instruments",
            "queryScope": "COLLECTION",
            "fields": [
                { "fieldPath": "shard", "order": "DESCENDING" },
                { "fieldPath": "timestamp", "order": "DESCENDING" }
            ]
        });
        assert_eq!(
            json,
            serde_json::json!({
                "indexes": [whole_collection, index("exchange"), index("instrumentType"), index("price.currency")],
                "fieldOverrides": [
                    { "collectionGroup": "instruments", "fieldPath": "timestamp", "indexes": [] },
                    { "collectionGroup": "instruments", "fieldPath": "shard", "indexes": [] }
                ]
            })
        );
    }

    #[test]
    fn a_file_covers_a_plan_when_it_holds_every_entry() {
        let plan = plan(&RECIPE);
        assert_eq!(
            plan.missing_from(&plan.to_json()).unwrap(),
            Vec::<String>::new()
        );
        let mut partial = plan.clone();
        partial.indexes.remove(2);
        partial.field_overrides.remove(0);
        let missing = plan.missing_from(&partial.to_json()).unwrap();
        assert_eq!(
            missing,
            [
                "composite index on instruments in COLLECTION scope (shard Descending, instrumentType Ascending, timestamp Descending)",
                "field override disabling the single-field indexes of instruments.timestamp",
            ]
        );
        assert!(plan.missing_from("not json").is_err());
    }

    #[test]
    fn other_index_kinds_and_user_settings_do_not_get_in_the_way() {
        let plan = plan(&RECIPE);
        let mut file: serde_json::Value = serde_json::from_str(&plan.to_json()).unwrap();
        // No queryScope (it defaults to COLLECTION), an array index, a vector index, a TTL.
        file["indexes"][0]
            .as_object_mut()
            .unwrap()
            .remove("queryScope");
        file["indexes"].as_array_mut().unwrap().extend([
            serde_json::json!({ "collectionGroup": "instruments", "queryScope": "COLLECTION",
                "fields": [{ "fieldPath": "tags", "arrayConfig": "CONTAINS" }, { "fieldPath": "timestamp", "order": "DESCENDING" }] }),
            serde_json::json!({ "collectionGroup": "docs", "queryScope": "COLLECTION",
                "fields": [{ "fieldPath": "embedding", "vectorConfig": { "dimension": 3, "flat": {} } }] }),
        ]);
        file["fieldOverrides"][0]["ttl"] = serde_json::json!(true);
        file["fieldOverrides"][0]["indexes"] =
            serde_json::json!([{ "arrayConfig": "CONTAINS", "queryScope": "COLLECTION" }]);
        assert_eq!(
            plan.missing_from(&file.to_string()).unwrap(),
            Vec::<String>::new()
        );
        // An ascending single-field index left on the timestamp is not what the plan needs.
        file["fieldOverrides"][0]["indexes"] =
            serde_json::json!([{ "order": "ASCENDING", "queryScope": "COLLECTION" }]);
        assert_eq!(plan.missing_from(&file.to_string()).unwrap().len(), 1);
    }

    #[test]
    fn ascending_order_fields_end_ascending() {
        let spec = CollectionDescription {
            direction: Direction::Ascending,
            indexed_fields: &["exchange"],
            ..RECIPE
        };
        let plan = plan(&spec);
        assert_eq!(plan.indexes.len(), 2);
        assert_eq!(
            plan.indexes[0].fields[1].order(),
            Some(Direction::Ascending)
        );
        assert_eq!(
            plan.indexes[1].fields[2].order(),
            Some(Direction::Ascending)
        );
    }

    #[test]
    fn a_field_set_gets_one_index_with_its_fields_in_declared_order() {
        let spec = CollectionDescription {
            indexed_fields: &[],
            field_sets: &[&["exchange", "instrumentType"]],
            ..RECIPE
        };
        let plan = plan(&spec);
        let paths: Vec<Vec<&str>> = plan
            .indexes
            .iter()
            .map(|index| index.fields.iter().map(|f| f.field_path.as_str()).collect())
            .collect();
        assert_eq!(
            paths,
            [
                vec!["shard", "timestamp"],
                vec!["shard", "exchange", "instrumentType", "timestamp"]
            ]
        );
        assert_eq!(
            plan.indexes[1].fields[3].order(),
            Some(Direction::Descending)
        );
    }

    /// Each planned index as its field paths.
    fn index_paths(spec: &CollectionDescription) -> Vec<Vec<String>> {
        plan(spec)
            .indexes
            .iter()
            .map(|index| index.fields.iter().map(|f| f.field_path.clone()).collect())
            .collect()
    }

    #[test]
    fn each_query_gets_one_index_per_aggregated_field_ending_with_it() {
        let spec = CollectionDescription {
            indexed_fields: &["exchange"],
            field_sets: &[&["exchange", "instrumentType"]],
            aggregate_fields: &["qty", "price"],
            ..RECIPE
        };
        let paths = index_paths(&spec);
        let expected: Vec<Vec<&str>> = vec![
            vec!["shard", "timestamp"],
            vec!["shard", "exchange", "timestamp"],
            vec!["shard", "exchange", "instrumentType", "timestamp"],
            vec!["shard", "timestamp", "qty"],
            vec!["shard", "timestamp", "price"],
            vec!["shard", "exchange", "timestamp", "qty"],
            vec!["shard", "exchange", "timestamp", "price"],
            vec!["shard", "exchange", "instrumentType", "timestamp", "qty"],
            vec!["shard", "exchange", "instrumentType", "timestamp", "price"],
        ];
        assert_eq!(paths, expected);
        let last = plan(&spec).indexes.last().unwrap().fields.clone();
        assert_eq!(last[4].order(), Some(Direction::Ascending));
        assert_eq!(last[3].order(), Some(Direction::Descending));
    }

    #[test]
    fn a_field_declared_for_some_queries_gets_their_indexes_only() {
        let spec = CollectionDescription {
            indexed_fields: &["exchange", "venue"],
            array_fields: &["tags"],
            vector_fields: &[],
            aggregations: &[
                FieldOfQuery {
                    field: "qty",
                    compared: &[],
                    contains: false,
                },
                FieldOfQuery {
                    field: "qty",
                    compared: &["tags"],
                    contains: true,
                },
            ],
            ..RECIPE
        };
        let plan = plan(&spec);
        let with_qty: Vec<Vec<&str>> = plan
            .indexes
            .iter()
            .filter(|index| index.fields.last().unwrap().field_path == "qty")
            .map(|index| index.fields.iter().map(|f| f.field_path.as_str()).collect())
            .collect();
        assert_eq!(
            with_qty,
            [
                vec!["shard", "timestamp", "qty"],
                vec!["shard", "tags", "timestamp", "qty"]
            ]
        );
        let contains = plan
            .indexes
            .iter()
            .find(|i| i.fields.len() == 4 && i.fields[1].field_path == "tags")
            .unwrap();
        assert_eq!(contains.fields[1], IndexField::contains("tags"));
        // Every query's own index, and one per declared query: not one per query and field.
        let everywhere = CollectionDescription {
            aggregate_fields: &["qty"],
            aggregations: &[],
            ..spec
        };
        assert_eq!(
            crate::plan(&everywhere).indexes.len(),
            plan.indexes.len() + 2
        );
    }

    #[test]
    fn an_aggregated_field_already_in_an_index_is_not_added_again() {
        let spec = CollectionDescription {
            indexed_fields: &["qty"],
            aggregate_fields: &["qty", "timestamp"],
            ..RECIPE
        };
        let paths = index_paths(&spec);
        let expected: Vec<Vec<&str>> = vec![
            vec!["shard", "timestamp"],
            vec!["shard", "qty", "timestamp"],
            vec!["shard", "timestamp", "qty"],
        ];
        assert_eq!(
            paths, expected,
            "each index once, each field once per index"
        );
    }
}
