//! What the derive emits beside its errors: enough for the rest of the user's code to
//! type-check, so each mistake shows as one error and not as a cascade at every use.

use proc_macro2::TokenStream;
use quote::quote;
use sharded_internals::ast::Container;

use crate::expand::{direction, wrap};

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
    wrap(quote! {
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
