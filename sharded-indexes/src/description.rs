//! One sharded collection, described once: the derive writes it for each type
//! (`Sharded::DESCRIPTION`), the index plan reads it, the build manifest records its owned
//! form, and the runtime's queries and writes consult it.

use serde::{Deserialize, Serialize};

use crate::{Direction, IndexPlan};

/// What sharded knows of one collection, borrowed (a `const` of every sharded type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectionDescription<'a> {
    /// The collection id.
    pub collection: &'a str,
    /// The collection ids of the parent documents' path, outermost first (`rooms` for
    /// `rooms/{room}/messages`); empty for a top-level collection.
    pub parent_collections: &'a [&'a str],
    /// Whether queries across every parent (a collection group) are declared: each index is
    /// planned in both scopes.
    pub collection_group: bool,
    /// The shard field as a field path: its stored name, backtick-quoted where Firestore
    /// needs it.
    pub shard_field: &'a str,
    /// The values the shard field takes; writes draw one at random.
    pub shard_values: &'a [&'a str],
    /// While resharding (`previous(...)`), the values of the set the collection moves from:
    /// queries read them too. Empty otherwise.
    pub previous_shard_values: &'a [&'a str],
    /// Values of an earlier set that a rebalance moved every document out of
    /// (`retired(...)`): queries read them no more and check, once per process and scope,
    /// that no document holds one. None is a current or previous value.
    pub retired_shard_values: &'a [&'a str],
    /// While resharding, when writes began moving to the new values, in seconds since the
    /// Unix epoch (`previous(since = "...")`).
    pub reshard_since: Option<u64>,
    /// The field path queries order by.
    pub order_field: &'a str,
    /// The direction queries order in.
    pub direction: Direction,
    /// The type the order field is stored as, by its Rust type: what the generated security
    /// rules require of a client's write.
    pub order_type: StoredType,
    /// Whether queries are declared in the other direction too (`reversible`): each query's
    /// index is planned in both directions.
    pub reversible: bool,
    /// Whether the server fills the order field as it applies each write (`server_timestamp`:
    /// Firestore's `REQUEST_TIME` transform): writes send no value for it. It changes no index.
    pub server_timestamp: bool,
    /// Field paths with an equality query, in declaration order.
    pub indexed_fields: &'a [&'a str],
    /// Sets of field paths with one equality query on all of them at once
    /// (`#[sharded(index(a, b))]`), in declaration order.
    pub field_sets: &'a [&'a [&'a str]],
    /// Numeric field paths with `sum` and `avg` over every query (`#[sharded(aggregate)]`).
    pub aggregate_fields: &'a [&'a str],
    /// Sums and averages declared for some queries only (`#[sharded(aggregate(all, x))]`):
    /// each field with each query that sums it.
    pub aggregations: &'a [FieldOfQuery<'a>],
    /// Field paths with range, `!=` and `not-in` filters on every query (`#[sharded(range)]`):
    /// each such query orders by the order field, then the filtered field.
    pub range_fields: &'a [&'a str],
    /// Range filters declared for some queries only (`#[sharded(range(all, x))]`): each field
    /// with each query that filters on it.
    pub ranges: &'a [FieldOfQuery<'a>],
    /// Sets of range fields filtered together in one query (`#[sharded(ranges(a, b))]`),
    /// each in the order Firestore orders them (by field path): a query filtering on all of
    /// a set's fields orders by the order field, then each of them, in every query that
    /// filters on each.
    pub range_sets: &'a [&'a [&'a str]],
    /// Array field paths with `array-contains` and `array-contains-any` queries
    /// (`#[sharded(contains)]`), in declaration order.
    pub array_fields: &'a [&'a str],
    /// Vector fields with `find_nearest` (`#[sharded(vector(dimension = n))]`), each with its
    /// dimension: the whole collection's and each equality query's vector index end with it.
    pub vector_fields: &'a [VectorField<'a>],
    /// Distributed counters (`#[sharded(counter(shards = n))]`), each with its shard
    /// documents: with any, the plan holds the TTL policy of increments' markers.
    pub counter_fields: &'a [Counter<'a>],
    /// Every top-level field the struct stores by its name, with the type it is stored as and
    /// whether a document must hold it to read back as the struct (not an `Option`, no
    /// `#[serde(default)]`): what other clients' writes are held to (the generated security
    /// rules, the TypeScript client's checks), so that every strict read of the Rust library
    /// reads what they write. It changes no index.
    pub fields: &'a [StoredField<'a>],
    /// The timestamp field after which a document may be deleted (`expire_at = "..."`): the
    /// plan holds its TTL policy with its single-field indexes disabled, and a query that hides
    /// expired documents filters it by range, as a range field of every query.
    pub expiry_field: Option<&'a str>,
}

/// A field the struct stores: its stored path, the Firestore type its Rust type is stored as,
/// and whether every document holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoredField<'a> {
    pub path: &'a str,
    pub stored_type: StoredType,
    pub required: bool,
    /// For an integer type narrower than Firestore's 64 bits (`i32`, `u8`, ...), the least and
    /// the greatest value it holds: a stored integer outside them fails the Rust read. `None`
    /// for `i64` and every other type.
    pub integer_range: Option<[i64; 2]>,
}

/// A [`StoredField`] owned, as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredFieldBuf {
    pub path: String,
    #[serde(rename = "type", default, skip_serializing_if = "StoredType::is_other")]
    pub stored_type: StoredType,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integer_range: Option<[i64; 2]>,
}

/// A distributed counter: its path and how many shard documents its increments spread over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter<'a> {
    pub field: &'a str,
    pub shards: u32,
}

/// A [`Counter`] owned, as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterBuf {
    pub field: String,
    pub shards: u32,
}

/// A vector field: its path and the dimension of its vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorField<'a> {
    pub field: &'a str,
    pub dimension: u32,
}

/// A [`VectorField`] owned, as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VectorFieldBuf {
    pub field: String,
    pub dimension: u32,
}

impl<'a> CollectionDescription<'a> {
    /// The paths of the fields with range filters, for every query or some, each once.
    pub fn range_field_paths(&self) -> Vec<&'a str> {
        let mut paths: Vec<&'a str> = self.range_fields.to_vec();
        for range in self.ranges {
            if !paths.contains(&range.field) {
                paths.push(range.field);
            }
        }
        paths
    }
}

impl CollectionDescription<'static> {
    /// Every field empty (no parents, no group, no resharding, nothing indexed): the base the
    /// derive's descriptions are written over (`..CollectionDescription::EMPTY`), so that each
    /// names only what its type sets. Every constant the derive writes is type-checked and
    /// borrow-checked in the user's crate; a field left to the base costs nothing there.
    #[doc(hidden)]
    pub const EMPTY: Self = CollectionDescription {
        collection: "",
        parent_collections: &[],
        collection_group: false,
        shard_field: "",
        shard_values: &[],
        previous_shard_values: &[],
        retired_shard_values: &[],
        reshard_since: None,
        order_field: "",
        direction: Direction::Ascending,
        order_type: StoredType::Other,
        reversible: false,
        server_timestamp: false,
        indexed_fields: &[],
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
        expiry_field: None,
    };
}

/// A field declared for one query only: a sum and average
/// (`#[sharded(aggregate(...))]`), whose index is the query's own with the field last, or a
/// range filter (`#[sharded(range(...))]`), whose index is the query's own with the field
/// after the order field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldOfQuery<'a> {
    /// The summed or filtered field's path.
    pub field: &'a str,
    /// The field paths the query compares, as its index holds them; none for `all()`.
    pub compared: &'a [&'a str],
    /// Whether the query is an array field's `array-contains` (its index holds the field's
    /// elements).
    pub contains: bool,
}

/// A [`FieldOfQuery`] owned, as the manifest records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldOfQueryBuf {
    pub field: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compared: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub contains: bool,
}

impl<'a> CollectionDescription<'a> {
    /// What a purge's query of expired documents asks of an index, in `scope`: the shard
    /// value by equality, ordered by the expiry field (`shard == v AND expiry <= now ORDER BY
    /// expiry, __name__`). `None` without an expiry field.
    pub fn purge_need(&self, scope: crate::QueryScope) -> Option<crate::IndexNeed> {
        Some(crate::IndexNeed {
            collection_group: self.collection.to_owned(),
            query_scope: scope,
            equalities: vec![self.shard_field.to_owned()],
            contains: None,
            orders: vec![(self.expiry_field?.to_owned(), Direction::Ascending)],
        })
    }

    /// The composite indexes and field overrides the collection needs.
    pub fn plan(&self) -> IndexPlan {
        crate::plan(self)
    }

    /// The values queries read: the current ones, then the previous ones not among them.
    pub fn read_values(&self) -> Vec<&'a str> {
        let mut values = self.shard_values.to_vec();
        values.extend(
            self.previous_shard_values
                .iter()
                .filter(|value| !self.shard_values.contains(value)),
        );
        values
    }

    /// The current values that were previous values too: all of them when not resharding.
    /// Writes keep drawing them at full rate.
    pub fn kept_values(&self) -> Vec<&'a str> {
        let resharding = !self.previous_shard_values.is_empty();
        self.shard_values
            .iter()
            .copied()
            .filter(|value| !resharding || self.previous_shard_values.contains(value))
            .collect()
    }

    /// The current values that are new key ranges (not previous ones), which writes move to
    /// gradually: none when not resharding.
    pub fn new_values(&self) -> Vec<&'a str> {
        if self.previous_shard_values.is_empty() {
            return Vec::new();
        }
        self.shard_values
            .iter()
            .copied()
            .filter(|value| !self.previous_shard_values.contains(value))
            .collect()
    }

    /// Whether a rebalance moves documents out of `value`: a previous value the current set
    /// dropped, or a retired one.
    pub fn moves_out_of(&self, value: &str) -> bool {
        !self.shard_values.contains(&value)
            && (self.previous_shard_values.contains(&value)
                || self.retired_shard_values.contains(&value))
    }

    /// Every value [`moves_out_of`](Self::moves_out_of) holds for, once each.
    pub fn moved_out_of(&self) -> Vec<&'a str> {
        let mut values: Vec<&'a str> = Vec::new();
        for &value in self
            .previous_shard_values
            .iter()
            .chain(self.retired_shard_values)
        {
            if self.moves_out_of(value) && !values.contains(&value) {
                values.push(value);
            }
        }
        values
    }

    /// Every value the collection's documents may hold: the current, previous and retired
    /// ones, once each.
    pub fn declared_values(&self) -> Vec<&'a str> {
        let mut values = self.read_values();
        for &value in self.retired_shard_values {
            if !values.contains(&value) {
                values.push(value);
            }
        }
        values
    }
}

/// The Firestore value type a field is stored as, as its Rust type tells it (the derive's front
/// end reads the type's name: an alias or a newtype is [`Other`](StoredType::Other)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StoredType {
    /// `FirestoreTimestamp`, `SystemTime`, or any `server_timestamp` order field.
    Timestamp,
    /// `i8` to `i64`, `isize`, `u8` to `u32`.
    Integer,
    /// `f32`, `f64`: a double, though a JavaScript client writes a whole number as an
    /// integer (Firestore orders the two together).
    Number,
    /// `String`, `char`.
    String,
    /// `bool`.
    Boolean,
    /// `Vec<T>`, `VecDeque<T>`, `HashSet<T>`, `BTreeSet<T>`: an array (never an order field).
    List,
    /// `HashMap<K, V>`, `BTreeMap<K, V>`: a map (never an order field).
    Map,
    /// Another type (a newtype implementing `OrderKey`, an alias, a struct of the user's): its
    /// stored type is not known before the compiler runs.
    #[default]
    Other,
}

impl StoredType {
    /// Reads the type from a Rust type's name, as written (`std::time::SystemTime`, `i64`).
    pub fn of_rust_type(name: &str) -> StoredType {
        match name.rsplit("::").next().unwrap_or(name) {
            "FirestoreTimestamp" | "SystemTime" => StoredType::Timestamp,
            "i8" | "i16" | "i32" | "i64" | "isize" | "u8" | "u16" | "u32" => StoredType::Integer,
            "f32" | "f64" => StoredType::Number,
            "String" | "char" => StoredType::String,
            "bool" => StoredType::Boolean,
            "Vec" | "VecDeque" | "HashSet" | "BTreeSet" => StoredType::List,
            "HashMap" | "BTreeMap" => StoredType::Map,
            _ => StoredType::Other,
        }
    }

    /// The least and greatest values of the Rust integer type `name` (as written), for one
    /// narrower than Firestore's 64-bit integers; `None` for `i64`, `isize` and every other
    /// type.
    pub fn integer_range_of(name: &str) -> Option<[i64; 2]> {
        let range = |min: i64, max: i64| Some([min, max]);
        match name.rsplit("::").next().unwrap_or(name) {
            "i8" => range(i8::MIN.into(), i8::MAX.into()),
            "i16" => range(i16::MIN.into(), i16::MAX.into()),
            "i32" => range(i32::MIN.into(), i32::MAX.into()),
            "u8" => range(0, u8::MAX.into()),
            "u16" => range(0, u16::MAX.into()),
            "u32" => range(0, u32::MAX.into()),
            _ => None,
        }
    }

    /// Whether this is [`Other`](StoredType::Other): nothing is known of it.
    pub fn is_other(&self) -> bool {
        *self == StoredType::Other
    }
}

/// A [`CollectionDescription`] owned: what the build reads from the sources and records in
/// `firestore.indexes.json`'s manifest, under the same names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CollectionDescriptionBuf {
    #[serde(rename = "collectionGroup")]
    pub collection: String,
    pub shard_field: String,
    pub order_field: String,
    pub direction: Direction,
    #[serde(default, skip_serializing_if = "StoredType::is_other")]
    pub order_type: StoredType,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reversible: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub server_timestamp: bool,
    pub indexed_fields: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub field_sets: Vec<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregate_fields: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregations: Vec<FieldOfQueryBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub range_fields: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranges: Vec<FieldOfQueryBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub range_sets: Vec<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub array_fields: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vector_fields: Vec<VectorFieldBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counter_fields: Vec<CounterBuf>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<StoredFieldBuf>,
    /// Recorded so that a later build can refuse a set that lost values (files written before
    /// it was recorded have none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shard_values: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub previous_shard_values: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retired_shard_values: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reshard_since: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parent_collections: Vec<String>,
    #[serde(
        rename = "groupQueries",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub collection_group: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry_field: Option<String>,
}

impl CollectionDescriptionBuf {
    /// The description borrowed, for as long as `f` runs.
    pub fn with<R>(&self, f: impl FnOnce(&CollectionDescription<'_>) -> R) -> R {
        fn strs(values: &[String]) -> Vec<&str> {
            values.iter().map(String::as_str).collect()
        }
        let sets: Vec<Vec<&str>> = self.field_sets.iter().map(|set| strs(set)).collect();
        let sets: Vec<&[&str]> = sets.iter().map(Vec::as_slice).collect();
        let range_sets: Vec<Vec<&str>> = self.range_sets.iter().map(|set| strs(set)).collect();
        let range_sets: Vec<&[&str]> = range_sets.iter().map(Vec::as_slice).collect();
        fn compared(fields: &[FieldOfQueryBuf]) -> Vec<Vec<&str>> {
            fields.iter().map(|field| strs(&field.compared)).collect()
        }
        fn borrowed<'b>(
            fields: &'b [FieldOfQueryBuf],
            compared: &'b [Vec<&'b str>],
        ) -> Vec<FieldOfQuery<'b>> {
            fields
                .iter()
                .zip(compared)
                .map(|(field, compared)| FieldOfQuery {
                    field: &field.field,
                    compared,
                    contains: field.contains,
                })
                .collect()
        }
        let (aggregated, ranged) = (compared(&self.aggregations), compared(&self.ranges));
        let aggregations = borrowed(&self.aggregations, &aggregated);
        let ranges = borrowed(&self.ranges, &ranged);
        let vectors: Vec<VectorField<'_>> = self
            .vector_fields
            .iter()
            .map(|vector| VectorField {
                field: &vector.field,
                dimension: vector.dimension,
            })
            .collect();
        let counters: Vec<Counter<'_>> = self
            .counter_fields
            .iter()
            .map(|counter| Counter {
                field: &counter.field,
                shards: counter.shards,
            })
            .collect();
        let fields: Vec<StoredField<'_>> = self
            .fields
            .iter()
            .map(|field| StoredField {
                path: &field.path,
                stored_type: field.stored_type,
                required: field.required,
                integer_range: field.integer_range,
            })
            .collect();
        f(&CollectionDescription {
            collection: &self.collection,
            parent_collections: &strs(&self.parent_collections),
            collection_group: self.collection_group,
            shard_field: &self.shard_field,
            shard_values: &strs(&self.shard_values),
            previous_shard_values: &strs(&self.previous_shard_values),
            retired_shard_values: &strs(&self.retired_shard_values),
            reshard_since: self.reshard_since,
            order_field: &self.order_field,
            direction: self.direction,
            order_type: self.order_type,
            reversible: self.reversible,
            server_timestamp: self.server_timestamp,
            indexed_fields: &strs(&self.indexed_fields),
            field_sets: &sets,
            aggregate_fields: &strs(&self.aggregate_fields),
            aggregations: &aggregations,
            range_fields: &strs(&self.range_fields),
            ranges: &ranges,
            range_sets: &range_sets,
            array_fields: &strs(&self.array_fields),
            vector_fields: &vectors,
            counter_fields: &counters,
            fields: &fields,
            expiry_field: self.expiry_field.as_deref(),
        })
    }

    /// The composite indexes and field overrides the collection needs, by the same plan as
    /// the borrowed description's.
    pub fn plan(&self) -> IndexPlan {
        self.with(|description| description.plan())
    }
}

impl From<&CollectionDescription<'_>> for CollectionDescriptionBuf {
    fn from(description: &CollectionDescription<'_>) -> Self {
        let strings = |values: &[&str]| values.iter().map(|value| value.to_string()).collect();
        let owned = |fields: &[FieldOfQuery<'_>]| {
            fields
                .iter()
                .map(|field| FieldOfQueryBuf {
                    field: field.field.to_owned(),
                    compared: strings(field.compared),
                    contains: field.contains,
                })
                .collect()
        };
        CollectionDescriptionBuf {
            collection: description.collection.to_owned(),
            shard_field: description.shard_field.to_owned(),
            order_field: description.order_field.to_owned(),
            direction: description.direction,
            order_type: description.order_type,
            reversible: description.reversible,
            server_timestamp: description.server_timestamp,
            indexed_fields: strings(description.indexed_fields),
            field_sets: description
                .field_sets
                .iter()
                .map(|set| strings(set))
                .collect(),
            aggregate_fields: strings(description.aggregate_fields),
            aggregations: owned(description.aggregations),
            range_fields: strings(description.range_fields),
            ranges: owned(description.ranges),
            range_sets: description
                .range_sets
                .iter()
                .map(|set| strings(set))
                .collect(),
            array_fields: strings(description.array_fields),
            vector_fields: description
                .vector_fields
                .iter()
                .map(|vector| VectorFieldBuf {
                    field: vector.field.to_owned(),
                    dimension: vector.dimension,
                })
                .collect(),
            counter_fields: description
                .counter_fields
                .iter()
                .map(|counter| CounterBuf {
                    field: counter.field.to_owned(),
                    shards: counter.shards,
                })
                .collect(),
            fields: description
                .fields
                .iter()
                .map(|field| StoredFieldBuf {
                    path: field.path.to_owned(),
                    stored_type: field.stored_type,
                    required: field.required,
                    integer_range: field.integer_range,
                })
                .collect(),
            shard_values: strings(description.shard_values),
            previous_shard_values: strings(description.previous_shard_values),
            retired_shard_values: strings(description.retired_shard_values),
            reshard_since: description.reshard_since,
            parent_collections: strings(description.parent_collections),
            collection_group: description.collection_group,
            expiry_field: description.expiry_field.map(str::to_owned),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resharding_sets_partition_the_declared_values() {
        let resharding = CollectionDescription {
            shard_values: &["0", "1", "5", "6"],
            previous_shard_values: &["0", "1", "2"],
            retired_shard_values: &["9"],
            ..CollectionDescription::EMPTY
        };
        assert_eq!(resharding.read_values(), ["0", "1", "5", "6", "2"]);
        assert_eq!(resharding.kept_values(), ["0", "1"]);
        assert_eq!(resharding.new_values(), ["5", "6"]);
        assert_eq!(resharding.moved_out_of(), ["2", "9"]);
        assert!(resharding.moves_out_of("2") && !resharding.moves_out_of("0"));
        assert!(
            !resharding.moves_out_of("7"),
            "a value no set has is missing, not moved"
        );
        assert_eq!(resharding.declared_values(), ["0", "1", "5", "6", "2", "9"]);
        let settled = CollectionDescription {
            shard_values: &["0", "1"],
            ..CollectionDescription::EMPTY
        };
        assert_eq!(settled.read_values(), ["0", "1"]);
        assert_eq!(settled.kept_values(), ["0", "1"]);
        assert!(settled.new_values().is_empty() && settled.moved_out_of().is_empty());
    }

    #[test]
    fn owned_and_borrowed_plan_alike_and_round_trip() {
        let description = CollectionDescription {
            collection: "ticks",
            parent_collections: &["venues"],
            collection_group: true,
            shard_field: "`shard-id`",
            shard_values: &["0", "1", "2"],
            previous_shard_values: &["0", "5"],
            retired_shard_values: &["7"],
            reshard_since: Some(1_700_000_000),
            order_field: "at",
            direction: Direction::Ascending,
            order_type: StoredType::Timestamp,
            reversible: true,
            server_timestamp: true,
            indexed_fields: &["venue", "price.currency"],
            field_sets: &[&["venue", "side"]],
            aggregate_fields: &["qty"],
            aggregations: &[FieldOfQuery {
                field: "price",
                compared: &["venue", "side"],
                contains: false,
            }],
            range_fields: &["qty"],
            ranges: &[FieldOfQuery {
                field: "price",
                compared: &["tags"],
                contains: true,
            }],
            range_sets: &[&["price", "qty"]],
            array_fields: &["tags"],
            vector_fields: &[],
            counter_fields: &[Counter {
                field: "likes",
                shards: 20,
            }],
            fields: &[
                StoredField {
                    path: "venue",
                    stored_type: StoredType::String,
                    required: true,
                    integer_range: None,
                },
                StoredField {
                    path: "note",
                    stored_type: StoredType::Other,
                    required: false,
                    integer_range: None,
                },
                StoredField {
                    path: "stock",
                    stored_type: StoredType::Integer,
                    required: true,
                    integer_range: Some([i64::from(i32::MIN), i64::from(i32::MAX)]),
                },
            ],
            expiry_field: None,
        };
        let owned = CollectionDescriptionBuf::from(&description);
        assert_eq!(owned.plan(), description.plan());
        owned.with(|borrowed| assert_eq!(*borrowed, description));
        let json = serde_json::to_string(&owned).unwrap();
        assert_eq!(
            serde_json::from_str::<CollectionDescriptionBuf>(&json).unwrap(),
            owned
        );
    }
}
