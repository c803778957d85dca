//! The anonymous const every generated item lives in.

use proc_macro2::TokenStream;
use quote::quote;

/// Generated items live in an anonymous const, as serde's do.
pub(crate) fn wrap(items: TokenStream) -> TokenStream {
    quote! {
        #[doc(hidden)]
        #[allow(
            non_upper_case_globals,
            non_snake_case,
            dead_code,
            unused_qualifications,
            clippy::all
        )]
        const _: () = {
            #items
        };
    }
}
