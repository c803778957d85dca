//! The rules text: one function per sharded type that holds a write to the shard contract,
//! and the starting file for a crate that has no rules yet.

use sharded_indexes::StoredType;
use sharded_indexes::field_path::segments;

use super::contract::{Contract, literal, places};

/// The fenced block's lines between its markers, indented for the documents match: each
/// type's function, then its counters' and its markers'.
pub(crate) fn functions(contracts: &[Contract<'_>]) -> String {
    let mut out = String::new();
    for (i, contract) in contracts.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&function(contract));
        out.push_str(&super::counters::functions(contract));
    }
    out
}

fn function(contract: &Contract<'_>) -> String {
    let d = &contract.ty.description;
    let shard = segments(&d.shard_field)
        .pop()
        .expect("a path has a segment");
    let allowed: Vec<&String> = d
        .shard_values
        .iter()
        .chain(&d.previous_shard_values)
        .filter(|value| !d.retired_shard_values.contains(value))
        .fold(Vec::new(), |mut values, value| {
            if !values.contains(&value) {
                values.push(value);
            }
            values
        });
    let allowed: Vec<String> = allowed.iter().map(|value| literal(value)).collect();
    let order = field_get("data", &d.order_field);
    let order_check = match (d.server_timestamp, d.order_type) {
        (true, _) => format!(
            "(request.method == 'create' ? {order} == request.time : {order} == {})",
            field_get("resource.data", &d.order_field)
        ),
        (false, StoredType::Timestamp) => format!("{order} is timestamp"),
        (false, StoredType::Integer) => format!("{order} is int"),
        (false, StoredType::Number) => format!("{order} is number"),
        (false, StoredType::String) => format!("{order} is string"),
        (false, other) => match rules_type(other) {
            Some(name) => format!("{order} is {name}"),
            None => format!("{order} != null"),
        },
    };
    let fields = field_checks(d);
    let mut text = String::new();
    for line in describe(contract) {
        text.push_str(&format!("    // {line}\n"));
    }
    text.push_str(&format!(
        "    function {}() {{\n      let data = request.resource.data;\n      return data.get({}, null) in [{}]\n        && {order_check}{fields};\n    }}\n",
        contract.function,
        literal(&shard),
        allowed.join(", "),
    ));
    text
}

/// The rules type a stored type is checked as (`is int`), if any is known.
fn rules_type(stored_type: StoredType) -> Option<&'static str> {
    match stored_type {
        StoredType::Timestamp => Some("timestamp"),
        StoredType::Integer => Some("int"),
        StoredType::Number => Some("number"),
        StoredType::String => Some("string"),
        StoredType::Boolean => Some("bool"),
        StoredType::List => Some("list"),
        StoredType::Map => Some("map"),
        StoredType::Other => None,
    }
}

/// What a write must hold of the struct's other fields, each condition on a line of its own
/// after ` && `: every required field present (so the Rust library reads the document back),
/// each field of a known type of that type (an optional one absent or null, as `None` reads).
fn field_checks(d: &sharded_indexes::CollectionDescriptionBuf) -> String {
    let others: Vec<&sharded_indexes::StoredFieldBuf> = d
        .fields
        .iter()
        .filter(|field| field.path != d.order_field)
        .collect();
    let mut out = String::new();
    let required: Vec<String> = others
        .iter()
        .filter(|field| field.required)
        .map(|field| literal(&segments(&field.path).concat()))
        .collect();
    if !required.is_empty() {
        out.push_str(&format!(
            "\n        && data.keys().hasAll([{}])",
            required.join(", ")
        ));
    }
    for field in others {
        let Some(name) = rules_type(field.stored_type) else {
            continue;
        };
        let value = field_get("data", &field.path);
        // An integer of a narrower Rust type (`i32`, `u8`, ...) within its range: one outside
        // it fails the Rust read as a missing field would.
        let check = match field.integer_range {
            Some([min, max]) => {
                format!("{value} is {name} && {value} >= {min} && {value} <= {max}")
            }
            None => format!("{value} is {name}"),
        };
        out.push_str(&match field.required {
            true => format!("\n        && {check}"),
            false => format!("\n        && ({value} == null || {check})"),
        });
    }
    out
}

/// The comment above a function: the type, where its documents live, and what a write keeps.
fn describe(contract: &Contract<'_>) -> Vec<String> {
    let d = &contract.ty.description;
    let mut lines = vec![format!(
        "{}: call from `allow create, update` on {}.",
        contract.ty.name,
        places(d).join(", ")
    )];
    let list = |values: &[String]| {
        values
            .iter()
            .map(|v| literal(v))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut shard = format!(
        "The shard field holds a value writers draw: {}",
        list(&d.shard_values)
    );
    if !d.previous_shard_values.is_empty() {
        shard.push_str(&format!(
            "; while resharding, previous values too: {}",
            list(&d.previous_shard_values)
        ));
    }
    if !d.retired_shard_values.is_empty() {
        shard.push_str(&format!(
            "; never a retired one: {}",
            list(&d.retired_shard_values)
        ));
    }
    lines.push(format!("{shard}."));
    lines.push(if d.server_timestamp {
        format!(
            "`{}` is the server's time on create (serverTimestamp()), unchanged on update.",
            d.order_field
        )
    } else {
        format!(
            "`{}` is present, {}.",
            d.order_field,
            match d.order_type {
                StoredType::Timestamp => "a timestamp",
                StoredType::Integer => "an integer",
                StoredType::Number => "a number",
                StoredType::String => "a string",
                StoredType::Boolean => "a boolean",
                StoredType::List => "a list",
                StoredType::Map => "a map",
                StoredType::Other => "of the type its Rust field stores",
            }
        )
    });
    if d.fields.iter().any(|field| field.path != d.order_field) {
        lines.push(
            "Every field the struct requires is present, and each field of a known type".to_owned(),
        );
        lines.push("holds that type, so that the Rust library reads the document back.".to_owned());
    }
    lines
}

/// A file for a crate without rules: the block, then a match per place that denies every
/// request until the user writes their conditions, and already calls the function.
pub(crate) fn starting_file(block: &str, contracts: &[Contract<'_>]) -> String {
    let mut out = String::from(
        "rules_version = '2';\nservice cloud.firestore {\n  match /databases/{database}/documents {\n",
    );
    out.push_str(block);
    for contract in contracts {
        let d = &contract.ty.description;
        for place in places(d) {
            if place.starts_with("/{path=**}") {
                out.push_str(&format!(
                    "\n    // Who may query {place} across every parent is yours to decide: replace `false`.\n    match {place} {{\n      allow read: if false;\n"
                ));
            } else {
                out.push_str(&format!(
                    "\n    // Who may read and write {place} is yours to decide: replace each `false`,\n    // and keep `{}()` on create and update, so that every client keeps the shard.\n    match {place} {{\n",
                    contract.function
                ));
                out.push_str(&format!(
                    "      allow read, delete: if false;\n      allow create, update: if false && {}();\n",
                    contract.function
                ));
            }
            out.push_str("    }\n");
        }
    }
    out.push_str(&super::counters::starting_matches(contracts));
    out.push_str("  }\n}\n");
    out
}

/// `data.get('name', null)`, or `data.get(['a', 'b'], null)` for a nested path.
fn field_get(map: &str, path: &str) -> String {
    let names: Vec<String> = segments(path).iter().map(|name| literal(name)).collect();
    match names.as_slice() {
        [one] => format!("{map}.get({one}, null)"),
        many => format!("{map}.get([{}], null)", many.join(", ")),
    }
}
