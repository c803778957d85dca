//! Fields of a kind of their own (`vector`, `counter`): neither the order field nor a field of
//! another kind, stored under their own name as their plain type. What is checked is one
//! function; what each kind says about itself is its `Standalone`.

use crate::ast::{Container, Field};
use crate::attr::{FieldAttrs, Keyed};
use crate::check::{check_plain_serde, check_stored_by_name};
use crate::ctxt::Ctxt;

use super::order::is_order_field;

/// What a kind of field says in its errors.
pub(super) struct Standalone {
    /// The attribute's name: `vector`.
    pub kind: &'static str,
    /// Why the order field cannot be one: "which orders the collection; a vector is
    /// searched by distance".
    pub not_the_order_field: &'static str,
    /// Why it is no field of another kind: "a vector is searched by distance alone".
    pub alone: &'static str,
    /// How its value is used, for a field not stored by name: "searched".
    pub used: &'static str,
    /// For serde's custom (de)serialization: the role, what its values are, and the fix.
    pub serde: [&'static str; 3],
}

/// The fields of `cont` declared `kind` (by `declared`) that pass every check, each with its
/// size (a dimension, a shard count); `others` names the other kinds a field of it cannot
/// also be. A field whose size was reported wrong while parsing is left out silently.
pub(super) fn standalone_fields<'a>(
    cx: &Ctxt,
    cont: &'a Container<'a>,
    kind: &Standalone,
    declared: impl Fn(&FieldAttrs) -> Option<&Keyed<Option<u32>>>,
    others: impl Fn(&FieldAttrs) -> Vec<(bool, &'static str)>,
) -> Vec<(&'a Field<'a>, u32)> {
    let mut out = Vec::new();
    for field in &cont.fields {
        let Some(key) = declared(&field.attrs) else {
            continue;
        };
        if is_order_field(cont, field.ident) {
            cx.error_spanned_by(
                &key.key,
                format!(
                    "`{}` is the order field, {}: declare `{}` on another field",
                    field.ident, kind.not_the_order_field, kind.kind
                ),
            );
            continue;
        }
        if let Some((_, other)) = others(&field.attrs).into_iter().find(|(set, _)| *set) {
            cx.error_spanned_by(
                &key.key,
                format!(
                    "{}, so a field is `{}` or `{other}`, not both: drop one",
                    kind.alone, kind.kind
                ),
            );
            continue;
        }
        let Some(size) = key.value else {
            continue;
        };
        if !check_stored_by_name(cx, field, &key.key, kind.used) {
            continue;
        }
        let [role, values, fix] = kind.serde;
        if !check_plain_serde(cx, field, role, values, fix) {
            continue;
        }
        out.push((field, size));
    }
    out
}

/// The kinds of query field every standalone field excludes.
pub(super) fn query_kinds(attrs: &FieldAttrs) -> Vec<(bool, &'static str)> {
    vec![
        (attrs.index.is_some(), "index"),
        (attrs.aggregate.is_some(), "aggregate"),
        (attrs.range.is_some(), "range"),
        (attrs.contains.is_some(), "contains"),
    ]
}
