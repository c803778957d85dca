//! The manifest under `shardedManaged`: which collections each crate's types shard and how,
//! so that entries are recognised after their types go and crates sharing a file agree.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sharded_indexes::{CollectionDescriptionBuf, Direction, IndexPlan};

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
                reversible: false,
                server_timestamp: false,
                indexed_fields: Vec::new(),
                field_sets: Vec::new(),
                aggregate_fields: Vec::new(),
                aggregations: Vec::new(),
                range_fields: Vec::new(),
                ranges: Vec::new(),
                array_fields: Vec::new(),
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

    pub(crate) fn owns_override(&self, field_override: &Value) -> bool {
        str_at(field_override, "collectionGroup") == Some(&self.description.collection)
            && [&self.description.shard_field, &self.description.order_field]
                .iter()
                .any(|field| str_at(field_override, "fieldPath") == Some(field.as_str()))
    }
}

/// One entry per collection; types sharing a collection must agree on how it is sharded.
pub(crate) fn managed_collections(types: &[ShardedType]) -> Result<Vec<Managed>, String> {
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
                union_into(
                    &mut m.description.aggregations,
                    entry.description.aggregations,
                );
                m.types.extend(entry.types);
            }
        }
    }
    Ok(managed.into_iter().map(|(m, _)| m).collect())
}

/// Appends to `into` each of `more` it lacks, keeping the order of first appearance.
pub(crate) fn union_into<T: PartialEq>(into: &mut Vec<T>, more: Vec<T>) {
    for item in more {
        if !into.contains(&item) {
            into.push(item);
        }
    }
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
