//! `#[sharded(...)]` on the struct: its keys, field sets and shard sets.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, Lit, LitStr, Token};

use super::values::*;
use super::*;
use crate::ctxt::Ctxt;
use crate::symbol::*;

impl ContainerAttrs {
    pub fn from_ast(cx: &Ctxt, attrs: &[syn::Attribute]) -> Self {
        let mut out = ContainerAttrs::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident(SHARDED)) {
            out.attribute.get_or_insert_with(|| attr.clone());
            let parsed = attr.parse_nested_meta(|meta| {
                let Some(key) = meta.path.get_ident().map(ToString::to_string) else {
                    return unknown_key(cx, &meta, CONTAINER_KEYS, "on a struct");
                };
                match key.as_str() {
                    SHARDS | WRITES_PER_SECOND | SHARD_VALUES => {
                        shard_set_key(cx, &mut out.set, &meta)?
                    }
                    PREVIOUS => earlier_set(cx, &mut out.previous, &meta, PREVIOUS)?,
                    RETIRED => earlier_set(cx, &mut out.retired, &meta, RETIRED)?,
                    ORDER_BY => set(cx, &mut out.order_by, &meta, |v| string(cx, &meta, v))?,
                    DIRECTION => set(cx, &mut out.direction, &meta, |v| direction(cx, v))?,
                    COLLECTION => set(cx, &mut out.collection, &meta, |v| string(cx, &meta, v))?,
                    PARENT => set(cx, &mut out.parent, &meta, |v| string(cx, &meta, v))?,
                    COLLECTION_GROUP => flag(cx, &mut out.collection_group, &meta)?,
                    REVERSIBLE => flag(cx, &mut out.reversible, &meta)?,
                    SERVER_TIMESTAMP => flag(cx, &mut out.server_timestamp, &meta)?,
                    SHARD_FIELD => set(cx, &mut out.shard_field, &meta, |v| string(cx, &meta, v))?,
                    EXPIRE_AT => set(cx, &mut out.expire_at, &meta, |v| string(cx, &meta, v))?,
                    INDEX => field_set(cx, &mut out.field_sets, &meta, &INDEX_SET)?,
                    RANGES => field_set(cx, &mut out.range_sets, &meta, &RANGE_SET)?,
                    AGGREGATE => {
                        cx.error_spanned_by(
                            &meta.path,
                            "`aggregate` goes on a field, not on the struct: write `#[sharded(aggregate)]` on each field to sum and average",
                        );
                        skip_value(&meta)?
                    }
                    CONTAINS => {
                        cx.error_spanned_by(
                            &meta.path,
                            "`contains` goes on an array field, not on the struct: write `#[sharded(contains)]` on each `Vec` field to query by element",
                        );
                        skip_value(&meta)?
                    }
                    RANGE => {
                        cx.error_spanned_by(
                            &meta.path,
                            "`range` goes on a field, not on the struct: write `#[sharded(range)]` on each field to filter by range (a range on the order field needs no key: `.range(..)`), and `ranges(a, b)` on the struct to filter on several at once",
                        );
                        skip_value(&meta)?
                    }
                    _ => unknown_key(cx, &meta, CONTAINER_KEYS, "on a struct")?,
                }
                Ok(())
            });
            if let Err(err) = parsed {
                cx.syn_error(err);
            }
        }
        out
    }
}

/// What a list of fields on the struct says in its errors.
pub(super) struct FieldList {
    /// For the key without a list.
    without_list: &'static str,
    /// For a field inside another named in the list.
    nested: &'static str,
}

const INDEX_SET: FieldList = FieldList {
    without_list: "`index` on the struct names the fields queried together, e.g. `index(exchange, instrument_type)`; to query by one field, put `#[sharded(index)]` on that field",
    nested: "a field set names top-level fields; to query a field inside another, put `#[sharded(index(inner: Type))]` on the outer field",
};

const RANGE_SET: FieldList = FieldList {
    without_list: "`ranges` on the struct names the range fields filtered together, e.g. `ranges(price, quantity)`; to filter on one field, put `#[sharded(range)]` on that field",
    nested: "`ranges(...)` names top-level `#[sharded(range)]` fields",
};

/// `index(a, b, ...)` on the struct: the fields one equality query compares together; or
/// `ranges(a, b, ...)`: the range fields one query filters on together.
pub(super) fn field_set(
    cx: &Ctxt,
    sets: &mut Vec<Keyed<Vec<syn::Ident>>>,
    meta: &ParseNestedMeta,
    list: &FieldList,
) -> syn::Result<()> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(&meta.path, list.without_list);
        return skip_value(meta);
    }
    let content;
    syn::parenthesized!(content in meta.input);
    let tokens: proc_macro2::TokenStream = content.parse()?;
    let parser = Punctuated::<syn::Ident, Token![,]>::parse_terminated;
    let fields = match syn::parse::Parser::parse2(parser, tokens.clone()) {
        Ok(fields) => fields,
        Err(err) => {
            // Reported here, with the value consumed, so the keys after it are still read.
            let nested = syn::parse::Parser::parse2(
                Punctuated::<Expr, Token![,]>::parse_terminated,
                tokens.clone(),
            )
            .is_ok_and(|list| list.iter().any(|e| matches!(e, Expr::Field(_))));
            if nested {
                cx.error_spanned_by(&tokens, list.nested);
            } else {
                cx.syn_error(err);
            }
            return Ok(());
        }
    };
    let mut tokens = meta.path.to_token_stream();
    tokens.extend(quote::quote!((#fields)));
    sets.push(Keyed {
        key: meta.path.clone(),
        value: fields.into_iter().collect(),
        tokens,
    });
    Ok(())
}

/// Parses `= value` with `parse` and stores it, reporting a second occurrence of the key.
/// `shards`, `shard_values` or `writes_per_second`, into `set`.
pub(super) fn shard_set_key(
    cx: &Ctxt,
    set_attrs: &mut ShardSetAttrs,
    meta: &ParseNestedMeta,
) -> syn::Result<()> {
    match key_name(meta).as_str() {
        SHARDS => set(cx, &mut set_attrs.shards, meta, |v| {
            positive_int(cx, meta, v)
        }),
        WRITES_PER_SECOND => set(cx, &mut set_attrs.writes_per_second, meta, |v| {
            positive_int(cx, meta, v)
        }),
        _ => shard_values(cx, &mut set_attrs.shard_values, meta),
    }
}

/// `previous(shards = 3, since = "...")`: the set before this one, and when the move began;
/// or `retired(shards = 6)`: a set no document holds any more.
pub(super) fn earlier_set(
    cx: &Ctxt,
    slot: &mut Option<Keyed<PreviousAttrs>>,
    meta: &ParseNestedMeta,
    key: &'static str,
) -> syn::Result<()> {
    if !meta.input.peek(syn::token::Paren) {
        let message = if key == PREVIOUS {
            "`previous` takes the shard set the collection is moving from, e.g. `previous(shards = 3)`"
        } else {
            "`retired` takes the shard set a rebalance moved every document out of, e.g. `retired(shards = 6)`"
        };
        cx.error_spanned_by(&meta.path, message);
        return skip_value(meta);
    }
    let (keys, context) = if key == PREVIOUS {
        (PREVIOUS_KEYS, "in `previous(...)`")
    } else {
        (RETIRED_KEYS, "in `retired(...)`")
    };
    let mut out = PreviousAttrs::default();
    let errors_before = cx.error_count();
    let mut tokens = meta.path.to_token_stream();
    tokens.extend(
        meta.input
            .fork()
            .parse::<proc_macro2::Group>()?
            .into_token_stream(),
    );
    meta.parse_nested_meta(|inner| {
        match key_name(&inner).as_str() {
            SHARDS | WRITES_PER_SECOND | SHARD_VALUES => shard_set_key(cx, &mut out.set, &inner)?,
            SINCE if key == PREVIOUS => set(cx, &mut out.since, &inner, |v| string(cx, &inner, v))?,
            _ => unknown_key(cx, &inner, keys, context)?,
        }
        Ok(())
    })?;
    out.malformed = cx.error_count() > errors_before;
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, format!("duplicate key `{key}`"));
        return Ok(());
    }
    *slot = Some(Keyed {
        key: meta.path.clone(),
        value: out,
        tokens,
    });
    Ok(())
}

/// `shard_values = ["x", "y"]`, parsed by hand: array expressions need syn's `full` feature.
pub(super) fn shard_values(
    cx: &Ctxt,
    slot: &mut Option<Keyed<Vec<LitStr>>>,
    meta: &ParseNestedMeta,
) -> syn::Result<()> {
    let input = meta.value()?;
    if !input.peek(syn::token::Bracket) {
        let expr: Expr = input.parse()?;
        cx.error_spanned_by(
            expr,
            "`shard_values` takes an array of strings, e.g. `shard_values = [\"x\", \"y\", \"z\"]`",
        );
        return Ok(());
    }
    let content;
    let brackets = syn::bracketed!(content in input);
    let elements = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
    let mut tokens = TokenStream::new();
    brackets.surround(&mut tokens, |inner| elements.to_tokens(inner));
    let mut values = Vec::new();
    for element in &elements {
        match ungroup(element) {
            Expr::Lit(ExprLit {
                lit: Lit::Str(lit), ..
            }) => values.push(lit.clone()),
            other => {
                cx.error_spanned_by(other, "shard values are strings, e.g. `\"x\"`");
                return Ok(());
            }
        }
    }
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, "duplicate key `shard_values`");
        return Ok(());
    }
    *slot = Some(Keyed {
        key: meta.path.clone(),
        value: values,
        tokens,
    });
    Ok(())
}

pub(super) fn direction(cx: &Ctxt, expr: &Expr) -> Option<Direction> {
    if let Expr::Lit(ExprLit {
        lit: Lit::Str(lit), ..
    }) = expr
    {
        match lit.value().to_ascii_lowercase().as_str() {
            "asc" | "ascending" => return Some(Direction::Ascending),
            "desc" | "descending" => return Some(Direction::Descending),
            _ => {}
        }
    }
    cx.error_spanned_by(
        expr,
        "`direction` is \"desc\" (the default, newest first) or \"asc\"",
    );
    None
}
