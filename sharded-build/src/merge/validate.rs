//! What Firestore rejects in an index file, found before `firebase deploy` does: malformed
//! entries, duplicate indexes, too many fields; past the composite-index quota, an error.

use serde_json::Value;

use super::json::str_at;

/// Firestore's composite index limit per database without billing: what the build enforces
/// unless told a higher one.
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

/// What Firestore or the CLI would reject in the file itself is an error (the quota is
/// [`check_quota`]'s).
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
    Ok(Vec::new())
}

/// Past `quota` composite indexes, what deploying would meet: Firestore refuses indexes
/// beyond its per-database limit. The message counts them per collection, largest first, and
/// says how to need fewer.
pub fn check_quota(document: &Value, quota: usize) -> Result<usize, String> {
    let indexes = document
        .get("indexes")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if indexes.len() <= quota {
        return Ok(indexes.len());
    }
    let mut per_collection: Vec<(&str, usize)> = Vec::new();
    for index in indexes {
        let collection = str_at(index, "collectionGroup").unwrap_or("?");
        match per_collection
            .iter_mut()
            .find(|(name, _)| *name == collection)
        {
            Some((_, count)) => *count += 1,
            None => per_collection.push((collection, 1)),
        }
    }
    per_collection.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let counts: Vec<String> = per_collection
        .iter()
        .map(|(collection, count)| format!("{collection}: {count}"))
        .collect();
    Err(format!(
        "{} composite indexes, more than the {quota} a Firestore database takes ({}): every `#[sharded(aggregate)]` field doubles a type's indexes and `collection_group` doubles them again; declare sums for the queries that need them (`#[sharded(aggregate(all, exchange))]`), or, for a project whose limit is higher (billing enabled), raise it with `Indexes::composite_index_quota(n)` or {QUOTA_ENV}=n",
        indexes.len(),
        counts.join(", ")
    ))
}

/// The environment variable that raises the composite-index limit the build enforces.
pub const QUOTA_ENV: &str = "SHARDED_COMPOSITE_INDEX_QUOTA";
