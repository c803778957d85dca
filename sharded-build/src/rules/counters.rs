//! The rules of a type's counters (`#[sharded(counter(..))]`): a client's increment is one
//! commit that adds to one shard document and creates the increment's marker, named in the
//! shard document's `increment`. The functions hold a write to that: the shard document one
//! of the declared ones, its value an integer, its marker created by the same commit (and so
//! never there before: an increment sent again is refused), the marker holding only its
//! expiry.

use sharded_indexes::{
    CounterBuf, INCREMENTS_COLLECTION, MARKER_EXPIRY_FIELD,
    SHARD_INCREMENT_FIELD as MARKER_NAME_FIELD, SHARD_VALUE_FIELD as VALUE_FIELD,
    counter_collection_id,
};

use super::contract::{Contract, identifier, literal, places};

/// A counter's rules function.
pub(crate) struct CounterContract<'a> {
    pub(crate) function: String,
    pub(crate) counter: &'a CounterBuf,
    pub(crate) owner: &'a Contract<'a>,
}

/// The counter functions of `owner`'s type: `sharded_<Type>_counter_<field>`.
pub(crate) fn counters_of<'a>(
    owner: &'a Contract<'a>,
) -> impl Iterator<Item = CounterContract<'a>> + 'a {
    owner
        .ty
        .description
        .counter_fields
        .iter()
        .map(move |counter| CounterContract {
            function: format!("{}_counter_{}", owner.function, identifier(&counter.field)),
            counter,
            owner,
        })
}

/// The marker function of a type with counters: `sharded_<Type>_increment_marker`.
pub(crate) fn marker_function(owner: &Contract<'_>) -> String {
    format!("{}_increment_marker", owner.function)
}

/// The text of a type's counter functions and of its marker function.
pub(crate) fn functions(owner: &Contract<'_>) -> String {
    let mine: Vec<CounterContract<'_>> = counters_of(owner).collect();
    if mine.is_empty() {
        return String::new();
    }
    let mut text = String::new();
    for counter in &mine {
        let shards: Vec<String> = (0..counter.counter.shards)
            .map(|shard| literal(&shard.to_string()))
            .collect();
        let place = shard_place(owner, counter.counter);
        let range = match counter.counter.shards {
            1 => "'0'".to_owned(),
            n => format!("'0' to '{}'", n - 1),
        };
        let comment = [
            format!(
                "{}'s counter `{}`: call from `allow create, update` on",
                owner.ty.name, counter.counter.field
            ),
            format!("{place} as"),
            format!(
                "{}({}, shard).",
                counter.function,
                counted_expression(owner)
            ),
            format!(
                "An increment adds to one shard document ({range}) with increment() on `{VALUE_FIELD}`,"
            ),
            format!("and names in `{MARKER_NAME_FIELD}` the marker the same commit creates"),
            format!(
                "({}()), so an increment sent again is refused.",
                marker_function(owner)
            ),
            format!(
                "How much one may add is yours to check: request.resource.data.{VALUE_FIELD} against"
            ),
            format!("resource.data.{VALUE_FIELD}."),
        ];
        text.push('\n');
        for line in comment {
            text.push_str(&format!("    // {line}\n"));
        }
        text.push_str(&format!(
            "    function {}(counted, shard) {{\n      let data = request.resource.data;\n      let marker = path('/databases/' + database + '/documents/' + counted + '/{INCREMENTS_COLLECTION}/' + data.get({name}, ''));\n      return shard in [{}]\n        && data.keys().hasOnly([{value}, {name}])\n        && data.get({value}, null) is int\n        && data.get({name}, null) is string\n        && !exists(marker)\n        && existsAfter(marker);\n    }}\n",
            counter.function,
            shards.join(", "),
            name = literal(MARKER_NAME_FIELD),
            value = literal(VALUE_FIELD),
        ));
    }
    text.push_str(&format!(
        "\n    // {}'s increment markers: call from `allow create` on\n    // {}\n    // (never allow update or delete: a marker is what makes an increment count once).\n    function {}() {{\n      let data = request.resource.data;\n      return data.keys().hasOnly([{expiry}])\n        && data.get({expiry}, null) is timestamp;\n    }}\n",
        owner.ty.name,
        marker_place(owner),
        marker_function(owner),
        expiry = literal(MARKER_EXPIRY_FIELD),
    ));
    text
}

/// The match path of a counter's shard documents.
pub(crate) fn shard_place(owner: &Contract<'_>, counter: &CounterBuf) -> String {
    format!(
        "{}/{}/{{shard}}",
        document_place(owner),
        counter_collection_id(&counter.field)
    )
}

/// The match path of a type's increment markers.
pub(crate) fn marker_place(owner: &Contract<'_>) -> String {
    format!(
        "{}/{INCREMENTS_COLLECTION}/{{increment}}",
        document_place(owner)
    )
}

/// The counted document's match path (its parents' ids named as `places` names them).
fn document_place(owner: &Contract<'_>) -> String {
    places(&owner.ty.description)
        .into_iter()
        .next()
        .expect("a type has a place")
}

/// The counted document's path as a rules string, from the match's variables:
/// `'rooms/' + rooms_id + '/notes/' + id`.
pub(crate) fn counted_expression(owner: &Contract<'_>) -> String {
    let d = &owner.ty.description;
    let mut parts: Vec<String> = Vec::new();
    for parent in &d.parent_collections {
        parts.push(literal(&format!("{parent}/")));
        parts.push(format!("{}_id", identifier(parent)));
        parts.push(literal("/"));
    }
    parts.push(literal(&format!("{}/", d.collection)));
    parts.push("id".to_owned());
    // Adjacent literals joined: 'rooms/' + rooms_id + '/notes/' + id.
    let mut out: Vec<String> = Vec::new();
    for part in parts {
        match (out.last_mut(), part.starts_with('\'')) {
            (Some(last), true) if last.starts_with('\'') => {
                last.pop();
                last.push_str(&part[1..]);
            }
            _ => out.push(part),
        }
    }
    out.join(" + ")
}

/// The starting file's matches for the counters of `contracts`' types: shard documents and
/// markers, denied until the owner writes who may increment, and already calling the
/// functions.
pub(crate) fn starting_matches(contracts: &[Contract<'_>]) -> String {
    let mut out = String::new();
    for counter in contracts.iter().flat_map(counters_of) {
        let place = shard_place(counter.owner, counter.counter);
        out.push_str(&format!(
            "\n    // Who may increment {}'s `{}` is yours to decide: replace each `false`, and keep\n    // `{}()` on create and update, so that every increment counts once.\n    match {place} {{\n      allow read, delete: if false;\n      allow create, update: if false && {}({}, shard);\n    }}\n",
            counter.owner.ty.name,
            counter.counter.field,
            counter.function,
            counter.function,
            counted_expression(counter.owner),
        ));
    }
    for owner in contracts {
        if owner.ty.description.counter_fields.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n    // An increment's marker is created with it, and never changed: keep update and delete denied.\n    match {} {{\n      allow read, update, delete: if false;\n      allow create: if false && {}();\n    }}\n",
            marker_place(owner),
            marker_function(owner),
        ));
    }
    out
}

/// Each counter and marker function with what a call looks like, for the warnings about a
/// file that never calls one.
pub(crate) fn calls<'a>(contracts: &'a [Contract<'a>]) -> Vec<(String, String)> {
    let mut calls: Vec<(String, String)> = contracts
        .iter()
        .flat_map(counters_of)
        .map(|counter| {
            (
                counter.function.clone(),
                shard_place(counter.owner, counter.counter),
            )
        })
        .collect();
    for owner in contracts {
        if !owner.ty.description.counter_fields.is_empty() {
            calls.push((marker_function(owner), marker_place(owner)));
        }
    }
    calls
}
