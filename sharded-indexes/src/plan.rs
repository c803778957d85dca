//! The recipe's index plan: for every query a sharded type can send, the composite index that
//! serves it (the shard field first, then the equality fields, then the order field), in
//! each scope the type declares, and the single-field exemptions on the order field.

use crate::{
    CollectionDescription, CompositeIndex, Direction, FieldOverride, IndexField, IndexPlan,
    QueryScope,
};

/// The indexes a sharded collection needs.
///
/// One composite index for the whole collection, (shard, order field), which serves
/// `shard in [...] [AND order-field range] ORDER BY order-field, __name__`; and one per indexed
/// field: the shard field first (descending, as in the recipe), then the indexed field
/// (ascending), then the order field in the query direction, which serves
/// `shard in [...] AND field == v [AND order-field range] ORDER BY order-field, __name__`;
/// and one per declared field set, (shard, each field of the set ascending, order field), for
/// `shard in [...] AND a == x AND b == y ...`; and one per array field, (shard, the field's
/// elements (`"arrayConfig": "CONTAINS"`), order field), for `shard in [...] AND tags
/// array-contains x` and `array-contains-any`; and for each of those queries and each
/// aggregated field, the same index with that field last (ascending), since Firestore sums
/// and averages by scanning index entries, which must hold the field; a field declared for
/// some queries only (`aggregate(all, x)`) gets that index for those queries only.
/// For each query and each field with range filters (`range`, or `range(all, x)` for some
/// queries), the query's index with that field after the order field, in its direction (and
/// in both, for a reversible type), since Firestore orders by an inequality field after the
/// explicit orders.
/// With `collection_group`, each of them again in `COLLECTION_GROUP` scope, for the queries
/// across every parent. And two overrides (for both scopes) that disable the single-field
/// indexes of the order field, whose
/// sequential values are what caps writes at 500/s, and of the shard field (recipe step 4).
pub fn plan(spec: &CollectionDescription<'_>) -> IndexPlan {
    let shard = || IndexField::ordered(spec.shard_field, Direction::Descending);
    let order = || IndexField::ordered(spec.order_field, spec.direction);
    // The whole-collection query: the order field's own index is disabled, so it needs one.
    let whole_collection = CompositeIndex {
        collection_group: spec.collection.to_owned(),
        query_scope: QueryScope::Collection,
        fields: vec![shard(), order()],
    };
    let ascending = |field: &str| IndexField::ordered(field, Direction::Ascending);
    // The fields a query compares: ordered for equality and `in`; an array field's elements
    // for `array-contains` and `array-contains-any`.
    let compared = |fields: &[&str], array: bool| -> Vec<IndexField> {
        match array {
            true => fields
                .iter()
                .map(|field| IndexField::contains(field))
                .collect(),
            false => fields.iter().map(|field| ascending(field)).collect(),
        }
    };
    let equality = |(fields, array): &(Vec<&str>, bool), aggregated: Option<&str>| CompositeIndex {
        collection_group: spec.collection.to_owned(),
        query_scope: QueryScope::Collection,
        fields: std::iter::once(shard())
            .chain(compared(fields, *array))
            .chain(std::iter::once(order()))
            // A field the index holds already (the order field, an equality field of the
            // query) serves the aggregation where it stands: a field appears once per index.
            .chain(
                aggregated
                    .filter(|field| *field != spec.order_field && !fields.contains(field))
                    .map(ascending),
            )
            .collect(),
    };
    let shapes: Vec<(Vec<&str>, bool)> = spec
        .indexed_fields
        .iter()
        .map(|field| (vec![*field], false))
        .chain(spec.field_sets.iter().map(|set| (set.to_vec(), false)))
        .chain(spec.array_fields.iter().map(|field| (vec![*field], true)))
        .collect();
    let queries = shapes.iter().map(|shape| equality(shape, None));
    let whole = (Vec::new(), false);
    let declared = spec.aggregations.iter().map(|aggregation| {
        let shape = (aggregation.compared.to_vec(), aggregation.contains);
        equality(&shape, Some(aggregation.field))
    });
    let aggregations = std::iter::once(&whole)
        .chain(&shapes)
        .flat_map(|fields| {
            spec.aggregate_fields
                .iter()
                .map(move |aggregated| equality(fields, Some(aggregated)))
        })
        .chain(declared)
        .collect::<Vec<_>>();
    // A range, `!=` or `not-in` filter on another field orders by it after the order field,
    // in the same direction (Firestore adds inequality fields to the order; sharded names it,
    // so that the merge and its cursors know it): the query's index with it after the order
    // field, in each direction the type reads. A query that compares the field for equality
    // already takes no range on it (refused at run time), so it gets no index.
    let ranged = |(fields, array): &(Vec<&str>, bool), filtered: &[&str]| {
        let directions = match spec.reversible {
            true => vec![spec.direction, spec.direction.reversed()],
            false => vec![spec.direction],
        };
        directions
            .into_iter()
            .filter(|_| {
                filtered
                    .iter()
                    .all(|field| !fields.contains(field) && *field != spec.order_field)
            })
            .map(|direction| CompositeIndex {
                collection_group: spec.collection.to_owned(),
                query_scope: QueryScope::Collection,
                fields: std::iter::once(shard())
                    .chain(compared(fields, *array))
                    .chain(std::iter::once(IndexField::ordered(
                        spec.order_field,
                        direction,
                    )))
                    .chain(
                        filtered
                            .iter()
                            .map(|field| IndexField::ordered(field, direction)),
                    )
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let declared_ranges = spec.ranges.iter().flat_map(|range| {
        let shape = (range.compared.to_vec(), range.contains);
        ranged(&shape, &[range.field])
    });
    // A set of range fields filtered together (`ranges(a, b)`) orders by each after the
    // order field, by their paths as Firestore does: in each query that filters on every one.
    let filters_on = |(fields, array): &(Vec<&str>, bool), field: &str| {
        spec.range_fields.contains(&field)
            || spec.ranges.iter().any(|range| {
                range.field == field
                    && range.compared == fields.as_slice()
                    && range.contains == *array
            })
    };
    let range_sets = std::iter::once(&whole)
        .chain(&shapes)
        .flat_map(|shape| {
            spec.range_sets
                .iter()
                .filter(move |set| set.iter().all(|field| filters_on(shape, field)))
                .flat_map(move |set| ranged(shape, set))
        })
        .collect::<Vec<_>>();
    let ranges = std::iter::once(&whole)
        .chain(&shapes)
        .flat_map(|fields| {
            spec.range_fields
                .iter()
                .flat_map(move |field| ranged(fields, &[*field]))
        })
        .chain(declared_ranges)
        .chain(range_sets)
        .collect::<Vec<_>>();
    let queries: Vec<CompositeIndex> = std::iter::once(whole_collection).chain(queries).collect();
    // A reversible type's queries also run in the other direction (and its pages go back):
    // each query's index again with the order field reversed. Sums and averages do not
    // depend on the direction, so they keep theirs.
    let reversed = queries
        .iter()
        .filter(|_| spec.reversible)
        .map(|index| CompositeIndex {
            fields: index
                .fields
                .iter()
                .map(|field| match field.field_path == spec.order_field {
                    true => IndexField::ordered(spec.order_field, spec.direction.reversed()),
                    false => field.clone(),
                })
                .collect(),
            ..index.clone()
        })
        .collect::<Vec<_>>();
    // `find_nearest` pre-filters by equality alone (one shard value per request, and the
    // query's equality fields), so a vector index is the shard field, an equality query's
    // fields, then the vector field: for the whole collection and each equality query.
    let vectors = std::iter::once(&whole)
        .chain(shapes.iter().filter(|(_, array)| !array))
        .flat_map(|(fields, _)| {
            spec.vector_fields.iter().map(move |vector| CompositeIndex {
                collection_group: spec.collection.to_owned(),
                query_scope: QueryScope::Collection,
                fields: std::iter::once(shard())
                    .chain(fields.iter().map(|field| ascending(field)))
                    .chain([IndexField::vector(vector.field, vector.dimension)])
                    .collect(),
            })
        })
        .collect::<Vec<_>>();
    // A purge of expired documents reads one shard value at a time (the page's split
    // queries), `shard == v AND expiry <= now`, ordered by the expiry: (shard, expiry).
    let purge = spec.expiry_field.map(|expiry| CompositeIndex {
        collection_group: spec.collection.to_owned(),
        query_scope: QueryScope::Collection,
        fields: vec![shard(), ascending(expiry)],
    });
    let mut indexes: Vec<CompositeIndex> = Vec::new();
    for index in queries
        .into_iter()
        .chain(reversed)
        .chain(ranges)
        .chain(aggregations)
        .chain(vectors)
        .chain(purge)
    {
        if !indexes.contains(&index) {
            indexes.push(index);
        }
    }
    // Queries across every parent read COLLECTION_GROUP indexes: the same ones, in that scope.
    if spec.collection_group {
        let group: Vec<CompositeIndex> = indexes
            .iter()
            .map(|index| CompositeIndex {
                query_scope: QueryScope::CollectionGroup,
                ..index.clone()
            })
            .collect();
        indexes.extend(group);
    }
    let disabled = |field_path: &str| FieldOverride {
        collection_group: spec.collection.to_owned(),
        field_path: field_path.to_owned(),
        ttl: false,
        indexes: Vec::new(),
    };
    let mut field_overrides = vec![disabled(spec.order_field), disabled(spec.shard_field)];
    // An increment's marker is read by name only, and only while its commit may be sent
    // again: its time is the TTL policy's, unindexed.
    if !spec.counter_fields.is_empty() {
        field_overrides.push(FieldOverride {
            collection_group: crate::INCREMENTS_COLLECTION.to_owned(),
            field_path: crate::MARKER_EXPIRY_FIELD.to_owned(),
            ttl: true,
            indexes: Vec::new(),
        });
    }
    // The TTL policy on the expiry field, whose single-field indexes are a hotspot when its
    // values rise with time (Google's TTL page): the composite indexes above, which start
    // with the shard, serve every query of it.
    if let Some(expiry) = spec.expiry_field {
        field_overrides.push(FieldOverride {
            ttl: true,
            ..disabled(expiry)
        });
    }
    IndexPlan {
        indexes,
        field_overrides,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FieldOfQuery;

    #[test]
    fn a_counter_brings_the_ttl_policy_of_increments_markers() {
        let spec = CollectionDescription {
            collection: "posts",
            shard_field: "shard",
            shard_values: &["0", "1"],
            order_field: "at",
            direction: Direction::Descending,
            ..CollectionDescription::EMPTY
        };
        assert_eq!(plan(&spec).field_overrides.len(), 2);
        let counted = CollectionDescription {
            counter_fields: &[crate::Counter {
                field: "likes",
                shards: 20,
            }],
            ..spec
        };
        let planned = plan(&counted);
        // A counter adds no composite index: its sum reads the automatic single-field one.
        assert_eq!(planned.indexes, plan(&spec).indexes);
        let markers = planned.field_overrides.last().unwrap();
        assert_eq!(
            (
                markers.collection_group.as_str(),
                markers.field_path.as_str(),
                markers.ttl,
                markers.indexes.len()
            ),
            ("_sharded_increments", "expire_at", true, 0)
        );
        let json: serde_json::Value = serde_json::from_str(&planned.to_json()).unwrap();
        assert_eq!(json["fieldOverrides"][2]["ttl"], serde_json::json!(true));
        assert_eq!(json["fieldOverrides"][0].get("ttl"), None);
        // A file whose marker override lacks the TTL does not cover the plan.
        let mut file = json.clone();
        file["fieldOverrides"][2]
            .as_object_mut()
            .unwrap()
            .remove("ttl");
        assert_eq!(planned.missing_from(&file.to_string()).unwrap().len(), 1);
        assert!(planned.missing_from(&json.to_string()).unwrap().is_empty());
    }

    #[test]
    fn an_expiry_field_brings_its_ttl_policy_unindexed_and_the_purge_index() {
        let spec = CollectionDescription {
            collection: "sessions",
            shard_field: "shard",
            shard_values: &["0", "1"],
            order_field: "at",
            direction: Direction::Descending,
            collection_group: true,
            // The front end lists the expiry among the range fields of every query.
            range_fields: &["expires"],
            ..CollectionDescription::EMPTY
        };
        let expiring = CollectionDescription {
            expiry_field: Some("expires"),
            ..spec
        };
        let (before, after) = (plan(&spec), plan(&expiring));
        let ttl = after.field_overrides.last().unwrap();
        assert_eq!(
            (
                ttl.collection_group.as_str(),
                ttl.field_path.as_str(),
                ttl.ttl,
                ttl.indexes.len()
            ),
            ("sessions", "expires", true, 0)
        );
        assert_eq!(
            after.field_overrides.len(),
            before.field_overrides.len() + 1
        );
        let purge = |scope| CompositeIndex {
            collection_group: "sessions".into(),
            query_scope: scope,
            fields: vec![
                IndexField::ordered("shard", Direction::Descending),
                IndexField::ordered("expires", Direction::Ascending),
            ],
        };
        let added: Vec<&CompositeIndex> = after
            .indexes
            .iter()
            .filter(|index| !before.indexes.contains(index))
            .collect();
        assert_eq!(
            added,
            [
                &purge(QueryScope::Collection),
                &purge(QueryScope::CollectionGroup)
            ]
        );
        for scope in [QueryScope::Collection, QueryScope::CollectionGroup] {
            let need = expiring.purge_need(scope).unwrap();
            assert_eq!(after.serving(&need), Some(&purge(scope)));
        }
        assert_eq!(spec.purge_need(QueryScope::Collection), None);
        // `unexpired(now)` is a range on the expiry: served by (shard, at, expires).
        assert!(after.indexes.contains(&CompositeIndex {
            collection_group: "sessions".into(),
            query_scope: QueryScope::Collection,
            fields: vec![
                IndexField::ordered("shard", Direction::Descending),
                IndexField::ordered("at", Direction::Descending),
                IndexField::ordered("expires", Direction::Descending),
            ],
        }));
        let json: serde_json::Value = serde_json::from_str(&after.to_json()).unwrap();
        let overrides = json["fieldOverrides"].as_array().unwrap();
        assert_eq!(
            overrides.last().unwrap(),
            &serde_json::json!({
                "collectionGroup": "sessions", "fieldPath": "expires", "ttl": true, "indexes": []
            })
        );
    }

    #[test]
    fn a_reversible_type_gets_each_query_index_in_both_directions() {
        let spec = CollectionDescription {
            collection: "logs",
            shard_field: "shard",
            shard_values: &["0", "1"],
            order_field: "at",
            direction: Direction::Descending,
            reversible: true,
            indexed_fields: &["level"],
            aggregate_fields: &["bytes"],
            ..CollectionDescription::EMPTY
        };
        let with_order = |middle: &[&str], direction: Direction| CompositeIndex {
            collection_group: "logs".into(),
            query_scope: QueryScope::Collection,
            fields: std::iter::once(IndexField::ordered("shard", Direction::Descending))
                .chain(
                    middle
                        .iter()
                        .map(|f| IndexField::ordered(f, Direction::Ascending)),
                )
                .chain(std::iter::once(IndexField::ordered("at", direction)))
                .collect(),
        };
        let reversible = plan(&spec);
        let forward = plan(&CollectionDescription {
            reversible: false,
            ..spec
        });
        for middle in [&[][..], &["level"]] {
            for direction in [Direction::Descending, Direction::Ascending] {
                assert!(reversible.indexes.contains(&with_order(middle, direction)));
            }
            assert!(
                !forward
                    .indexes
                    .contains(&with_order(middle, Direction::Ascending))
            );
        }
        // Two query indexes more, in the other direction; the sums' stay as they were.
        assert_eq!(reversible.indexes.len(), forward.indexes.len() + 2);
    }

    /// A reversible `trades` type ordered by `at` descending, with queries on `venue` and
    /// `price`: what the range tests declare their range fields on.
    fn trades() -> CollectionDescription<'static> {
        CollectionDescription {
            collection: "trades",
            shard_field: "shard",
            shard_values: &["0", "1"],
            order_field: "at",
            direction: Direction::Descending,
            reversible: true,
            indexed_fields: &["venue", "price"],
            ..CollectionDescription::EMPTY
        }
    }

    /// The index of a `trades` query comparing `middle` (descending shard) with `ranges`
    /// after the order field `at`, all in `direction`.
    fn ranged_index(middle: &[&str], direction: Direction, ranges: &[&str]) -> CompositeIndex {
        CompositeIndex {
            collection_group: "trades".into(),
            query_scope: QueryScope::Collection,
            fields: std::iter::once(IndexField::ordered("shard", Direction::Descending))
                .chain(
                    middle
                        .iter()
                        .map(|f| IndexField::ordered(f, Direction::Ascending)),
                )
                .chain(std::iter::once(IndexField::ordered("at", direction)))
                .chain(ranges.iter().map(|f| IndexField::ordered(f, direction)))
                .collect(),
        }
    }

    #[test]
    fn a_range_field_follows_the_order_field_in_each_direction() {
        let spec = CollectionDescription {
            range_fields: &["price"],
            ranges: &[FieldOfQuery {
                field: "qty",
                compared: &["venue"],
                contains: false,
            }],
            ..trades()
        };
        let index = |middle: &[&str], direction: Direction, range: &str| {
            ranged_index(middle, direction, &[range])
        };
        let plan = plan(&spec);
        for direction in [Direction::Descending, Direction::Ascending] {
            assert!(plan.indexes.contains(&index(&[], direction, "price")));
            assert!(
                plan.indexes
                    .contains(&index(&["venue"], direction, "price"))
            );
            assert!(plan.indexes.contains(&index(&["venue"], direction, "qty")));
            assert!(!plan.indexes.contains(&index(&[], direction, "qty")));
            // `price == x AND price > y` is refused, so it has no index.
            assert!(
                !plan
                    .indexes
                    .contains(&index(&["price"], direction, "price"))
            );
        }
        // 3 queries × 2 directions, and 2 × 2 ranges on `price` and 2 on `qty`.
        assert_eq!(plan.indexes.len(), 6 + 4 + 2);
    }

    #[test]
    fn a_set_of_range_fields_follows_the_order_field_in_each_query_that_filters_on_each() {
        let spec = CollectionDescription {
            range_fields: &["price", "qty"],
            ranges: &[FieldOfQuery {
                field: "weight",
                compared: &["venue"],
                contains: false,
            }],
            range_sets: &[&["price", "qty"], &["price", "weight"]],
            ..trades()
        };
        let plan = plan(&spec);
        for direction in [Direction::Descending, Direction::Ascending] {
            for middle in [&[][..], &["venue"]] {
                assert!(
                    plan.indexes
                        .contains(&ranged_index(middle, direction, &["price", "qty"])),
                    "{middle:?} {direction:?}"
                );
            }
            // `weight` is filtered by the `venue` query alone, so the set is too.
            assert!(plan.indexes.contains(&ranged_index(
                &["venue"],
                direction,
                &["price", "weight"]
            )));
            assert!(
                !plan
                    .indexes
                    .contains(&ranged_index(&[], direction, &["price", "weight"]))
            );
            // The `price` query compares `price`: no range on it, alone or in a set.
            assert!(!plan.indexes.contains(&ranged_index(
                &["price"],
                direction,
                &["price", "qty"]
            )));
        }
        // Indexes with two fields after the order field: the sets'.
        let sets: Vec<&CompositeIndex> = plan
            .indexes
            .iter()
            .filter(|index| {
                let at = index.fields.iter().position(|f| f.field_path == "at");
                at.is_some_and(|at| index.fields.len() - at - 1 == 2)
            })
            .collect();
        // (all, venue) × 2 directions for (price, qty), venue × 2 for (price, weight).
        assert_eq!(sets.len(), 4 + 2, "{sets:#?}");
    }

    #[test]
    fn an_array_field_gets_its_contains_index_in_each_scope() {
        let spec = CollectionDescription {
            collection: "posts",
            shard_field: "shard",
            shard_values: &["0", "1"],
            order_field: "at",
            direction: Direction::Descending,
            array_fields: &["tags"],
            aggregate_fields: &["likes"],
            collection_group: true,
            ..CollectionDescription::EMPTY
        };
        let plan = plan(&spec);
        let contains = vec![
            IndexField::ordered("shard", Direction::Descending),
            IndexField::contains("tags"),
            IndexField::ordered("at", Direction::Descending),
        ];
        for scope in [QueryScope::Collection, QueryScope::CollectionGroup] {
            let with = |fields: Vec<IndexField>| CompositeIndex {
                collection_group: "posts".into(),
                query_scope: scope,
                fields,
            };
            assert!(plan.indexes.contains(&with(contains.clone())), "{scope:?}");
            let mut summed = contains.clone();
            summed.push(IndexField::ordered("likes", Direction::Ascending));
            assert!(plan.indexes.contains(&with(summed)), "{scope:?}: sums");
        }
        let json = plan.to_json();
        assert!(json.contains("\"arrayConfig\": \"CONTAINS\""), "{json}");
        let read: IndexPlan = serde_json::from_str(&json).unwrap();
        assert_eq!(read, plan);
    }
}
