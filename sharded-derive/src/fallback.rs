//! What the derive emits beside its errors: enough for the rest of the user's code to
//! type-check, so each mistake shows as one error and not as a cascade at every use.

use proc_macro2::TokenStream;
use quote::quote;
use sharded_internals::ast::Container;

use crate::expand::{FIELDS_DOC, direction, entry_point, fields_ident, queries_ident, wrap};
use sharded_internals::attr::IndexSpec;
use sharded_internals::model::query_method;

pub fn minimal_impl(container: &Container) -> TokenStream {
    // A generic or non-struct input has no impl that could type-check; its error stands alone.
    if !container.input.generics.params.is_empty()
        || !matches!(container.input.data, syn::Data::Struct(_))
    {
        return TokenStream::new();
    }
    let ident = container.ident;
    let order_ty = container
        .attrs
        .order_by
        .as_ref()
        .and_then(|order_by| container.field(&order_by.value.value()))
        // A serde adapter on the order field is reported already; its type is beside the point.
        .filter(|field| field.serde.custom.is_none())
        .map_or_else(
            || {
                quote!(
                    type OrderValue = ::sharded_runtime::__private::NoOrderField;
                )
            },
            |field| {
                let ty = field.ty;
                quote::quote_spanned!(syn::spanned::Spanned::span(ty)=> type OrderValue = #ty;)
            },
        );
    let direction = direction(sharded_internals::Direction::Descending);
    // Query methods for whatever index attributes parsed, so calls to them type-check.
    let entry = queries_ident(ident);
    let methods = container.fields.iter().flat_map(|field| {
        let span = field.ident.span();
        let methods: Vec<syn::Ident> = match field.attrs.index.as_ref().map(|index| &index.value) {
            Some(IndexSpec::Field) => vec![query_method(field.ident, &[], span)],
            Some(IndexSpec::Nested(nested)) => nested
                .iter()
                .map(|n| query_method(field.ident, &n.path, span))
                .collect(),
            None => Vec::new(),
        };
        methods.into_iter().map(move |method| {
            quote! {
                pub fn #method<V>(self, _value: V) -> ::sharded_runtime::ShardedQuery<#ident, 0> {
                    ::core::unreachable!()
                }
            }
        })
    });
    // Field methods for every field serde stores, so `T::fields().x()` type-checks too.
    let field_methods = container
        .fields
        .iter()
        .filter(|field| field.is_stored_by_name())
        .map(|field| {
            let method = field.ident;
            quote! {
                pub fn #method(self) -> ::sharded_runtime::Field<#ident> {
                    ::core::unreachable!()
                }
            }
        })
        .collect();
    let public = syn::parse_quote!(pub);
    let fields = entry_point(
        ident,
        &public,
        &fields_ident(ident),
        &quote::format_ident!("fields"),
        ["", FIELDS_DOC],
        field_methods,
    );
    let all = quote! {
        pub fn all(self) -> ::sharded_runtime::WholeCollection<#ident> {
            ::core::unreachable!()
        }
    };
    let queries = entry_point(
        ident,
        &public,
        &entry,
        &quote::format_ident!("query"),
        ["", ""],
        std::iter::once(all).chain(methods).collect(),
    );
    wrap(quote! {
        #fields
        #queries

        #[automatically_derived]
        impl ::sharded_runtime::Sharded for #ident {
            const COLLECTION: &'static str = "";
            const SHARD_FIELD: &'static str = "";
            const SHARD_FIELD_PATH: &'static str = "";
            const SHARD_VALUES: &'static [&'static str] = &[];
            const ORDER_FIELD: &'static str = "";
            const ORDER_DIRECTION: ::sharded_runtime::__private::Direction = #direction;
            const INDEXED_FIELDS: &'static [&'static str] = &[];
            const REQUIRED_FIELDS: &'static [&'static str] = &[];
            const REQUIRED_SEGMENTS: &'static [&'static [&'static str]] = &[];
            #order_ty
        }
    })
}
