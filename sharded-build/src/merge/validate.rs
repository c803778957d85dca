//! What Firestore rejects in an index file, found before `firebase deploy` does: malformed
//! entries, duplicate indexes, too many fields; past the composite-index quota, a warning.

use serde_json::Value;

use super::json::str_at;

/// Firestore's composite index quota without billing.
pub const COMPOSITE_INDEX_QUOTA: usize = 200;
/// Fields one composite index may have.
pub const MAX_INDEX_FIELDS: usize = 100;

/// What identifies an index for Firestore: collection group, scope, and each field's path
/// and kind (order, array or vector config).
pub(crate) type IndexKey<'v> = (Option<&'v str>, &'v str, Vec<(Option<&'v str>, String)>);

pub(crate) fn index_key(index: &Value) -> IndexKey<'_> {
    let fields = index
        .get("fields")
        .and_then(Value::as_array)
        .map(|fields| {
            fields
                .iter()
                .map(|field| {
                    let how = ["order", "arrayConfig", "vectorConfig", "searchConfig"]
                        .iter()
                        .find_map(|key| field.get(*key).map(|v| format!("{key}={v}")))
                        .unwrap_or_default();
                    (str_at(field, "fieldPath"), how)
                })
                .collect()
        })
        .unwrap_or_default();
    (
        str_at(index, "collectionGroup"),
        str_at(index, "queryScope").unwrap_or("COLLECTION"),
        fields,
    )
}

pub(crate) fn describe(index: &Value) -> String {
    let fields: Vec<String> = index
        .get("fields")
        .and_then(Value::as_array)
        .map(|fields| {
            fields
                .iter()
                .map(|f| {
                    format!(
                        "{} {}",
                        str_at(f, "fieldPath").unwrap_or("?"),
                        str_at(f, "order").unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    format!(
        "{} ({})",
        str_at(index, "collectionGroup").unwrap_or("?"),
        fields.join(", ").trim()
    )
}

/// What Firestore or the CLI would reject is an error; past the quota is a warning.
pub fn check(document: &Value) -> Result<Vec<String>, String> {
    let indexes = document
        .get("indexes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    for index in &indexes {
        let fields = index
            .get("fields")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if fields == 0 {
            problems.push(format!(
                "the composite index {} has no fields",
                describe(index)
            ));
        } else if fields > MAX_INDEX_FIELDS {
            problems.push(format!(
                "the composite index {} has {fields} fields; Firestore allows {MAX_INDEX_FIELDS}",
                describe(index)
            ));
        }
        let key = index_key(index);
        if seen.contains(&key) {
            problems.push(format!(
                "the composite index {} is listed twice",
                describe(index)
            ));
        }
        seen.push(key);
    }
    if !problems.is_empty() {
        return Err(problems.join("\n"));
    }
    let mut warnings = Vec::new();
    if indexes.len() > COMPOSITE_INDEX_QUOTA {
        warnings.push(format!(
            "{} composite indexes: more than the {COMPOSITE_INDEX_QUOTA} Firestore allows per database without billing",
            indexes.len()
        ));
    }
    Ok(warnings)
}
