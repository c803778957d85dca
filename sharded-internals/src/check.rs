//! Rules that relate the struct's attributes and fields to each other. Everything here reports
//! into the `Ctxt`; a `Model` comes out only when nothing was wrong.

use std::collections::HashSet;

use crate::ast::{Container, Field};
use crate::attr::{Direction, IndexSpec, Keyed, ShardSetAttrs};
use crate::ctxt::Ctxt;
use crate::model::{
    AggregateField, FieldSet, IndexedField, Model, OrderField, Resharding, SetField,
    default_collection, field_path, numbered, query_method,
};
use crate::suggest::did_you_mean;
use crate::symbol::*;

/// Validates `cont`; `None` when any error was reported (to `cx`, here or while parsing).
pub fn validate<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Option<Model<'a>> {
    check_shape(cx, cont);
    let shard_values = shard_values(cx, cont);
    let resharding = previous(cx, cont, shard_values.as_deref()).map(|resharding| Resharding {
        retired_values: retired(cx, cont, shard_values.as_deref(), &resharding),
        ..resharding
    });
    let collection = collection(cx, cont);
    let parent = parent(cx, cont);
    let shard_field = shard_field(cx, cont);
    let order = order_field(cx, cont);
    if let Some(shard_field) = &shard_field {
        check_shard_field_is_free(cx, cont, shard_field);
    }
    let indexes = indexed_fields(cx, cont);
    let field_sets = field_sets(cx, cont, &indexes);
    let methods = indexes
        .iter()
        .map(|index| &index.method)
        .chain(field_sets.iter().map(|set| &set.method));
    if let Some((method, other)) = query_id_collision(methods, sharded_indexes::query_id) {
        cx.error_spanned_by(
            method,
            format!("the query names `{method}` and `{other}` hash to the same id (`sharded_runtime::query_id`), so their types would be one; rename one of the fields"),
        );
    }
    let aggregates = aggregates(cx, cont);
    if cx.has_errors() {
        return None;
    }
    Some(Model {
        ident: cont.ident,
        vis: &cont.input.vis,
        collection: collection?,
        parent_collections: parent?,
        collection_group: cont.attrs.collection_group.is_some(),
        shard_path: field_path([shard_field.as_deref()?]),
        shard_field: shard_field?,
        shard_values: shard_values?,
        resharding: resharding?,
        order: order?,
        indexes,
        field_sets,
        aggregates,
        stored_fields: stored_fields(cont),
    })
}

/// The fields serde stores under a name of their own (not always skipped, not flattened).
fn stored_fields<'a>(cont: &'a Container<'a>) -> Vec<(&'a syn::Ident, String)> {
    cont.fields
        .iter()
        .filter(|field| field.is_stored_by_name())
        .map(|field| (field.ident, field_path([field.stored_name.as_str()])))
        .collect()
}

fn check_shape(cx: &Ctxt, cont: &Container) {
    let generics = &cont.input.generics;
    if !generics.params.is_empty() {
        cx.error_spanned_by(
            generics,
            "`Sharded` does not support generic structs: a collection stores one concrete type, so derive it on a struct without type, lifetime or const parameters",
        );
    }
    if let Some(path) = &cont.serde.transparent {
        cx.error_spanned_by(
            path,
            "a `#[serde(transparent)]` struct is not stored as a document; `Sharded` needs a struct of named fields",
        );
    }
    if let Some(path) = &cont.serde.into {
        cx.error_spanned_by(
            path,
            "`#[serde(into = ...)]` stores another type, whose field names sharded cannot see, so its queries and indexes could name fields that are never stored; derive `Sharded` on the type that is stored",
        );
    }
    if let Some(path) = &cont.serde.deny_unknown_fields {
        cx.error_spanned_by(
            path,
            "`deny_unknown_fields` would reject every stored document, since each carries the shard field; remove it",
        );
    }
}

/// The shard values writes draw from.
fn shard_values(cx: &Ctxt, cont: &Container) -> Option<Vec<String>> {
    match shard_set(cx, &cont.attrs.set)? {
        Some(values) => Some(values),
        None => {
            if !cx.has_errors() {
                cx.syn_error(missing(
                    cont,
                    "missing the number of shards: add `shards = 3`, `shard_values = [\"x\", \"y\", \"z\"]` or `writes_per_second = 1500` to `#[sharded(...)]`",
                ));
            }
            None
        }
    }
}

/// The values of whichever of `shards`, `shard_values` and `writes_per_second` is given:
/// `Some(None)` when none is, `None` after an error.
fn shard_set(cx: &Ctxt, attrs: &ShardSetAttrs) -> Option<Option<Vec<String>>> {
    let given: Vec<&syn::Path> = [
        attrs.shards.as_ref().map(|k| &k.key),
        attrs.shard_values.as_ref().map(|k| &k.key),
        attrs.writes_per_second.as_ref().map(|k| &k.key),
    ]
    .into_iter()
    .flatten()
    .collect();
    if given.len() > 1 {
        let first = given[0]
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        for extra in &given[1..] {
            let key = extra
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            cx.error_spanned_by(
                extra,
                format!("`{key}` and `{first}` both set the number of shards; keep one"),
            );
        }
        return None;
    }
    if let Some(shards) = &attrs.shards {
        return Some(Some(numbered(shards.value)));
    }
    if let Some(writes) = &attrs.writes_per_second {
        let shards = writes.value.div_ceil(WRITES_PER_SHARD);
        if shards > MAX_SHARDS {
            cx.error_spanned_by(
                &writes.tokens,
                format!("{} writes per second need {shards} shards, more than the {MAX_SHARDS} supported", writes.value),
            );
            return None;
        }
        return Some(Some(numbered(shards)));
    }
    if let Some(values) = &attrs.shard_values {
        return explicit_values(cx, values).map(Some);
    }
    Some(None)
}

/// `previous(...)`: the set the collection moves from, and when the move began.
fn previous(cx: &Ctxt, cont: &Container, current: Option<&[String]>) -> Option<Resharding> {
    let Some(previous) = &cont.attrs.previous else {
        return Some(Resharding::default());
    };
    let values = match shard_set(cx, &previous.value.set)? {
        Some(values) => values,
        None if previous.value.malformed => return None,
        None => {
            cx.error_spanned_by(
                &previous.tokens,
                "`previous(...)` needs the shard set the collection is moving from, e.g. `previous(shards = 3)`",
            );
            return None;
        }
    };
    let since = match &previous.value.since {
        Some(lit) => match crate::rfc3339::unix_seconds(&lit.value.value()) {
            Ok(seconds) => Some(seconds),
            Err(why) => {
                cx.error_spanned_by(
                    &lit.value,
                    format!("`since` is an RFC 3339 time such as \"2026-11-22T19:00:00Z\": {why}"),
                );
                return None;
            }
        },
        None => None,
    };
    if let Some(current) = current {
        let same = values.len() == current.len() && values.iter().all(|v| current.contains(v));
        if same {
            cx.error_spanned_by(
                &previous.tokens,
                "`previous(...)` gives the same shard values as the current set, so nothing is moving; remove it",
            );
            return None;
        }
    }
    Some(Resharding {
        previous_values: values,
        since,
        retired_values: Vec::new(),
    })
}

/// `retired(...)`: the values of a set a rebalance moved every document out of that queries
/// read no more (its values among the current or previous ones are read, so not retired).
fn retired(
    cx: &Ctxt,
    cont: &Container,
    current: Option<&[String]>,
    resharding: &Resharding,
) -> Vec<String> {
    let Some(retired) = &cont.attrs.retired else {
        return Vec::new();
    };
    let values = match shard_set(cx, &retired.value.set) {
        Some(Some(values)) => values,
        None => return Vec::new(),
        Some(None) if retired.value.malformed => return Vec::new(),
        Some(None) => {
            cx.error_spanned_by(
                &retired.tokens,
                "`retired(...)` needs the shard set a rebalance moved every document out of, e.g. `retired(shards = 6)`",
            );
            return Vec::new();
        }
    };
    let Some(current) = current else {
        return Vec::new();
    };
    let retired_values: Vec<String> = values
        .into_iter()
        .filter(|value| !current.contains(value) && !resharding.previous_values.contains(value))
        .collect();
    if retired_values.is_empty() {
        cx.error_spanned_by(
            &retired.tokens,
            "every value of `retired(...)` is one that queries read (a current or previous value), so none is retired; remove it",
        );
    }
    retired_values
}

fn explicit_values(cx: &Ctxt, values: &Keyed<Vec<syn::LitStr>>) -> Option<Vec<String>> {
    if values.value.is_empty() {
        cx.error_spanned_by(
            &values.tokens,
            "`shard_values` is empty: list the values to spread writes over, e.g. `[\"x\", \"y\", \"z\"]`",
        );
        return None;
    }
    if values.value.len() as u64 > MAX_SHARDS {
        cx.error_spanned_by(
            &values.tokens,
            format!("more than {MAX_SHARDS} shard values"),
        );
        return None;
    }
    let mut seen = HashSet::new();
    let mut ok = true;
    for lit in &values.value {
        if !seen.insert(lit.value()) {
            cx.error_spanned_by(
                lit,
                format!("duplicate shard value \"{}\": each value must be distinct for writes to spread evenly", lit.value()),
            );
            ok = false;
        }
    }
    ok.then(|| values.value.iter().map(syn::LitStr::value).collect())
}

/// What is wrong with `name` as a collection id, if anything.
fn collection_id_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("a collection id cannot be empty")
    } else if name.contains('/') {
        Some(
            "a collection id cannot contain `/`; for a subcollection, name the collection of its parent documents: `parent = \"rooms\"`",
        )
    } else if name == "." || name == ".." {
        Some("a collection id cannot be `.` or `..`")
    } else if name.starts_with("__") && name.ends_with("__") {
        Some("ids of the form `__name__` are reserved by Firestore")
    } else if name.len() > 1500 {
        Some("a collection id is at most 1,500 bytes")
    } else {
        None
    }
}

/// `parent = "users/sessions"`: the collection ids of the parent documents' path, outermost
/// first (empty for a top-level collection).
fn parent(cx: &Ctxt, cont: &Container) -> Option<Vec<String>> {
    let Some(lit) = &cont.attrs.parent else {
        return Some(Vec::new());
    };
    let ids: Vec<String> = lit.value.value().split('/').map(str::to_owned).collect();
    match ids.iter().find_map(|id| collection_id_problem(id)) {
        Some(problem) => {
            cx.error_spanned_by(
                &lit.value,
                format!(
                    "{problem}; `parent` names the collections above this one, separated by `/` (`parent = \"users/sessions\"` for `users/{{uid}}/sessions/{{sid}}/...`)"
                ),
            );
            None
        }
        None => Some(ids),
    }
}

fn collection(cx: &Ctxt, cont: &Container) -> Option<String> {
    let Some(lit) = &cont.attrs.collection else {
        return Some(default_collection(&cont.ident.to_string()));
    };
    let name = lit.value.value();
    let problem = collection_id_problem(&name);
    match problem {
        Some(problem) => {
            cx.error_spanned_by(&lit.value, problem);
            None
        }
        None => Some(name),
    }
}

fn shard_field(cx: &Ctxt, cont: &Container) -> Option<String> {
    let Some(lit) = &cont.attrs.shard_field else {
        return Some(DEFAULT_SHARD_FIELD.to_owned());
    };
    let name = lit.value.value();
    if name.is_empty() || name.contains('.') || (name.starts_with("__") && name.ends_with("__")) {
        cx.error_spanned_by(
            &lit.value,
            "the shard field is a top-level field name: not empty, no `.`, not of the reserved form `__name__`",
        );
        return None;
    }
    if name.contains(['`', '\\']) {
        cx.error_spanned_by(
            &lit.value,
            "the shard field's name holds no `` ` `` or `\\`: Firestore would need it escaped in every query and index; choose a name without them",
        );
        return None;
    }
    Some(name)
}

fn check_shard_field_is_free(cx: &Ctxt, cont: &Container, shard_field: &str) {
    for field in &cont.fields {
        if field.stored_name == shard_field {
            cx.error_spanned_by(
                field.ident,
                format!(
                    "field `{}` is stored as `{shard_field}`, the name of the shard field that sharded adds to every document; rename it, or choose another name with `#[sharded(shard_field = \"...\")]`",
                    field.ident
                ),
            );
        }
    }
}

fn order_field<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Option<OrderField<'a>> {
    let direction = cont
        .attrs
        .direction
        .as_ref()
        .map_or(Direction::Descending, |keyed| keyed.value);
    let Some(order_by) = &cont.attrs.order_by else {
        if !cont.fields.is_empty() {
            let hint = cont
                .fields
                .iter()
                .find(|field| looks_like_time(field))
                .map(|field| format!(", e.g. `order_by = \"{}\"`", field.ident))
                .unwrap_or_default();
            cx.syn_error(missing(
                cont,
                format!("missing `order_by`: name the field that sharded queries sort by{hint}"),
            ));
        }
        return None;
    };
    let name = order_by.value.value();
    let Some(field) = cont.field(&name) else {
        if !cont.fields.is_empty() {
            let hint = field_hint(cont, &name);
            cx.error_spanned_by(
                &order_by.value,
                format!("`order_by`: no field `{name}` in `{}`{hint}", cont.ident),
            );
        }
        return None;
    };
    let mut ok = true;
    if let Some(path) = &field.serde.skipped {
        cx.error_spanned_by(
            path,
            format!("the order field `{name}` must always be stored: a document without it drops out of every sharded query"),
        );
        ok = false;
    }
    if let Some(path) = &field.serde.flatten {
        cx.error_spanned_by(
            path,
            format!("the order field `{name}` cannot be flattened: order by a single value"),
        );
        ok = false;
    }
    if !check_plain_serde(
        cx,
        field,
        "the order field",
        "range bounds and cursors",
        "for a timestamp, use `FirestoreTimestamp`, which is stored as one without an adapter",
    ) {
        ok = false;
    }
    ok.then(|| OrderField {
        ident: field.ident,
        ty: field.ty,
        path: field_path([field.stored_name.as_str()]),
        stored_name: field.stored_name.clone(),
        direction,
    })
}

/// A field sharded compares with values it serializes itself must be stored as its plain
/// type: a serde adapter would store one form and query with another. `false` if reported.
fn check_plain_serde(cx: &Ctxt, field: &Field, role: &str, values: &str, fix: &str) -> bool {
    let Some(path) = &field.serde.custom else {
        return true;
    };
    let attr = quote::ToTokens::to_token_stream(path).to_string();
    cx.error_spanned_by(
        path,
        format!(
            "`{}` is {role}, so it cannot use `#[serde({attr} = ...)]`: sharded serializes {values} as the plain `{}`, which would not match what the adapter stores; remove the attribute; {fix}",
            field.ident,
            quote::ToTokens::to_token_stream(field.ty)
                .to_string()
                .replace(' ', ""),
        ),
    );
    false
}

fn last_segment(ty: &syn::Type) -> Option<(&syn::PathSegment, Vec<&syn::PathSegment>)> {
    match ty {
        syn::Type::Path(type_path) => {
            let segments: Vec<&syn::PathSegment> = type_path.path.segments.iter().collect();
            Some((*segments.last()?, segments))
        }
        syn::Type::Group(group) => last_segment(&group.elem),
        syn::Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

fn looks_like_time(field: &Field) -> bool {
    let name = field.ident.to_string();
    let type_name = last_segment(field.ty)
        .map(|(segment, _)| segment.ident.to_string())
        .unwrap_or_default();
    ["Timestamp", "Instant", "SystemTime"]
        .iter()
        .any(|t| type_name.contains(t))
        || ["timestamp", "time", "created", "updated"]
            .iter()
            .any(|t| name.contains(t))
}

/// `T` for `Option<T>` (a query compares with a present value), else the type itself.
fn value_type(ty: &syn::Type) -> syn::Type {
    option_inner(ty).unwrap_or(ty).clone()
}

/// `T` of `Option<T>`.
fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    if let Some((segment, _)) = last_segment(ty)
        && segment.ident == "Option"
        && let syn::PathArguments::AngleBracketed(args) = &segment.arguments
        && let Some(syn::GenericArgument::Type(inner)) = args.args.first()
    {
        return Some(inner);
    }
    None
}

/// Why `name` names no field of `cont`, when it can tell: it is the name a field is stored
/// under (attributes name Rust fields), or it is close to a field's name.
fn field_hint(cont: &Container, name: &str) -> String {
    if let Some(field) = cont
        .fields
        .iter()
        .find(|field| field.is_stored_by_name() && field.stored_name == name)
    {
        let rust = field.ident.unraw();
        return format!(
            "; `{name}` is the name `{rust}` is stored under, and attributes name the Rust field: `{rust}`"
        );
    }
    let names: Vec<String> = cont.fields.iter().map(|f| f.ident.to_string()).collect();
    did_you_mean(name, names.iter().map(String::as_str))
}

/// The whole collection's query method, `T::query().all()`, which no other query may take.
const WHOLE_COLLECTION_METHOD: &str = "all";

fn indexed_fields<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Vec<IndexedField<'a>> {
    let mut indexes = Vec::new();
    let mut by_method: HashSet<String> = HashSet::new();
    let mut by_path: HashSet<String> = HashSet::new();
    for field in &cont.fields {
        let Some(index) = &field.attrs.index else {
            continue;
        };
        // By the attribute, not the validated order field, so this is reported even when the
        // order field itself has an error.
        if cont
            .attrs
            .order_by
            .as_ref()
            .is_some_and(|o| field.ident == &o.value.value())
        {
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

/// The first query method whose id (`hash` of its name) another method, or `all`, already
/// has, and that other name: generated code writes each id as a literal, so two equal ids
/// would make two queries one type.
fn query_id_collision<'m>(
    methods: impl IntoIterator<Item = &'m syn::Ident>,
    hash: impl Fn(&str) -> u64,
) -> Option<(&'m syn::Ident, String)> {
    let mut seen = std::collections::HashMap::from([(
        hash(WHOLE_COLLECTION_METHOD),
        WHOLE_COLLECTION_METHOD.to_owned(),
    )]);
    for method in methods {
        let name = method.unraw().to_string();
        if let Some(other) = seen.insert(hash(&name), name) {
            return Some((method, other));
        }
    }
    None
}

/// `index(a, b, ...)` on the struct: each names two or more distinct stored fields, none the
/// order field, and no two name the same set.
fn field_sets<'a>(
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

/// Whether serde stores `field` under its own name (not skipped, not flattened); reports on
/// `culprit` that it cannot be `what` otherwise.
fn check_stored_by_name(
    cx: &Ctxt,
    field: &Field,
    culprit: &dyn quote::ToTokens,
    what: &str,
) -> bool {
    let usage = if what == "summed" {
        Use::Summed
    } else {
        Use::Queried
    };
    match not_stored(field, usage) {
        Some((why, hint)) => {
            cx.error_spanned_by(culprit, format!("{why}, so it cannot be {what}{hint}"));
            false
        }
        None => true,
    }
}

/// What a field is used for, which decides whether a field serde may leave out will do.
#[derive(Clone, Copy, PartialEq)]
enum Use {
    /// Compared for equality: an `Option` left out when `None` is exact, since a query only
    /// ever asks for a value, which the document stores under the field's name.
    Queried,
    /// Summed and averaged: every document must hold a number.
    Summed,
}

/// Why `field`'s stored value cannot serve `usage`, if it cannot, and what would: it is
/// flattened, never stored, or left out of some documents that hold a value.
fn not_stored(field: &Field, usage: Use) -> Option<(String, &'static str)> {
    let name = field.ident.unraw();
    if let Some(path) = &field.serde.flatten {
        let path = quote::ToTokens::to_token_stream(path);
        return Some((
            format!("`{name}` is flattened (`{path}`), so it is not stored under its own name"),
            "",
        ));
    }
    let skipped = field.serde.skipped.as_ref()?;
    let Some(predicate) = &field.serde.skip_if else {
        let path = quote::ToTokens::to_token_stream(skipped);
        return Some((format!("`{name}` is never stored (`{path}`)"), ""));
    };
    let only_none = [
        "Option::is_none",
        "core::option::Option::is_none",
        "std::option::Option::is_none",
    ]
    .iter()
    .any(|none| predicate.trim_start_matches("::") == *none);
    if usage == Use::Queried && only_none && option_inner(field.ty).is_some() {
        return None;
    }
    let hint = match usage {
        Use::Queried => {
            ": those documents would drop out; an `Option` left out only when `None` (`skip_serializing_if = \"Option::is_none\"`) can be queried"
        }
        Use::Summed => ": every document must hold a number to be summed and averaged",
    };
    Some((
        format!(
            "`{name}` is left out of a document whenever `{predicate}` holds (`skip_serializing_if`)"
        ),
        hint,
    ))
}

/// `#[sharded(aggregate)]` fields: stored under their own name as their plain type. Whether
/// the type is numeric is a trait bound the derive's output checks, spanned on the type.
fn aggregates<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Vec<AggregateField<'a>> {
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
        out.push(AggregateField {
            ident: field.ident,
            ty: field.ty,
            path: field_path([field.stored_name.as_str()]),
        });
    }
    out
}

/// An error on the `#[sharded]` attribute if there is one, else on the struct's name.
fn missing(cont: &Container, message: impl std::fmt::Display) -> syn::Error {
    match &cont.attrs.attribute {
        Some(attr) => syn::Error::new_spanned(attr, message),
        None => syn::Error::new_spanned(cont.ident, message),
    }
}

use syn::ext::IdentExt as _;

#[cfg(test)]
mod tests {
    use super::query_id_collision;

    #[test]
    fn a_query_name_whose_id_is_taken_is_refused() {
        let idents = |names: &[&str]| -> Vec<syn::Ident> {
            names
                .iter()
                .map(|name| syn::parse_str(name).unwrap())
                .collect()
        };
        let methods = idents(&["exchange", "venue", "r#type", "currency"]);
        assert!(query_id_collision(&methods, sharded_indexes::query_id).is_none());
        // A hash of the length collides: on the later name, naming the earlier one.
        let by_length = |name: &str| name.len() as u64;
        let (method, other) = query_id_collision(&methods, by_length).unwrap();
        assert_eq!(
            (method.to_string(), other),
            ("currency".to_owned(), "exchange".to_owned())
        );
        // `all` is taken before any method; a raw name is hashed without its `r#`.
        let fee = idents(&["r#fee", "venue"]);
        let (method, other) = query_id_collision(&fee, by_length).unwrap();
        assert_eq!(
            (method.to_string(), other),
            ("r#fee".to_owned(), "all".to_owned())
        );
    }
}
