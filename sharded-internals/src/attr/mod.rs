//! `#[sharded(...)]` and the parts of `#[serde(...)]` that decide stored names, parsed into
//! values that keep the user's tokens for error spans. Only per-attribute rules live here;
//! rules that relate fields to each other are in `check`. One file per place an attribute
//! stands: the struct (`container`), a field (`field`), serde's own (`serde`), and the values
//! they share (`values`).

mod container;
mod field;
mod serde;
mod values;

use proc_macro2::TokenStream;
use syn::LitStr;

use crate::case::RenameRule;

/// A value given under a key, with both kept for error spans.
#[derive(Clone)]
pub struct Keyed<T> {
    pub key: syn::Path,
    pub value: T,
    pub tokens: TokenStream,
}

/// Which way the order field sorts: the index plan's own type, so nothing maps one to another.
pub use sharded_indexes::Direction;

/// `#[sharded(...)]` on the struct.
#[derive(Default)]
pub struct ContainerAttrs {
    /// The first `#[sharded]` attribute, to span errors about missing keys.
    pub attribute: Option<syn::Attribute>,
    /// The shard set writes draw from.
    pub set: ShardSetAttrs,
    /// `previous(...)`: the set a live collection is moving from.
    pub previous: Option<Keyed<PreviousAttrs>>,
    /// `retired(...)`: a set a rebalance moved every document out of.
    pub retired: Option<Keyed<PreviousAttrs>>,
    pub order_by: Option<Keyed<LitStr>>,
    pub direction: Option<Keyed<Direction>>,
    pub collection: Option<Keyed<LitStr>>,
    /// `parent = "rooms"`: the collection ids of the documents the collection lives under.
    pub parent: Option<Keyed<LitStr>>,
    /// `collection_group`: queries across every parent are declared (with their indexes).
    pub collection_group: Option<syn::Path>,
    /// `reversible`: queries run in the other direction too (with their indexes), and pages
    /// go back.
    pub reversible: Option<syn::Path>,
    /// `server_timestamp`: the server fills the order field as it applies each write.
    pub server_timestamp: Option<syn::Path>,
    pub shard_field: Option<Keyed<LitStr>>,
    /// `expire_at = "expires"`: the timestamp field after which a document may be deleted.
    pub expire_at: Option<Keyed<LitStr>>,
    /// `index(a, b, ...)`: fields queried for equality together, one entry per attribute.
    pub field_sets: Vec<Keyed<Vec<syn::Ident>>>,
    /// `ranges(a, b, ...)`: range fields one query filters on together.
    pub range_sets: Vec<Keyed<Vec<syn::Ident>>>,
}

/// The keys that each give a shard set; at most one may be used.
#[derive(Default, Clone)]
pub struct ShardSetAttrs {
    pub shards: Option<Keyed<u64>>,
    pub shard_values: Option<Keyed<Vec<LitStr>>>,
    pub writes_per_second: Option<Keyed<u64>>,
}

/// `previous(shards = 3, since = "2026-11-22T19:00:00Z")`, or `retired(shards = 6)` (no
/// `since`).
#[derive(Default, Clone)]
pub struct PreviousAttrs {
    pub set: ShardSetAttrs,
    pub since: Option<Keyed<LitStr>>,
    /// A key inside was reported already: a missing set is then no news.
    pub malformed: bool,
}

/// `#[sharded(...)]` on a field.
#[derive(Default)]
pub struct FieldAttrs {
    pub index: Option<Keyed<IndexSpec>>,
    /// `#[sharded(aggregate)]`: the field has typed `sum` and `avg` queries.
    pub aggregate: Option<syn::Path>,
    /// `#[sharded(aggregate(all, exchange))]`: the queries (by method name) that sum and
    /// average it, each with its index; `None` for every query.
    pub aggregate_queries: Option<Vec<syn::Ident>>,
    /// `#[sharded(range)]`: the field has range, `!=` and `not-in` filters on every query.
    pub range: Option<syn::Path>,
    /// `#[sharded(range(all, exchange))]`: the queries (by method name) that filter on it,
    /// each with its index; `None` for every query.
    pub range_queries: Option<Vec<syn::Ident>>,
    /// `#[sharded(contains)]`: the array field has typed `array-contains` and
    /// `array-contains-any` queries.
    pub contains: Option<syn::Path>,
    /// `#[sharded(vector(dimension = 768))]`: the field is a vector of that many numbers,
    /// searched with `find_nearest`; `None` inside where the dimension was reported wrong.
    pub vector: Option<Keyed<Option<u32>>>,
    /// `#[sharded(counter(shards = 20))]` (or `counter(writes_per_second = 20)`): the field is
    /// a distributed counter of that many shard documents; `None` inside where the size was
    /// reported wrong.
    pub counter: Option<Keyed<Option<u32>>>,
}

/// What `index` asks for.
#[derive(Clone)]
pub enum IndexSpec {
    /// `#[sharded(index)]`: the field itself.
    Field,
    /// `#[sharded(index(currency: String, ...))]`: fields inside the field's own type.
    Nested(Vec<NestedIndex>),
}

/// `a.b: Type` inside `index(...)`.
#[derive(Clone)]
pub struct NestedIndex {
    pub path: Vec<syn::Ident>,
    pub ty: syn::Type,
}

/// What serde says about the struct.
#[derive(Default)]
pub struct SerdeContainer {
    pub rename_all: Option<RenameRule>,
    pub deny_unknown_fields: Option<syn::Path>,
    pub transparent: Option<syn::Path>,
    /// `into = "Other"`: the struct is stored as another type, whose names sharded cannot see.
    pub into: Option<syn::Path>,
    /// `default`: a field a document lacks reads as its default, so no field is required.
    pub default: bool,
}

/// What serde says about a field.
#[derive(Default)]
pub struct SerdeField {
    pub rename: Option<String>,
    /// `skip`, `skip_serializing` or `skip_serializing_if`: the field may be absent when stored.
    pub skipped: Option<syn::Path>,
    /// The predicate of `skip_serializing_if`, as written (`"Option::is_none"`).
    pub skip_if: Option<String>,
    pub flatten: Option<syn::Path>,
    /// `with`, `serialize_with`, `deserialize_with` or `getter`: a serde adapter decides how
    /// the value is stored or read.
    pub custom: Option<syn::Path>,
    /// `default`, `default = "..."` or `skip_deserializing`: a document may lack the field and
    /// still read back.
    pub optional_on_read: bool,
}
