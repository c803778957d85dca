//! Every attribute keyword, in one place.

/// The attribute path: `#[sharded(...)]`.
pub const SHARDED: &str = "sharded";
/// serde's attribute path, read for the stored field names.
pub const SERDE: &str = "serde";

// Container keys.
pub const SHARDS: &str = "shards";
pub const SHARD_VALUES: &str = "shard_values";
pub const WRITES_PER_SECOND: &str = "writes_per_second";
pub const ORDER_BY: &str = "order_by";
pub const DIRECTION: &str = "direction";
pub const COLLECTION: &str = "collection";
pub const SHARD_FIELD: &str = "shard_field";
pub const PREVIOUS: &str = "previous";
pub const RETIRED: &str = "retired";
pub const PARENT: &str = "parent";
pub const COLLECTION_GROUP: &str = "collection_group";
pub const REVERSIBLE: &str = "reversible";
pub const SERVER_TIMESTAMP: &str = "server_timestamp";
/// `expire_at = "expires"`: the field that says when a document may be deleted (its TTL).
pub const EXPIRE_AT: &str = "expire_at";
/// `ranges(a, b)`: range fields filtered together in one query.
pub const RANGES: &str = "ranges";

// Keys inside `previous(...)`.
pub const SINCE: &str = "since";

/// Every key `previous(...)` takes.
pub const PREVIOUS_KEYS: &[&str] = &[SHARDS, SHARD_VALUES, WRITES_PER_SECOND, SINCE];
/// Every key `retired(...)` takes.
pub const RETIRED_KEYS: &[&str] = &[SHARDS, SHARD_VALUES, WRITES_PER_SECOND];

/// Every key `#[sharded(...)]` takes on a struct.
pub const CONTAINER_KEYS: &[&str] = &[
    SHARDS,
    SHARD_VALUES,
    WRITES_PER_SECOND,
    ORDER_BY,
    DIRECTION,
    COLLECTION,
    SHARD_FIELD,
    PREVIOUS,
    RETIRED,
    PARENT,
    COLLECTION_GROUP,
    REVERSIBLE,
    SERVER_TIMESTAMP,
    EXPIRE_AT,
    INDEX,
    RANGES,
];

// Field keys.
pub const INDEX: &str = "index";
pub const AGGREGATE: &str = "aggregate";
pub const CONTAINS: &str = "contains";
pub const RANGE: &str = "range";
pub const VECTOR: &str = "vector";
pub const DIMENSION: &str = "dimension";
pub const COUNTER: &str = "counter";
/// Every key `counter(...)` takes: its shard count, or the rate it is sized for.
pub const COUNTER_KEYS: &[&str] = &[SHARDS, WRITES_PER_SECOND];
/// The most shard documents one counter may have: an exact read is one aggregation over
/// them however many there are, and a transaction that reads the value reads each.
pub const MAX_COUNTER_SHARDS: u64 = 1000;
/// Firestore's largest vector dimension.
pub const MAX_VECTOR_DIMENSION: u64 = 2048;

/// Every key `#[sharded(...)]` takes on a field.
pub const FIELD_KEYS: &[&str] = &[INDEX, AGGREGATE, CONTAINS, RANGE, VECTOR, COUNTER];

// serde keys that decide what is stored, and under which name.
pub const RENAME: &str = "rename";
pub const RENAME_ALL: &str = "rename_all";
pub const SERIALIZE: &str = "serialize";
pub const SKIP: &str = "skip";
pub const SKIP_SERIALIZING: &str = "skip_serializing";
pub const SKIP_SERIALIZING_IF: &str = "skip_serializing_if";
pub const FLATTEN: &str = "flatten";
pub const WITH: &str = "with";
pub const SERIALIZE_WITH: &str = "serialize_with";
pub const DESERIALIZE_WITH: &str = "deserialize_with";
pub const GETTER: &str = "getter";
pub const INTO: &str = "into";
pub const DENY_UNKNOWN_FIELDS: &str = "deny_unknown_fields";
pub const TRANSPARENT: &str = "transparent";
pub const DEFAULT: &str = "default";
pub const SKIP_DESERIALIZING: &str = "skip_deserializing";

/// The default shard field name, as in the recipe.
pub const DEFAULT_SHARD_FIELD: &str = "shard";
/// Writes per second one shard value sustains on a sequentially indexed field.
pub const WRITES_PER_SHARD: u64 = 500;
pub use sharded_indexes::MAX_SHARDS;

/// The whole collection's query method, `T::query().all()`, which no other query may take.
pub const WHOLE_COLLECTION_METHOD: &str = "all";
