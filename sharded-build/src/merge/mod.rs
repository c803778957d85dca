//! Merges the index plans of the sharded types into a `firestore.indexes.json` document,
//! keeping every entry the tool does not manage untouched and in place.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use sharded_indexes::IndexPlan;

mod defeats_sharding;
mod json;
pub(crate) mod manifest;
mod messages;
mod renames;
mod shard_sets;
mod user_settings;
mod validate;

use defeats_sharding::defeats_sharding;
use json::{str_at, to_json};
use manifest::{Managed, check_other_crates, managed_collections, shared_group_ids};
use shard_sets::{check_shard_sets, declared_values};
use user_settings::keep_user_settings;

pub use manifest::MANIFEST_KEY;
pub use validate::{COMPOSITE_INDEX_QUOTA, MAX_INDEX_FIELDS, QUOTA_ENV, check, check_quota};
pub(crate) use validate::{describe, index_key};

use crate::scan::ShardedType;

/// The merged document, and what the merge did that the user should hear about.
#[derive(Debug, Default)]
pub struct Merged {
    pub document: Value,
    pub warnings: Vec<String>,
}

/// Merges the types of the crate `crate_name` into `existing` (the file's current content, if
/// any). Other crates' entries, recorded in the manifest under their own names, are kept; a
/// collection two crates shard differently is an error naming both. Managed entries come after
/// the user's own, in one canonical order (by crate, then plan), so the crates of a workspace
/// can build in any order and leave the same bytes.
pub fn merge(
    existing: Option<Value>,
    types: &[ShardedType],
    crate_name: &str,
) -> Result<Merged, String> {
    let mut document = match existing {
        None => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => return Err("the file is not a JSON object".into()),
    };
    let mut warnings = Vec::new();

    let manifest = document.get(MANIFEST_KEY).cloned().unwrap_or(Value::Null);
    let parse = |entries: Option<&Value>| -> Vec<Managed> {
        entries
            .and_then(Value::as_array)
            .map(|entries| {
                entries
                    .iter()
                    .filter_map(|entry| serde_json::from_value(entry.clone()).ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut crates: BTreeMap<String, Vec<Managed>> = manifest
        .get("crates")
        .and_then(Value::as_object)
        .map(|crates| {
            crates
                .iter()
                .map(|(name, entry)| (name.clone(), parse(entry.get("collections"))))
                .collect()
        })
        .unwrap_or_default();
    if manifest.get("crates").is_none() {
        // A file written before entries were recorded per crate: they were this crate's.
        crates.insert(crate_name.to_owned(), parse(manifest.get("collections")));
    }
    let previous = crates.remove(crate_name).unwrap_or_default();
    let current = managed_collections(types)?;
    warnings.extend(renames::renamed_fields(&previous, &current));
    // Each collection's last recorded set, kept when its type goes: a build without the type
    // must not let the next one shrink the set unchecked.
    let mut shard_sets: BTreeMap<String, Vec<String>> = manifest
        .get("shardSets")
        .cloned()
        .and_then(|sets| serde_json::from_value(sets).ok())
        .unwrap_or_default();
    // Collections another crate shards are checked against it, below.
    let managed_anywhere = |collection: &String| {
        previous
            .iter()
            .chain(crates.values().flatten())
            .any(|m| &m.description.collection == collection)
    };
    let recorded: Vec<Managed> = shard_sets
        .iter()
        .filter(|(collection, _)| !managed_anywhere(collection))
        .map(|(collection, values)| Managed::recorded(collection, values))
        .collect();
    check_shard_sets(
        &previous.iter().cloned().chain(recorded).collect::<Vec<_>>(),
        &current,
        types,
    )?;
    for m in &current {
        shard_sets.insert(
            m.description.collection.clone(),
            declared_values(&m.description),
        );
    }
    check_other_crates(crate_name, &current, &crates)?;
    if !current.is_empty() {
        crates.insert(crate_name.to_owned(), current.clone());
    }
    // Every crate's collections, in the canonical order.
    let all: Vec<Managed> = crates.values().flatten().cloned().collect();
    warnings.extend(shared_group_ids(&all));

    let manifest_list = |key: &str| -> Vec<Value> {
        manifest
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    // Indexes the user keeps on purpose, and those removed before, recorded in the file.
    let keep = manifest_list("keep");
    let mut removed = manifest_list("removed");
    let kept = |index: &Value| keep.iter().any(|k| index_key(k) == index_key(index));

    let mut indexes = take_array(&mut document, "indexes")?;
    let mut overrides = take_array(&mut document, "fieldOverrides")?;

    // The user's indexes stay in place, unless they defeat sharding; the managed ones follow,
    // every crate's, in the canonical order; a managed index no longer wanted goes.
    let owned: Vec<Value> = previous
        .iter()
        .chain(&all)
        .flat_map(|m| m.plan().indexes)
        .map(|index| to_json(&index))
        .collect();
    let managed = |index: &Value| owned.iter().any(|o| index_key(o) == index_key(index));
    let plans: Vec<IndexPlan> = all.iter().map(Managed::plan).collect();
    let mut wanted: Vec<Value> = Vec::new();
    for index in plans.iter().flat_map(|p| &p.indexes).map(to_json) {
        if !wanted.iter().any(|w| index_key(w) == index_key(&index)) {
            wanted.push(index);
        }
    }
    let mut result_indexes = Vec::new();
    for index in indexes.drain(..) {
        if wanted.iter().any(|w| index_key(w) == index_key(&index)) {
            continue;
        }
        if managed(&index) && !kept(&index) {
            continue;
        }
        // Recipe step 4: an index with the order field but not the shard field keeps the cap.
        if let Some(m) = all
            .iter()
            .find(|m| !kept(&index) && defeats_sharding(m, &index))
        {
            warnings.push(format!(
                "removed the composite index {} from firestore.indexes.json: it contains `{}` but not the shard field `{}`, which keeps `{}` capped at 500 writes/s; it is recorded under `{MANIFEST_KEY}.removed`, and moving it to `{MANIFEST_KEY}.keep` keeps it on purpose",
                describe(&index),
                m.description.order_field,
                m.description.shard_field,
                m.description.collection
            ));
            if !removed.iter().any(|r| index_key(r) == index_key(&index)) {
                removed.push(index);
            }
            continue;
        }
        result_indexes.push(index);
    }
    // What the user keeps on purpose is in the file, and no longer counts as removed.
    for index in &keep {
        if !result_indexes
            .iter()
            .any(|r| index_key(r) == index_key(index))
        {
            result_indexes.push(index.clone());
        }
    }
    removed.retain(|r| !kept(r));
    result_indexes.extend(wanted);

    // Overrides likewise: the user's in place; the managed ones after them, each keeping the
    // settings the user gave it.
    let managed_override = |o: &Value| previous.iter().chain(&all).any(|m| m.owns_override(o));
    let same_field = |a: &Value, b: &Value| {
        str_at(a, "collectionGroup") == str_at(b, "collectionGroup")
            && str_at(a, "fieldPath") == str_at(b, "fieldPath")
    };
    let mut wanted_overrides: Vec<Value> = Vec::new();
    for field_override in plans.iter().flat_map(|p| &p.field_overrides).map(to_json) {
        if !wanted_overrides
            .iter()
            .any(|w| same_field(w, &field_override))
        {
            wanted_overrides.push(field_override);
        }
    }
    let mut users_settings: Vec<Value> = Vec::new();
    let mut result_overrides = Vec::new();
    for field_override in overrides.drain(..) {
        if managed_override(&field_override)
            || wanted_overrides
                .iter()
                .any(|w| same_field(w, &field_override))
        {
            users_settings.push(field_override);
        } else {
            result_overrides.push(field_override);
        }
    }
    for ours in wanted_overrides {
        let Some(existing) = users_settings
            .iter()
            .find(|e| same_field(e, &ours))
            .cloned()
        else {
            result_overrides.push(ours);
            continue;
        };
        let (kept, removed) = keep_user_settings(existing, &ours);
        if removed > 0 {
            warnings.push(format!(
                "removed {removed} single-field index setting(s) from the field override of `{}` in `{}`: a sequential field and the shard field must have their ascending and descending single-field indexes disabled; the override's other settings (`ttl`, array indexes) are kept",
                str_at(&ours, "fieldPath").unwrap_or_default(),
                str_at(&ours, "collectionGroup").unwrap_or_default()
            ));
        }
        result_overrides.push(kept);
    }

    document.insert("indexes".into(), Value::Array(result_indexes));
    document.insert("fieldOverrides".into(), Value::Array(result_overrides));
    if crates.is_empty() && keep.is_empty() && removed.is_empty() && shard_sets.is_empty() {
        document.shift_remove(MANIFEST_KEY);
    } else {
        let crates: Map<String, Value> = crates
            .iter()
            .map(|(name, collections)| {
                (
                    name.clone(),
                    json!({ "collections": collections.iter().map(to_json).collect::<Vec<_>>() }),
                )
            })
            .collect();
        let mut manifest = json!({
            "note": "Written by sharded-build: per crate, the sharded collections whose indexes and field overrides it manages. The Firebase CLI ignores this key.",
            "crates": crates,
        });
        for (key, list) in [("keep", keep), ("removed", removed)] {
            if !list.is_empty() {
                manifest[key] = Value::Array(list);
            }
        }
        if !shard_sets.is_empty() {
            manifest["shardSets"] = json!(shard_sets);
        }
        document.insert(MANIFEST_KEY.into(), manifest);
    }
    let document = Value::Object(document);
    warnings.extend(check(&document)?);
    Ok(Merged { document, warnings })
}

/// Takes `key`'s array out, leaving the key where it is so the file's key order is kept.
fn take_array(document: &mut Map<String, Value>, key: &str) -> Result<Vec<Value>, String> {
    match document.get_mut(key).map(Value::take) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(format!("`{key}` is not an array")),
    }
}

#[cfg(test)]
mod tests;
