//! The fields queries take beside their own: `T::aggregates()` (typed sums and averages) and
//! `T::ranges()` (range, `!=` and `not-in` filters), each typed by the queries that take it.

use quote::quote;
use sharded_internals::Model;

use super::markers::declared_marker;
use crate::namespace::{Kind, Member, Members, Namespace};

/// `T::aggregates()`: what it returns has one public `NumericField<T>` per
/// `#[sharded(aggregate)]` field (whose type must be `Numeric`, checked on the user's type);
/// none without such fields.
pub(super) fn aggregates<'a>(model: &'a Model) -> Option<Namespace<'a>> {
    if model.aggregates.is_empty() {
        return None;
    }
    let ident = model.ident;
    let members = model.aggregates.iter().map(|field| {
        let ty = field.ty;
        let path = &field.path;
        // A field summed by some queries only is a field of its own marker type, which only
        // those queries' `sum` and `avg` take.
        let (marker, doc) = match &field.queries {
            None => (
                quote!(::sharded_runtime::bounds::AllQueries),
                format!("The numeric field `{path}`, to sum or average."),
            ),
            Some(queries) => {
                let names: Vec<String> = queries
                    .iter()
                    .map(|q| format!("`{}`", syn::ext::IdentExt::unraw(&q.method)))
                    .collect();
                let marker = declared_marker(ident, field.ident, "Summed");
                (
                    quote!(#marker),
                    format!(
                        "The numeric field `{path}`, to sum or average over the queries {}.",
                        names.join(", ")
                    ),
                )
            }
        };
        Member {
            name: field.ident,
            doc,
            ty: quote!(::sharded_runtime::reads::NumericField<#ident, #marker>),
            value: Some(quote::quote_spanned!(syn::spanned::Spanned::span(ty)=>
                ::sharded_runtime::__private::numeric_field::<#ident, #ty, #marker>(#path)
            )),
        }
    });
    Some(Namespace {
        kind: Kind::Aggregates,
        doc: format!("The numeric fields of `{ident}` with typed `sum` and `avg` queries."),
        members: Members::Fields(members.collect()),
    })
}

/// `T::ranges()`: one public `RangeField<T, V>` per `#[sharded(range)]` field (whose type,
/// or the type inside its `Option`, must be an `OrderKey`, checked on the user's type); none
/// without such fields.
pub(super) fn ranges<'a>(model: &'a Model) -> Option<Namespace<'a>> {
    if model.ranges.is_empty() {
        return None;
    }
    let ident = model.ident;
    let members = model.ranges.iter().map(|field| {
        let ty = &field.value_ty;
        let path = &field.path;
        let (marker, doc) = match &field.queries {
            None => (
                quote!(::sharded_runtime::bounds::AllQueries),
                format!("The field `{path}`, to filter by range, `!=` or `not-in` in any query."),
            ),
            Some(queries) => {
                let names: Vec<String> = queries
                    .iter()
                    .map(|q| format!("`{}`", syn::ext::IdentExt::unraw(&q.method)))
                    .collect();
                let marker = declared_marker(ident, field.ident, "Ranged");
                (
                    quote!(#marker),
                    format!(
                        "The field `{path}`, to filter by range, `!=` or `not-in` in the queries {}.",
                        names.join(", ")
                    ),
                )
            }
        };
        let span = syn::spanned::Spanned::span(field.ty);
        Member {
            name: field.ident,
            doc,
            ty: quote!(::sharded_runtime::reads::RangeField<#ident, #ty, #marker>),
            value: Some(quote::quote_spanned!(span=>
                ::sharded_runtime::__private::range_field::<#ident, #ty, #marker>(#path)
            )),
        }
    });
    Some(Namespace {
        kind: Kind::Ranges,
        doc: format!("The fields of `{ident}` with range, `!=` and `not-in` filters."),
        members: Members::Fields(members.collect()),
    })
}

/// `T::vectors()`: one public `VectorField<T>` per `#[sharded(vector(dimension = n))]` field
/// (whose type must be a `VectorValue`, checked on the user's type); none without such fields.
pub(super) fn vectors<'a>(model: &'a Model) -> Option<Namespace<'a>> {
    if model.vectors.is_empty() {
        return None;
    }
    let ident = model.ident;
    let members = model.vectors.iter().map(|field| {
        let ty = field.ty;
        let (path, dimension) = (&field.path, field.dimension);
        Member {
            name: field.ident,
            doc: format!(
                "The vector field `{path}`, of {dimension} numbers, to search with `find_nearest`."
            ),
            ty: quote!(::sharded_runtime::reads::VectorField<#ident>),
            value: Some(quote::quote_spanned!(syn::spanned::Spanned::span(ty)=>
                ::sharded_runtime::__private::vector_field::<#ident, #ty>(#path, #dimension)
            )),
        }
    });
    Some(Namespace {
        kind: Kind::Vectors,
        doc: format!("The vector fields of `{ident}`, searched with `find_nearest`."),
        members: Members::Fields(members.collect()),
    })
}

/// `T::counters()`: one public `CounterField<T>` per `#[sharded(counter(shards = n))]` field
/// (whose type must be a `CounterValue`, checked on the user's type); none without such
/// fields.
pub(super) fn counters<'a>(model: &'a Model) -> Option<Namespace<'a>> {
    if model.counters.is_empty() {
        return None;
    }
    let ident = model.ident;
    let members = model.counters.iter().map(|field| {
        let ty = field.ty;
        let (path, shards) = (&field.path, field.shards);
        Member {
            name: field.ident,
            doc: format!("The counter `{path}`, over {shards} shard documents."),
            ty: quote!(::sharded_runtime::counters::CounterField<#ident>),
            value: Some(quote::quote_spanned!(syn::spanned::Spanned::span(ty)=>
                ::sharded_runtime::__private::counter_field::<#ident, #ty>(#path, #shards)
            )),
        }
    });
    Some(Namespace {
        kind: Kind::Counters,
        doc: format!("The counter fields of `{ident}`, incremented exactly once."),
        members: Members::Fields(members.collect()),
    })
}
