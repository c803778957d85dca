//! Merges the index plans of the sharded types into a `firestore.indexes.json` document,
//! keeping every entry the tool does not manage untouched and in place.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sharded_indexes::{CollectionDescriptionBuf, Direction, IndexPlan};

use crate::scan::ShardedType;

/// The top-level key that records what this tool manages. The Firebase CLI reads only
/// `indexes` and `fieldOverrides`, so it ignores this key.
pub const MANIFEST_KEY: &str = "shardedManaged";

/// Firestore's composite index quota without billing.
pub const COMPOSITE_INDEX_QUOTA: usize = 200;
/// Fields one composite index may have.
pub const MAX_INDEX_FIELDS: usize = 100;

/// The merged document, and what the merge did that the user should hear about.
#[derive(Debug, Default)]
pub struct Merged {
    pub document: Value,
    pub warnings: Vec<String>,
}

/// One managed collection, as recorded in the manifest: its description (what its entries are
/// re-planned from, so the entries of a collection the sources no longer declare are still
/// recognised) and the types that shard it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Managed {
    #[serde(flatten)]
    description: CollectionDescriptionBuf,
    /// The Rust types sharding the collection, for messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    types: Vec<String>,
}

impl Managed {
    pub(crate) fn of(t: &ShardedType) -> Managed {
        Managed {
            description: t.description.clone(),
            types: vec![t.name.clone()],
        }
    }

    /// What the manifest's `shardSets` recorded of a collection no type in this build shards.
    fn recorded(collection: &str, shard_values: &[String]) -> Managed {
        Managed {
            description: CollectionDescriptionBuf {
                collection: collection.to_owned(),
                shard_field: String::new(),
                order_field: String::new(),
                direction: Direction::Descending,
                indexed_fields: Vec::new(),
                field_sets: Vec::new(),
                aggregate_fields: Vec::new(),
                shard_values: shard_values.to_vec(),
                previous_shard_values: Vec::new(),
                retired_shard_values: Vec::new(),
                reshard_since: None,
                parent_collections: Vec::new(),
                collection_group: false,
            },
            types: Vec::new(),
        }
    }

    /// The entries this collection needs, by the plan `Sharded::indexes()` uses too.
    pub(crate) fn plan(&self) -> IndexPlan {
        self.description.plan()
    }

    fn owns_override(&self, field_override: &Value) -> bool {
        str_at(field_override, "collectionGroup") == Some(&self.description.collection)
            && [&self.description.shard_field, &self.description.order_field]
                .iter()
                .any(|field| str_at(field_override, "fieldPath") == Some(field.as_str()))
    }
}

fn to_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).expect("index plans serialize")
}

fn str_at<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

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

/// A collection this crate shards must be sharded the same way by every other crate that
/// shards it, or each would query values the other does not write.
fn check_other_crates(
    crate_name: &str,
    current: &[Managed],
    others: &BTreeMap<String, Vec<Managed>>,
) -> Result<(), String> {
    for ours in current {
        for (other, theirs) in others {
            let Some(theirs) = theirs
                .iter()
                .find(|m| m.description.collection == ours.description.collection)
            else {
                continue;
            };
            let how = |m: &Managed| {
                (
                    m.description.shard_field.clone(),
                    m.description.order_field.clone(),
                    m.description.direction,
                    m.description.shard_values.clone(),
                    m.description.previous_shard_values.clone(),
                    m.description.retired_shard_values.clone(),
                )
            };
            if how(ours) != how(theirs) {
                return Err(format!(
                    "{} in crate `{crate_name}` and {} in crate `{other}` both use the collection `{}` but shard or order it differently (shard values {} and {}); give them the same `#[sharded(...)]` settings",
                    describe_types(&ours.types),
                    describe_types(&theirs.types),
                    ours.description.collection,
                    describe_values(&ours.description.shard_values),
                    describe_values(&theirs.description.shard_values),
                ));
            }
        }
    }
    Ok(())
}

fn describe_types(types: &[String]) -> String {
    types
        .iter()
        .map(|t| format!("`{t}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One entry per collection; types sharing a collection must agree on how it is sharded.
fn managed_collections(types: &[ShardedType]) -> Result<Vec<Managed>, String> {
    let mut managed: Vec<(Managed, &ShardedType)> = Vec::new();
    for t in types {
        let entry = Managed::of(t);
        match managed
            .iter_mut()
            .find(|(m, _)| m.description.collection == entry.description.collection)
        {
            None => managed.push((entry, t)),
            Some((m, first)) => {
                if (
                    &m.description.shard_field,
                    &m.description.order_field,
                    &m.description.direction,
                ) != (
                    &entry.description.shard_field,
                    &entry.description.order_field,
                    &entry.description.direction,
                ) {
                    return Err(format!(
                        "`{}` ({}) and `{}` ({}) both use the collection `{}` but shard or order it differently",
                        first.name,
                        first.file.display(),
                        t.name,
                        t.file.display(),
                        m.description.collection
                    ));
                }
                if (
                    &m.description.shard_values,
                    &m.description.previous_shard_values,
                    &m.description.retired_shard_values,
                ) != (
                    &entry.description.shard_values,
                    &entry.description.previous_shard_values,
                    &entry.description.retired_shard_values,
                ) {
                    return Err(format!(
                        "`{}` ({}) and `{}` ({}) both use the collection `{}` with different shard values ({} and {}): each would miss the documents the other writes to values it does not query; give them the same `shards`, `shard_values` or `writes_per_second` (and `previous(...)`, `retired(...)`)",
                        first.name,
                        first.file.display(),
                        t.name,
                        t.file.display(),
                        m.description.collection,
                        describe_values(&m.description.shard_values),
                        describe_values(&entry.description.shard_values),
                    ));
                }
                union_into(
                    &mut m.description.indexed_fields,
                    entry.description.indexed_fields,
                );
                union_into(&mut m.description.field_sets, entry.description.field_sets);
                union_into(
                    &mut m.description.aggregate_fields,
                    entry.description.aggregate_fields,
                );
                m.types.extend(entry.types);
            }
        }
    }
    Ok(managed.into_iter().map(|(m, _)| m).collect())
}

/// Appends to `into` each of `more` it lacks, keeping the order of first appearance.
fn union_into<T: PartialEq>(into: &mut Vec<T>, more: Vec<T>) {
    for item in more {
        if !into.contains(&item) {
            into.push(item);
        }
    }
}

/// A managed override as the file has it, with only what sharding needs set: no ascending or
/// descending single-field index. Every other key the user set (`ttl`) and every other index
/// configuration (`arrayConfig`) stays. Returns it and how many index entries were removed.
fn keep_user_settings(existing: Value, ours: &Value) -> (Value, usize) {
    let Value::Object(mut existing) = existing else {
        return (ours.clone(), 0);
    };
    let indexes: Vec<Value> = existing
        .get("indexes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let before = indexes.len();
    let kept: Vec<Value> = indexes
        .into_iter()
        .filter(|index| index.get("order").is_none())
        .collect();
    let removed = before - kept.len();
    existing.insert("indexes".into(), Value::Array(kept));
    (Value::Object(existing), removed)
}

/// A collection whose shard set lost values since the last build recorded it would hide every
/// document stored with them from every query: refused. Growing keeps the old values and is
/// safe; so is removing the type altogether.
///
/// The one path that drops values: declare the old set as `previous(...)` (queries read both
/// sets while writes move to the new one), rebalance, and then turn `previous(...)` into
/// `retired(...)`: queries read the new set only, and first check, once per process and
/// scope, that no document holds a retired value (`Error::NotRebalanced` if one does). A
/// value once recorded stays declared (current, previous or retired), so no build can drop
/// it unchecked.
fn check_shard_sets(
    previous: &[Managed],
    current: &[Managed],
    types: &[ShardedType],
) -> Result<(), String> {
    for now in current {
        let Some(before) = previous
            .iter()
            .find(|m| m.description.collection == now.description.collection)
        else {
            continue;
        };
        let declared_now = declared_values(&now.description);
        let lost: Vec<String> = declared_values(&before.description)
            .into_iter()
            .filter(|value| !declared_now.contains(value))
            .collect();
        if lost.is_empty() {
            continue;
        }
        let owner = types
            .iter()
            .find(|t| t.description.collection == now.description.collection)
            .map(|t| format!("`{}` ({})", t.name, t.file.display()))
            .unwrap_or_default();
        let was_previous = lost
            .iter()
            .all(|value| before.description.previous_shard_values.contains(value));
        let how = if was_previous {
            "The last build read them as `previous(...)`. Once `rebalance()` has moved every document out of them and `verify()` reports 0 retired, \
             declare them `retired(...)` instead, e.g. `#[sharded(shards = 2, retired(shards = 3))]`: queries then read the new set only, \
             after checking (one read per process and scope) that no document still holds a retired value."
        } else {
            "To raise the write rate, grow the set and keep every old value (`shards = 3` to `shards = 6` keeps \"0\" to \"2\"). \
             To change or shrink the set, declare the old one as `previous(...)`, e.g. `#[sharded(shards = 2, previous(shards = 3))]`: \
             queries then read both sets while writes draw from the new one. Build once so that it is recorded, run `rebalance()` to move \
             every document out of the retired values, and then replace `previous(...)` with `retired(...)`."
        };
        return Err(format!(
            "{owner} shards `{}` over {}, but the last build recorded {}: documents stored with {} would drop out of every sharded query. \
             {how} (The values are recorded under `{MANIFEST_KEY}.shardSets`, and stay recorded while no type shards the \
             collection; delete them there only if no document is stored with them in any database.)",
            now.description.collection,
            describe_values(&now.description.shard_values),
            describe_values(&declared_values(&before.description)),
            describe_values(&lost),
        ));
    }
    Ok(())
}

/// Every value a collection's documents may hold: the current, previous and retired ones.
fn declared_values(description: &CollectionDescriptionBuf) -> Vec<String> {
    description.with(|description| {
        description
            .declared_values()
            .into_iter()
            .map(str::to_owned)
            .collect()
    })
}

/// `"x", "y", "z"`, shortened past a dozen values.
fn describe_values(values: &[String]) -> String {
    const SHOWN: usize = 12;
    let shown: Vec<String> = values
        .iter()
        .take(SHOWN)
        .map(|v| format!("{v:?}"))
        .collect();
    let more = values.len().saturating_sub(SHOWN);
    if more == 0 {
        format!("[{}]", shown.join(", "))
    } else {
        format!("[{}, and {more} more]", shown.join(", "))
    }
}

fn defeats_sharding(m: &Managed, index: &Value) -> bool {
    if str_at(index, "collectionGroup") != Some(&m.description.collection) {
        return false;
    }
    let paths: Vec<&str> = index
        .get("fields")
        .and_then(Value::as_array)
        .map(|fields| {
            fields
                .iter()
                .filter_map(|f| str_at(f, "fieldPath"))
                .collect()
        })
        .unwrap_or_default();
    paths.contains(&m.description.order_field.as_str())
        && !paths.contains(&m.description.shard_field.as_str())
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

/// Takes `key`'s array out, leaving the key where it is so the file's key order is kept.
fn take_array(document: &mut Map<String, Value>, key: &str) -> Result<Vec<Value>, String> {
    match document.get_mut(key).map(Value::take) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => Err(format!("`{key}` is not an array")),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn instrument(indexed: &[&str]) -> ShardedType {
        ShardedType {
            name: "Instrument".into(),
            file: PathBuf::from("src/lib.rs"),
            description: CollectionDescriptionBuf {
                collection: "instruments".into(),
                shard_field: "shard".into(),
                order_field: "timestamp".into(),
                direction: sharded_indexes::Direction::Descending,
                indexed_fields: indexed.iter().map(|f| f.to_string()).collect(),
                field_sets: Vec::new(),
                aggregate_fields: Vec::new(),
                shard_values: vec!["x".into(), "y".into(), "z".into()],
                previous_shard_values: Vec::new(),
                retired_shard_values: Vec::new(),
                reshard_since: None,
                parent_collections: Vec::new(),
                collection_group: false,
            },
        }
    }

    const RECIPE_FIELDS: [&str; 3] = ["exchange", "instrumentType", "price.currency"];

    /// The index of `T::query().all()`: (shard, order field).
    fn whole_collection_index() -> Value {
        json!({
            "collectionGroup": "instruments",
            "queryScope": "COLLECTION",
            "fields": [
                { "fieldPath": "shard", "order": "DESCENDING" },
                { "fieldPath": "timestamp", "order": "DESCENDING" }
            ]
        })
    }

    /// The whole-collection index, then one per field.
    fn recipe_indexes(fields: &[&str]) -> Value {
        let mut indexes = vec![whole_collection_index()];
        indexes.extend(fields.iter().map(|field| recipe_index(field)));
        Value::Array(indexes)
    }

    fn recipe_index(field: &str) -> Value {
        json!({
            "collectionGroup": "instruments",
            "queryScope": "COLLECTION",
            "fields": [
                { "fieldPath": "shard", "order": "DESCENDING" },
                { "fieldPath": field, "order": "ASCENDING" },
                { "fieldPath": "timestamp", "order": "DESCENDING" }
            ]
        })
    }

    fn overrides() -> Value {
        json!([
            { "collectionGroup": "instruments", "fieldPath": "timestamp", "indexes": [] },
            { "collectionGroup": "instruments", "fieldPath": "shard", "indexes": [] }
        ])
    }

    #[test]
    fn a_new_file_holds_the_recipes_indexes_and_overrides() {
        let merged = merge(None, &[instrument(&RECIPE_FIELDS)], "crate").unwrap();
        assert_eq!(merged.document["indexes"], recipe_indexes(&RECIPE_FIELDS));
        assert_eq!(merged.document["fieldOverrides"], overrides());
        assert_eq!(
            merged.document[MANIFEST_KEY]["crates"]["crate"]["collections"][0]["indexedFields"],
            json!(RECIPE_FIELDS)
        );
        assert!(merged.warnings.is_empty());
        // And it agrees with the plan `Sharded::indexes()` returns.
        let plan: Value =
            serde_json::from_str(&instrument(&RECIPE_FIELDS).plan().to_json()).unwrap();
        assert_eq!(plan["indexes"], merged.document["indexes"]);
        assert_eq!(plan["fieldOverrides"], merged.document["fieldOverrides"]);
    }

    #[test]
    fn other_entries_stay_in_place_and_merging_twice_changes_nothing() {
        let users = json!({
            "indexes": [
                { "collectionGroup": "users", "queryScope": "COLLECTION", "density": "SPARSE_ALL",
                  "fields": [{ "fieldPath": "a", "order": "ASCENDING" }, { "fieldPath": "b", "order": "DESCENDING" }] },
                { "collectionGroup": "instruments", "queryScope": "COLLECTION",
                  "fields": [{ "fieldPath": "symbol", "order": "ASCENDING" }, { "fieldPath": "exchange", "order": "ASCENDING" }] }
            ],
            "fieldOverrides": [
                { "collectionGroup": "users", "fieldPath": "bio", "indexes": [] }
            ]
        });
        let once = merge(Some(users.clone()), &[instrument(&RECIPE_FIELDS)], "crate").unwrap();
        assert_eq!(once.document["indexes"][0], users["indexes"][0]);
        assert_eq!(once.document["indexes"][1], users["indexes"][1]);
        assert_eq!(once.document["indexes"].as_array().unwrap().len(), 6);
        assert_eq!(
            once.document["fieldOverrides"][0],
            users["fieldOverrides"][0]
        );
        let twice = merge(
            Some(once.document.clone()),
            &[instrument(&RECIPE_FIELDS)],
            "crate",
        )
        .unwrap();
        assert_eq!(twice.document, once.document);
        assert!(twice.warnings.is_empty());
    }

    #[test]
    fn unsharded_timestamp_indexes_are_removed_with_a_warning() {
        let old = json!({
            "indexes": [{ "collectionGroup": "instruments", "queryScope": "COLLECTION",
                "fields": [{ "fieldPath": "exchange", "order": "ASCENDING" }, { "fieldPath": "timestamp", "order": "DESCENDING" }] }],
            "fieldOverrides": [{ "collectionGroup": "instruments", "fieldPath": "timestamp",
                "indexes": [{ "order": "ASCENDING", "queryScope": "COLLECTION" }] }]
        });
        let merged = merge(Some(old), &[instrument(&["exchange"])], "crate").unwrap();
        assert_eq!(merged.document["indexes"], recipe_indexes(&["exchange"]));
        assert_eq!(merged.document["fieldOverrides"], overrides());
        assert_eq!(merged.warnings.len(), 2, "{:?}", merged.warnings);
        assert!(merged.warnings[0].contains(
            "removed the composite index instruments (exchange ASCENDING, timestamp DESCENDING)"
        ));
        assert!(
            merged.warnings[1].contains(
                "removed 1 single-field index setting(s) from the field override of `timestamp`"
            ),
            "{:?}",
            merged.warnings
        );
    }

    #[test]
    fn a_removed_index_is_recorded_and_can_be_kept_on_purpose() {
        let unsharded = json!({ "collectionGroup": "instruments", "queryScope": "COLLECTION",
            "fields": [{ "fieldPath": "exchange", "order": "ASCENDING" }, { "fieldPath": "timestamp", "order": "DESCENDING" }] });
        let old = json!({ "indexes": [unsharded.clone()], "fieldOverrides": [] });
        let merged = merge(Some(old), &[instrument(&["exchange"])], "crate").unwrap();
        assert_eq!(merged.document["indexes"], recipe_indexes(&["exchange"]));
        // Not only a warning: the file records what was removed.
        assert_eq!(merged.document[MANIFEST_KEY]["removed"], json!([unsharded]));

        // Moved to `keep`, it comes back, stays, and is no longer recorded as removed.
        let mut file = merged.document;
        let removed = file[MANIFEST_KEY]["removed"].take();
        file[MANIFEST_KEY]
            .as_object_mut()
            .unwrap()
            .remove("removed");
        file[MANIFEST_KEY]["keep"] = removed;
        let kept = merge(Some(file), &[instrument(&["exchange"])], "crate").unwrap();
        assert!(kept.warnings.is_empty(), "{:?}", kept.warnings);
        // The user's own entries first, then the managed ones.
        assert_eq!(
            kept.document["indexes"],
            json!([
                unsharded,
                whole_collection_index(),
                recipe_index("exchange")
            ])
        );
        assert!(kept.document[MANIFEST_KEY].get("removed").is_none());
        let again = merge(
            Some(kept.document.clone()),
            &[instrument(&["exchange"])],
            "crate",
        )
        .unwrap();
        assert_eq!(again.document, kept.document);
    }

    #[test]
    fn deleted_attributes_and_types_take_their_entries_with_them() {
        let all = merge(None, &[instrument(&RECIPE_FIELDS)], "crate")
            .unwrap()
            .document;
        let fewer = merge(Some(all.clone()), &[instrument(&["exchange"])], "crate")
            .unwrap()
            .document;
        assert_eq!(fewer["indexes"], recipe_indexes(&["exchange"]));
        let none = merge(Some(fewer), &[], "crate").unwrap().document;
        assert_eq!(none["indexes"], json!([]));
        assert_eq!(none["fieldOverrides"], json!([]));
        // What stays is the record of the collection's shard set, and nothing else.
        assert_eq!(
            none[MANIFEST_KEY]["shardSets"],
            json!({ "instruments": ["x", "y", "z"] })
        );
        assert_eq!(none[MANIFEST_KEY]["crates"], json!({}));
    }

    #[test]
    fn a_hand_written_copy_of_a_managed_index_is_not_duplicated() {
        let hand = json!({ "indexes": recipe_indexes(&["exchange"]), "fieldOverrides": [] });
        let merged = merge(Some(hand), &[instrument(&["exchange"])], "crate").unwrap();
        assert_eq!(merged.document["indexes"], recipe_indexes(&["exchange"]));
    }

    #[test]
    fn what_firestore_rejects_is_an_error() {
        let empty = json!({ "indexes": [{ "collectionGroup": "c", "queryScope": "COLLECTION", "fields": [] }] });
        assert!(
            merge(Some(empty), &[], "crate")
                .unwrap_err()
                .contains("has no fields")
        );
        let fields: Vec<Value> = (0..101)
            .map(|i| json!({ "fieldPath": format!("f{i}"), "order": "ASCENDING" }))
            .collect();
        let wide = json!({ "indexes": [{ "collectionGroup": "c", "queryScope": "COLLECTION", "fields": fields }] });
        assert!(
            merge(Some(wide), &[], "crate")
                .unwrap_err()
                .contains("has 101 fields")
        );
        let twice = json!({ "indexes": [recipe_index("x"), recipe_index("x")] });
        assert!(
            merge(Some(twice), &[], "crate")
                .unwrap_err()
                .contains("listed twice")
        );
    }

    #[test]
    fn past_the_quota_is_a_warning() {
        let many: Vec<String> = (0..200).map(|i| format!("f{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let merged = merge(None, &[instrument(&many)], "crate").unwrap();
        assert!(
            merged
                .warnings
                .iter()
                .any(|w| w.contains("201 composite indexes"))
        );
    }

    #[test]
    fn types_sharing_a_collection_must_agree() {
        let mut other = instrument(&["symbol"]);
        other.name = "InstrumentView".into();
        let merged = merge(None, &[instrument(&["exchange"]), other.clone()], "crate").unwrap();
        assert_eq!(merged.document["indexes"].as_array().unwrap().len(), 3);
        other.description.order_field = "updatedAt".into();
        let err = merge(None, &[instrument(&["exchange"]), other], "crate").unwrap_err();
        assert!(
            err.contains("both use the collection `instruments`"),
            "{err}"
        );
    }

    #[test]
    fn managed_overrides_keep_the_users_ttl_and_array_indexes() {
        let file = json!({
            "indexes": [],
            "fieldOverrides": [{
                "collectionGroup": "instruments",
                "fieldPath": "timestamp",
                "ttl": true,
                "indexes": [
                    { "order": "ASCENDING", "queryScope": "COLLECTION" },
                    { "arrayConfig": "CONTAINS", "queryScope": "COLLECTION" }
                ]
            }]
        });
        let merged = merge(Some(file), &[instrument(&["exchange"])], "crate").unwrap();
        let overrides = merged.document["fieldOverrides"].as_array().unwrap();
        let timestamp = overrides
            .iter()
            .find(|o| o["fieldPath"] == "timestamp")
            .unwrap();
        assert_eq!(timestamp["ttl"], json!(true));
        assert_eq!(
            timestamp["indexes"],
            json!([{ "arrayConfig": "CONTAINS", "queryScope": "COLLECTION" }])
        );
        assert_eq!(merged.warnings.len(), 1, "{:?}", merged.warnings);
        assert!(merged.warnings[0].contains("kept"), "{:?}", merged.warnings);
        // Merging again changes nothing and warns no more.
        let again = merge(
            Some(merged.document.clone()),
            &[instrument(&["exchange"])],
            "crate",
        )
        .unwrap();
        assert_eq!(again.document, merged.document);
        assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    }

    #[test]
    fn crates_sharing_a_file_keep_each_others_entries_in_any_order() {
        let a = instrument(&["exchange"]);
        let mut b = instrument(&["venue"]);
        b.name = "Tick".into();
        b.description.collection = "ticks".into();
        let users = json!({ "indexes": [{ "collectionGroup": "other", "queryScope": "COLLECTION",
            "fields": [{ "fieldPath": "x", "order": "ASCENDING" }, { "fieldPath": "y", "order": "ASCENDING" }] }] });
        let a_then_b = merge(Some(users.clone()), std::slice::from_ref(&a), "a")
            .unwrap()
            .document;
        let a_then_b = merge(Some(a_then_b), std::slice::from_ref(&b), "b")
            .unwrap()
            .document;
        let b_then_a = merge(Some(users.clone()), std::slice::from_ref(&b), "b")
            .unwrap()
            .document;
        let b_then_a = merge(Some(b_then_a), std::slice::from_ref(&a), "a")
            .unwrap()
            .document;
        assert_eq!(
            a_then_b.to_string(),
            b_then_a.to_string(),
            "any order, same bytes"
        );
        assert_eq!(a_then_b["indexes"].as_array().unwrap().len(), 5);
        assert_eq!(a_then_b["indexes"][0], users["indexes"][0]);
        // Rebuilding either crate changes nothing.
        let again = merge(Some(a_then_b.clone()), std::slice::from_ref(&b), "b").unwrap();
        assert_eq!(again.document, a_then_b);

        // Removing a type from one crate removes its entries only.
        let without_a = merge(Some(a_then_b.clone()), &[], "a").unwrap().document;
        let collections: Vec<&str> = without_a["indexes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["collectionGroup"].as_str().unwrap())
            .collect();
        assert_eq!(collections, ["other", "ticks", "ticks"]);
        assert!(without_a[MANIFEST_KEY]["crates"].get("a").is_none());

        // A collection two crates shard differently fails the build, naming both.
        let mut other_a = instrument(&["symbol"]);
        other_a.name = "TickView".into();
        other_a.description.collection = "ticks".into();
        other_a.description.shard_values.pop();
        let err = merge(Some(a_then_b), &[other_a], "a").unwrap_err();
        assert!(err.contains("`TickView` in crate `a`"), "{err}");
        assert!(err.contains("`Tick` in crate `b`"), "{err}");
    }

    #[test]
    fn types_sharing_a_collection_must_agree_on_shard_values() {
        let mut other = instrument(&["symbol"]);
        other.name = "InstrumentView".into();
        other.description.shard_values.pop();
        let err = merge(None, &[instrument(&["exchange"]), other], "crate").unwrap_err();
        assert!(
            err.contains("`Instrument`") && err.contains("`InstrumentView`"),
            "{err}"
        );
        assert!(err.contains("different shard values"), "{err}");
    }

    #[test]
    fn a_shard_set_may_grow_but_not_lose_values() {
        let numbered = |n: usize| {
            let mut t = instrument(&["exchange"]);
            t.description.shard_values = (0..n).map(|i| i.to_string()).collect();
            t
        };
        let three = merge(None, &[numbered(3)], "crate").unwrap().document;
        assert_eq!(
            three[MANIFEST_KEY]["crates"]["crate"]["collections"][0]["shardValues"],
            json!(["0", "1", "2"])
        );
        // 3 → 6 keeps "0" to "2".
        let six = merge(Some(three.clone()), &[numbered(6)], "crate")
            .unwrap()
            .document;
        // 6 → 3 loses "3" to "5".
        let err = merge(Some(six.clone()), &[numbered(3)], "crate").unwrap_err();
        assert!(err.contains(r#"["3", "4", "5"]"#), "{err}");
        assert!(err.contains("keep every old value"), "{err}");
        assert!(err.contains("previous(shards = 3)"), "{err}");
        // Changed values, same count.
        let mut renamed = numbered(6);
        renamed.description.shard_values[5] = "five".into();
        assert!(merge(Some(six.clone()), &[renamed], "crate").is_err());
        // The path that drops values: declare the old set as previous, rebalance, then
        // declare it retired.
        let mut moving = numbered(3);
        moving.description.previous_shard_values = (0..6).map(|i| i.to_string()).collect();
        let recorded = merge(Some(six.clone()), &[moving], "crate")
            .unwrap()
            .document;
        assert_eq!(
            recorded[MANIFEST_KEY]["crates"]["crate"]["collections"][0]["previousShardValues"],
            json!(["0", "1", "2", "3", "4", "5"])
        );
        // Dropping `previous(...)` alone would read the new set unchecked: refused, with
        // the way on.
        let err = merge(Some(recorded.clone()), &[numbered(3)], "crate").unwrap_err();
        assert!(err.contains(r#"["3", "4", "5"]"#), "{err}");
        assert!(err.contains("retired(shards = 3)"), "{err}");
        assert!(err.contains("read them as `previous(...)`"), "{err}");
        let retired = |values: &[&str]| {
            let mut t = numbered(3);
            t.description.retired_shard_values = values.iter().map(|v| v.to_string()).collect();
            t
        };
        let done = merge(
            Some(recorded.clone()),
            &[retired(&["3", "4", "5"])],
            "crate",
        )
        .unwrap()
        .document;
        let entry = &done[MANIFEST_KEY]["crates"]["crate"]["collections"][0];
        assert!(entry.get("previousShardValues").is_none());
        assert_eq!(entry["retiredShardValues"], json!(["3", "4", "5"]));
        assert_eq!(
            done[MANIFEST_KEY]["shardSets"]["instruments"],
            json!(["0", "1", "2", "3", "4", "5"])
        );
        // A retired set that leaves out a value, and dropping it later, are refused too.
        assert!(merge(Some(recorded.clone()), &[retired(&["3", "4"])], "crate").is_err());
        let err = merge(Some(done.clone()), &[numbered(3)], "crate").unwrap_err();
        assert!(err.contains(r#"["3", "4", "5"]"#), "{err}");
        assert!(merge(Some(done.clone()), &[retired(&["3", "4", "5"])], "crate").is_ok());
        // Without the type for a build, the retired values stay recorded.
        let gone = merge(Some(done), &[], "crate").unwrap().document;
        assert!(merge(Some(gone.clone()), &[numbered(3)], "crate").is_err());
        assert!(merge(Some(gone), &[retired(&["3", "4", "5"])], "crate").is_ok());
        // A previous set that leaves out a recorded value is no path.
        let mut partial = numbered(3);
        partial.description.previous_shard_values = (0..5).map(|i| i.to_string()).collect();
        let err = merge(Some(six.clone()), &[partial], "crate").unwrap_err();
        assert!(err.contains(r#"["5"]"#), "{err}");
        // Dropping `previous` before a build recorded it is refused.
        assert!(merge(Some(six.clone()), &[numbered(3)], "crate").is_err());
        // Removing the type is not a loss, but the set stays recorded: bringing the type back
        // with fewer values, one build later, is refused all the same.
        let without = merge(Some(six.clone()), &[], "crate").unwrap().document;
        assert_eq!(
            without[MANIFEST_KEY]["shardSets"]["instruments"],
            json!(["0", "1", "2", "3", "4", "5"])
        );
        let err = merge(Some(without.clone()), &[numbered(3)], "crate").unwrap_err();
        assert!(err.contains(r#"["3", "4", "5"]"#), "{err}");
        assert!(err.contains("shardSets"), "{err}");
        assert!(merge(Some(without), &[numbered(6)], "crate").is_ok());
        // Deleting the recorded set (the collection was emptied) accepts the new one.
        let mut accepted = six;
        accepted[MANIFEST_KEY]["crates"]["crate"]["collections"][0]
            .as_object_mut()
            .unwrap()
            .remove("shardValues");
        accepted[MANIFEST_KEY]
            .as_object_mut()
            .unwrap()
            .remove("shardSets");
        assert!(merge(Some(accepted), &[numbered(3)], "crate").is_ok());
    }
}
