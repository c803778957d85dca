//! The marker traits the runtime's bounds check (where the collection lives, whether it has
//! sums or range fields, which queries sum or filter a field), and the compile-time checks
//! spanned on the user's own tokens (nested index paths, a server-filled order field).

use proc_macro2::TokenStream;
use quote::quote;
use sharded_internals::Model;

use crate::declared::declared;
use crate::namespace::Kind;

/// Where the collection lives, as the traits that let a type take a parent
/// (`Subcollection`) and group queries (`CollectionGroup`), each beside its seal
/// (`__private::Declared...`), which only generated code implements.
pub(super) fn placement(model: &Model) -> TokenStream {
    let ident = model.ident;
    let depth = model.parent_collections.len();
    let subcollection = match model.parent_collections.is_empty() {
        false => {
            let subcollection = declared(
                ident,
                quote!(DeclaredSubcollection),
                quote!(Subcollection),
                quote!(),
            );
            let depth = declared(
                ident,
                quote!(DeclaredParentDepth<#depth>),
                quote!(ParentDepth<#depth>),
                quote!(),
            );
            quote!(#subcollection #depth)
        }
        true => declared(ident, quote!(DeclaredTopLevel), quote!(TopLevel), quote!()),
    };
    let group = model.collection_group.then(|| {
        declared(
            ident,
            quote!(DeclaredCollectionGroup),
            quote!(CollectionGroup),
            quote!(),
        )
    });
    let reversible = model.reversible.then(|| {
        declared(
            ident,
            quote!(DeclaredReversible),
            quote!(Reversible),
            quote!(),
        )
    });
    quote!(#subcollection #group #reversible)
}

/// `HasAggregates` and `HasRanges` for a type with such fields, whose `fields()` are its own
/// `aggregates()` and `ranges()`, each beside its seal: a type without them has neither, so
/// the trait's `T::aggregates()` is an error there that names the fix.
pub(super) fn has_fields(model: &Model) -> TokenStream {
    let ident = model.ident;
    let mut out = TokenStream::new();
    for (present, kind, trait_name, seal) in [
        (
            !model.aggregates.is_empty(),
            Kind::Aggregates,
            quote!(HasAggregates),
            quote!(DeclaredAggregates),
        ),
        (
            !model.ranges.is_empty(),
            Kind::Ranges,
            quote!(HasRanges),
            quote!(DeclaredRanges),
        ),
    ] {
        if !present {
            continue;
        }
        let fields = kind.struct_ident(ident);
        let constructor = kind.constructor().0;
        out.extend(declared(
            ident,
            seal,
            trait_name,
            quote! {
                fn fields() -> #fields {
                    #ident::#constructor()
                }
            },
        ));
    }
    out
}

/// The marker type of a field declared for some queries: `{T}{Field}Summed` for an
/// aggregate, `{T}{Field}Ranged` for a range field.
pub(super) fn declared_marker(ident: &syn::Ident, field: &syn::Ident, suffix: &str) -> syn::Ident {
    let field = syn::ext::IdentExt::unraw(field).to_string();
    let pascal = sharded_internals::case::RenameRule::Pascal.apply_to_field(&field);
    quote::format_ident!("{ident}{pascal}{suffix}")
}

/// For each aggregate and range field declared for some queries, its marker type and one
/// `SummedOver<query id>` (`RangedOver`) per query that sums (filters) it: what `sum`,
/// `avg` and `filter` check.
pub(super) fn declared_markers(model: &Model) -> TokenStream {
    let ident = model.ident;
    let kinds = [
        (
            &model.aggregates,
            "Summed",
            quote!(SummedOver),
            "aggregates",
        ),
        (&model.ranges, "Ranged", quote!(RangedOver), "ranges"),
    ];
    kinds
        .into_iter()
        .flat_map(|(fields, suffix, trait_name, namespace)| {
            fields.iter().filter_map(move |field| {
                let queries = field.queries.as_ref()?;
                let marker = declared_marker(ident, field.ident, suffix);
                let ids = queries.iter().map(|query| {
                    crate::query_names::query_id(
                        &syn::ext::IdentExt::unraw(&query.method).to_string(),
                    )
                });
                let doc = format!("`{ident}::{namespace}().{}`'s queries.", field.ident);
                let trait_name = trait_name.clone();
                Some(quote! {
                    #[doc = #doc]
                    pub struct #marker;
                    #(
                        #[automatically_derived]
                        impl ::sharded_runtime::bounds::#trait_name<#ids> for #marker {}
                    )*
                })
            })
        })
        .collect()
}

/// A nested index names fields of another type, which the derive cannot see; an accessor
/// built from the user's own tokens lets rustc check the path and type, spanned on them.
pub(super) fn nested_field_checks(model: &Model) -> TokenStream {
    let ident = model.ident;
    model
        .indexes
        .iter()
        .filter(|index| !index.nested.is_empty())
        .map(|index| {
            let field = index.field;
            let nested = &index.nested;
            let value_ty = &index.value_ty;
            let check = quote::format_ident!("__check_{}", index.method);
            // Spanned on the user's type, so a mismatch points at it.
            let span = syn::spanned::Spanned::span(value_ty);
            let access = quote::quote_spanned!(span=> &document.#field #(.#nested)*);
            quote! {
                fn #check(document: &#ident) -> &#value_ty {
                    #access
                }
            }
        })
        .collect()
}

/// `Expiring` for a type with an expiry field (`expire_at`), beside its seal: its type is
/// spanned on the user's, so that one that is no timestamp (`ExpiryTime`) is reported there.
pub(super) fn expiring(model: &Model) -> TokenStream {
    let Some(expiry) = &model.expiry else {
        return TokenStream::new();
    };
    let (ty, path) = (expiry.ty, &expiry.path);
    let span = syn::spanned::Spanned::span(ty);
    let expiry_type = quote::quote_spanned!(span=> type Expiry = #ty;);
    declared(
        model.ident,
        quote!(DeclaredExpiry),
        quote!(Expiring),
        quote! {
            #expiry_type
            const EXPIRY_FIELD: &'static str = #path;
        },
    )
}

/// For a `server_timestamp` type, that its order field can hold the server's time: a bound
/// the compiler checks on the user's type, spanned there.
pub(super) fn server_timestamp_check(model: &Model) -> TokenStream {
    if model.order.server_timestamp.is_none() {
        return TokenStream::new();
    }
    let ty = model.order.ty;
    let span = syn::spanned::Spanned::span(ty);
    quote::quote_spanned! {span=>
        fn __server_timestamp<T: ::sharded_runtime::__private::ServerTimestamp>() {}
        const _: fn() = __server_timestamp::<#ty>;
    }
}
