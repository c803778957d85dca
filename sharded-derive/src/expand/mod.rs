//! The code `#[derive(Sharded)]` generates for a validated model, by what it generates: the
//! description and tables (`description`), the typed queries (`queries`) and the fields they
//! take (`query_fields`), the fields writes name (`writes`), and the marker traits and checks
//! (`markers`); this module puts them together into the `Sharded` impl.

use proc_macro2::TokenStream;
use quote::quote;
use sharded_internals::{Ctxt, Direction, Model};

use crate::fallback;
use crate::namespace::{Kind, namespaces};
use crate::query_names::{query_aliases, query_names};
use crate::wrap::wrap;

mod description;
mod markers;
mod queries;
mod query_fields;
mod writes;

use description::{description_rest, index_paths, required_paths, resharding, shard_values};
use markers::{
    declared_markers, expiring, has_fields, nested_field_checks, placement, server_timestamp_check,
};
use queries::queries;
use query_fields::{aggregates, counters, ranges, vectors};
use writes::{fields, transforms};

/// Parse → validate → expand; on any error, the errors plus a minimal impl.
pub fn derive(input: &syn::DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let container = sharded_internals::parse(&cx, input);
    let model = sharded_internals::validate(&cx, &container);
    match (cx.check(), model) {
        (Ok(()), Some(model)) => expand(&model),
        (Err(errors), _) => {
            let mut tokens = errors.to_compile_error();
            tokens.extend(fallback::minimal_impl(&container));
            tokens
        }
        (Ok(()), None) => unreachable!("validation failed without reporting an error"),
    }
}

fn expand(model: &Model) -> TokenStream {
    let ident = model.ident;
    let collection = &model.collection;
    let shard_path = &model.shard_path;
    let shard_values = shard_values(&model.shard_values);
    let resharding = resharding(model);
    let placement = placement(model);
    let order_field = &model.order.path;
    let order_ty = model.order.ty;
    let direction = direction(model.order.direction);
    // Spanned on the user's type, so a type that is not an `OrderKey` is reported there.
    let order_value =
        quote::quote_spanned!(syn::spanned::Spanned::span(order_ty)=> type OrderValue = #order_ty;);
    let (path_consts, paths) = index_paths(model);
    let (required_fields, required_segments) = required_paths(model, &paths);
    let nested_checks = nested_field_checks(model);
    let server_timestamp_check = server_timestamp_check(model);
    let expiring = expiring(model);

    let declared_markers = declared_markers(model);
    let namespaces = namespaces(
        ident,
        model.vis,
        &[queries(model), fields(model), transforms(model)]
            .into_iter()
            .chain(aggregates(model))
            .chain(ranges(model))
            .chain(vectors(model))
            .chain(counters(model))
            .collect::<Vec<_>>(),
    );
    let description_rest = description_rest(model, &paths);
    let has_fields = has_fields(model);
    let aggregate_fields = match model.aggregates.is_empty() {
        true => quote!(::sharded_runtime::__private::NoFields),
        false => {
            let fields = Kind::Aggregates.struct_ident(ident);
            quote!(#fields)
        }
    };
    let range_fields = match model.ranges.is_empty() {
        true => quote!(::sharded_runtime::__private::NoFields),
        false => {
            let fields = Kind::Ranges.struct_ident(ident);
            quote!(#fields)
        }
    };
    let stored_fields = model.stored_fields.iter().map(|(_, path)| path);
    let query_names = query_names(model);
    let aliases = query_aliases(
        ident,
        model.vis,
        &query_names,
        model.collection_group,
        model.reversible,
    );
    let query_methods = Kind::Queries.struct_ident(ident);
    let wrapped = wrap(quote! {
        #nested_checks
        #server_timestamp_check
        #declared_markers
        #path_consts
        #namespaces

        #placement
        #has_fields
        #expiring

        #[automatically_derived]
        impl ::sharded_runtime::__private::Derived for #ident {}

        #[automatically_derived]
        impl ::sharded_runtime::Sharded for #ident {
            const DESCRIPTION: ::sharded_runtime::__private::CollectionDescription<'static> =
                ::sharded_runtime::__private::CollectionDescription {
                    collection: #collection,
                    shard_field: #shard_path,
                    shard_values: #shard_values,
                    order_field: #order_field,
                    direction: #direction,
                    #description_rest
                    ..::sharded_runtime::__private::CollectionDescription::EMPTY
                };
            const TABLES: ::sharded_runtime::__private::Tables = ::sharded_runtime::__private::Tables {
                query_names: &[#(#query_names),*],
                required_fields: #required_fields,
                required_segments: #required_segments,
                stored_fields: &[#(#stored_fields),*],
            };
            #resharding
            type QueryMethods = #query_methods;
            type AggregateFields = #aggregate_fields;
            type RangeFields = #range_fields;
            #order_value
        }
    });
    quote! {
        #aliases
        #wrapped
    }
}

pub(crate) fn direction(direction: Direction) -> TokenStream {
    match direction {
        Direction::Ascending => quote!(::sharded_runtime::__private::Direction::Ascending),
        Direction::Descending => quote!(::sharded_runtime::__private::Direction::Descending),
    }
}
