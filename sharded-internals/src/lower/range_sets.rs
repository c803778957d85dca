//! `ranges(a, b, ...)` on the struct: range fields one query filters on together. Firestore
//! orders such a query by the order field, then each filtered field by its path, so each
//! query that filters on every one of them needs an index of its own with all of them; only
//! the sets declared get one, which keeps the plan within Firestore's index budget.

use std::collections::BTreeSet;

use syn::ext::IdentExt as _;

use super::order::field_hint;
use crate::ast::Container;
use crate::ctxt::Ctxt;
use crate::model::{DeclaredField, DeclaredQuery};

/// The declared sets, each as its fields' stored paths in the order Firestore orders them.
/// Each field is a range field of the struct, named once; a set has two or more, is declared
/// once, and some query filters on each of its fields.
pub(super) fn range_sets(
    cx: &Ctxt,
    cont: &Container<'_>,
    ranges: &[DeclaredField<'_>],
) -> Vec<Vec<String>> {
    let mut sets: Vec<Vec<String>> = Vec::new();
    for set in &cont.attrs.range_sets {
        if set.value.len() < 2 {
            let hint = match set.value.first() {
                Some(field) => {
                    format!("a query filters on `{field}` alone through its `#[sharded(range)]`")
                }
                None => "name two or more range fields".to_owned(),
            };
            cx.error_spanned_by(
                &set.key,
                format!(
                    "`ranges(...)` names the range fields one query filters on together; {hint}"
                ),
            );
            continue;
        }
        let mut fields: Vec<&DeclaredField> = Vec::new();
        let mut complete = true;
        for ident in &set.value {
            let name = ident.unraw().to_string();
            if !cont.fields.iter().any(|field| field.ident.unraw() == name) {
                cx.error_spanned_by(
                    ident,
                    format!(
                        "`{name}` is not a field of `{}`{}",
                        cont.ident,
                        field_hint(cont, &name)
                    ),
                );
                complete = false;
                continue;
            }
            let Some(range) = ranges.iter().find(|range| range.ident.unraw() == name) else {
                cx.error_spanned_by(
                    ident,
                    format!("`{name}` has no range filters: put `#[sharded(range)]` on it to filter on it here"),
                );
                complete = false;
                continue;
            };
            if fields.iter().any(|field| field.ident.unraw() == name) {
                cx.error_spanned_by(ident, format!("`{name}` is named twice in `ranges(...)`"));
                complete = false;
                continue;
            }
            fields.push(range);
        }
        if !complete {
            continue;
        }
        if !filtered_together(&fields) {
            let names: Vec<String> = fields.iter().map(|f| format!("`{}`", f.ident)).collect();
            cx.error_spanned_by(
                &set.key,
                format!(
                    "no query filters on each of {}: their `range(...)` lists name no query in common; name one in each",
                    names.join(", ")
                ),
            );
            continue;
        }
        let mut paths: Vec<String> = fields.iter().map(|field| field.path.clone()).collect();
        paths.sort_by(|a, b| sharded_indexes::field_path::path_order(a, b));
        let as_set: BTreeSet<&String> = paths.iter().collect();
        if sets
            .iter()
            .any(|declared| declared.iter().collect::<BTreeSet<_>>() == as_set)
        {
            cx.error_spanned_by(
                &set.key,
                "these fields are filtered together already: drop this `ranges(...)`",
            );
            continue;
        }
        sets.push(paths);
    }
    sets
}

/// Whether some query filters on each of `fields`: the whole collection when each does
/// on every query, else a query each one names (or every one names, for a field on every
/// query) that compares none of them.
fn filtered_together(fields: &[&DeclaredField<'_>]) -> bool {
    let declared: Vec<&Vec<DeclaredQuery>> = fields
        .iter()
        .filter_map(|field| field.queries.as_ref())
        .collect();
    let Some((first, rest)) = declared.split_first() else {
        return true;
    };
    first.iter().any(|query| {
        let compares_none = fields
            .iter()
            .all(|field| !query.compared.contains(&field.path));
        compares_none
            && rest.iter().all(|queries| {
                queries.iter().any(|other| {
                    other.compared == query.compared && other.contains == query.contains
                })
            })
    })
}
