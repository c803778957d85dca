//! The order field every query orders by, and its direction.

use syn::ext::IdentExt as _;

use super::missing;
use crate::ast::Container;
use crate::attr::Direction;
use crate::check::check_plain_serde;
use crate::ctxt::Ctxt;
use crate::model::{OrderField, field_path};
use crate::suggest::did_you_mean;
use crate::types::{last_segment, looks_like_time};

pub(super) fn order_field<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Option<OrderField<'a>> {
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
        stored_type: stored_type(field.ty, cont.attrs.server_timestamp.is_some()),
        server_timestamp: cont.attrs.server_timestamp.as_ref(),
    })
}

/// What the order field is stored as: by its type's last path segment (`std::time::SystemTime`
/// and `SystemTime` alike); any `server_timestamp` field holds the server's time.
fn stored_type(ty: &syn::Type, server_timestamp: bool) -> sharded_indexes::StoredType {
    if server_timestamp {
        return sharded_indexes::StoredType::Timestamp;
    }
    let name = last_segment(ty)
        .filter(|(segment, _)| segment.arguments.is_none())
        .map(|(segment, _)| segment.ident.to_string())
        .unwrap_or_default();
    sharded_indexes::StoredType::of_rust_type(&name)
}

/// Whether `field` is the one `order_by` names: by the attribute, not the validated order
/// field, so a misuse is reported even when the order field itself has an error.
pub(super) fn is_order_field(cont: &Container<'_>, field: &syn::Ident) -> bool {
    cont.attrs
        .order_by
        .as_ref()
        .is_some_and(|o| field == &o.value.value())
}

/// Why `name` names no field of `cont`, when it can tell: it is the name a field is stored
/// under (attributes name Rust fields), or it is close to a field's name.
pub(super) fn field_hint(cont: &Container, name: &str) -> String {
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
