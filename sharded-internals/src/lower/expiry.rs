//! `expire_at = "expires"` on the struct: the timestamp after which a document may be deleted.
//! Firestore's TTL policy deletes it some time later (within about a day, in no order), so
//! until then it still matches queries: the field is filtered by range in every query
//! (`unexpired(now)` is `expires > now`), and with each other range field, so each of those
//! queries has its index.

use std::collections::BTreeSet;

use syn::ext::IdentExt as _;

use super::order::{field_hint, is_order_field};
use crate::ast::Container;
use crate::check::{check_plain_serde, check_stored_by_name};
use crate::ctxt::Ctxt;
use crate::model::{DeclaredField, ExpiryField, field_path};

/// The expiry field, if the struct names one and it can be one. A field that is not
/// `#[sharded(range)]` already becomes a range field of every query (`ranges`); one declared
/// `range(...)` for some queries only is refused, since every query hides expired documents.
pub(super) fn expiry_field<'a>(
    cx: &Ctxt,
    cont: &'a Container<'a>,
    ranges: &mut Vec<DeclaredField<'a>>,
) -> Option<ExpiryField<'a>> {
    let expire_at = cont.attrs.expire_at.as_ref()?;
    let name = expire_at.value.value();
    let Some(field) = cont.field(&name) else {
        cx.error_spanned_by(
            &expire_at.value,
            format!(
                "`expire_at`: no field `{name}` in `{}`{}",
                cont.ident,
                field_hint(cont, &name)
            ),
        );
        return None;
    };
    if is_order_field(cont, field.ident) {
        cx.error_spanned_by(
            &expire_at.value,
            format!("`{name}` is the order field: an expiry that rises with every write is the hotspot Firestore's TTL page warns of once indexed, and the order field's composite indexes are what every query reads; store the expiry in a field of its own"),
        );
        return None;
    }
    if crate::types::option_inner(field.ty).is_some() {
        cx.error_spanned_by(
            field.ty,
            format!("the expiry field `{name}` is an `Option`: a document without it never expires, and `unexpired(now)` (`{name} > now`) would hide it, which the same query on an unexpiring collection returns; store a time far ahead for a document that should stay"),
        );
        return None;
    }
    if !check_stored_by_name(cx, field, &expire_at.value, "the expiry field")
        || !check_plain_serde(
            cx,
            field,
            "the expiry field",
            "its bounds",
            "store the time as `FirestoreTimestamp` or `SystemTime`",
        )
    {
        return None;
    }
    let path = field_path([field.stored_name.as_str()]);
    match ranges.iter().find(|range| range.ident == field.ident) {
        Some(range) if range.queries.is_some() => {
            let key = field
                .attrs
                .range
                .as_ref()
                .expect("a range field has its key");
            cx.error_spanned_by(
                key,
                format!("`{name}` is the expiry field, which every query filters by (`unexpired(now)`): write `#[sharded(range)]` without a list, or no `range` at all"),
            );
            return None;
        }
        Some(_) => {}
        None => ranges.push(DeclaredField {
            ident: field.ident,
            ty: field.ty,
            value_ty: field.ty.clone(),
            path: path.clone(),
            queries: None,
        }),
    }
    Some(ExpiryField {
        ident: field.ident,
        name: field.ident.unraw().to_string(),
        ty: field.ty,
        path,
        key: &expire_at.value,
    })
}

/// The range sets with the expiry field added: beside each other range field, and to each
/// declared set, so that `unexpired(now)` goes with any filter the type declares. A set
/// declared with the expiry already is kept once.
pub(super) fn with_expiry(
    expiry: &ExpiryField<'_>,
    ranges: &[DeclaredField<'_>],
    mut sets: Vec<Vec<String>>,
) -> Vec<Vec<String>> {
    let pairs = ranges
        .iter()
        .filter(|range| range.path != expiry.path)
        .map(|range| vec![range.path.clone()]);
    let declared = sets
        .clone()
        .into_iter()
        .filter(|set| !set.contains(&expiry.path));
    let grown: Vec<Vec<String>> = pairs
        .chain(declared)
        .map(|mut set| {
            set.push(expiry.path.clone());
            set.sort_by(|a, b| sharded_indexes::field_path::path_order(a, b));
            set
        })
        .collect();
    for set in grown {
        let as_set: BTreeSet<&String> = set.iter().collect();
        if !sets
            .iter()
            .any(|known| known.iter().collect::<BTreeSet<_>>() == as_set)
        {
            sets.push(set);
        }
    }
    sets
}
