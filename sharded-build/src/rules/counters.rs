//! The rules of a type's counters (`#[sharded(counter(..))]`). A client's increment is one
//! commit of two writes: an addition to one shard document, which names its marker in
//! `increment`, and the marker's creation, which records the counter, the shard and the
//! amount added. The functions bind each side to the other: the shard document one of the
//! declared ones, its value an integer raised by exactly its marker's amount, its marker new
//! and recording this counter and this shard (so one marker covers one addition, and an
//! increment sent again is refused); the marker holding only its fields, expiring one
//! lifetime after the request's time (within a tolerance), and created beside the addition
//! it records. Paths are read from `request.path` and built from `$()` segments, so the
//! functions work whatever the match's variables are named (the database's included), and
//! take every id Firestore does (`+`, `%`, spaces, any Unicode),
//! which `path()` of a string would decode. A counter function keeps its two parameters (the
//! counted document's path and the shard's id, as the match names them), so that files
//! calling it as before stay valid; it reads both from the request.

use sharded_indexes::{
    CounterBuf, INCREMENTS_COLLECTION, MARKER_AMOUNT_FIELD, MARKER_COMMIT_FIELD,
    MARKER_COUNTER_FIELD, MARKER_EXPIRY_FIELD, MARKER_EXPIRY_TOLERANCE_SECONDS,
    MARKER_LIFETIME_SECONDS, MARKER_SHARD_FIELD, SHARD_INCREMENT_FIELD as MARKER_NAME_FIELD,
    SHARD_VALUE_FIELD as VALUE_FIELD, counter_collection_id,
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

/// The function binding a type's markers to the additions they record:
/// `sharded_<Type>_marker_records`.
fn records_function(owner: &Contract<'_>) -> String {
    format!("{}_marker_records", owner.function)
}

/// The text of a type's counter functions and of its marker function.
pub(crate) fn functions(owner: &Contract<'_>) -> String {
    let mine: Vec<CounterContract<'_>> = counters_of(owner).collect();
    if mine.is_empty() {
        return String::new();
    }
    let depth = owner.ty.description.parent_collections.len();
    // request.path: databases, the database, documents, then the counted document's segments
    // (two per parent, then its collection and id), then the counter's or the markers'
    // collection and the document's id.
    let collection_segment = 5 + 2 * depth;
    let id_segment = collection_segment + 1;
    let counted = counted_segments(owner);
    let mut text = String::new();
    for counter in &mine {
        let shards = shard_list(counter.counter);
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
            format!(
                "{place} as {}({}, shard).",
                counter.function,
                counted_expression(owner)
            ),
            format!(
                "An increment adds to one shard document ({range}) with increment() on `{VALUE_FIELD}`, and"
            ),
            format!(
                "names in `{MARKER_NAME_FIELD}` its marker, new in the same commit and recording this counter,"
            ),
            "this shard and exactly the amount added: one marker covers one addition, so an"
                .to_owned(),
            "increment sent again, or added twice, is refused. How much one may add is yours to"
                .to_owned(),
            format!(
                "check: request.resource.data.{VALUE_FIELD} against resource.data.{VALUE_FIELD}. The paths it checks"
            ),
            "come from request.path (`counted` and `shard` keep the call's form), so the database's".to_owned(),
            "variable may have any name, and ids holding `+`, `%` or spaces are taken whole.".to_owned(),
        ];
        text.push('\n');
        for line in comment {
            text.push_str(&format!("    // {line}\n"));
        }
        text.push_str(&format!(
            "    function {function}(counted, shard) {{\n      let p = request.path;\n      let data = request.resource.data;\n      let before = resource == null ? 0 : resource.data.get({value}, 0);\n      let marker = /databases/$(p[1])/documents{counted}/{INCREMENTS_COLLECTION}/$(data.get({name}, ''));\n      return {collections}p[{collection_segment}] == {collection}\n        && p[{id_segment}] in [{shards}]\n        && data.keys().hasOnly([{value}, {name}])\n        && data.get({value}, null) is int\n        && data.get({name}, null) is string\n        && !exists(marker)\n        && {records}(getAfter(marker).data, {field}, p[{id_segment}], data.get({value}, 0) - before);\n    }}\n",
            function = counter.function,
            collections = collection_checks(owner),
            collection = literal(&counter_collection_id(&counter.counter.field)),
            shards = shards.join(", "),
            field = literal(&counter.counter.field),
            records = records_function(owner),
            name = literal(MARKER_NAME_FIELD),
            value = literal(VALUE_FIELD),
        ));
    }
    let fields = [
        MARKER_EXPIRY_FIELD,
        MARKER_COUNTER_FIELD,
        MARKER_SHARD_FIELD,
        MARKER_AMOUNT_FIELD,
        MARKER_COMMIT_FIELD,
    ]
    .map(literal)
    .join(", ");
    let declared = mine
        .iter()
        .map(|counter| {
            format!(
                "(data.get({counter_field}, null) == {field} && data.get({shard_field}, null) in [{shards}])",
                counter_field = literal(MARKER_COUNTER_FIELD),
                field = literal(&counter.counter.field),
                shard_field = literal(MARKER_SHARD_FIELD),
                shards = shard_list(counter.counter).join(", "),
            )
        })
        .collect::<Vec<_>>()
        .join("\n          || ");
    text.push_str(&format!(
        "\n    // What a marker of {name}'s records: the counter, the shard and the amount of one addition.\n    function {records}(marker, field, shard, amount) {{\n      return marker.get({counter_field}, null) == field\n        && marker.get({shard_field}, null) == shard\n        && marker.get({amount_field}, null) == amount;\n    }}\n",
        name = owner.ty.name,
        records = records_function(owner),
        counter_field = literal(MARKER_COUNTER_FIELD),
        shard_field = literal(MARKER_SHARD_FIELD),
        amount_field = literal(MARKER_AMOUNT_FIELD),
    ));
    text.push_str(&format!(
        "\n    // {name}'s increment markers: call from `allow create` on\n    // {place} as {function}()\n    // (never allow update or delete: a marker is what makes an increment count once). A marker\n    // holds its fields, expires {days} days after the request (within {tolerance} s), and records an\n    // addition of the same commit: its shard document, raised by its amount and naming it.\n    function {function}() {{\n      let p = request.path;\n      let data = request.resource.data;\n      let shard = /databases/$(p[1])/documents{counted}/$({prefix} + data.get({counter_field}, ''))/$(data.get({shard_field}, ''));\n      let before = exists(shard) ? get(shard).data.get({value}, 0) : 0;\n      return {collections}p[{collection_segment}] == {increments}\n        && data.keys().hasOnly([{fields}])\n        && data.keys().hasAll([{fields}])\n        && data.get({expiry}, null) is timestamp\n        && data.get({expiry}, null) > request.time + duration.value({earliest}, 's')\n        && data.get({expiry}, null) < request.time + duration.value({latest}, 's')\n        && data.get({commit}, null) is string\n        && data.get({amount_field}, null) is int\n        && ({declared})\n        && getAfter(shard).data.get({name_field}, null) == p[{id_segment}]\n        && getAfter(shard).data.get({value}, null) == before + data.get({amount_field}, 0);\n    }}\n",
        name = owner.ty.name,
        place = marker_place(owner),
        function = marker_function(owner),
        days = MARKER_LIFETIME_SECONDS / 86_400,
        tolerance = MARKER_EXPIRY_TOLERANCE_SECONDS,
        prefix = literal(sharded_indexes::COUNTER_COLLECTION_PREFIX),
        counter_field = literal(MARKER_COUNTER_FIELD),
        shard_field = literal(MARKER_SHARD_FIELD),
        amount_field = literal(MARKER_AMOUNT_FIELD),
        value = literal(VALUE_FIELD),
        collections = collection_checks(owner),
        increments = literal(INCREMENTS_COLLECTION),
        expiry = literal(MARKER_EXPIRY_FIELD),
        earliest = MARKER_LIFETIME_SECONDS - MARKER_EXPIRY_TOLERANCE_SECONDS,
        latest = MARKER_LIFETIME_SECONDS + MARKER_EXPIRY_TOLERANCE_SECONDS,
        commit = literal(MARKER_COMMIT_FIELD),
        name_field = literal(MARKER_NAME_FIELD),
    ));
    text
}

/// The declared shard document ids of `counter` as rules literals: `'0'` to `'n-1'`.
fn shard_list(counter: &CounterBuf) -> Vec<String> {
    (0..counter.shards)
        .map(|shard| literal(&shard.to_string()))
        .collect()
}

/// The counted document's path after `/documents`, from `request.path`'s segments:
/// `/$(p[3])/$(p[4])` for a top-level document, two more per parent.
fn counted_segments(owner: &Contract<'_>) -> String {
    let depth = owner.ty.description.parent_collections.len();
    (3..5 + 2 * depth).map(|i| format!("/$(p[{i}])")).collect()
}

/// The checks that `request.path` is under the counted document's collections, each
/// followed by ` && `: `p[3] == 'users' && p[5] == 'posts' && `.
fn collection_checks(owner: &Contract<'_>) -> String {
    let d = &owner.ty.description;
    d.parent_collections
        .iter()
        .chain(std::iter::once(&d.collection))
        .enumerate()
        .map(|(n, collection)| format!("p[{}] == {} && ", 3 + 2 * n, literal(collection)))
        .collect()
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
/// `'rooms/' + rooms_id + '/notes/' + id`: what a counter function's call passes.
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
            "\n    // An increment's marker: the web client reads it (by its id, which its writer knows)\n    // before it increments, so get stays allowed; it is created with its increment and never\n    // listed, changed or deleted.\n    match {} {{\n      allow get: if true;\n      allow list, update, delete: if false;\n      allow create: if false && {}();\n    }}\n",
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
