//! `#[derive(StoredNames)]`: the names serde stores a struct's fields under, for the nested
//! index paths that go through it.

use proc_macro2::TokenStream;
use quote::quote;
use sharded_internals::Ctxt;

use crate::wrap::wrap;

pub fn derive(input: &syn::DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let names = sharded_internals::ast::stored_names(&cx, input);
    if let Err(errors) = cx.check() {
        return errors.to_compile_error();
    }
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let names = names.iter().map(|(rust, stored)| match stored {
        Some(stored) => quote!((#rust, ::core::option::Option::Some(#stored))),
        None => quote!((#rust, ::core::option::Option::None)),
    });
    wrap(quote! {
        #[automatically_derived]
        impl #impl_generics ::sharded_runtime::StoredNames for #ident #ty_generics #where_clause {
            const STORED_NAMES: &'static [(&'static str, ::core::option::Option<&'static str>)] = &[#(#names),*];
        }
    })
}
