//! How the derive names a type's queries: the method names in the description's order, their
//! `u64` ids, and the `{T}{Method}Query` aliases; the expansion and the fallback emit the same.

use proc_macro2::TokenStream;
use quote::quote;
use sharded_internals::Model;

/// The name of every query but `all`, in the description's order: the indexed paths, the
/// field sets, then the array fields' `_contains` (the runtime reads each query's fields
/// from the description by position).
pub(crate) fn query_names(model: &Model) -> Vec<String> {
    let single = model
        .indexes
        .iter()
        .map(|index| syn::ext::IdentExt::unraw(&index.method).to_string());
    let sets = model.field_sets.iter().map(|set| set.method.to_string());
    let arrays = model.arrays.iter().map(|array| array.method.to_string());
    single.chain(sets).chain(arrays).collect()
}

/// `query_id(name)` as a `u64` literal: a type naming a query costs no const evaluation (the
/// front end has refused names whose ids collide).
pub(crate) fn query_id(name: &str) -> proc_macro2::Literal {
    proc_macro2::Literal::u64_suffixed(sharded_internals::query_id(name))
}

/// A name for every query's type, beside the struct (outside the anonymous const, so that
/// users can name it): `{T}{Method}Query` for each query method, so that a query can be stored
/// in a struct without spelling `ShardedQuery<T, { query_id("method") }>`, and its cursor and
/// page as `CursorOf<{T}{Method}Query>` and `PageOf<..>`. A type that declares
/// `collection_group` gets aliases that take the query's reach, one collection by default
/// (`{T}{Method}Query<InGroup>` for a group query's); other types' queries have one reach
/// only. A `reversible` type also gets `{T}{Method}QueryReversed`, the same query read the
/// other way (`query.reversed()`), with its own cursors and pages. One alias per query and
/// direction, not three, and none for `all()`, which the runtime's `WholeCollection<T>` and
/// `WholeCollectionReversed<T>` name: each item, and each parameter, costs every user's build.
pub(crate) fn query_aliases(
    ident: &syn::Ident,
    vis: &syn::Visibility,
    methods: &[String],
    reach: bool,
    reversible: bool,
) -> TokenStream {
    // `<Reach = InCollection, Window = Whole>` and their use, or the window alone.
    let (params, args, in_group) = if reach {
        (
            quote!(<Reach = ::sharded_runtime::reads::InCollection, Window = ::sharded_runtime::reads::Whole>),
            quote!(Reach, Window),
            ", `<InGroup>` after `.in_group()`",
        )
    } else {
        (
            quote!(<Window = ::sharded_runtime::reads::Whole>),
            quote!(::sharded_runtime::reads::InCollection, Window),
            "",
        )
    };
    // The reach read the other way: `Reversed<Reach>`.
    let reversed_args = match reach {
        true => quote!(::sharded_runtime::reads::Reversed<Reach>, Window),
        false => quote!(
            ::sharded_runtime::reads::Reversed<::sharded_runtime::reads::InCollection>,
            Window
        ),
    };
    let aliases = methods.iter().map(|method| {
        let query = query_alias(ident, method);
        let id = query_id(method);
        let doc = format!(
            "The query `{ident}::query().{method}(..)`{in_group} (`Windowed` after a limit or a \
                 cursor); `CursorOf<{query}>` and `PageOf<{query}>` are its cursor and page."
        );
        let reversed = reversible.then(|| {
            let reversed = quote::format_ident!("{query}Reversed");
            let doc = format!(
                "The query `{ident}::query().{method}(..).reversed()`, read the other way{in_group}; \
                 `CursorOf<{reversed}>` and `PageOf<{reversed}>` are its cursor and page."
            );
            // A name for the user's convenience: unused in a crate that never names it.
            quote! {
                #[doc = #doc]
                #[allow(dead_code)]
                #vis type #reversed #params = ::sharded_runtime::ShardedQuery<#ident, #id, #reversed_args>;
            }
        });
        quote! {
            #[doc = #doc]
            #[allow(dead_code)]
            #vis type #query #params = ::sharded_runtime::ShardedQuery<#ident, #id, #args>;
            #reversed
        }
    });
    quote!(#(#aliases)*)
}

/// The alias naming the query `method` of `ident`: `{T}{Method}Query`.
pub(crate) fn query_alias(ident: &syn::Ident, method: &str) -> syn::Ident {
    let pascal = sharded_internals::case::RenameRule::Pascal.apply_to_field(method);
    quote::format_ident!("{ident}{pascal}Query")
}
