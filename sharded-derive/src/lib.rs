//! `#[derive(Sharded)]`. Depend on `sharded-runtime`, which re-exports it and documents the
//! attributes.

mod declared;
mod expand;
mod fallback;
mod namespace;
mod query_names;
#[cfg(test)]
mod snapshots;
mod stored_names;
mod wrap;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `sharded_runtime::Sharded` for a struct with named fields, from its
/// `#[sharded(...)]` attributes: `#[sharded(shards = 3, order_by = "timestamp")]` on the
/// struct, `#[sharded(index)]`, `#[sharded(contains)]`, `#[sharded(aggregate)]` or
/// `#[sharded(range)]` on fields. It generates the description the runtime, the index plan and
/// the build read, the typed queries (`T::query()`), the field names for masked updates
/// (`T::fields()`), the typed transforms (`T::transforms()`), sums (`T::aggregates()`) and
/// range filters (`T::ranges()`), and a compile error on your own
/// tokens for every misuse. The attributes are documented in `sharded-runtime`'s front page.
#[proc_macro_derive(Sharded, attributes(sharded))]
pub fn derive_sharded(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}

/// Derives `sharded_runtime::StoredNames`: the names serde stores a struct's fields under
/// (following `rename` and `rename_all`), which nested index paths and projections read.
#[proc_macro_derive(StoredNames)]
pub fn derive_stored_names(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    stored_names::derive(&input).into()
}
