//! `T::query()`: one method per indexed path (and its `_in`), per field set, per array field
//! (`_contains`, `_contains_any`), and hidden methods on every other field that make a query on
//! it an error naming the attribute to add.

use proc_macro2::TokenStream;
use quote::quote;
use sharded_internals::{Direction, Model};

use crate::namespace::{Kind, Members, Namespace};
use crate::query_names::query_alias;

/// A query method on one value of `value_ty` and its twin on any of several (`in`, or
/// `array-contains-any`): the same query type, cursors and index.
fn one_and_any_of(
    vis: &syn::Visibility,
    (method, doc): (syn::Ident, String),
    (method_any, doc_any): (syn::Ident, String),
    value_ty: &syn::Type,
    query: &syn::Ident,
) -> TokenStream {
    let param = value_param(value_ty);
    quote! {
        #[doc = #doc]
        #[inline]
        #vis fn #method(
            &self,
            value: #param,
        ) -> #query {
            ::sharded_runtime::ShardedQuery::__eq::<#value_ty, _>(value)
        }

        #[doc = #doc_any]
        #[inline]
        #vis fn #method_any(
            &self,
            values: impl ::core::iter::IntoIterator<Item = #param>,
        ) -> #query {
            ::sharded_runtime::ShardedQuery::__in::<#value_ty, _>(values)
        }
    }
}

/// `T::query()`, and on what it returns one method per indexed path, taking a value of the
/// path's own type and returning the `ShardedQuery` its index serves.
pub(super) fn queries<'a>(model: &'a Model) -> Namespace<'a> {
    let ident = model.ident;
    let vis = model.vis;
    let order = &model.order.path;
    let direction = match model.order.direction {
        Direction::Ascending => "ascending",
        Direction::Descending => "descending",
    };
    let methods = model.indexes.iter().map(|index| {
        let method = &index.method;
        let query = query_alias(ident, &syn::ext::IdentExt::unraw(method).to_string());
        let value_ty = &index.value_ty;
        let rust_path = std::iter::once(index.field)
            .chain(&index.nested)
            .map(|segment| syn::ext::IdentExt::unraw(segment).to_string())
            .collect::<Vec<_>>()
            .join(".");
        let doc =
            format!("Documents whose `{rust_path}` equals `value`, by `{order}` {direction}.",);
        let method_in = quote::format_ident!("{}_in", syn::ext::IdentExt::unraw(method));
        let doc_in = format!(
            "Documents whose `{rust_path}` equals any of `values` (Firestore's `in`: 1 to 30 values), by `{order}` {direction}; the same query type, cursors and index as `{}`.",
            syn::ext::IdentExt::unraw(method)
        );
        let one = (method.clone(), doc);
        one_and_any_of(vis, one, (method_in, doc_in), value_ty, &query)
    });
    let set_methods = model.field_sets.iter().map(|set| {
        let method = &set.method;
        let query = query_alias(ident, &method.to_string());
        let params: Vec<&syn::Ident> = set.fields.iter().map(|field| field.ident).collect();
        let types = set.fields.iter().map(|field| value_param(&field.value_ty));
        let types2 = set.fields.iter().map(|field| &field.value_ty);
        let rust_names: Vec<String> = set
            .fields
            .iter()
            .map(|field| format!("`{}`", syn::ext::IdentExt::unraw(field.ident)))
            .collect();
        let doc = format!(
            "Documents whose {} equal the values given, by `{order}` {direction}.",
            rust_names.join(" and ")
        );
        quote! {
            #[doc = #doc]
            #[inline]
            #vis fn #method(
                &self,
                #(#params: #types),*
            ) -> #query {
                ::sharded_runtime::ShardedQuery::__whole_collection()
                    #(.__and::<#types2, _>(#params))*
            }
        }
    });
    let array_methods = model.arrays.iter().map(|array| {
        let method = &array.method;
        let method_any = quote::format_ident!("{}_any", method);
        let query = query_alias(ident, &method.to_string());
        let element_ty = &array.element_ty;
        let field = syn::ext::IdentExt::unraw(array.ident);
        let doc = format!(
            "Documents whose array `{field}` holds `value` (Firestore's `array-contains`), by `{order}` {direction}."
        );
        let doc_any = format!(
            "Documents whose array `{field}` holds any of `values` (Firestore's `array-contains-any`: 1 to 30 values), each once, by `{order}` {direction}; the same query type and cursors as `{method}`."
        );
        let one = (method.clone(), doc);
        one_and_any_of(vis, one, (method_any, doc_any), element_ty, &query)
    });
    let methods = methods
        .chain(set_methods)
        .chain(array_methods)
        .chain(unindexed_hints(model));
    Namespace {
        kind: Kind::Queries,
        doc: format!(
            "The typed queries of `{ident}`: one method per `#[sharded(index)]` path (and its `_in`), one per `index(...)` field set, and `_contains` and `_contains_any` per `#[sharded(contains)]` array (`all()` is on `Queries`, which dereferences to this)."
        ),
        members: Members::Methods(methods.collect()),
    }
}

/// For each stored field without a query of its own, hidden `field(value)` and
/// `field_in(values)` methods that no value can call (`field_contains` and
/// `field_contains_any` for a `Vec`): `T::query().symbol("x")` on a field that is not indexed
/// is then an error that says to index it (the runtime's `Indexed`, or `Contained`), not a
/// bare "no method named `symbol`". Names a real query method takes are left alone, and so is
/// the order field (whose range is `.range(..)`).
fn unindexed_hints(model: &Model) -> Vec<TokenStream> {
    let vis = model.vis;
    // A query type, so that what the user chains after the mistake (`.limit(5).fetch(&db)`)
    // type-checks and the mistake is the one error; no value reaches it.
    let ident = model.ident;
    let unraw = |ident: &syn::Ident| syn::ext::IdentExt::unraw(ident).to_string();
    let mut taken: Vec<String> = Vec::new();
    for index in &model.indexes {
        let method = unraw(&index.method);
        taken.push(format!("{method}_in"));
        taken.push(method);
        taken.push(unraw(index.field));
    }
    taken.extend(model.field_sets.iter().map(|set| unraw(&set.method)));
    for array in &model.arrays {
        taken.push(unraw(array.ident));
        taken.push(unraw(&array.method));
        taken.push(format!("{}_any", unraw(&array.method)));
    }
    taken.push(unraw(model.order.ident));
    taken.push(sharded_internals::symbol::WHOLE_COLLECTION_METHOD.to_owned());
    // A `Vec` field's query is `array-contains`: its hints are `_contains` and `_contains_any`.
    let is_vec = |field: &syn::Ident| {
        model.transformable_fields.iter().any(|(ident, ty, _)| {
            *ident == field
                && matches!(ty, syn::Type::Path(path)
                    if path.path.segments.last().is_some_and(|segment| segment.ident == "Vec"))
        })
    };
    // Each name once: fields `foo` and `foo_in` both ask for `foo_in`.
    let mut methods: Vec<(syn::Ident, TokenStream)> = Vec::new();
    for (field, _) in &model.stored_fields {
        if taken.contains(&unraw(field)) {
            continue;
        }
        let name = unraw(field);
        let span = field.span();
        let candidates = match is_vec(field) {
            true => [
                quote::format_ident!("{name}_contains", span = span),
                quote::format_ident!("{name}_contains_any", span = span),
            ]
            .map(|method| (method, quote!(Contained), quote!(not_contained))),
            // The field's own ident, raw or not (`r#type`); `type_in` needs no `r#`.
            false => [
                (*field).clone(),
                quote::format_ident!("{name}_in", span = span),
            ]
            .map(|method| (method, quote!(Indexed), quote!(not_indexed))),
        };
        for (method, bound, body) in candidates {
            let name = unraw(&method);
            if !taken.contains(&name) && !methods.iter().any(|(m, _)| unraw(m) == name) {
                let tokens = quote! {
                    #[doc(hidden)]
                    #vis fn #method<V: ::sharded_runtime::__private::#bound>(
                        &self,
                        value: V,
                    ) -> ::sharded_runtime::WholeCollection<#ident> {
                        match ::sharded_runtime::__private::#bound::#body(value) {}
                    }
                };
                methods.push((method, tokens));
            }
        }
    }
    methods.into_iter().map(|(_, tokens)| tokens).collect()
}

/// The type a query method takes a field's value as: the field's own type when it is a
/// number or a `bool`, so that a literal (`venue_code(7)` on a `u32`) takes the field's type
/// rather than falling back to `i32`; anything convertible into it otherwise (`&str` for a
/// `String`).
fn value_param(value_ty: &syn::Type) -> TokenStream {
    const EXACT: [&str; 15] = [
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
        "f32", "f64", "bool",
    ];
    let exact = matches!(value_ty, syn::Type::Path(path)
        if path.qself.is_none() && path.path.get_ident().is_some_and(|ident| EXACT.contains(&ident.to_string().as_str())));
    if exact {
        quote!(#value_ty)
    } else {
        quote!(impl ::core::convert::Into<#value_ty>)
    }
}
