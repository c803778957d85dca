//! A marker trait a declaration implies (`bounds::Reversible`, `bounds::TopLevel`, ...),
//! implemented beside its seal (`__private::Declared...`), which only generated code
//! implements: the one place that pairs them, for the expansion and its fallback alike.

use proc_macro2::TokenStream;
use quote::quote;

/// `impl bounds::#marker for #ident { #items }`, beside `impl __private::#seal for #ident`.
pub(crate) fn declared(
    ident: &syn::Ident,
    seal: TokenStream,
    marker: TokenStream,
    items: TokenStream,
) -> TokenStream {
    quote! {
        #[automatically_derived]
        impl ::sharded_runtime::__private::#seal for #ident {}

        #[automatically_derived]
        impl ::sharded_runtime::bounds::#marker for #ident {
            #items
        }
    }
}
