//! What a plan asks of composite indexes, read off the terms its chunk queries send.

use firestore::{FirestoreQueryFilter, FirestoreQueryFilterCompare};
use sharded_indexes::{IndexNeed, QueryScope};

use super::QueryPlan;
use crate::model::handle::Scope;
use crate::query::QueryShape;

/// The index needs of `plan`, whose queries (one, or an OR's disjuncts) have `shapes`: the
/// shard field and each field compared by equality or `in`, then the orders in the plan's
/// direction (the order field, and a range filter's field), in the plan's scope. An OR's
/// disjuncts are each served by their own index, on the order field alone.
pub(super) fn of(plan: &QueryPlan, shapes: &[QueryShape]) -> Vec<IndexNeed> {
    let query_scope = match plan.scope {
        Scope::Group => QueryScope::CollectionGroup,
        _ => QueryScope::Collection,
    };
    let need = |equalities, contains, orders| IndexNeed {
        collection_group: plan.collection.to_owned(),
        query_scope,
        equalities,
        contains,
        orders,
    };
    if shapes.len() > 1 {
        return shapes
            .iter()
            .map(|shape| {
                let mut equalities = vec![plan.shard_field.to_owned()];
                let mut contains = None;
                for field in shape.fields {
                    match shape.contains {
                        true => contains = Some((*field).to_owned()),
                        false => equalities.push((*field).to_owned()),
                    }
                }
                let orders = vec![(plan.order_field.to_owned(), plan.direction)];
                need(equalities, contains, orders)
            })
            .collect();
    }
    let mut equalities = vec![plan.shard_field.to_owned()];
    let mut contains = None;
    for filter in &plan.filters {
        match filter {
            FirestoreQueryFilter::Compare(Some(FirestoreQueryFilterCompare::Equal(field, _))) => {
                equalities.push(field.clone())
            }
            FirestoreQueryFilter::Compare(Some(FirestoreQueryFilterCompare::ArrayContains(
                field,
                _,
            ))) => contains = Some(field.clone()),
            _ => {}
        }
    }
    if let Some(any_of) = &plan.any_of {
        match any_of.contains {
            true => contains = Some(any_of.field.clone()),
            false => equalities.push(any_of.field.clone()),
        }
    }
    let orders = std::iter::once(plan.order_field)
        .chain(plan.then_by.iter().copied())
        .map(|field| (field.to_owned(), plan.direction))
        .collect();
    vec![need(equalities, contains, orders)]
}
