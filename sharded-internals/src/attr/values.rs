//! The values keys take, read the same way wherever they stand: flags, keys set once, numbers,
//! strings, and the error for an unknown key.

use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::{Expr, ExprLit, Lit, LitStr, Token};

use super::*;
use crate::ctxt::Ctxt;
use crate::suggest::did_you_mean;
use crate::symbol::*;

/// A key without a value (`collection_group`).
pub(super) fn flag(
    cx: &Ctxt,
    slot: &mut Option<syn::Path>,
    meta: &ParseNestedMeta,
) -> syn::Result<()> {
    if !meta.input.is_empty() && !meta.input.peek(syn::Token![,]) {
        let key = key_name(meta);
        cx.error_spanned_by(
            &meta.path,
            format!("`{key}` takes no value: write `{key}` alone"),
        );
        return skip_value(meta);
    }
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, format!("duplicate key `{}`", key_name(meta)));
        return Ok(());
    }
    *slot = Some(meta.path.clone());
    Ok(())
}

pub(super) fn set<T>(
    cx: &Ctxt,
    slot: &mut Option<Keyed<T>>,
    meta: &ParseNestedMeta,
    parse: impl FnOnce(&Expr) -> Option<T>,
) -> syn::Result<()> {
    let expr: Expr = meta.value()?.parse()?;
    let Some(value) = parse(ungroup(&expr)) else {
        return Ok(());
    };
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, format!("duplicate key `{}`", key_name(meta)));
        return Ok(());
    }
    *slot = Some(Keyed {
        key: meta.path.clone(),
        value,
        tokens: expr.to_token_stream(),
    });
    Ok(())
}

pub(super) fn unknown_key(
    cx: &Ctxt,
    meta: &ParseNestedMeta,
    keys: &[&str],
    place: &str,
) -> syn::Result<()> {
    let name = meta.path.to_token_stream().to_string().replace(' ', "");
    let hint = did_you_mean(&name, keys.iter().copied());
    let hint = if hint.is_empty() {
        format!(
            "; expected one of {}",
            keys.iter()
                .map(|key| format!("`{key}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        hint
    };
    cx.error_spanned_by(&meta.path, format!("unknown key `{name}` {place}{hint}"));
    skip_value(meta)
}

/// Consumes whatever follows a key (`= expr` or `(...)`), so parsing goes on to the next key.
pub(super) fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        // Consumed whole: tokens left inside would be a second error, "expected `)`".
        content.parse::<proc_macro2::TokenStream>()?;
    }
    Ok(())
}

/// The expression inside invisible groups (a `$x:literal` from `macro_rules!`) and parentheses.
pub(super) fn ungroup(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => ungroup(&group.expr),
        Expr::Paren(paren) => ungroup(&paren.expr),
        other => other,
    }
}

pub(super) fn key_name(meta: &ParseNestedMeta) -> String {
    meta.path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default()
}

pub(super) fn positive_int(cx: &Ctxt, meta: &ParseNestedMeta, expr: &Expr) -> Option<u64> {
    // A `$n:literal` of a `macro_rules!` arrives in an invisible group.
    let expr = ungroup(expr);
    let key = key_name(meta);
    let example = if key == WRITES_PER_SECOND {
        "1500"
    } else {
        "3"
    };
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) => match int.base10_parse::<u64>() {
            Ok(0) => {
                cx.error_spanned_by(
                    int,
                    format!("`{key}` must be at least 1, e.g. `{key} = {example}`"),
                );
                None
            }
            Ok(n) if key == SHARDS && n > MAX_SHARDS => {
                cx.error_spanned_by(
                    int,
                    format!("`shards = {n}` is more than {MAX_SHARDS}: every read would fan out to {} queries", n.div_ceil(30)),
                );
                None
            }
            Ok(n) => Some(n),
            Err(err) => {
                cx.syn_error(err);
                None
            }
        },
        Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            ..
        }) => {
            cx.error_spanned_by(
                expr,
                format!("`{key}` must be a positive integer, e.g. `{key} = {example}`"),
            );
            None
        }
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => {
            cx.error_spanned_by(
                expr,
                format!(
                    "`{key}` takes an integer, not a string: `{key} = {}`",
                    s.value()
                ),
            );
            None
        }
        _ => {
            cx.error_spanned_by(
                expr,
                format!("`{key}` takes a positive integer, e.g. `{key} = {example}`"),
            );
            None
        }
    }
}

pub(super) fn string(cx: &Ctxt, meta: &ParseNestedMeta, expr: &Expr) -> Option<LitStr> {
    if let Expr::Lit(ExprLit {
        lit: Lit::Str(lit), ..
    }) = expr
    {
        return Some(lit.clone());
    }
    let key = key_name(meta);
    let example = match key.as_str() {
        ORDER_BY => "timestamp",
        COLLECTION => "instruments",
        SINCE => "2026-11-22T19:00:00Z",
        _ => "shard",
    };
    cx.error_spanned_by(
        expr,
        format!("`{key}` takes a string, e.g. `{key} = \"{example}\"`"),
    );
    None
}
