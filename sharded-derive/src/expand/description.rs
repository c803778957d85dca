//! The collection's description and the runtime's tables: `Sharded::DESCRIPTION` (each field
//! written only when it is not empty), the stored paths of indexed fields (nested ones built by
//! the compiler from `StoredNames`), the paths every write must hold, and the shard sets a
//! reshard reads, keeps and adds.

use proc_macro2::TokenStream;
use quote::quote;
use sharded_internals::Model;
use sharded_internals::model::numbered;

/// The paths every written document must hold (the order field, then each indexed path that
/// is not an `Option`), and their stored segments: written out only when some path is not one
/// segment spelled as its path (a nested or a quoted one); empty otherwise, which the runtime
/// reads as each path being its own one segment.
pub(super) fn required_paths(
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
pub(super) fn shard_values<S: AsRef<str> + quote::ToTokens>(values: &[S]) -> TokenStream {
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
pub(super) fn description_rest(model: &Model, paths: &[(TokenStream, TokenStream)]) -> TokenStream {
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
    if let Some(expiry) = &model.expiry {
        let path = &expiry.path;
        rest.extend(quote!(expiry_field: ::core::option::Option::Some(#path),));
    }
    if !model.order.stored_type.is_other() {
        let order_type = stored_type(model.order.stored_type);
        rest.extend(quote!(order_type: #order_type,));
    }
    if !model.fields.is_empty() {
        let fields = model.fields.iter().map(|field| {
            let (path, stored_type, required) =
                (&field.path, stored_type(field.stored_type), field.required);
            let integer_range = match field.integer_range {
                Some([min, max]) => quote!(::core::option::Option::Some([#min, #max])),
                None => quote!(::core::option::Option::None),
            };
            quote!(::sharded_runtime::__private::StoredField { path: #path, stored_type: #stored_type, required: #required, integer_range: #integer_range })
        });
        rest.extend(quote!(fields: &[#(#fields),*],));
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
    if !model.range_sets.is_empty() {
        let sets = model.range_sets.iter().map(|set| quote!(&[#(#set),*]));
        rest.extend(quote!(range_sets: &[#(#sets),*],));
    }
    if !model.arrays.is_empty() {
        let arrays = model.arrays.iter().map(|field| &field.path);
        rest.extend(quote!(array_fields: &[#(#arrays),*],));
    }
    if !model.vectors.is_empty() {
        let vectors = model.vectors.iter().map(|field| {
            let (path, dimension) = (&field.path, field.dimension);
            quote!(::sharded_runtime::__private::VectorField { field: #path, dimension: #dimension })
        });
        rest.extend(quote!(vector_fields: &[#(#vectors),*],));
    }
    if !model.counters.is_empty() {
        let counters = model.counters.iter().map(|field| {
            let (path, shards) = (&field.path, field.shards);
            quote!(::sharded_runtime::__private::Counter { field: #path, shards: #shards })
        });
        rest.extend(quote!(counter_fields: &[#(#counters),*],));
    }
    rest
}

/// While resharding, the values queries read and writes draw (the description holds the sets).
pub(super) fn resharding(model: &Model) -> TokenStream {
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

/// Each indexed field's stored path and its stored segments, as expressions: literals for the
/// struct's own fields; for a nested path, constants the compiler builds from the `StoredNames`
/// of every type the path goes through, so that it follows their serde renames and cannot
/// disagree with them.
pub(super) fn index_paths(model: &Model) -> (TokenStream, Vec<(TokenStream, TokenStream)>) {
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

/// A stored type as the expansion names it.
fn stored_type(stored_type: sharded_internals::StoredType) -> TokenStream {
    let variant = match stored_type {
        sharded_internals::StoredType::Timestamp => quote!(Timestamp),
        sharded_internals::StoredType::Integer => quote!(Integer),
        sharded_internals::StoredType::Number => quote!(Number),
        sharded_internals::StoredType::String => quote!(String),
        sharded_internals::StoredType::Boolean => quote!(Boolean),
        sharded_internals::StoredType::List => quote!(List),
        sharded_internals::StoredType::Map => quote!(Map),
        sharded_internals::StoredType::Other => quote!(Other),
    };
    quote!(::sharded_runtime::__private::StoredType::#variant)
}
