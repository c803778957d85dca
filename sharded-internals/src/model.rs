//! The validated description of a sharded collection: what the derive expands and what the
//! build-time crate turns into indexes. Only `lower::validate` builds one, after `check`'s rules pass.

use crate::attr::Direction;

/// A struct whose attributes passed every check.
#[derive(Clone)]
pub struct Model<'a> {
    pub ident: &'a syn::Ident,
    pub vis: &'a syn::Visibility,
    /// The collection id documents are written to.
    pub collection: String,
    /// The collection ids of the parent documents' path (`parent = "rooms"`), outermost
    /// first; empty for a top-level collection.
    pub parent_collections: Vec<String>,
    /// Whether queries across every parent are declared (`collection_group`).
    pub collection_group: bool,
    /// Whether queries in the other direction are declared (`reversible`).
    pub reversible: bool,
    /// The stored name of the shard field.
    pub shard_field: String,
    /// The shard field as a field path: its name, backtick-quoted where Firestore needs it.
    pub shard_path: String,
    /// The values the shard field takes, drawn uniformly at random per write.
    pub shard_values: Vec<String>,
    /// The set the collection is moving from, if it is.
    pub resharding: Resharding,
    pub order: OrderField<'a>,
    /// One entry per typed query, in declaration order.
    pub indexes: Vec<IndexedField<'a>>,
    /// One entry per `index(a, b, ...)` on the struct, in declaration order.
    pub field_sets: Vec<FieldSet<'a>>,
    /// The fields with typed `sum` and `avg` queries (`#[sharded(aggregate)]`).
    pub aggregates: Vec<DeclaredField<'a>>,
    /// The fields with range, `!=` and `not-in` filters (`#[sharded(range)]`), in the same
    /// form: the field and the queries that filter on it.
    pub ranges: Vec<DeclaredField<'a>>,
    /// The sets of range fields filtered together (`ranges(a, b)`), each as stored paths in
    /// the order Firestore orders them.
    pub range_sets: Vec<Vec<String>>,
    /// The array fields with typed `array-contains` queries (`#[sharded(contains)]`).
    pub arrays: Vec<ArrayField<'a>>,
    /// The vector fields searched with `find_nearest` (`#[sharded(vector(dimension = n))]`).
    pub vectors: Vec<VectorField<'a>>,
    /// The distributed counters (`#[sharded(counter(shards = n))]`).
    pub counters: Vec<CounterField<'a>>,
    /// Every field serde stores under a name of its own, with its field path: what a
    /// field-masked update can name.
    pub stored_fields: Vec<(&'a syn::Ident, String)>,
    /// The stored fields without a serde adapter (whose Rust type is what is stored), with
    /// their types and paths: what a typed field transform can name.
    pub transformable_fields: Vec<(&'a syn::Ident, &'a syn::Type, String)>,
    /// Every field stored by name, as the description records it: its path, the type it is
    /// stored as, whether a document must hold it.
    pub fields: Vec<sharded_indexes::StoredFieldBuf>,
    /// The field after which a document may be deleted (`expire_at = "..."`).
    pub expiry: Option<ExpiryField<'a>>,
}

impl Model<'_> {
    /// The collection's description, owned, with the stored paths of the indexed fields in
    /// declaration order (the derive computes nested ones at compile time, the build from the
    /// sources).
    pub fn description(
        &self,
        indexed_fields: Vec<String>,
    ) -> sharded_indexes::CollectionDescriptionBuf {
        sharded_indexes::CollectionDescriptionBuf {
            collection: self.collection.clone(),
            shard_field: self.shard_path.clone(),
            order_field: self.order.path.clone(),
            direction: self.order.direction,
            order_type: self.order.stored_type,
            indexed_fields,
            field_sets: self
                .field_sets
                .iter()
                .map(|set| set.fields.iter().map(|field| field.path.clone()).collect())
                .collect(),
            aggregate_fields: everywhere(&self.aggregates),
            aggregations: per_query(&self.aggregates),
            range_fields: everywhere(&self.ranges),
            ranges: per_query(&self.ranges),
            range_sets: self.range_sets.clone(),
            array_fields: self.arrays.iter().map(|field| field.path.clone()).collect(),
            vector_fields: self
                .vectors
                .iter()
                .map(|field| sharded_indexes::VectorFieldBuf {
                    field: field.path.clone(),
                    dimension: field.dimension,
                })
                .collect(),
            counter_fields: self
                .counters
                .iter()
                .map(|field| sharded_indexes::CounterBuf {
                    field: field.path.clone(),
                    shards: field.shards,
                })
                .collect(),
            fields: self.fields.clone(),
            shard_values: self.shard_values.clone(),
            previous_shard_values: self.resharding.previous_values.clone(),
            retired_shard_values: self.resharding.retired_values.clone(),
            reshard_since: self.resharding.since,
            parent_collections: self.parent_collections.clone(),
            collection_group: self.collection_group,
            reversible: self.reversible,
            server_timestamp: self.order.server_timestamp.is_some(),
            expiry_field: self.expiry.as_ref().map(|expiry| expiry.path.clone()),
        }
    }
}

/// The paths of the fields declared for every query (`aggregate`, `range`).
fn everywhere(fields: &[DeclaredField<'_>]) -> Vec<String> {
    fields
        .iter()
        .filter(|field| field.queries.is_none())
        .map(|field| field.path.clone())
        .collect()
}

/// Each field declared for some queries, with each of them (`aggregate(all, x)`).
fn per_query(fields: &[DeclaredField<'_>]) -> Vec<sharded_indexes::FieldOfQueryBuf> {
    fields
        .iter()
        .flat_map(|field| {
            field
                .queries
                .iter()
                .flatten()
                .map(|query| sharded_indexes::FieldOfQueryBuf {
                    field: field.path.clone(),
                    compared: query.compared.clone(),
                    contains: query.contains,
                })
        })
        .collect()
}

/// The timestamp field named by `expire_at`: Firestore's TTL field, filtered by range in every
/// query.
#[derive(Clone)]
pub struct ExpiryField<'a> {
    pub ident: &'a syn::Ident,
    /// The Rust name, unraw.
    pub name: String,
    pub ty: &'a syn::Type,
    /// The field path as stored.
    pub path: String,
    /// `expire_at`'s value, for spans.
    pub key: &'a syn::LitStr,
}

/// `previous(...)`: a live collection moving from one shard set to another.
#[derive(Clone, Default, Debug, PartialEq, Eq)]
pub struct Resharding {
    /// The previous set's values; empty when not resharding.
    pub previous_values: Vec<String>,
    /// When writes began moving to new values, in seconds since the Unix epoch.
    pub since: Option<u64>,
    /// `retired(...)`: values of an earlier set that no document holds after a rebalance,
    /// and that queries neither read nor draw (none of them current or previous).
    pub retired_values: Vec<String>,
}

/// The field every sharded query orders by.
#[derive(Clone)]
pub struct OrderField<'a> {
    pub ident: &'a syn::Ident,
    pub ty: &'a syn::Type,
    /// The field path as stored.
    pub path: String,
    /// The name serde stores the field under (the path, unquoted).
    pub stored_name: String,
    pub direction: Direction,
    /// What the field is stored as, by its type's name (a timestamp for `server_timestamp`).
    pub stored_type: sharded_indexes::StoredType,
    /// `server_timestamp`: the server fills it as it applies each write (the key, for spans).
    pub server_timestamp: Option<&'a syn::Path>,
}

/// A field (or a field inside one) with an equality query and a composite index.
#[derive(Clone)]
pub struct IndexedField<'a> {
    /// The struct's own field the path starts at.
    pub field: &'a syn::Ident,
    /// The name serde stores `field` under.
    pub stored_field: String,
    /// Fields inside `field`'s type, in Rust names; empty for `#[sharded(index)]`.
    pub nested: Vec<syn::Ident>,
    /// The Firestore field path, with segments backtick-quoted where Firestore needs it. For a
    /// nested path the derive cannot see the inner types' serde names, so this spells the inner
    /// segments with their Rust names: the derive computes the stored path at compile time from
    /// `StoredNames` instead, and `sharded-build` resolves it from the sources.
    pub path: String,
    /// The type a query compares the field with.
    pub value_ty: syn::Type,
    /// The name of the query method, e.g. `exchange` or `price_currency`.
    pub method: syn::Ident,
    /// The Rust field is an `Option`: `None` is not stored, so a written document may lack it.
    pub optional: bool,
}

/// Fields one equality query compares together: `index(exchange, instrument_type)`.
#[derive(Clone)]
pub struct FieldSet<'a> {
    /// The fields, in the order the attribute names them (the index's order too).
    pub fields: Vec<SetField<'a>>,
    /// The query method: the fields' names joined by `_and_`.
    pub method: syn::Ident,
}

/// One field of a [`FieldSet`].
#[derive(Clone)]
pub struct SetField<'a> {
    /// The user's token naming the field in the attribute.
    pub ident: &'a syn::Ident,
    /// The field path as stored.
    pub path: String,
    /// The type a query compares the field with.
    pub value_ty: syn::Type,
}

/// A field declared for some queries or every one: a numeric field with typed `sum` and `avg`
/// queries (`aggregate`), or a field with range filters (`range`).
#[derive(Clone)]
pub struct DeclaredField<'a> {
    pub ident: &'a syn::Ident,
    pub ty: &'a syn::Type,
    /// The type a filter compares the field with: its own, or the one inside its `Option`.
    pub value_ty: syn::Type,
    /// The field path as stored.
    pub path: String,
    /// The queries that sum or filter it (`aggregate(all, exchange)`, `range(all)`); `None`
    /// for every query (`aggregate`, `range`).
    pub queries: Option<Vec<DeclaredQuery>>,
}

/// A query declared to sum and average a field, or to filter it by range.
#[derive(Clone)]
pub struct DeclaredQuery {
    /// The query's method name, as written in `aggregate(...)` or `range(...)` (what its id
    /// is made from).
    pub method: syn::Ident,
    /// The field paths the query compares, as its index holds them; none for `all`.
    pub compared: Vec<String>,
    /// Whether it is an array field's `array-contains` query.
    pub contains: bool,
}

/// An array field with typed `array-contains` and `array-contains-any` queries.
#[derive(Clone)]
pub struct ArrayField<'a> {
    pub ident: &'a syn::Ident,
    /// The element type: what a query takes a value as.
    pub element_ty: syn::Type,
    /// The field path as stored.
    pub path: String,
    /// The `array-contains` query's method, `{field}_contains`; its `array-contains-any` one
    /// adds `_any`.
    pub method: syn::Ident,
}

/// A vector field searched with `find_nearest`.
#[derive(Clone)]
pub struct VectorField<'a> {
    pub ident: &'a syn::Ident,
    /// Its type, which must be a vector (checked by the derive's output, on this type).
    pub ty: &'a syn::Type,
    /// The field path as stored.
    pub path: String,
    /// The number of values in each vector.
    pub dimension: u32,
}

/// A distributed counter: a field whose exact value is the sum of its shard documents.
#[derive(Clone)]
pub struct CounterField<'a> {
    pub ident: &'a syn::Ident,
    /// Its type, which must be an integer (checked by the derive's output, on this type).
    pub ty: &'a syn::Type,
    /// The field path as stored.
    pub path: String,
    /// Its shard documents.
    pub shards: u32,
}

/// `Instrument` → `instruments`, `PriceTick` → `price_ticks`: the snake_case plural.
pub fn default_collection(type_name: &str) -> String {
    let mut snake = String::new();
    for (i, ch) in type_name.chars().enumerate() {
        if ch.is_uppercase() {
            if i > 0 {
                snake.push('_');
            }
            snake.extend(ch.to_lowercase());
        } else {
            snake.push(ch);
        }
    }
    pluralize(&snake)
}

fn pluralize(word: &str) -> String {
    let consonant_y = word.ends_with('y')
        && !word.ends_with("ay")
        && !word.ends_with("ey")
        && !word.ends_with("oy")
        && !word.ends_with("uy");
    if consonant_y {
        format!("{}ies", &word[..word.len() - 1])
    } else if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| word.ends_with(end))
    {
        format!("{word}es")
    } else {
        format!("{word}s")
    }
}

/// The query method of an indexed path: `exchange`, or `price_currency` for `price.currency`.
/// Segments lose their `r#` (`price.r#type` → `price_type`); a name that is a keyword is
/// raw again (`r#type` → `r#type`), so the method can be declared and called.
pub fn query_method(
    field: &syn::Ident,
    nested: &[syn::Ident],
    span: proc_macro2::Span,
) -> syn::Ident {
    let name = std::iter::once(field)
        .chain(nested)
        .map(|ident| ident.unraw().to_string())
        .collect::<Vec<_>>()
        .join("_");
    if syn::parse_str::<syn::Ident>(&name).is_ok() {
        syn::Ident::new(&name, span)
    } else {
        syn::Ident::new_raw(&name, span)
    }
}

/// Segments joined into a Firestore field path, quoted where Firestore needs it.
pub fn field_path<'s>(segments: impl IntoIterator<Item = &'s str>) -> String {
    let segments: Vec<&str> = segments.into_iter().collect();
    sharded_indexes::field_path::field_path(&segments)
}

use syn::ext::IdentExt as _;

/// `shards = n` stores the decimal strings "0" to "n-1".
pub fn numbered(shards: u64) -> Vec<String> {
    (0..shards).map(|shard| shard.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_join_segments_and_stay_declarable() {
        let ident = |name: &str| syn::parse_str::<syn::Ident>(name).unwrap();
        let method = |field: &str, nested: &[&str]| {
            let nested: Vec<syn::Ident> = nested.iter().map(|n| ident(n)).collect();
            query_method(&ident(field), &nested, proc_macro2::Span::call_site()).to_string()
        };
        assert_eq!(method("exchange", &[]), "exchange");
        assert_eq!(method("price", &["currency"]), "price_currency");
        assert_eq!(method("r#type", &[]), "r#type");
        assert_eq!(method("price", &["r#type"]), "price_type");
    }

    #[test]
    fn collection_names_are_snake_case_plurals() {
        assert_eq!(default_collection("Instrument"), "instruments");
        assert_eq!(default_collection("PriceTick"), "price_ticks");
        assert_eq!(default_collection("Company"), "companies");
        assert_eq!(default_collection("Day"), "days");
        assert_eq!(default_collection("Address"), "addresses");
        assert_eq!(default_collection("Batch"), "batches");
    }
}
