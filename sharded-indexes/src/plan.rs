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
/// `shard in [...] AND a == x AND b == y ...`; and for each of those queries and each
/// aggregated field, the same index with that field last (ascending), since Firestore sums
/// and averages by scanning index entries, which must hold the field.
/// With `collection_group`, each of them again in `COLLECTION_GROUP` scope, for the queries
/// across every parent. And two overrides (for both scopes) that disable the single-field
/// indexes of the order field, whose
/// sequential values are what caps writes at 500/s, and of the shard field (recipe step 4).
pub fn plan(spec: &CollectionDescription<'_>) -> IndexPlan {
    let shard = || IndexField {
        field_path: spec.shard_field.to_owned(),
        order: Direction::Descending,
    };
    let order = || IndexField {
        field_path: spec.order_field.to_owned(),
        order: spec.direction,
    };
    // The whole-collection query: the order field's own index is disabled, so it needs one.
    let whole_collection = CompositeIndex {
        collection_group: spec.collection.to_owned(),
        query_scope: QueryScope::Collection,
        fields: vec![shard(), order()],
    };
    let ascending = |field: &str| IndexField {
        field_path: field.to_owned(),
        order: Direction::Ascending,
    };
    let equality = |fields: &[&str], aggregated: Option<&str>| CompositeIndex {
        collection_group: spec.collection.to_owned(),
        query_scope: QueryScope::Collection,
        fields: std::iter::once(shard())
            .chain(fields.iter().map(|field| ascending(field)))
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
    let shapes: Vec<Vec<&str>> = spec
        .indexed_fields
        .iter()
        .map(|field| vec![*field])
        .chain(spec.field_sets.iter().map(|set| set.to_vec()))
        .collect();
    let queries = shapes.iter().map(|fields| equality(fields, None));
    let aggregations = std::iter::once(&Vec::new())
        .chain(&shapes)
        .flat_map(|fields| {
            spec.aggregate_fields
                .iter()
                .map(move |aggregated| equality(fields, Some(aggregated)))
        })
        .collect::<Vec<_>>();
    let mut indexes: Vec<CompositeIndex> = Vec::new();
    for index in std::iter::once(whole_collection)
        .chain(queries)
        .chain(aggregations)
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
        indexes: Vec::new(),
    };
    IndexPlan {
        indexes,
        field_overrides: vec![disabled(spec.order_field), disabled(spec.shard_field)],
    }
}
