//! Rules that relate the struct's attributes and fields to each other, apart from building
//! the model (`lower`): each reports into the `Ctxt`, spanned on the user's token, and builds
//! nothing.

use syn::ext::IdentExt as _;

use crate::ast::{Container, Field};
use crate::ctxt::Ctxt;
use crate::model::ArrayField;
use crate::symbol::WHOLE_COLLECTION_METHOD;
use crate::types::option_inner;

pub(crate) fn check_shape(cx: &Ctxt, cont: &Container) {
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

pub(crate) fn check_shard_field_is_free(cx: &Ctxt, cont: &Container, shard_field: &str) {
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

/// The first query method whose id (`hash` of its name) another method, or `all`, already
/// has, and that other name: generated code writes each id as a literal, so two equal ids
/// would make two queries one type.
pub(crate) fn query_id_collision<'m>(
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

/// Whether serde stores `field` under its own name (not skipped, not flattened); reports on
/// `culprit` that it cannot be `what` otherwise.
pub(crate) fn check_stored_by_name(
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
pub(crate) enum Use {
    /// Compared for equality: an `Option` left out when `None` is exact, since a query only
    /// ever asks for a value, which the document stores under the field's name.
    Queried,
    /// Summed and averaged: every document must hold a number.
    Summed,
}

/// Why `field`'s stored value cannot serve `usage`, if it cannot, and what would: it is
/// flattened, never stored, or left out of some documents that hold a value.
pub(crate) fn not_stored(field: &Field, usage: Use) -> Option<(String, &'static str)> {
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

/// A field sharded compares with values it serializes itself must be stored as its plain
/// type: a serde adapter would store one form and query with another. `false` if reported.
pub(crate) fn check_plain_serde(
    cx: &Ctxt,
    field: &Field,
    role: &str,
    values: &str,
    fix: &str,
) -> bool {
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

/// Each indexed field's `in` query is its method's name with `_in`: no other query may have
/// that name (`venue` and `venue_in` both indexed), or the two methods would be one.
pub(crate) fn check_in_methods_are_free<'m>(
    cx: &Ctxt,
    indexed: impl IntoIterator<Item = &'m syn::Ident>,
    methods: &[&syn::Ident],
) {
    for method in indexed {
        let name = format!("{}_in", method.unraw());
        if methods.iter().any(|other| other.unraw() == name.as_str()) {
            cx.error_spanned_by(
                method,
                format!("`{name}`, the `in` query of `{}`, is also the name of another query; rename one of the fields", method.unraw()),
            );
        }
    }
}

/// An array field's queries, `{field}_contains` and `{field}_contains_any`, take names no
/// other query has.
pub(crate) fn check_array_methods_are_free(
    cx: &Ctxt,
    arrays: &[ArrayField],
    methods: &[&syn::Ident],
) {
    for array in arrays {
        let contains = array.method.unraw().to_string();
        for name in [contains.clone(), format!("{contains}_any")] {
            let taken = methods.iter().any(|other| {
                let other = other.unraw().to_string();
                other == name || format!("{other}_in") == name
            });
            if taken {
                cx.error_spanned_by(
                    array.ident,
                    format!("`{name}`, a query of the array field `{}`, is also the name of another query; rename one of the fields", array.ident.unraw()),
                );
            }
        }
    }
}

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
