//! The model built from a container whose attributes passed every check: each part lowered
//! from its attributes (reporting what cannot be lowered, spanned on the user's token), the
//! cross-field rules of `check` applied, and a `Model` only when nothing was wrong.

mod counters;
mod expiry;
mod order;
mod placement;
mod queries;
mod range_sets;
mod shard_sets;
mod standalone;

use crate::ast::Container;
use crate::check::{
    check_array_methods_are_free, check_in_methods_are_free, check_shape,
    check_shard_field_is_free, query_id_collision,
};
use crate::ctxt::Ctxt;
use crate::model::{Model, Resharding, field_path};

/// Validates `cont`; `None` when any error was reported (to `cx`, here or while parsing).
pub fn validate<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Option<Model<'a>> {
    check_shape(cx, cont);
    let shard_values = shard_sets::shard_values(cx, cont);
    let resharding =
        shard_sets::previous(cx, cont, shard_values.as_deref()).map(|resharding| Resharding {
            retired_values: shard_sets::retired(cx, cont, shard_values.as_deref(), &resharding),
            ..resharding
        });
    let collection = placement::collection(cx, cont);
    let parent = placement::parent(cx, cont);
    let shard_field = placement::shard_field(cx, cont);
    let order = order::order_field(cx, cont);
    if let Some(shard_field) = &shard_field {
        check_shard_field_is_free(cx, cont, shard_field);
    }
    let indexes = queries::indexed_fields(cx, cont);
    let field_sets = queries::field_sets(cx, cont, &indexes);
    let methods = indexes
        .iter()
        .map(|index| &index.method)
        .chain(field_sets.iter().map(|set| &set.method));
    if let Some((method, other)) = query_id_collision(methods, sharded_indexes::query_id) {
        cx.error_spanned_by(
            method,
            format!("the query names `{method}` and `{other}` hash to the same id (`sharded_runtime::reads::query_id`), so their types would be one; rename one of the fields"),
        );
    }
    let methods: Vec<&syn::Ident> = indexes
        .iter()
        .map(|index| &index.method)
        .chain(field_sets.iter().map(|set| &set.method))
        .collect();
    check_in_methods_are_free(cx, indexes.iter().map(|index| &index.method), &methods);
    let arrays = queries::arrays(cx, cont);
    let known = queries::KnownQueries::of(&indexes, &field_sets, &arrays);
    let aggregates = queries::aggregates(cx, cont, &known);
    let mut ranges = queries::ranges(cx, cont, &known);
    let expiry = expiry::expiry_field(cx, cont, &mut ranges);
    let mut range_sets = range_sets::range_sets(cx, cont, &ranges);
    if let Some(expiry) = &expiry {
        range_sets = expiry::with_expiry(expiry, &ranges, range_sets);
    }
    let vectors = queries::vectors(cx, cont);
    let counters = counters::counters(cx, cont);
    check_array_methods_are_free(cx, &arrays, &methods);
    if cx.has_errors() {
        return None;
    }
    Some(Model {
        ident: cont.ident,
        vis: &cont.input.vis,
        collection: collection?,
        parent_collections: parent?,
        collection_group: cont.attrs.collection_group.is_some(),
        reversible: cont.attrs.reversible.is_some(),
        shard_path: field_path([shard_field.as_deref()?]),
        shard_field: shard_field?,
        shard_values: shard_values?,
        resharding: resharding?,
        order: order?,
        indexes,
        field_sets,
        aggregates,
        ranges,
        range_sets,
        arrays,
        vectors,
        counters,
        stored_fields: stored_fields(cont),
        transformable_fields: transformable_fields(cont),
        fields: field_descriptions(cont),
        expiry,
    })
}

/// The fields serde stores under a name of their own (not always skipped, not flattened).
fn stored_fields<'a>(cont: &'a Container<'a>) -> Vec<(&'a syn::Ident, String)> {
    cont.fields
        .iter()
        .filter(|field| field.is_stored_by_name())
        .map(|field| (field.ident, field_path([field.stored_name.as_str()])))
        .collect()
}

/// Every field stored by name, with the type its Rust type is stored as (by the type's last
/// path segment, as the order field's: an alias or a struct of the user's is `Other`, which
/// holds nothing to its type) and whether a document must hold it: not an `Option`, and no
/// `#[serde(default)]` on it or on the struct. A field with a serde adapter is stored as the
/// adapter decides: its type is not known.
fn field_descriptions(cont: &Container<'_>) -> Vec<sharded_indexes::StoredFieldBuf> {
    use sharded_indexes::StoredType;
    cont.fields
        .iter()
        .filter(|field| field.is_stored_by_name())
        .map(|field| {
            let (ty, optional) = match crate::types::option_inner(field.ty) {
                Some(inner) => (inner, true),
                None => (field.ty, false),
            };
            let name = match field.serde.custom {
                Some(_) => None,
                None => crate::types::last_ident(ty),
            };
            let stored_type = name
                .as_ref()
                .map_or(StoredType::Other, |name| StoredType::of_rust_type(name));
            sharded_indexes::StoredFieldBuf {
                path: field_path([field.stored_name.as_str()]),
                stored_type,
                required: !optional && !field.serde.optional_on_read && !cont.serde.default,
                integer_range: name
                    .as_ref()
                    .and_then(|name| StoredType::integer_range_of(name)),
            }
        })
        .collect()
}

/// The stored fields whose Rust type is stored as it is (no serde adapter).
fn transformable_fields<'a>(
    cont: &'a Container<'a>,
) -> Vec<(&'a syn::Ident, &'a syn::Type, String)> {
    cont.fields
        .iter()
        .filter(|field| field.is_transformable())
        .map(|field| {
            (
                field.ident,
                field.ty,
                field_path([field.stored_name.as_str()]),
            )
        })
        .collect()
}

/// An error on the `#[sharded]` attribute if there is one, else on the struct's name.
pub(crate) fn missing(cont: &Container, message: impl std::fmt::Display) -> syn::Error {
    match &cont.attrs.attribute {
        Some(attr) => syn::Error::new_spanned(attr, message),
        None => syn::Error::new_spanned(cont.ident, message),
    }
}
