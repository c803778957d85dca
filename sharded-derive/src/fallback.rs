//! What the derive emits beside its errors: enough for the rest of the user's code to
//! type-check, so each mistake shows as one error and not as a cascade at every use.

use proc_macro2::TokenStream;
use quote::quote;
use sharded_internals::ast::Container;

use crate::namespace::{Kind, Member, Members, Namespace, namespaces};
use crate::query_names::query_id;
use crate::wrap::wrap;
use sharded_internals::attr::IndexSpec;
use sharded_internals::model::query_method;

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
        // A serde adapter or a flatten on the order field is reported already; its type is
        // beside the point.
        .filter(|field| field.serde.custom.is_none() && field.serde.flatten.is_none())
        .map_or_else(
            || {
                quote!(
                    type OrderValue = ::sharded_runtime::__private::NoOrderField;
                )
            },
            |field| {
                let ty = field.ty;
                quote::quote_spanned!(syn::spanned::Spanned::span(ty)=> type OrderValue = #ty;)
            },
        );
    // Query methods for whatever index attributes parsed, so calls to them type-check.
    // Each name once, and never `all`, the whole collection's: a clash is reported already.
    let mut emitted: std::collections::HashSet<String> = ["all".to_owned()].into();
    let methods: Vec<syn::Ident> = container
        .fields
        .iter()
        .flat_map(|field| {
            let span = field.ident.span();
            let methods: Vec<syn::Ident> =
                match field.attrs.index.as_ref().map(|index| &index.value) {
                    Some(IndexSpec::Field) => vec![query_method(field.ident, &[], span)],
                    Some(IndexSpec::Nested(nested)) => nested
                        .iter()
                        .map(|n| query_method(field.ident, &n.path, span))
                        .collect(),
                    None => Vec::new(),
                };
            methods
        })
        .filter(|method| emitted.insert(syn::ext::IdentExt::unraw(method).to_string()))
        .collect();
    let mut alias_names: Vec<String> = methods
        .iter()
        .map(|method| syn::ext::IdentExt::unraw(method).to_string())
        .collect();
    let methods = methods.into_iter().map(|method| {
        let id = query_id(&syn::ext::IdentExt::unraw(&method).to_string());
        quote! {
            pub fn #method<V>(&self, _value: V) -> ::sharded_runtime::ShardedQuery<#ident, #id> {
                ::core::unreachable!()
            }
        }
    });
    // And for every `index(a, b)` on the struct that parsed, once per name (a name taken is
    // reported already).
    let mut taken: std::collections::HashSet<String> = container
        .fields
        .iter()
        .filter(|field| field.attrs.index.is_some())
        .map(|field| syn::ext::IdentExt::unraw(field.ident).to_string())
        .collect();
    taken.insert("all".to_owned());
    let set_names: Vec<(String, usize)> = container
        .attrs
        .field_sets
        .iter()
        .filter(|set| !set.value.is_empty())
        .map(|set| {
            let name = set
                .value
                .iter()
                .map(|ident| syn::ext::IdentExt::unraw(ident).to_string())
                .collect::<Vec<_>>()
                .join("_and_");
            (name, set.value.len())
        })
        .filter(|(name, _)| taken.insert(name.clone()))
        .collect();
    alias_names.extend(set_names.iter().map(|(name, _)| name.clone()));
    let set_methods = set_names.into_iter().map(|(name, len)| {
        let method = syn::Ident::new(&name, proc_macro2::Span::call_site());
        let params = (0..len).map(|i| quote::format_ident!("_v{}", i));
        let types = (0..len).map(|i| quote::format_ident!("V{}", i));
        let types2 = types.clone();
        let id = query_id(&name);
        quote! {
            pub fn #method<#(#types),*>(&self, #(#params: #types2),*) -> ::sharded_runtime::ShardedQuery<#ident, #id> {
                ::core::unreachable!()
            }
        }
    });
    let methods = methods.chain(set_methods);
    // A member for every aggregate and every field serde stores, so `T::aggregates().x` and
    // `T::fields().x` type-check too.
    let members = |ty: TokenStream, keep: KeepField| {
        container
            .fields
            .iter()
            .filter(|field| keep(field))
            .map(|field| Member {
                name: field.ident,
                doc: String::new(),
                ty: ty.clone(),
                value: None,
            })
            .collect::<Vec<_>>()
    };
    let stored_fields = members(quote!(::sharded_runtime::writes::Field<#ident>), |field| {
        field.is_stored_by_name()
    });
    // Typed by the user's own type tokens: an error in the type itself is reported once,
    // on the struct's field, at the same span.
    let transformable = container
        .fields
        .iter()
        .filter(|field| field.is_transformable())
        .map(|field| {
            let ty = field.ty;
            Member {
                name: field.ident,
                doc: String::new(),
                ty: quote!(::sharded_runtime::writes::TypedField<#ident, #ty>),
                value: None,
            }
        })
        .collect();
    let mut entries = vec![
        Namespace {
            kind: Kind::Queries,
            doc: String::new(),
            members: Members::Methods(methods.collect()),
        },
        Namespace {
            kind: Kind::Fields,
            doc: String::new(),
            members: Members::Fields(stored_fields),
        },
        Namespace {
            kind: Kind::Transforms,
            doc: String::new(),
            members: Members::Fields(transformable),
        },
    ];
    // As the expansion does, a namespace of each query kind only for a type with fields of
    // that kind; range fields typed loosely, as the expansion never ran.
    let kinds: [(Kind, TokenStream, KeepField); 4] = [
        (
            Kind::Aggregates,
            quote!(::sharded_runtime::reads::NumericField<#ident>),
            |field| field.attrs.aggregate.is_some(),
        ),
        (
            Kind::Ranges,
            quote!(::sharded_runtime::reads::RangeField<#ident, ::sharded_runtime::__private::NoOrderField>),
            |field| field.attrs.range.is_some(),
        ),
        (
            Kind::Vectors,
            quote!(::sharded_runtime::reads::VectorField<#ident>),
            |field| field.attrs.vector.is_some(),
        ),
        (
            Kind::Counters,
            quote!(::sharded_runtime::counters::CounterField<#ident>),
            |field| field.attrs.counter.is_some(),
        ),
    ];
    for (kind, ty, keep) in kinds {
        let fields = members(ty, keep);
        if !fields.is_empty() {
            entries.push(Namespace {
                kind,
                doc: String::new(),
                members: Members::Fields(fields),
            });
        }
    }
    let namespaces = namespaces(ident, &syn::parse_quote!(pub), &entries);
    let query_methods = Kind::Queries.struct_ident(ident);
    let aliases = crate::query_names::query_aliases(
        ident,
        &container.input.vis,
        &alias_names,
        container.attrs.collection_group.is_some(),
        container.attrs.reversible.is_some(),
    );
    // As the expansion places it, so that the type's own uses do not fail a second time.
    let top_level = container.attrs.parent.is_none().then(|| {
        crate::declared::declared(ident, quote!(DeclaredTopLevel), quote!(TopLevel), quote!())
    });
    // A type that names an expiry keeps `unexpired` and `purge_expired`, so its uses do not
    // fail a second time.
    let expiring = container.attrs.expire_at.is_some().then(|| {
        crate::declared::declared(
            ident,
            quote!(DeclaredExpiry),
            quote!(Expiring),
            quote! {
                type Expiry = ::sharded_runtime::firestore::FirestoreTimestamp;
                const EXPIRY_FIELD: &'static str = "";
            },
        )
    });
    let wrapped = wrap(quote! {
        #namespaces

        #top_level
        #expiring

        #[automatically_derived]
        impl ::sharded_runtime::__private::Derived for #ident {}

        #[automatically_derived]
        impl ::sharded_runtime::Sharded for #ident {
            const DESCRIPTION: ::sharded_runtime::__private::CollectionDescription<'static> =
                ::sharded_runtime::__private::CollectionDescription::EMPTY;
            const TABLES: ::sharded_runtime::__private::Tables = ::sharded_runtime::__private::Tables {
                query_names: &[],
                required_fields: &[],
                required_segments: &[],
                stored_fields: &[],
            };
            type QueryMethods = #query_methods;
            type AggregateFields = ::sharded_runtime::__private::NoFields;
            type RangeFields = ::sharded_runtime::__private::NoFields;
            #order_ty
        }
    });
    quote! {
        #aliases
        #wrapped
    }
}

/// Which fields of the struct a namespace holds a member for.
type KeepField = fn(&sharded_internals::ast::Field) -> bool;
