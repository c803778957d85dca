//! What differs between the repository's `firestore.indexes.json` and what is deployed, as
//! `firebase firestore:indexes` prints it: the check that guards production, not only the
//! repository.

use std::fmt;

use serde_json::Value;

use crate::merge::{describe, index_key};

/// One difference between the repository's file and the deployed indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// In the repository, not deployed: a query that needs it fails in production.
    Missing(String),
    /// Deployed, not in the repository: the next `firebase deploy` may delete it.
    Extra(String),
    /// Deployed differently (a field override's indexes or TTL).
    Differs(String),
}

impl fmt::Display for Drift {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Drift::Missing(what) => write!(f, "missing (in the file, not deployed): {what}"),
            Drift::Extra(what) => write!(f, "extra (deployed, not in the file): {what}"),
            Drift::Differs(what) => write!(f, "differs: {what}"),
        }
    }
}

/// The differences between `file` (the repository's) and `deployed` (saved from
/// `firebase firestore:indexes`), composite indexes first. `__name__` fields, which the
/// Firebase CLI leaves out of what it prints, are left out on both sides.
pub fn deployed_drift(file: &str, deployed: &str) -> Result<Vec<Drift>, String> {
    let parse = |text: &str, what: &str| -> Result<Value, String> {
        serde_json::from_str(text).map_err(|e| format!("{what} is not JSON: {e}"))
    };
    let (file, deployed) = (
        parse(file, "the file")?,
        parse(deployed, "the deployed indexes")?,
    );
    let indexes =
        |doc: &Value| -> Vec<Value> { entries(doc, "indexes").map(without_name).collect() };
    let (ours, theirs) = (indexes(&file), indexes(&deployed));
    let mut drift = Vec::new();
    for index in &ours {
        if !theirs.iter().any(|d| index_key(d) == index_key(index)) {
            drift.push(Drift::Missing(format!(
                "composite index {}",
                describe(index)
            )));
        }
    }
    for index in &theirs {
        if !ours.iter().any(|o| index_key(o) == index_key(index)) {
            drift.push(Drift::Extra(format!("composite index {}", describe(index))));
        }
    }
    let overrides = |doc: &Value| -> Vec<Value> { entries(doc, "fieldOverrides").collect() };
    let (ours, theirs) = (overrides(&file), overrides(&deployed));
    let key = |o: &Value| {
        (
            o.get("collectionGroup").cloned(),
            o.get("fieldPath").cloned(),
        )
    };
    for o in &ours {
        let what = describe_override(o);
        match theirs.iter().find(|d| key(d) == key(o)) {
            None => drift.push(Drift::Missing(what)),
            Some(d) if settings(d) != settings(o) => drift.push(Drift::Differs(format!(
                "{what}: the file has {}, deployed has {}",
                settings(o),
                settings(d)
            ))),
            Some(_) => {}
        }
    }
    for d in &theirs {
        if !ours.iter().any(|o| key(o) == key(d)) {
            drift.push(Drift::Extra(describe_override(d)));
        }
    }
    Ok(drift)
}

fn entries<'d>(doc: &'d Value, key: &str) -> impl Iterator<Item = Value> + 'd {
    doc.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .cloned()
}

fn without_name(mut index: Value) -> Value {
    if let Some(fields) = index.get_mut("fields").and_then(Value::as_array_mut) {
        fields.retain(|f| f.get("fieldPath").and_then(Value::as_str) != Some("__name__"));
    }
    index
}

fn describe_override(o: &Value) -> String {
    format!(
        "field override of {}.{}",
        o.get("collectionGroup")
            .and_then(Value::as_str)
            .unwrap_or("?"),
        o.get("fieldPath").and_then(Value::as_str).unwrap_or("?")
    )
}

/// A field override's settings in a comparable form: its index configurations, in any order
/// (a missing `queryScope` is `COLLECTION`), and its TTL (absent is off).
fn settings(o: &Value) -> String {
    let mut indexes: Vec<String> = o
        .get("indexes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|index| {
            let mut index = index.clone();
            if let Some(map) = index.as_object_mut() {
                map.entry("queryScope").or_insert("COLLECTION".into());
            }
            index.to_string()
        })
        .collect();
    indexes.sort();
    let ttl = o.get("ttl").and_then(Value::as_bool).unwrap_or(false);
    format!("indexes [{}], ttl {ttl}", indexes.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_what_is_missing_extra_and_different() {
        let file = json!({
            "indexes": [
                { "collectionGroup": "i", "queryScope": "COLLECTION", "fields": [
                    { "fieldPath": "shard", "order": "DESCENDING" },
                    { "fieldPath": "exchange", "order": "ASCENDING" },
                    { "fieldPath": "timestamp", "order": "DESCENDING" } ] },
                { "collectionGroup": "i", "queryScope": "COLLECTION", "fields": [
                    { "fieldPath": "shard", "order": "DESCENDING" },
                    { "fieldPath": "symbol", "order": "ASCENDING" },
                    { "fieldPath": "timestamp", "order": "DESCENDING" } ] }
            ],
            "fieldOverrides": [
                { "collectionGroup": "i", "fieldPath": "timestamp", "ttl": true, "indexes": [] },
                { "collectionGroup": "i", "fieldPath": "shard", "indexes": [] }
            ]
        });
        // As `firebase firestore:indexes` prints it: `__name__` left out, one index missing,
        // one extra, the TTL off.
        let deployed = json!({
            "indexes": [
                { "collectionGroup": "i", "queryScope": "COLLECTION", "fields": [
                    { "fieldPath": "shard", "order": "DESCENDING" },
                    { "fieldPath": "exchange", "order": "ASCENDING" },
                    { "fieldPath": "timestamp", "order": "DESCENDING" },
                    { "fieldPath": "__name__", "order": "DESCENDING" } ] },
                { "collectionGroup": "i", "queryScope": "COLLECTION", "fields": [
                    { "fieldPath": "exchange", "order": "ASCENDING" },
                    { "fieldPath": "timestamp", "order": "DESCENDING" } ] }
            ],
            "fieldOverrides": [
                { "collectionGroup": "i", "fieldPath": "timestamp", "indexes": [] },
                { "collectionGroup": "i", "fieldPath": "shard", "indexes": [] }
            ]
        });
        let drift = deployed_drift(&file.to_string(), &deployed.to_string()).unwrap();
        let lines: Vec<String> = drift.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "missing (in the file, not deployed): composite index i (shard DESCENDING, symbol ASCENDING, timestamp DESCENDING)",
                "extra (deployed, not in the file): composite index i (exchange ASCENDING, timestamp DESCENDING)",
                "differs: field override of i.timestamp: the file has indexes [], ttl true, deployed has indexes [], ttl false",
            ]
        );
        assert_eq!(
            deployed_drift(&file.to_string(), &file.to_string()).unwrap(),
            Vec::new()
        );
        assert!(deployed_drift("{", "{}").is_err());
    }
}
