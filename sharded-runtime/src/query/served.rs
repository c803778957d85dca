//! Every chunk query checked, as it is sent, against the type's index plan by Firestore's
//! rules: the emulator runs any query without an index and production does not, so a debug
//! build (every test run) refuses, before sending, a query no index of the plan serves. The
//! need is read off the protocol's `StructuredQuery` the firestore crate sends, not off the
//! builder's terms.

use firestore::gcloud_sdk::google::firestore::v1::StructuredQuery;
use firestore::gcloud_sdk::google::firestore::v1::structured_query::{
    Direction as ProtoDirection, FieldFilter, Filter, composite_filter, field_filter,
    filter::FilterType,
};
use sharded_indexes::{Direction, IndexNeed, IndexPlan, QueryScope};

use crate::error::{Error, Result};

/// What `query` asks of composite indexes: one need per disjunct of its filter (Firestore
/// serves an OR from one index per disjunct of its disjunctive normal form).
pub(crate) fn needs_of(query: &StructuredQuery) -> Vec<IndexNeed> {
    let collection = query
        .from
        .first()
        .map(|from| from.collection_id.clone())
        .unwrap_or_default();
    let query_scope = match query.from.first().is_some_and(|from| from.all_descendants) {
        true => QueryScope::CollectionGroup,
        false => QueryScope::Collection,
    };
    let orders: Vec<(String, Direction)> = query
        .order_by
        .iter()
        .filter_map(|order| {
            let field = order.field.as_ref()?.field_path.clone();
            let direction = match ProtoDirection::try_from(order.direction) {
                Ok(ProtoDirection::Descending) => Direction::Descending,
                _ => Direction::Ascending,
            };
            (field != "__name__").then_some((field, direction))
        })
        .collect();
    let conjunctions = match &query.r#where {
        Some(filter) => disjuncts(filter),
        None => vec![Vec::new()],
    };
    conjunctions
        .into_iter()
        .map(|filters| {
            let mut need = IndexNeed {
                collection_group: collection.clone(),
                query_scope,
                equalities: Vec::new(),
                contains: None,
                orders: orders.clone(),
            };
            let mut inequalities: Vec<String> = Vec::new();
            for filter in filters {
                let field = filter
                    .field
                    .as_ref()
                    .map(|field| field.field_path.clone())
                    .unwrap_or_default();
                use field_filter::Operator;
                match Operator::try_from(filter.op) {
                    Ok(Operator::Equal | Operator::In) => need.equalities.push(field),
                    Ok(Operator::ArrayContains | Operator::ArrayContainsAny) => {
                        need.contains = Some(field)
                    }
                    _ => inequalities.push(field),
                }
            }
            // The server orders by an inequality field the query does not order by, after
            // the explicit orders, in lexicographic order and the last order's direction.
            inequalities.sort();
            let last = need.orders.last().map_or(Direction::Ascending, |o| o.1);
            for field in inequalities {
                if !need.orders.iter().any(|(ordered, _)| *ordered == field) {
                    need.orders.push((field, last));
                }
            }
            need
        })
        .collect()
}

/// The filter in disjunctive normal form: each disjunct the field filters it ANDs.
fn disjuncts(filter: &Filter) -> Vec<Vec<FieldFilter>> {
    match &filter.filter_type {
        Some(FilterType::FieldFilter(field)) => vec![vec![field.clone()]],
        Some(FilterType::CompositeFilter(composite)) => {
            let parts = composite.filters.iter().map(disjuncts);
            match composite_filter::Operator::try_from(composite.op) {
                Ok(composite_filter::Operator::Or) => parts.flatten().collect(),
                _ => parts.fold(vec![Vec::new()], |product, part| {
                    product
                        .iter()
                        .flat_map(|left| {
                            part.iter().map(move |right| {
                                left.iter().chain(right).cloned().collect::<Vec<_>>()
                            })
                        })
                        .collect()
                }),
            }
        }
        // Unary filters (`IS NULL`, `IS NAN`) are equalities; sharded sends none.
        _ => vec![Vec::new()],
    }
}

/// [`Error::InvalidQuery`] when no index of `plan` serves each disjunct of `query`.
pub(crate) fn check_served(plan: &IndexPlan, query: &StructuredQuery) -> Result<()> {
    check_needs(plan, needs_of(query))
}

/// [`check_served`] for a sum or average of `field` over `query`: Firestore orders an
/// aggregation by the aggregated field after the query's orders (measured in
/// `server_aggregates.rs`), so its index holds the field there, ascending, unless the query
/// compares or orders by it already.
pub(crate) fn check_aggregation_served(
    plan: &IndexPlan,
    query: &StructuredQuery,
    field: &str,
) -> Result<()> {
    let needs = needs_of(query)
        .into_iter()
        .map(|mut need| {
            let held = need.equalities.iter().any(|f| f == field)
                || need.orders.iter().any(|(f, _)| f == field);
            if !held {
                need.orders.push((field.to_owned(), Direction::Ascending));
            }
            need
        })
        .collect();
    check_needs(plan, needs)
}

fn check_needs(plan: &IndexPlan, needs: Vec<IndexNeed>) -> Result<()> {
    match needs.into_iter().find(|need| plan.serving(need).is_none()) {
        None => Ok(()),
        Some(need) => Err(Error::InvalidQuery(format!(
            "sharded would send a query no index of the type's plan serves, which production refuses: {need:?}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use firestore::{
        FirestoreQueryDirection, FirestoreQueryFilter, FirestoreQueryFilterCompare,
        FirestoreQueryFilterComposite, FirestoreQueryFilterCompositeOperator, FirestoreQueryOrder,
        FirestoreQueryParams, FirestoreValue,
    };

    use super::*;

    fn compare(compare: FirestoreQueryFilterCompare) -> FirestoreQueryFilter {
        FirestoreQueryFilter::Compare(Some(compare))
    }

    fn composite(
        operator: FirestoreQueryFilterCompositeOperator,
        filters: Vec<FirestoreQueryFilter>,
    ) -> FirestoreQueryFilter {
        FirestoreQueryFilter::Composite(FirestoreQueryFilterComposite {
            for_all_filters: filters,
            operator,
        })
    }

    fn value(v: i64) -> FirestoreValue {
        <FirestoreValue as From<i64>>::from(v)
    }

    /// An OR is one need per disjunct of its normal form, and an inequality the query does not
    /// order by is ordered by after the explicit orders, in the last one's direction.
    #[test]
    fn needs_are_read_off_the_structured_query() {
        use FirestoreQueryFilterCompare::{Equal, GreaterThan, In, NotEqual};
        use FirestoreQueryFilterCompositeOperator::{And, Or};
        let filter = composite(
            And,
            vec![
                compare(In(
                    "shard".into(),
                    <FirestoreValue as From<Vec<&str>>>::from(vec!["0", "1"]),
                )),
                composite(
                    Or,
                    vec![
                        compare(Equal("venue".into(), value(1))),
                        composite(
                            And,
                            vec![
                                compare(Equal("side".into(), value(2))),
                                compare(Equal("kind".into(), value(3))),
                            ],
                        ),
                    ],
                ),
                compare(GreaterThan("price".into(), value(4))),
                compare(NotEqual("b".into(), value(4))),
            ],
        );
        let params = FirestoreQueryParams::new("trades".into())
            .with_filter(filter)
            .with_order_by(vec![
                FirestoreQueryOrder::new("at".into(), FirestoreQueryDirection::Descending),
                FirestoreQueryOrder::new("price".into(), FirestoreQueryDirection::Descending),
                FirestoreQueryOrder::new("__name__".into(), FirestoreQueryDirection::Descending),
            ]);
        let query = StructuredQuery::try_from(params).unwrap();
        let needs = needs_of(&query);
        let orders = vec![
            ("at".to_owned(), Direction::Descending),
            ("price".to_owned(), Direction::Descending),
            ("b".to_owned(), Direction::Descending),
        ];
        assert_eq!(
            needs,
            vec![
                IndexNeed {
                    collection_group: "trades".into(),
                    query_scope: QueryScope::Collection,
                    equalities: vec!["shard".into(), "venue".into()],
                    contains: None,
                    orders: orders.clone(),
                },
                IndexNeed {
                    collection_group: "trades".into(),
                    query_scope: QueryScope::Collection,
                    equalities: vec!["shard".into(), "side".into(), "kind".into()],
                    contains: None,
                    orders,
                },
            ]
        );
    }

    /// A query the plan has no index for is refused; the same with the index planned is not.
    #[test]
    fn a_query_without_its_index_is_refused() {
        use FirestoreQueryFilterCompare::{Equal, GreaterThan, In};
        let params = FirestoreQueryParams::new("trades".into())
            .with_filter(composite(
                FirestoreQueryFilterCompositeOperator::And,
                vec![
                    compare(In(
                        "shard".into(),
                        <FirestoreValue as From<Vec<&str>>>::from(vec!["0", "1"]),
                    )),
                    compare(Equal("venue".into(), value(1))),
                    compare(GreaterThan("price".into(), value(4))),
                ],
            ))
            .with_order_by(vec![
                FirestoreQueryOrder::new("at".into(), FirestoreQueryDirection::Descending),
                FirestoreQueryOrder::new("price".into(), FirestoreQueryDirection::Descending),
                FirestoreQueryOrder::new("__name__".into(), FirestoreQueryDirection::Descending),
            ]);
        let query = StructuredQuery::try_from(params).unwrap();
        let description = sharded_indexes::CollectionDescription {
            collection: "trades",
            shard_field: "shard",
            shard_values: &["0", "1"],
            order_field: "at",
            direction: Direction::Descending,
            indexed_fields: &["venue"],
            ..sharded_indexes::CollectionDescription::EMPTY
        };
        assert!(matches!(
            check_served(&description.plan(), &query),
            Err(Error::InvalidQuery(_))
        ));
        let ranged = sharded_indexes::CollectionDescription {
            range_fields: &["price"],
            ..description
        };
        check_served(&ranged.plan(), &query).unwrap();
    }

    /// A sum's index holds the summed field after the query's orders: the plan's aggregation
    /// index serves it, the query's own does not.
    #[test]
    fn a_sum_needs_the_summed_field_in_its_index() {
        use FirestoreQueryFilterCompare::{Equal, In};
        let params = FirestoreQueryParams::new("trades".into())
            .with_filter(composite(
                FirestoreQueryFilterCompositeOperator::And,
                vec![
                    compare(In(
                        "shard".into(),
                        <FirestoreValue as From<Vec<&str>>>::from(vec!["0", "1"]),
                    )),
                    compare(Equal("venue".into(), value(1))),
                ],
            ))
            .with_order_by(vec![FirestoreQueryOrder::new(
                "at".into(),
                FirestoreQueryDirection::Descending,
            )]);
        let query = StructuredQuery::try_from(params).unwrap();
        let description = sharded_indexes::CollectionDescription {
            collection: "trades",
            shard_field: "shard",
            shard_values: &["0", "1"],
            order_field: "at",
            direction: Direction::Descending,
            indexed_fields: &["venue"],
            ..sharded_indexes::CollectionDescription::EMPTY
        };
        check_served(&description.plan(), &query).unwrap();
        assert!(check_aggregation_served(&description.plan(), &query, "qty").is_err());
        let summed = sharded_indexes::CollectionDescription {
            aggregate_fields: &["qty"],
            ..description
        };
        check_aggregation_served(&summed.plan(), &query, "qty").unwrap();
        // The order field, held by every index already, needs none more.
        check_aggregation_served(&description.plan(), &query, "at").unwrap();
    }
}
