//! The `Sharded` impl (and, with the query issue, the typed queries) of a validated model.

use proc_macro2::TokenStream;
use quote::quote;
use sharded_internals::model::numbered;
use sharded_internals::{Ctxt, Direction, Model};

use crate::fallback;
use crate::namespace::{Kind, Member, Members, Namespace, namespaces};
use crate::query_names::{query_alias, query_aliases, query_names};
use crate::wrap::wrap;

/// Parse → validate → expand; on any error, the errors plus a minimal impl.
pub fn derive(input: &syn::DeriveInput) -> TokenStream {
    let cx = Ctxt::new();
    let container = sharded_internals::parse(&cx, input);
    let model = sharded_internals::validate(&cx, &container);
    match (cx.check(), model) {
        (Ok(()), Some(model)) => expand(&model),
        (Err(errors), _) => {
            let mut tokens = errors.to_compile_error();
            tokens.extend(fallback::minimal_impl(&container));
            tokens
        }
        (Ok(()), None) => unreachable!("validation failed without reporting an error"),
    }
}

fn expand(model: &Model) -> TokenStream {
    let ident = model.ident;
    let collection = &model.collection;
    let shard_path = &model.shard_path;
    let shard_values = shard_values(&model.shard_values);
    let resharding = resharding(model);
    let placement = placement(model);
    let order_field = &model.order.path;
    let order_ty = model.order.ty;
    let direction = direction(model.order.direction);
    // Spanned on the user's type, so a type that is not an `OrderKey` is reported there.
    let order_value =
        quote::quote_spanned!(syn::spanned::Spanned::span(order_ty)=> type OrderValue = #order_ty;);
    let (path_consts, paths) = index_paths(model);
    let (required_fields, required_segments) = required_paths(model, &paths);
    let nested_checks = nested_field_checks(model);
    let server_timestamp_check = server_timestamp_check(model);
    let declared_markers = declared_markers(model);
    let namespaces = namespaces(
        ident,
        model.vis,
        &[queries(model), fields(model), transforms(model)]
            .into_iter()
            .chain(aggregates(model))
            .chain(ranges(model))
            .collect::<Vec<_>>(),
    );
    let description_rest = description_rest(model, &paths);
    let has_fields = has_fields(model);
    let aggregate_fields = match model.aggregates.is_empty() {
        true => quote!(::sharded_runtime::__private::NoFields),
        false => {
            let fields = Kind::Aggregates.struct_ident(ident);
            quote!(#fields)
        }
    };
    let range_fields = match model.ranges.is_empty() {
        true => quote!(::sharded_runtime::__private::NoFields),
        false => {
            let fields = Kind::Ranges.struct_ident(ident);
            quote!(#fields)
        }
    };
    let stored_fields = model.stored_fields.iter().map(|(_, path)| path);
    let query_names = query_names(model);
    let aliases = query_aliases(ident, model.vis, &query_names, model.collection_group);
    let query_methods = Kind::Queries.struct_ident(ident);
    let wrapped = wrap(quote! {
        #nested_checks
        #server_timestamp_check
        #declared_markers
        #path_consts
        #namespaces

        #placement
        #has_fields

        #[automatically_derived]
        impl ::sharded_runtime::__private::Derived for #ident {}

        #[automatically_derived]
        impl ::sharded_runtime::Sharded for #ident {
            const DESCRIPTION: ::sharded_runtime::__private::CollectionDescription<'static> =
                ::sharded_runtime::__private::CollectionDescription {
                    collection: #collection,
                    shard_field: #shard_path,
                    shard_values: #shard_values,
                    order_field: #order_field,
                    direction: #direction,
                    #description_rest
                    ..::sharded_runtime::__private::CollectionDescription::EMPTY
                };
            const TABLES: ::sharded_runtime::__private::Tables = ::sharded_runtime::__private::Tables {
                query_names: &[#(#query_names),*],
                required_fields: #required_fields,
                required_segments: #required_segments,
                stored_fields: &[#(#stored_fields),*],
            };
            #resharding
            type QueryMethods = #query_methods;
            type AggregateFields = #aggregate_fields;
            type RangeFields = #range_fields;
            #order_value
        }
    });
    quote! {
        #aliases
        #wrapped
    }
}

/// The paths every written document must hold (the order field, then each indexed path that
/// is not an `Option`), and their stored segments: written out only when some path is not one
/// segment spelled as its path (a nested or a quoted one); empty otherwise, which the runtime
/// reads as each path being its own one segment.
fn required_paths(
    model: &Model,
    paths: &[(TokenStream, TokenStream)],
) -> (TokenStream, TokenStream) {
    let order = &model.order;
    let order_path = &order.path;
    let indexed = model
        .indexes
        .iter()
        .zip(paths)
        .filter(|(index, _)| !index.optional);
    // The server fills a `server_timestamp` order field: no write sends it.
    let written_order = order.server_timestamp.is_none();
    let order_path = written_order.then_some(order_path).into_iter();
    let fields = indexed.clone().map(|(_, (path, _))| path);
    let fields = quote!(&[#(#order_path,)* #(#fields),*]);
    let simple = (!written_order || order.path == order.stored_name)
        && indexed
            .clone()
            .all(|(index, _)| index.nested.is_empty() && index.path == index.stored_field);
    if simple {
        return (fields, quote!(::sharded_runtime::__private::PLAIN_PATHS));
    }
    let order_stored = written_order.then_some(&order.stored_name).into_iter();
    let segments = indexed.map(|(_, (_, segments))| segments);
    (fields, quote!(&[#(&[#order_stored],)* #(#segments),*]))
}

/// A set of shard values as the derive writes every one (current, previous, retired, and the
/// sets a reshard reads, keeps and adds): a numbered set (`"0"` to `n - 1`, as `shards = n`
/// stores) as the runtime's shared slice of them, any other as an array. A constant expression
/// either way, but the shared one saves every user's build a borrowed array to check.
fn shard_values<S: AsRef<str> + quote::ToTokens>(values: &[S]) -> TokenStream {
    let n = values.len() as u64;
    let is_numbered = n > 0
        && n <= sharded_internals::symbol::MAX_SHARDS
        && values
            .iter()
            .map(AsRef::as_ref)
            .eq(numbered(n).iter().map(String::as_str));
    if is_numbered {
        let n = values.len();
        quote!(::sharded_runtime::__private::numbered_shards(#n))
    } else {
        quote!(&[#(#values),*])
    }
}

/// The description's fields that may be empty, each written only when it is not (the rest
/// come from `CollectionDescription::EMPTY`): every field the user's crate type-checks costs
/// its build, for each type.
fn description_rest(model: &Model, paths: &[(TokenStream, TokenStream)]) -> TokenStream {
    let mut rest = TokenStream::new();
    let parents = &model.parent_collections;
    if !parents.is_empty() {
        rest.extend(quote!(parent_collections: &[#(#parents),*],));
    }
    if model.collection_group {
        rest.extend(quote!(collection_group: true,));
    }
    if model.reversible {
        rest.extend(quote!(reversible: true,));
    }
    if model.order.server_timestamp.is_some() {
        rest.extend(quote!(server_timestamp: true,));
    }
    let resharding = &model.resharding;
    if !resharding.previous_values.is_empty() {
        let previous = shard_values(&resharding.previous_values);
        rest.extend(quote!(previous_shard_values: #previous,));
    }
    if !resharding.retired_values.is_empty() {
        let retired = shard_values(&resharding.retired_values);
        rest.extend(quote!(retired_shard_values: #retired,));
    }
    if let Some(seconds) = resharding.since {
        rest.extend(quote!(reshard_since: ::core::option::Option::Some(#seconds),));
    }
    if !paths.is_empty() {
        let indexed = paths.iter().map(|(path, _)| path);
        rest.extend(quote!(indexed_fields: &[#(#indexed),*],));
    }
    if !model.field_sets.is_empty() {
        let sets = model
            .field_sets
            .iter()
            .map(|set| set.fields.iter().map(|field| &field.path));
        let sets = sets.map(|set| quote!(&[#(#set),*]));
        rest.extend(quote!(field_sets: &[#(#sets),*],));
    }
    for (fields, everywhere_key, declared_key) in [
        (
            &model.aggregates,
            quote!(aggregate_fields),
            quote!(aggregations),
        ),
        (&model.ranges, quote!(range_fields), quote!(ranges)),
    ] {
        let everywhere: Vec<&String> = fields
            .iter()
            .filter(|field| field.queries.is_none())
            .map(|field| &field.path)
            .collect();
        if !everywhere.is_empty() {
            rest.extend(quote!(#everywhere_key: &[#(#everywhere),*],));
        }
        let declared: Vec<TokenStream> = fields
            .iter()
            .flat_map(|field| {
                let path = &field.path;
                field.queries.iter().flatten().map(move |query| {
                    let compared = &query.compared;
                    let contains = query.contains;
                    quote!(::sharded_runtime::__private::FieldOfQuery {
                        field: #path,
                        compared: &[#(#compared),*],
                        contains: #contains,
                    })
                })
            })
            .collect();
        if !declared.is_empty() {
            rest.extend(quote!(#declared_key: &[#(#declared),*],));
        }
    }
    if !model.arrays.is_empty() {
        let arrays = model.arrays.iter().map(|field| &field.path);
        rest.extend(quote!(array_fields: &[#(#arrays),*],));
    }
    rest
}

/// Where the collection lives, as the traits that let a type take a parent
/// (`Subcollection`) and group queries (`CollectionGroup`).
fn placement(model: &Model) -> TokenStream {
    let ident = model.ident;
    let depth = model.parent_collections.len();
    let subcollection = match model.parent_collections.is_empty() {
        false => quote! {
            #[automatically_derived]
            impl ::sharded_runtime::Subcollection for #ident {}

            #[automatically_derived]
            impl ::sharded_runtime::ParentDepth<#depth> for #ident {}
        },
        true => quote! {
            #[automatically_derived]
            impl ::sharded_runtime::TopLevel for #ident {}
        },
    };
    let group = model.collection_group.then(|| {
        quote! {
            #[automatically_derived]
            impl ::sharded_runtime::CollectionGroup for #ident {}
        }
    });
    let reversible = model.reversible.then(|| {
        quote! {
            #[automatically_derived]
            impl ::sharded_runtime::Reversible for #ident {}
        }
    });
    quote!(#subcollection #group #reversible)
}

/// `HasAggregates` and `HasRanges` for a type with such fields, whose `fields()` are its own
/// `aggregates()` and `ranges()`: a type without them has neither, so the trait's
/// `T::aggregates()` is an error there that names the fix.
fn has_fields(model: &Model) -> TokenStream {
    let ident = model.ident;
    let mut out = TokenStream::new();
    for (present, kind, trait_name) in [
        (
            !model.aggregates.is_empty(),
            Kind::Aggregates,
            quote!(HasAggregates),
        ),
        (!model.ranges.is_empty(), Kind::Ranges, quote!(HasRanges)),
    ] {
        if !present {
            continue;
        }
        let fields = kind.struct_ident(ident);
        let constructor = kind.constructor().0;
        out.extend(quote! {
            #[automatically_derived]
            impl ::sharded_runtime::#trait_name for #ident {
                fn fields() -> #fields {
                    #ident::#constructor()
                }
            }
        });
    }
    out
}

/// While resharding, the values queries read and writes draw (the description holds the sets).
fn resharding(model: &Model) -> TokenStream {
    if model.resharding.previous_values.is_empty() {
        return TokenStream::new();
    }
    let (read, kept, new) = model.description(Vec::new()).with(|description| {
        (
            shard_values(&description.read_values()),
            shard_values(&description.kept_values()),
            shard_values(&description.new_values()),
        )
    });
    quote! {
        const READ_SHARD_VALUES: &'static [&'static str] = #read;
        const NEW_SHARD_VALUES: &'static [&'static str] = #new;
        const KEPT_SHARD_VALUES: &'static [&'static str] = #kept;
    }
}

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
fn queries<'a>(model: &'a Model) -> Namespace<'a> {
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
                    ) -> ::sharded_runtime::__private::NotIndexed {
                        ::sharded_runtime::__private::#bound::#body(value)
                    }
                };
                methods.push((method, tokens));
            }
        }
    }
    methods.into_iter().map(|(_, tokens)| tokens).collect()
}

/// `T::aggregates()`: what it returns has one public `NumericField<T>` per
/// `#[sharded(aggregate)]` field (whose type must be `Numeric`, checked on the user's type);
/// none without such fields.
fn aggregates<'a>(model: &'a Model) -> Option<Namespace<'a>> {
    if model.aggregates.is_empty() {
        return None;
    }
    let ident = model.ident;
    let members = model.aggregates.iter().map(|field| {
        let ty = field.ty;
        let path = &field.path;
        // A field summed by some queries only is a field of its own marker type, which only
        // those queries' `sum` and `avg` take.
        let (marker, doc) = match &field.queries {
            None => (
                quote!(::sharded_runtime::EveryQuery),
                format!("The numeric field `{path}`, to sum or average."),
            ),
            Some(queries) => {
                let names: Vec<String> = queries
                    .iter()
                    .map(|q| format!("`{}`", syn::ext::IdentExt::unraw(&q.method)))
                    .collect();
                let marker = declared_marker(ident, field.ident, "Summed");
                (
                    quote!(#marker),
                    format!(
                        "The numeric field `{path}`, to sum or average over the queries {}.",
                        names.join(", ")
                    ),
                )
            }
        };
        Member {
            name: field.ident,
            doc,
            ty: quote!(::sharded_runtime::NumericField<#ident, #marker>),
            value: Some(quote::quote_spanned!(syn::spanned::Spanned::span(ty)=>
                ::sharded_runtime::__private::numeric_field::<#ident, #ty, #marker>(#path)
            )),
        }
    });
    Some(Namespace {
        kind: Kind::Aggregates,
        doc: format!("The numeric fields of `{ident}` with typed `sum` and `avg` queries."),
        members: Members::Fields(members.collect()),
    })
}

/// The marker type of a field declared for some queries: `{T}{Field}Summed` for an
/// aggregate, `{T}{Field}Ranged` for a range field.
fn declared_marker(ident: &syn::Ident, field: &syn::Ident, suffix: &str) -> syn::Ident {
    let field = syn::ext::IdentExt::unraw(field).to_string();
    let pascal = sharded_internals::case::RenameRule::Pascal.apply_to_field(&field);
    quote::format_ident!("{ident}{pascal}{suffix}")
}

/// For each aggregate and range field declared for some queries, its marker type and one
/// `SummedOver<query id>` (`RangedOver`) per query that sums (filters) it: what `sum`,
/// `avg` and `filter` check.
fn declared_markers(model: &Model) -> TokenStream {
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
                        impl ::sharded_runtime::#trait_name<#ids> for #marker {}
                    )*
                })
            })
        })
        .collect()
}

/// `T::ranges()`: one public `RangeField<T, V>` per `#[sharded(range)]` field (whose type,
/// or the type inside its `Option`, must be an `OrderKey`, checked on the user's type); none
/// without such fields.
fn ranges<'a>(model: &'a Model) -> Option<Namespace<'a>> {
    if model.ranges.is_empty() {
        return None;
    }
    let ident = model.ident;
    let members = model.ranges.iter().map(|field| {
        let ty = &field.value_ty;
        let path = &field.path;
        let (marker, doc) = match &field.queries {
            None => (
                quote!(::sharded_runtime::EveryQuery),
                format!("The field `{path}`, to filter by range, `!=` or `not-in` in any query."),
            ),
            Some(queries) => {
                let names: Vec<String> = queries
                    .iter()
                    .map(|q| format!("`{}`", syn::ext::IdentExt::unraw(&q.method)))
                    .collect();
                let marker = declared_marker(ident, field.ident, "Ranged");
                (
                    quote!(#marker),
                    format!(
                        "The field `{path}`, to filter by range, `!=` or `not-in` in the queries {}.",
                        names.join(", ")
                    ),
                )
            }
        };
        let span = syn::spanned::Spanned::span(field.ty);
        Member {
            name: field.ident,
            doc,
            ty: quote!(::sharded_runtime::RangeField<#ident, #ty, #marker>),
            value: Some(quote::quote_spanned!(span=>
                ::sharded_runtime::__private::range_field::<#ident, #ty, #marker>(#path)
            )),
        }
    });
    Some(Namespace {
        kind: Kind::Ranges,
        doc: format!("The fields of `{ident}` with range, `!=` and `not-in` filters."),
        members: Members::Fields(members.collect()),
    })
}

/// `T::fields()`: what it returns has one public `Field<T>` per stored field, for field-masked
/// updates.
fn fields<'a>(model: &'a Model) -> Namespace<'a> {
    let ident = model.ident;
    let members = model.stored_fields.iter().map(|(field, path)| Member {
        name: field,
        doc: format!("The stored field `{path}`."),
        ty: quote!(::sharded_runtime::Field<#ident>),
        value: Some(quote!(::sharded_runtime::__private::field::<#ident>(#path))),
    });
    Namespace {
        kind: Kind::Fields,
        doc: format!("The stored fields of `{ident}`, for `ShardedCollection::update_fields`."),
        members: Members::Fields(members.collect()),
    }
}

/// `T::transforms()`: one public `TypedField<T, V>` per stored field without a serde adapter,
/// `V` its Rust type, whose methods are the transforms that type takes.
fn transforms<'a>(model: &'a Model) -> Namespace<'a> {
    let ident = model.ident;
    let members = model
        .transformable_fields
        .iter()
        .map(|(field, ty, path)| Member {
            name: field,
            doc: format!("The stored field `{path}`, to transform."),
            ty: quote!(::sharded_runtime::TypedField<#ident, #ty>),
            value: Some(quote!(::sharded_runtime::__private::typed_field::<#ident, #ty>(#path))),
        });
    Namespace {
        kind: Kind::Transforms,
        doc: format!(
            "The stored fields of `{ident}` typed by their Rust types, for `ShardedCollection::transform`."
        ),
        members: Members::Fields(members.collect()),
    }
}

/// Each indexed field's stored path and its stored segments, as expressions: literals for the
/// struct's own fields; for a nested path, constants the compiler builds from the `StoredNames`
/// of every type the path goes through, so that it follows their serde renames and cannot
/// disagree with them.
fn index_paths(model: &Model) -> (TokenStream, Vec<(TokenStream, TokenStream)>) {
    let ident = model.ident;
    let mut consts = TokenStream::new();
    let paths = model
        .indexes
        .iter()
        .enumerate()
        .map(|(position, index)| {
            let first = &index.stored_field;
            if index.nested.is_empty() {
                let path = &index.path;
                return (quote!(#path), quote!(&[#first]));
            }
            let path_name = quote::format_ident!("__SHARDED_INDEX_PATH_{}", position);
            let segments_name = quote::format_ident!("__SHARDED_INDEX_SEGMENTS_{}", position);
            let field = index.field;
            let segments = index.nested.iter().enumerate().map(|(depth, segment)| {
                // Every token on the user's segment, so an error points at it alone.
                let respan = |ident: &syn::Ident| {
                    let mut ident = ident.clone();
                    ident.set_span(segment.span());
                    ident
                };
                let field = respan(field);
                let parents: Vec<syn::Ident> = index.nested[..depth].iter().map(respan).collect();
                let rust_name = syn::ext::IdentExt::unraw(segment).to_string();
                quote::quote_spanned! {segment.span()=>
                    ::sharded_runtime::__private::stored_name(
                        ::sharded_runtime::__private::names_of(|document: &#ident| &document.#field #(.#parents)*),
                        #rust_name,
                    )
                }
            });
            consts.extend(quote! {
                const #segments_name: &[&str] = &[#first, #(#segments),*];
                const #path_name: &str = {
                    const LEN: usize = ::sharded_runtime::__private::path_len(#segments_name);
                    const BYTES: [u8; LEN] = ::sharded_runtime::__private::path_bytes::<LEN>(#segments_name);
                    match ::core::str::from_utf8(&BYTES) {
                        ::core::result::Result::Ok(path) => path,
                        ::core::result::Result::Err(_) => ::core::panic!("field paths are UTF-8"),
                    }
                };
            });
            (quote!(#path_name), quote!(#segments_name))
        })
        .collect();
    (consts, paths)
}

/// A nested index names fields of another type, which the derive cannot see; an accessor
/// built from the user's own tokens lets rustc check the path and type, spanned on them.
fn nested_field_checks(model: &Model) -> TokenStream {
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

/// For a `server_timestamp` type, that its order field can hold the server's time: a bound
/// the compiler checks on the user's type, spanned there.
fn server_timestamp_check(model: &Model) -> TokenStream {
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

pub(crate) fn direction(direction: Direction) -> TokenStream {
    match direction {
        Direction::Ascending => quote!(::sharded_runtime::__private::Direction::Ascending),
        Direction::Descending => quote!(::sharded_runtime::__private::Direction::Descending),
    }
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
