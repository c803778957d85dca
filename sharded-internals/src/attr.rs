//! `#[sharded(...)]` and the parts of `#[serde(...)]` that decide stored names, parsed into
//! values that keep the user's tokens for error spans. Only per-attribute rules live here;
//! rules that relate fields to each other are in `check`.

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;
use syn::{Expr, ExprLit, Lit, LitStr, Token};

use crate::case::RenameRule;
use crate::ctxt::Ctxt;
use crate::suggest::did_you_mean;
use crate::symbol::*;

/// A value given under a key, with both kept for error spans.
#[derive(Clone)]
pub struct Keyed<T> {
    pub key: syn::Path,
    pub value: T,
    pub tokens: TokenStream,
}

/// Which way the order field sorts: the index plan's own type, so nothing maps one to another.
pub use sharded_indexes::Direction;

/// `#[sharded(...)]` on the struct.
#[derive(Default)]
pub struct ContainerAttrs {
    /// The first `#[sharded]` attribute, to span errors about missing keys.
    pub attribute: Option<syn::Attribute>,
    /// The shard set writes draw from.
    pub set: ShardSetAttrs,
    /// `previous(...)`: the set a live collection is moving from.
    pub previous: Option<Keyed<PreviousAttrs>>,
    /// `retired(...)`: a set a rebalance moved every document out of.
    pub retired: Option<Keyed<PreviousAttrs>>,
    pub order_by: Option<Keyed<LitStr>>,
    pub direction: Option<Keyed<Direction>>,
    pub collection: Option<Keyed<LitStr>>,
    /// `parent = "rooms"`: the collection ids of the documents the collection lives under.
    pub parent: Option<Keyed<LitStr>>,
    /// `collection_group`: queries across every parent are declared (with their indexes).
    pub collection_group: Option<syn::Path>,
    /// `reversible`: queries run in the other direction too (with their indexes), and pages
    /// go back.
    pub reversible: Option<syn::Path>,
    /// `server_timestamp`: the server fills the order field as it applies each write.
    pub server_timestamp: Option<syn::Path>,
    pub shard_field: Option<Keyed<LitStr>>,
    /// `index(a, b, ...)`: fields queried for equality together, one entry per attribute.
    pub field_sets: Vec<Keyed<Vec<syn::Ident>>>,
}

/// The keys that each give a shard set; at most one may be used.
#[derive(Default, Clone)]
pub struct ShardSetAttrs {
    pub shards: Option<Keyed<u64>>,
    pub shard_values: Option<Keyed<Vec<LitStr>>>,
    pub writes_per_second: Option<Keyed<u64>>,
}

/// `previous(shards = 3, since = "2026-11-22T19:00:00Z")`, or `retired(shards = 6)` (no
/// `since`).
#[derive(Default, Clone)]
pub struct PreviousAttrs {
    pub set: ShardSetAttrs,
    pub since: Option<Keyed<LitStr>>,
    /// A key inside was reported already: a missing set is then no news.
    pub malformed: bool,
}

/// `#[sharded(...)]` on a field.
#[derive(Default)]
pub struct FieldAttrs {
    pub index: Option<Keyed<IndexSpec>>,
    /// `#[sharded(aggregate)]`: the field has typed `sum` and `avg` queries.
    pub aggregate: Option<syn::Path>,
    /// `#[sharded(aggregate(all, exchange))]`: the queries (by method name) that sum and
    /// average it, each with its index; `None` for every query.
    pub aggregate_queries: Option<Vec<syn::Ident>>,
    /// `#[sharded(range)]`: the field has range, `!=` and `not-in` filters on every query.
    pub range: Option<syn::Path>,
    /// `#[sharded(range(all, exchange))]`: the queries (by method name) that filter on it,
    /// each with its index; `None` for every query.
    pub range_queries: Option<Vec<syn::Ident>>,
    /// `#[sharded(contains)]`: the array field has typed `array-contains` and
    /// `array-contains-any` queries.
    pub contains: Option<syn::Path>,
}

/// What `index` asks for.
#[derive(Clone)]
pub enum IndexSpec {
    /// `#[sharded(index)]`: the field itself.
    Field,
    /// `#[sharded(index(currency: String, ...))]`: fields inside the field's own type.
    Nested(Vec<NestedIndex>),
}

/// `a.b: Type` inside `index(...)`.
#[derive(Clone)]
pub struct NestedIndex {
    pub path: Vec<syn::Ident>,
    pub ty: syn::Type,
}

/// What serde says about the struct.
#[derive(Default)]
pub struct SerdeContainer {
    pub rename_all: Option<RenameRule>,
    pub deny_unknown_fields: Option<syn::Path>,
    pub transparent: Option<syn::Path>,
    /// `into = "Other"`: the struct is stored as another type, whose names sharded cannot see.
    pub into: Option<syn::Path>,
}

/// What serde says about a field.
#[derive(Default)]
pub struct SerdeField {
    pub rename: Option<String>,
    /// `skip`, `skip_serializing` or `skip_serializing_if`: the field may be absent when stored.
    pub skipped: Option<syn::Path>,
    /// The predicate of `skip_serializing_if`, as written (`"Option::is_none"`).
    pub skip_if: Option<String>,
    pub flatten: Option<syn::Path>,
    /// `with`, `serialize_with`, `deserialize_with` or `getter`: a serde adapter decides how
    /// the value is stored or read.
    pub custom: Option<syn::Path>,
}

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
                    INDEX => field_set(cx, &mut out.field_sets, &meta)?,
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
                            "`range` goes on a field, not on the struct: write `#[sharded(range)]` on each field to filter by range (a range on the order field needs no key: `.range(..)`)",
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

impl SerdeContainer {
    /// serde reports its own syntax errors; anything not understood here is left to it.
    pub fn from_ast(attrs: &[syn::Attribute]) -> Self {
        let mut out = SerdeContainer::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident(SERDE)) {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident(RENAME_ALL) {
                    if let Some(name) = serialize_name(&meta)? {
                        out.rename_all = RenameRule::from_name(&name);
                    }
                } else if meta.path.is_ident(DENY_UNKNOWN_FIELDS) {
                    out.deny_unknown_fields = Some(meta.path.clone());
                } else if meta.path.is_ident(TRANSPARENT) {
                    out.transparent = Some(meta.path.clone());
                } else if meta.path.is_ident(INTO) {
                    out.into = Some(meta.path.clone());
                    skip_value(&meta)?;
                } else {
                    skip_value(&meta)?;
                }
                Ok(())
            });
        }
        out
    }
}

impl SerdeField {
    pub fn from_ast(attrs: &[syn::Attribute]) -> Self {
        let mut out = SerdeField::default();
        for attr in attrs.iter().filter(|attr| attr.path().is_ident(SERDE)) {
            let _ = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident(RENAME) {
                    if let Some(name) = serialize_name(&meta)? {
                        out.rename = Some(name);
                    }
                } else if meta.path.is_ident(SKIP_SERIALIZING_IF) {
                    out.skipped = Some(meta.path.clone());
                    if meta.input.peek(Token![=]) {
                        let predicate: syn::LitStr = meta.value()?.parse()?;
                        out.skip_if = Some(predicate.value());
                    }
                } else if meta.path.is_ident(SKIP) || meta.path.is_ident(SKIP_SERIALIZING) {
                    out.skipped = Some(meta.path.clone());
                    skip_value(&meta)?;
                } else if meta.path.is_ident(FLATTEN) {
                    out.flatten = Some(meta.path.clone());
                } else if [WITH, SERIALIZE_WITH, DESERIALIZE_WITH, GETTER]
                    .iter()
                    .any(|key| meta.path.is_ident(key))
                {
                    out.custom.get_or_insert_with(|| meta.path.clone());
                    skip_value(&meta)?;
                } else {
                    skip_value(&meta)?;
                }
                Ok(())
            });
        }
        out
    }
}

/// The name from `rename = "x"` or `rename(serialize = "x", ...)`: the stored one.
fn serialize_name(meta: &ParseNestedMeta) -> syn::Result<Option<String>> {
    if meta.input.peek(Token![=]) {
        let lit: LitStr = meta.value()?.parse()?;
        return Ok(Some(lit.value()));
    }
    let mut name = None;
    if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| {
            if inner.path.is_ident(SERIALIZE) {
                let lit: LitStr = inner.value()?.parse()?;
                name = Some(lit.value());
            } else {
                skip_value(&inner)?;
            }
            Ok(())
        })?;
    }
    Ok(name)
}

/// `index(a, b, ...)` on the struct: the fields one equality query compares together.
fn field_set(
    cx: &Ctxt,
    sets: &mut Vec<Keyed<Vec<syn::Ident>>>,
    meta: &ParseNestedMeta,
) -> syn::Result<()> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(
            &meta.path,
            "`index` on the struct names the fields queried together, e.g. `index(exchange, instrument_type)`; to query by one field, put `#[sharded(index)]` on that field",
        );
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
                cx.error_spanned_by(
                    &tokens,
                    "a field set names top-level fields; to query a field inside another, put `#[sharded(index(inner: Type))]` on the outer field",
                );
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
fn shard_set_key(
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
fn earlier_set(
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

/// A key without a value (`collection_group`).
fn flag(cx: &Ctxt, slot: &mut Option<syn::Path>, meta: &ParseNestedMeta) -> syn::Result<()> {
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

fn set<T>(
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

fn unknown_key(cx: &Ctxt, meta: &ParseNestedMeta, keys: &[&str], place: &str) -> syn::Result<()> {
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

/// A field key that stands alone (every query) or names some queries by method
/// (`aggregate(all, exchange)`, `range(all)`): `Some(None)`, `Some(Some(names))`, or `None`
/// once an error is reported (`malformed` for bad names, `valued` for `= ...`).
fn per_query(
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

/// Consumes whatever follows a key (`= expr` or `(...)`), so parsing goes on to the next key.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
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
fn ungroup(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => ungroup(&group.expr),
        Expr::Paren(paren) => ungroup(&paren.expr),
        other => other,
    }
}

fn key_name(meta: &ParseNestedMeta) -> String {
    meta.path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default()
}

fn positive_int(cx: &Ctxt, meta: &ParseNestedMeta, expr: &Expr) -> Option<u64> {
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

fn string(cx: &Ctxt, meta: &ParseNestedMeta, expr: &Expr) -> Option<LitStr> {
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

/// `shard_values = ["x", "y"]`, parsed by hand: array expressions need syn's `full` feature.
fn shard_values(
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

fn direction(cx: &Ctxt, expr: &Expr) -> Option<Direction> {
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
