//! What the derive emits beside its errors: enough for the rest of the user's code to
//! type-check, so each mistake shows as one error and not as a cascade at every use.

use proc_macro2::TokenStream;
use quote::quote;
use sharded_internals::ast::Container;

use crate::expand::{direction, queries_ident, wrap};
use sharded_internals::attr::IndexSpec;

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
        .map_or_else(
            || quote!(()),
            |field| {
                let ty = field.ty;
                quote!(#ty)
            },
        );
    let direction = direction(sharded_internals::Direction::Descending);
    // Query methods for whatever index attributes parsed, so calls to them type-check.
    let entry = queries_ident(ident);
    let methods = container.fields.iter().flat_map(|field| {
        let names: Vec<String> = match field.attrs.index.as_ref().map(|index| &index.value) {
            Some(IndexSpec::Field) => vec![field.ident.to_string()],
            Some(IndexSpec::Nested(nested)) => nested
                .iter()
                .map(|n| {
                    std::iter::once(field.ident.to_string())
                        .chain(n.path.iter().map(ToString::to_string))
                        .collect::<Vec<_>>()
                        .join("_")
                })
                .collect(),
            None => Vec::new(),
        };
        names.into_iter().map(move |name| {
            let method = quote::format_ident!("{}", name.trim_start_matches("r#"));
            quote! {
                pub fn #method<V>(self, _value: V) -> ::sharded_runtime::ShardedQuery<#ident, 0> {
                    ::core::unreachable!()
                }
            }
        })
    });
    wrap(quote! {
        pub struct #entry;

        #[automatically_derived]
        impl #entry {
            #(#methods)*
        }

        #[automatically_derived]
        impl #ident {
            pub fn query() -> #entry {
                #entry
            }
        }

        #[automatically_derived]
        impl ::sharded_runtime::Sharded for #ident {
            const COLLECTION: &'static str = "";
            const SHARD_FIELD: &'static str = "";
            const SHARD_VALUES: &'static [&'static str] = &[];
            const ORDER_FIELD: &'static str = "";
            const ORDER_DIRECTION: ::sharded_runtime::__private::Direction = #direction;
            const INDEXED_FIELDS: &'static [&'static str] = &[];
            type OrderValue = #order_ty;
        }
    })
}
