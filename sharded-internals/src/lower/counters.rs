//! `#[sharded(counter(shards = n))]` fields: distributed counters, whose exact value is the
//! sum of their shard documents, not a field of the document the queries read.

use super::standalone::{Standalone, query_kinds, standalone_fields};
use crate::ast::Container;
use crate::ctxt::Ctxt;
use crate::model::{CounterField, field_path};

/// The counter fields: stored under their own name as their plain type (whether that is an
/// integer is a trait bound the derive's output checks, spanned on the type), neither the
/// order field nor a field of a query: a counter's value lives in its shard documents, so
/// no query of the collection's documents sees it.
pub(super) fn counters<'a>(cx: &Ctxt, cont: &'a Container<'a>) -> Vec<CounterField<'a>> {
    let counter = Standalone {
        kind: "counter",
        not_the_order_field: "which every write sets; a counter is added to by increments",
        alone: "a counter's value is the sum of its shard documents, which no query of the collection reads",
        used: "counted",
        serde: [
            "a counter",
            "its folded value",
            "store the field as a plain integer",
        ],
    };
    let others = |attrs: &crate::attr::FieldAttrs| {
        let mut kinds = query_kinds(attrs);
        kinds.push((attrs.vector.is_some(), "vector"));
        kinds
    };
    standalone_fields(cx, cont, &counter, |attrs| attrs.counter.as_ref(), others)
        .into_iter()
        .map(|(field, shards)| CounterField {
            ident: field.ident,
            ty: field.ty,
            path: field_path([field.stored_name.as_str()]),
            shards,
        })
        .collect()
}
