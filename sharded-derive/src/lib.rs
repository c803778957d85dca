//! `#[derive(Sharded)]`. Depend on `sharded-runtime`, which re-exports it and documents the
//! attributes.

mod expand;
mod fallback;
mod namespace;
mod query_names;
mod stored_names;
mod wrap;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

#[proc_macro_derive(Sharded, attributes(sharded))]
pub fn derive_sharded(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}

#[proc_macro_derive(StoredNames)]
pub fn derive_stored_names(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    stored_names::derive(&input).into()
}
