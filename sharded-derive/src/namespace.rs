//! `T::query()`, `T::fields()`, `T::aggregates()`, `T::transforms()`, `T::ranges()`, `T::vectors()` and `T::counters()`: structs inside the derive's anonymous
//! const (so users reach them only through their constructors), each built by one function on
//! the user's type. Written for what they cost every user's build: each generated item and
//! body costs a few tenths of a millisecond per struct, so the namespaces carry no trait impls
//! (the query methods take `&self`, and a namespace is reused by reference), a stored or a
//! numeric field is a public field of one struct rather than a method, and all constructors
//! share one impl.

use proc_macro2::TokenStream;
use quote::quote;

/// Which namespace: its struct's name and its constructor.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Queries,
    Fields,
    Aggregates,
    Transforms,
    Ranges,
    Vectors,
    Counters,
}

impl Kind {
    pub(crate) fn struct_ident(self, ident: &syn::Ident) -> syn::Ident {
        let suffix = match self {
            Kind::Queries => "Queries",
            Kind::Fields => "Fields",
            Kind::Aggregates => "Aggregates",
            Kind::Transforms => "Transforms",
            Kind::Ranges => "Ranges",
            Kind::Vectors => "Vectors",
            Kind::Counters => "Counters",
        };
        quote::format_ident!("{ident}{suffix}")
    }

    pub(crate) fn constructor(self) -> (syn::Ident, &'static str) {
        let (name, doc) = match self {
            Kind::Queries => (
                "query",
                "The typed queries of this collection; see the methods of what it returns.",
            ),
            Kind::Fields => (
                "fields",
                "The stored fields of this collection, to name in a field-masked update.",
            ),
            Kind::Aggregates => (
                "aggregates",
                "The numeric fields of this collection (`#[sharded(aggregate)]`), to sum or average.",
            ),
            Kind::Ranges => (
                "ranges",
                "The fields of this collection with range filters (`#[sharded(range)]`), to pass to a query's `filter`.",
            ),
            Kind::Vectors => (
                "vectors",
                "The vector fields of this collection (`#[sharded(vector(dimension = n))]`), to pass to a query's `find_nearest`.",
            ),
            Kind::Counters => (
                "counters",
                "The counter fields of this collection (`#[sharded(counter(shards = n))]`), to increment and read exactly.",
            ),
            Kind::Transforms => (
                "transforms",
                "The stored fields of this collection typed by their Rust types, to transform on the server.",
            ),
        };
        (quote::format_ident!("{name}"), doc)
    }
}

/// What a namespace holds.
pub(crate) enum Members<'a> {
    /// Methods taking `&self`, on a unit struct (the query methods, which the constructor
    /// wraps in the runtime's `Queries`).
    Methods(Vec<TokenStream>),
    /// Public fields, set by the constructor.
    Fields(Vec<Member<'a>>),
}

/// A public field of a namespace.
pub(crate) struct Member<'a> {
    pub name: &'a syn::Ident,
    pub doc: String,
    pub ty: TokenStream,
    /// Its value; `None` in the fallback, whose constructor never runs.
    pub value: Option<TokenStream>,
}

pub(crate) struct Namespace<'a> {
    pub kind: Kind,
    /// The struct's doc; empty in the fallback.
    pub doc: String,
    pub members: Members<'a>,
}

/// Every namespace's struct (and methods), and one impl on `ident` with their constructors.
pub(crate) fn namespaces(
    ident: &syn::Ident,
    vis: &syn::Visibility,
    namespaces: &[Namespace<'_>],
) -> TokenStream {
    let mut items = TokenStream::new();
    let mut constructors = TokenStream::new();
    for namespace in namespaces {
        let entry = namespace.kind.struct_ident(ident);
        let doc = &namespace.doc;
        let (returned, build) = match &namespace.members {
            Members::Methods(methods) => {
                items.extend(quote! {
                    #[doc = #doc]
                    #vis struct #entry;

                    impl #entry {
                        #(#methods)*
                    }
                });
                // `T::query()` returns the runtime's `Queries<T>`, whose `all()` is written
                // once there, and which dereferences to these methods.
                (
                    quote!(::sharded_runtime::reads::Queries<Self>),
                    quote!(::sharded_runtime::__private::queries::<#ident>(#entry)),
                )
            }
            Members::Fields(members) => {
                let names: Vec<_> = members.iter().map(|member| member.name).collect();
                let docs = members.iter().map(|member| &member.doc);
                let types = members.iter().map(|member| &member.ty);
                items.extend(quote! {
                    #[doc = #doc]
                    #vis struct #entry {
                        #(#[doc = #docs] #vis #names: #types,)*
                    }
                });
                let values: Option<Vec<&TokenStream>> =
                    members.iter().map(|member| member.value.as_ref()).collect();
                let build = match values {
                    Some(values) => quote!(#entry { #(#names: #values,)* }),
                    None => quote!(::core::unreachable!()),
                };
                (quote!(#entry), build)
            }
        };
        let (constructor, constructor_doc) = namespace.kind.constructor();
        constructors.extend(quote! {
            #[doc = #constructor_doc]
            #[inline]
            #vis fn #constructor() -> #returned {
                #build
            }
        });
    }
    quote! {
        #items

        impl #ident {
            #constructors
        }
    }
}
