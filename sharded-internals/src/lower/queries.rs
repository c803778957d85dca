//! The typed queries: one per `#[sharded(index)]` path, one per `index(a, b)` set, the
//! `#[sharded(aggregate)]` fields' sums and averages and the `#[sharded(range)]` fields'
//! filters.

use std::collections::HashSet;

use syn::ext::IdentExt as _;

use super::order::{field_hint, is_order_field};
use super::standalone::{Standalone, query_kinds, standalone_fields};
use crate::ast::Container;
use crate::attr::IndexSpec;
use crate::check::{Use, check_plain_serde, check_stored_by_name, not_stored};
use crate::ctxt::Ctxt;
use crate::model::VectorField;
use crate::model::{
    ArrayField, DeclaredField, DeclaredQuery, FieldSet, IndexedField, SetField, field_path,
    query_method,
};
use crate::suggest::did_you_mean;
use crate::symbol::WHOLE_COLLECTION_METHOD;
use crate::types::{option_inner, value_type, vec_element};

pub(super) fn indexed_fields<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Vec<IndexedField<'a>> {
    let mut indexes = Vec::new();
    let mut by_method: HashSet<String> = HashSet::new();
    let mut by_path: HashSet<String> = HashSet::new();
    for field in &cont.fields {
        let Some(index) = &field.attrs.index else {
            continue;
        };
        if is_order_field(cont, field.ident) {
            cx.error_spanned_by(
                &index.key,
                format!("`{}` is the order field, which every index already ends with; index the fields you filter on", field.ident),
            );
            continue;
        }
        if let Some((why, hint)) = not_stored(field, Use::Queried) {
            cx.error_spanned_by(&index.key, format!("{why}, so it cannot be queried{hint}"));
            continue;
        }
        if !check_plain_serde(
            cx,
            field,
            "an indexed field",
            "query values",
            "store the value as its plain type",
        ) {
            continue;
        }
        let entries: Vec<(Vec<syn::Ident>, syn::Type, bool, proc_macro2::Span)> = match &index.value
        {
            IndexSpec::Field => vec![(
                Vec::new(),
                value_type(field.ty),
                option_inner(field.ty).is_some(),
                field.ident.span(),
            )],
            IndexSpec::Nested(nested) => nested
                .iter()
                .map(|n| {
                    let optional = option_inner(&n.ty).is_some();
                    (n.path.clone(), n.ty.clone(), optional, n.path[0].span())
                })
                .collect(),
        };
        for (nested, value_ty, optional, span) in entries {
            let mut segments = vec![field.stored_name.clone()];
            segments.extend(nested.iter().map(|ident| ident.unraw().to_string()));
            let path = field_path(segments.iter().map(String::as_str));
            let method = query_method(field.ident, &nested, span);
            let method_name = method.unraw().to_string();
            let culprit = nested
                .last()
                .cloned()
                .unwrap_or_else(|| field.ident.clone());
            if !by_path.insert(path.clone()) {
                cx.error_spanned_by(&culprit, format!("`{path}` is indexed twice"));
                continue;
            }
            if method_name == WHOLE_COLLECTION_METHOD {
                cx.error_spanned_by(
                    &culprit,
                    format!(
                        "`{method_name}` would be this field's query method, and `T::query().all()` is the whole collection's; rename the field (e.g. `#[serde(rename = \"all\")] all_of: ...`)"
                    ),
                );
                continue;
            }
            if !by_method.insert(method_name.clone()) {
                cx.error_spanned_by(
                    &culprit,
                    format!("two indexed paths would both get the query method `{method_name}`"),
                );
                continue;
            }
            indexes.push(IndexedField {
                field: field.ident,
                stored_field: field.stored_name.clone(),
                nested,
                path,
                value_ty,
                method,
                optional,
            });
        }
    }
    indexes
}

/// `index(a, b, ...)` on the struct: each names two or more distinct stored fields, none the
/// order field, and no two name the same set.
pub(super) fn field_sets<'a>(
    cx: &Ctxt,
    cont: &'a Container<'a>,
    indexes: &[IndexedField],
) -> Vec<FieldSet<'a>> {
    let mut methods: HashSet<String> = indexes
        .iter()
        .map(|index| index.method.unraw().to_string())
        .collect();
    methods.insert(WHOLE_COLLECTION_METHOD.to_owned());
    let mut seen: Vec<std::collections::BTreeSet<String>> = Vec::new();
    let mut sets = Vec::new();
    for set in &cont.attrs.field_sets {
        if set.value.len() < 2 {
            let hint = match set.value.first() {
                Some(field) => format!("put `#[sharded(index)]` on `{field}`"),
                None => "name two or more fields".to_owned(),
            };
            cx.error_spanned_by(
                &set.key,
                format!("`index(...)` on the struct queries two or more fields together; {hint}"),
            );
            continue;
        }
        let mut fields = Vec::new();
        let mut names = HashSet::new();
        for ident in &set.value {
            let name = ident.unraw().to_string();
            let Some(field) = cont.fields.iter().find(|f| f.ident.unraw() == name) else {
                cx.error_spanned_by(
                    ident,
                    format!(
                        "`{name}` is not a field of `{}`{}",
                        cont.ident,
                        field_hint(cont, &name),
                    ),
                );
                continue;
            };
            if !names.insert(name.clone()) {
                cx.error_spanned_by(ident, format!("`{name}` is named twice in this index"));
                continue;
            }
            if cont
                .attrs
                .order_by
                .as_ref()
                .is_some_and(|o| name == o.value.value())
            {
                cx.error_spanned_by(
                    ident,
                    format!("`{name}` is the order field, which every index already ends with; name the fields you filter on"),
                );
                continue;
            }
            if !check_stored_by_name(cx, field, ident, "queried") {
                continue;
            }
            if !check_plain_serde(
                cx,
                field,
                "in an index",
                "query values",
                "store the value as its plain type",
            ) {
                continue;
            }
            fields.push(SetField {
                ident,
                path: field_path([field.stored_name.as_str()]),
                value_ty: value_type(field.ty),
            });
        }
        if fields.len() != set.value.len() {
            continue;
        }
        let key: std::collections::BTreeSet<String> =
            fields.iter().map(|f| f.path.clone()).collect();
        if seen.contains(&key) {
            cx.error_spanned_by(
                &set.key,
                "an earlier `index(...)` names the same fields; an equality query on a set of fields is the same in any order",
            );
            continue;
        }
        seen.push(key);
        let name = set
            .value
            .iter()
            .map(|ident| ident.unraw().to_string())
            .collect::<Vec<_>>()
            .join("_and_");
        if !methods.insert(name.clone()) {
            cx.error_spanned_by(
                &set.key,
                format!("this index would get the query method `{name}`, which another query has"),
            );
            continue;
        }
        let span = set
            .key
            .get_ident()
            .map_or_else(proc_macro2::Span::call_site, |k| k.span());
        sets.push(FieldSet {
            fields,
            method: syn::Ident::new(&name, span),
        });
    }
    sets
}

/// `#[sharded(aggregate)]` fields: stored under their own name as their plain type. Whether
/// the type is numeric is a trait bound the derive's output checks, spanned on the type.
/// `#[sharded(contains)]` fields: a `Vec<E>` stored under its own name as a plain array (so
/// never the order field, whose type orders); each gets `{field}_contains(e)` and `{field}_contains_any([..])`.
pub(super) fn arrays<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Vec<ArrayField<'a>> {
    let mut out = Vec::new();
    for field in &cont.fields {
        let Some(key) = &field.attrs.contains else {
            continue;
        };
        let Some(element_ty) = vec_element(field.ty) else {
            cx.error_spanned_by(
                field.ty,
                "`contains` queries an array by element: the field is a `Vec<T>` (an `Option` or another collection is not stored as one array on every document)",
            );
            continue;
        };
        if !check_stored_by_name(cx, field, key, "queried") {
            continue;
        }
        if !check_plain_serde(
            cx,
            field,
            "queried by element",
            "its elements",
            "store the field as a plain array",
        ) {
            continue;
        }
        out.push(ArrayField {
            ident: field.ident,
            element_ty: element_ty.clone(),
            path: field_path([field.stored_name.as_str()]),
            method: syn::Ident::new(
                &format!("{}_contains", field.ident.unraw()),
                field.ident.span(),
            ),
        });
    }
    out
}

/// Every query a field can be declared for (`aggregate(...)`, `range(...)`), by method
/// name: with the field paths it compares and whether it is an array query.
pub(super) struct KnownQueries(Vec<(String, Vec<String>, bool)>);

impl KnownQueries {
    pub(super) fn of(
        indexes: &[IndexedField<'_>],
        field_sets: &[FieldSet<'_>],
        arrays: &[ArrayField<'_>],
    ) -> Self {
        let mut known: Vec<(String, Vec<String>, bool)> =
            vec![(WHOLE_COLLECTION_METHOD.to_owned(), Vec::new(), false)];
        known.extend(indexes.iter().map(|index| {
            (
                index.method.unraw().to_string(),
                vec![index.path.clone()],
                false,
            )
        }));
        known.extend(field_sets.iter().map(|set| {
            let paths = set.fields.iter().map(|field| field.path.clone()).collect();
            (set.method.to_string(), paths, false)
        }));
        known.extend(
            arrays
                .iter()
                .map(|array| (array.method.to_string(), vec![array.path.clone()], true)),
        );
        KnownQueries(known)
    }

    /// The queries `names` names in `key(...)`, each known and once; the others reported.
    fn declared(
        &self,
        cx: &Ctxt,
        cont: &Container<'_>,
        key: &str,
        names: &[syn::Ident],
    ) -> Vec<DeclaredQuery> {
        let mut queries: Vec<DeclaredQuery> = Vec::new();
        for name in names {
            let written = name.unraw().to_string();
            let Some((_, compared, contains)) =
                self.0.iter().find(|(method, ..)| *method == written)
            else {
                let hint =
                    did_you_mean(&written, self.0.iter().map(|(method, ..)| method.as_str()));
                cx.error_spanned_by(
                    name,
                    format!("`{key}({written})`: `{}` has no query `{written}` (name a query method: `all`, an indexed field's, a field set's or an array field's `_contains`){hint}", cont.ident),
                );
                continue;
            };
            if queries.iter().any(|query| query.method == *name) {
                cx.error_spanned_by(name, format!("`{written}` is named twice in `{key}(...)`"));
                continue;
            }
            queries.push(DeclaredQuery {
                method: name.clone(),
                compared: compared.clone(),
                contains: *contains,
            });
        }
        queries
    }
}

pub(super) fn aggregates<'a>(
    cx: &Ctxt,
    cont: &'a Container<'a>,
    known: &KnownQueries,
) -> Vec<DeclaredField<'a>> {
    let mut out = Vec::new();
    for field in &cont.fields {
        let Some(key) = &field.attrs.aggregate else {
            continue;
        };
        if !check_stored_by_name(cx, field, key, "summed") {
            continue;
        }
        if !check_plain_serde(
            cx,
            field,
            "aggregated",
            "its values",
            "store the value as its plain number",
        ) {
            continue;
        }
        let queries = field
            .attrs
            .aggregate_queries
            .as_ref()
            .map(|names| known.declared(cx, cont, "aggregate", names));
        out.push(DeclaredField {
            ident: field.ident,
            ty: field.ty,
            value_ty: field.ty.clone(),
            path: field_path([field.stored_name.as_str()]),
            queries,
        });
    }
    out
}

/// `#[sharded(range)]` fields: stored under their own name as their plain type (an `Option`
/// of it too: a filter never matches a document without the field, sharded or not). Whether
/// the type orders as the merge orders is a trait bound the derive's output checks (the
/// order field's, `OrderKey`), spanned on the type. Not the order field, whose range is
/// `.range(..)`.
pub(super) fn ranges<'a>(
    cx: &Ctxt,
    cont: &'a Container<'a>,
    known: &KnownQueries,
) -> Vec<DeclaredField<'a>> {
    let mut out = Vec::new();
    for field in &cont.fields {
        let Some(key) = &field.attrs.range else {
            continue;
        };
        if is_order_field(cont, field.ident) {
            cx.error_spanned_by(
                key,
                format!("`{}` is the order field, whose range every query takes already (`.range(..)`); declare `range` on the other fields you filter by", field.ident),
            );
            continue;
        }
        if !check_stored_by_name(cx, field, key, "filtered") {
            continue;
        }
        if !check_plain_serde(
            cx,
            field,
            "filtered by range",
            "its bounds",
            "store the value as its plain type",
        ) {
            continue;
        }
        let queries = field
            .attrs
            .range_queries
            .as_ref()
            .map(|names| known.declared(cx, cont, "range", names));
        out.push(DeclaredField {
            ident: field.ident,
            ty: field.ty,
            value_ty: value_type(field.ty),
            path: field_path([field.stored_name.as_str()]),
            queries,
        });
    }
    out
}

/// `#[sharded(vector(dimension = n))]` fields: stored under their own name as their plain
/// type (whether that is a vector is a trait bound the derive's output checks, spanned on the
/// type), neither the order field nor a field of another query kind: a vector is compared by
/// distance only.
pub(super) fn vectors<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Vec<VectorField<'a>> {
    let vector = Standalone {
        kind: "vector",
        not_the_order_field: "which orders the collection; a vector is searched by distance",
        alone: "a vector is searched by distance alone",
        used: "searched",
        serde: [
            "searched by distance",
            "its vectors",
            "store the field as the firestore crate's `FirestoreVector`",
        ],
    };
    standalone_fields(
        cx,
        cont,
        &vector,
        |attrs| attrs.vector.as_ref(),
        query_kinds,
    )
    .into_iter()
    .map(|(field, dimension)| VectorField {
        ident: field.ident,
        ty: field.ty,
        path: field_path([field.stored_name.as_str()]),
        dimension,
    })
    .collect()
}
