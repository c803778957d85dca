//! `#[sharded(...)]` on a field: its keys, and the queries a per-query key names.

use quote::ToTokens;
use syn::Token;
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;

use super::values::*;
use super::*;
use crate::ctxt::Ctxt;
use crate::symbol::*;

impl FieldAttrs {
    pub fn from_ast(cx: &Ctxt, attrs: &[syn::Attribute]) -> Self {
        let mut out = FieldAttrs::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident(SHARDED)) {
            let parsed = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident(INDEX) {
                    let spec = if meta.input.peek(syn::token::Paren) {
                        let content;
                        syn::parenthesized!(content in meta.input);
                        let tokens: proc_macro2::TokenStream = content.parse()?;
                        let parser = Punctuated::<NestedIndex, Token![,]>::parse_terminated;
                        let list = match syn::parse::Parser::parse2(parser, tokens.clone()) {
                            Ok(list) => list,
                            // `index(a, b)`: a field set, written on a field.
                            Err(err) => {
                                let parser = Punctuated::<syn::Ident, Token![,]>::parse_terminated;
                                let Ok(names) = syn::parse::Parser::parse2(parser, tokens) else {
                                    return Err(err);
                                };
                                let names: Vec<String> =
                                    names.iter().map(|name| syn::ext::IdentExt::unraw(name).to_string()).collect();
                                cx.error_spanned_by(
                                    &meta.path,
                                    format!(
                                        "a field set goes on the struct: write `#[sharded(index({}))]` above the struct; on a field, `index` takes no list, or `index(field: Type)` for a field inside this one",
                                        names.join(", ")
                                    ),
                                );
                                return Ok(());
                            }
                        };
                        if list.is_empty() {
                            cx.error_spanned_by(
                                &meta.path,
                                "`index()` names no field: write `index` for this field, or `index(field: Type)` for a field inside it",
                            );
                        }
                        IndexSpec::Nested(list.into_iter().collect())
                    } else if meta.input.peek(Token![=]) {
                        cx.error_spanned_by(
                            &meta.path,
                            "`index` takes no value: write `#[sharded(index)]`, or `index(field: Type)` for a field inside this one",
                        );
                        skip_value(&meta)?;
                        return Ok(());
                    } else {
                        IndexSpec::Field
                    };
                    let keyed = Keyed {
                        key: meta.path.clone(),
                        tokens: meta.path.to_token_stream(),
                        value: spec,
                    };
                    if out.index.is_some() {
                        cx.error_spanned_by(&meta.path, "duplicate key `index`");
                    } else {
                        out.index = Some(keyed);
                    }
                    return Ok(());
                }
                if meta.path.is_ident(CONTAINS) {
                    if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
                        cx.error_spanned_by(
                            &meta.path,
                            "`contains` takes no value: write `#[sharded(contains)]`",
                        );
                        return skip_value(&meta);
                    }
                    if out.contains.is_some() {
                        cx.error_spanned_by(&meta.path, "duplicate key `contains`");
                    } else {
                        out.contains = Some(meta.path.clone());
                    }
                    return Ok(());
                }
                if meta.path.is_ident(VECTOR) {
                    let dimension = vector_dimension(cx, &meta)?;
                    if out.vector.is_some() {
                        cx.error_spanned_by(&meta.path, "duplicate key `vector`");
                    } else {
                        out.vector = Some(Keyed {
                            key: meta.path.clone(),
                            tokens: meta.path.to_token_stream(),
                            value: dimension,
                        });
                    }
                    return Ok(());
                }
                if meta.path.is_ident(COUNTER) {
                    let shards = counter_shards(cx, &meta)?;
                    if out.counter.is_some() {
                        cx.error_spanned_by(&meta.path, "duplicate key `counter`");
                    } else {
                        out.counter = Some(Keyed {
                            key: meta.path.clone(),
                            tokens: meta.path.to_token_stream(),
                            value: shards,
                        });
                    }
                    return Ok(());
                }
                if meta.path.is_ident(AGGREGATE) {
                    let queries = per_query(
                        cx,
                        &meta,
                        "`aggregate(...)` names the queries that sum and average the field, by method: e.g. `aggregate(all, exchange)`",
                        "`aggregate` takes no value: write `#[sharded(aggregate)]`, or name the queries that sum the field, `#[sharded(aggregate(all, exchange))]`",
                    )?;
                    if let Some(queries) = queries {
                        if out.aggregate.is_some() {
                            cx.error_spanned_by(&meta.path, "duplicate key `aggregate`");
                        } else {
                            out.aggregate = Some(meta.path.clone());
                            out.aggregate_queries = queries;
                        }
                    }
                    return Ok(());
                }
                if meta.path.is_ident(RANGE) {
                    let queries = per_query(
                        cx,
                        &meta,
                        "`range(...)` names the queries that filter on the field, by method: e.g. `range(all, exchange)`",
                        "`range` takes no value: write `#[sharded(range)]`, or name the queries that filter on the field, `#[sharded(range(all, exchange))]`",
                    )?;
                    if let Some(queries) = queries {
                        if out.range.is_some() {
                            cx.error_spanned_by(&meta.path, "duplicate key `range`");
                        } else {
                            out.range = Some(meta.path.clone());
                            out.range_queries = queries;
                        }
                    }
                    return Ok(());
                }
                if let Some(key) = meta.path.get_ident().map(ToString::to_string)
                    && CONTAINER_KEYS.contains(&key.as_str())
                {
                    cx.error_spanned_by(
                        &meta.path,
                        format!("`{key}` goes on the struct, not on a field"),
                    );
                    return skip_value(&meta);
                }
                unknown_key(cx, &meta, FIELD_KEYS, "on a field")
            });
            if let Err(err) = parsed {
                cx.syn_error(err);
            }
        }
        out
    }
}

impl syn::parse::Parse for NestedIndex {
    fn parse(input: syn::parse::ParseStream) -> syn::Result<Self> {
        let mut path = vec![input.parse::<syn::Ident>()?];
        while input.peek(Token![.]) {
            input.parse::<Token![.]>()?;
            path.push(input.parse()?);
        }
        input.parse::<Token![:]>()?;
        let ty = input.parse()?;
        Ok(NestedIndex { path, ty })
    }
}

/// A field key that stands alone (every query) or names some queries by method
/// (`aggregate(all, exchange)`, `range(all)`): `Some(None)`, `Some(Some(names))`, or `None`
/// once an error is reported (`malformed` for bad names, `valued` for `= ...`).
pub(super) fn per_query(
    cx: &Ctxt,
    meta: &ParseNestedMeta,
    malformed: &str,
    valued: &str,
) -> syn::Result<Option<Option<Vec<syn::Ident>>>> {
    if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        // `aggregate(micros: i64)`: a field inside this one, as `index(...)` takes it.
        if content.peek(syn::Ident) && content.peek2(Token![:]) && !content.peek2(Token![::]) {
            let key = key_name(meta);
            let name = content.fork().parse::<syn::Ident>()?;
            let nested = content.parse::<proc_macro2::TokenStream>()?;
            cx.error_spanned_by(
                &nested,
                format!(
                    "`{key}(...)` names queries by method, not a field inside this one (`{name}`): `{key}` takes top-level fields only; store the value in a field of its own and put `#[sharded({key})]` on it"
                ),
            );
            return Ok(None);
        }
        let parser = Punctuated::<syn::Ident, Token![,]>::parse_terminated;
        let parsed = parser(&content);
        // Consumed whole: tokens left inside would be a second error, "expected `)`".
        content.parse::<proc_macro2::TokenStream>()?;
        return Ok(match parsed {
            Ok(names) if !names.is_empty() => Some(Some(names.into_iter().collect())),
            _ => {
                cx.error_spanned_by(&meta.path, malformed);
                None
            }
        });
    }
    if !meta.input.is_empty() && !meta.input.peek(Token![,]) {
        cx.error_spanned_by(&meta.path, valued);
        skip_value(meta)?;
        return Ok(None);
    }
    Ok(Some(None))
}

/// `vector(dimension = n)`: the vectors' dimension, 1 to Firestore's 2048; `None` where a
/// mistake was reported (the key is still taken, so that no other error follows from it).
pub(super) fn vector_dimension(cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<u32>> {
    const HOW: &str =
        "write `#[sharded(vector(dimension = 768))]`, the number of values in each vector";
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(&meta.path, format!("`vector` takes its dimension: {HOW}"));
        if meta.input.peek(Token![=]) {
            skip_value(meta)?;
        }
        return Ok(None);
    }
    let mut dimension = None;
    let mut named = false;
    meta.parse_nested_meta(|inner| {
        if !inner.path.is_ident(DIMENSION) {
            return unknown_key(cx, &inner, &[DIMENSION], "in `vector(...)`");
        }
        named = true;
        let expr: syn::Expr = inner.value()?.parse()?;
        dimension = match positive_int(cx, &inner, &expr) {
            Some(n) if n > MAX_VECTOR_DIMENSION => {
                cx.error_spanned_by(
                    &expr,
                    format!("`dimension = {n}` is more than Firestore's largest vector, {MAX_VECTOR_DIMENSION}"),
                );
                None
            }
            Some(n) => u32::try_from(n).ok(),
            None => None,
        };
        Ok(())
    })?;
    if !named {
        cx.error_spanned_by(
            &meta.path,
            format!("`vector(...)` names no dimension: {HOW}"),
        );
    }
    Ok(dimension)
}

/// `counter(shards = n)` or `counter(writes_per_second = r)`: the counter's shard documents,
/// 1 to [`MAX_COUNTER_SHARDS`]; a rate asks for one shard per write a second, what one
/// Firestore document sustains. `None` where a mistake was reported (the key is still taken,
/// so that no other error follows from it).
pub(super) fn counter_shards(cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<u32>> {
    const HOW: &str = "write `#[sharded(counter(shards = 20))]`, or `counter(writes_per_second = 20)` for one shard document per write a second";
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(&meta.path, format!("`counter` takes its size: {HOW}"));
        if meta.input.peek(Token![=]) {
            skip_value(meta)?;
        }
        return Ok(None);
    }
    let mut shards: Option<Option<u32>> = None;
    let mut failed = false;
    meta.parse_nested_meta(|inner| {
        let key = if inner.path.is_ident(SHARDS) {
            SHARDS
        } else if inner.path.is_ident(WRITES_PER_SECOND) {
            WRITES_PER_SECOND
        } else {
            failed = true;
            return unknown_key(cx, &inner, COUNTER_KEYS, "in `counter(...)`");
        };
        let expr: syn::Expr = inner.value()?.parse()?;
        if shards.is_some() {
            cx.error_spanned_by(
                &inner.path,
                format!("`counter(...)` is sized once: `{SHARDS}` or `{WRITES_PER_SECOND}`, not both"),
            );
            return Ok(());
        }
        let too_many = match ungroup(&expr) {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(int),
                ..
            }) => int.base10_parse::<u64>().is_ok_and(|n| n > MAX_COUNTER_SHARDS),
            _ => false,
        };
        shards = Some(if too_many {
            cx.error_spanned_by(
                &expr,
                format!("`{key}` is more than a counter's {MAX_COUNTER_SHARDS} shard documents: a transaction that reads the counter reads each"),
            );
            None
        } else {
            positive_int(cx, &inner, &expr).and_then(|n| u32::try_from(n).ok())
        });
        Ok(())
    })?;
    match shards {
        Some(shards) => Ok(shards),
        None => {
            if !failed {
                cx.error_spanned_by(&meta.path, format!("`counter(...)` names no size: {HOW}"));
            }
            Ok(None)
        }
    }
}
