//! The manifest under `shardedManaged`: which collections each crate's types shard and how,
//! so that entries are recognised after their types go and crates sharing a file agree.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sharded_indexes::{CollectionDescriptionBuf, Direction, IndexPlan, StoredType};

use std::collections::BTreeMap;

use super::json::str_at;
use super::messages::{describe_types, describe_values};
use crate::scan::ShardedType;

/// The top-level key that records what this tool manages. The Firebase CLI reads only
/// `indexes` and `fieldOverrides`, so it ignores this key.
pub const MANIFEST_KEY: &str = "shardedManaged";

/// One managed collection, as recorded in the manifest: its description (what its entries are
/// re-planned from, so the entries of a collection the sources no longer declare are still
/// recognised) and the types that shard it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Managed {
    #[serde(flatten)]
    pub(crate) description: CollectionDescriptionBuf,
    /// The Rust types sharding the collection, for messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) types: Vec<String>,
}

impl Managed {
    pub(crate) fn of(t: &ShardedType) -> Managed {
        Managed {
            description: t.description.clone(),
            types: vec![t.name.clone()],
        }
    }

    /// What the manifest's `shardSets` recorded of a collection no type in this build shards.
    pub(crate) fn recorded(collection: &str, shard_values: &[String]) -> Managed {
        Managed {
            description: CollectionDescriptionBuf {
                collection: collection.to_owned(),
                shard_field: String::new(),
                order_field: String::new(),
                direction: Direction::Descending,
                order_type: StoredType::Other,
                reversible: false,
                server_timestamp: false,
                indexed_fields: Vec::new(),
                field_sets: Vec::new(),
                aggregate_fields: Vec::new(),
                aggregations: Vec::new(),
                range_fields: Vec::new(),
                ranges: Vec::new(),
                range_sets: Vec::new(),
                array_fields: Vec::new(),
                vector_fields: Vec::new(),
                counter_fields: Vec::new(),
                fields: Vec::new(),
                shard_values: shard_values.to_vec(),
                previous_shard_values: Vec::new(),
                retired_shard_values: Vec::new(),
                reshard_since: None,
                parent_collections: Vec::new(),
                collection_group: false,
                expiry_field: None,
            },
            types: Vec::new(),
        }
    }

    /// The entries this collection needs, by the plan `Sharded::indexes()` uses too.
    pub(crate) fn plan(&self) -> IndexPlan {
        self.description.plan()
    }

    pub(crate) fn owns_override(&self, field_override: &Value) -> bool {
        let (group, field) = (
            str_at(field_override, "collectionGroup"),
            str_at(field_override, "fieldPath"),
        );
        let own = group == Some(&self.description.collection)
            && [&self.description.shard_field, &self.description.order_field]
                .into_iter()
                .chain(&self.description.expiry_field)
                .any(|ours| field == Some(ours.as_str()));
        // Increments' markers, shared by every type with a counter.
        let markers = !self.description.counter_fields.is_empty()
            && group == Some(sharded_indexes::INCREMENTS_COLLECTION)
            && field == Some(sharded_indexes::MARKER_EXPIRY_FIELD);
        own || markers
    }
}

/// One entry per distinct description: types with the same description (two views of one
/// collection) share an entry; types with others keep their own, so each type's indexes are
/// planned from its own description, in every scope and direction it declares, whatever the
/// order the types are declared in. Types sharing a collection id must agree on how it is
/// sharded and ordered: a collection group of the id reads every type's documents, and the
/// single-field overrides are the id's.
pub(crate) fn managed_collections(types: &[ShardedType]) -> Result<Vec<Managed>, String> {
    let mut managed: Vec<Managed> = Vec::new();
    for t in types {
        let entry = Managed::of(t);
        if let Some(first) = types
            .iter()
            .find(|first| first.description.collection == entry.description.collection)
        {
            agree(first, t)?;
        }
        match managed
            .iter_mut()
            .find(|m| m.description == entry.description)
        {
            Some(m) => m.types.extend(entry.types),
            None => managed.push(entry),
        }
    }
    Ok(managed)
}

/// Two types of one collection id, sharded and ordered alike, or the error naming both.
fn agree(first: &ShardedType, t: &ShardedType) -> Result<(), String> {
    let (a, b) = (&first.description, &t.description);
    if (&a.shard_field, &a.order_field, &a.direction)
        != (&b.shard_field, &b.order_field, &b.direction)
    {
        return Err(format!(
            "`{}` ({}) and `{}` ({}) both use the collection `{}` but shard or order it differently",
            first.name,
            first.file.display(),
            t.name,
            t.file.display(),
            a.collection
        ));
    }
    if (
        &a.shard_values,
        &a.previous_shard_values,
        &a.retired_shard_values,
    ) != (
        &b.shard_values,
        &b.previous_shard_values,
        &b.retired_shard_values,
    ) {
        return Err(format!(
            "`{}` ({}) and `{}` ({}) both use the collection `{}` with different shard values ({} and {}): each would miss the documents the other writes to values it does not query; give them the same `shards`, `shard_values` or `writes_per_second` (and `previous(...)`, `retired(...)`)",
            first.name,
            first.file.display(),
            t.name,
            t.file.display(),
            a.collection,
            describe_values(&a.shard_values),
            describe_values(&b.shard_values),
        ));
    }
    Ok(())
}

/// A warning for each collection-group type whose group takes in another type's documents:
/// a collection-group query reads every collection with its id, at the top and under any
/// parent (Firestore's semantics, which the unsharded query shares), so a group query of
/// `customers/*/orders` returns the top-level `orders` too.
pub(crate) fn shared_group_ids(all: &[Managed]) -> Vec<String> {
    let mut warnings = Vec::new();
    for group in all.iter().filter(|m| m.description.collection_group) {
        let others: Vec<&Managed> = all
            .iter()
            .filter(|other| {
                other.description.collection == group.description.collection
                    && other.description.parent_collections != group.description.parent_collections
            })
            .collect();
        if others.is_empty() {
            continue;
        }
        let place = |m: &Managed| match m.description.parent_collections.is_empty() {
            true => format!("the top-level `{}`", m.description.collection),
            false => format!(
                "`{}/*/{}`",
                m.description.parent_collections.join("/*/"),
                m.description.collection
            ),
        };
        let other_types: Vec<String> = others
            .iter()
            .map(|other| format!("{} ({})", describe_types(&other.types), place(other)))
            .collect();
        warnings.push(format!(
            "{} queries the collection group `{}` ({}, `in_group()`), which also holds the documents of {}: a collection-group query reads every collection with its id, wherever it lives, so its results include theirs (as the unsharded query's would); give the collections different ids to keep them apart",
            describe_types(&group.types),
            group.description.collection,
            place(group),
            other_types.join(" and ")
        ));
    }
    warnings
}

/// A collection this crate shards must be sharded the same way by every other crate that
/// shards it, or each would query values the other does not write.
pub(crate) fn check_other_crates(
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
