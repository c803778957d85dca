//! `#[sharded(counter(shards = n))]` fields: distributed counters, whose exact value is the
//! sum of their shard documents, not a field of the document the queries read.

use super::queries::is_order_field;
use crate::ast::Container;
use crate::check::{check_plain_serde, check_stored_by_name};
use crate::ctxt::Ctxt;
use crate::model::{CounterField, field_path};

/// The counter fields: stored under their own name as their plain type (whether that is an
/// integer is a trait bound the derive's output checks, spanned on the type), neither the
/// order field nor a field of a query: a counter's value lives in its shard documents, so
/// no query of the collection's documents sees it.
pub(super) fn counters<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Vec<CounterField<'a>> {
    let mut out = Vec::new();
    for field in &cont.fields {
        let Some(key) = &field.attrs.counter else {
            continue;
        };
        if is_order_field(cont, field.ident) {
            cx.error_spanned_by(
                &key.key,
                format!("`{}` is the order field, which every write sets; a counter is added to by increments: declare `counter` on another field", field.ident),
            );
            continue;
        }
        let other = [
            (field.attrs.index.as_ref().map(|index| &index.key), "index"),
            (field.attrs.aggregate.as_ref(), "aggregate"),
            (field.attrs.range.as_ref(), "range"),
            (field.attrs.contains.as_ref(), "contains"),
            (
                field.attrs.vector.as_ref().map(|vector| &vector.key),
                "vector",
            ),
        ];
        if let Some((_, name)) = other.iter().find(|(path, _)| path.is_some()) {
            cx.error_spanned_by(
                &key.key,
                format!("a counter's value is the sum of its shard documents, which no query of the collection reads, so a field is `counter` or `{name}`, not both: drop one"),
            );
            continue;
        }
        let Some(shards) = key.value else {
            continue;
        };
        if !check_stored_by_name(cx, field, &key.key, "counted") {
            continue;
        }
        if !check_plain_serde(
            cx,
            field,
            "a counter",
            "its folded value",
            "store the field as a plain integer",
        ) {
            continue;
        }
        out.push(CounterField {
            ident: field.ident,
            ty: field.ty,
            path: field_path([field.stored_name.as_str()]),
            shards,
        });
    }
    out
}
