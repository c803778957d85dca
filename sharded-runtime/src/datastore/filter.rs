//! The firestore crate's filters and orders as Datastore's: the same entities matched, in
//! the same order, with Datastore's property names and limits.

use firestore::gcloud_sdk::google::datastore::v1 as ds;
use firestore::gcloud_sdk::prost_types::Timestamp;
use firestore::{
    FirestoreQueryDirection, FirestoreQueryFilter, FirestoreQueryFilterCompare,
    FirestoreQueryFilterCompositeOperator, FirestoreQueryFilterUnary, FirestoreQueryOrder,
};
use sharded_indexes::datastore::property_path;

use super::convert::{self, Indexed};
use crate::error::{Error, Result};

/// Reading at `time`, or (without one) the latest data.
pub(super) fn at(time: Option<Timestamp>) -> Option<ds::ReadOptions> {
    time.map(|time| ds::ReadOptions {
        consistency_type: Some(ds::read_options::ConsistencyType::ReadTime(time)),
    })
}

/// `limit` as Datastore's `Int32Value` (a larger one asks for all there is).
pub(super) fn int32_limit(limit: u32) -> i32 {
    i32::try_from(limit).unwrap_or(i32::MAX)
}

pub(super) fn and(filters: Vec<ds::Filter>) -> ds::Filter {
    composite(ds::composite_filter::Operator::And, filters)
}

/// `filters` joined by `op`, without the empty composites among them (Datastore refuses a
/// composite filter of no filters: "A composite filter must have at least one sub-filter"),
/// and a composite of one filter as that filter.
fn composite(op: ds::composite_filter::Operator, filters: Vec<ds::Filter>) -> ds::Filter {
    let mut filters: Vec<ds::Filter> = filters
        .into_iter()
        .filter(|filter| !is_empty(filter))
        .collect();
    if filters.len() == 1 {
        return filters.remove(0);
    }
    ds::Filter {
        filter_type: Some(ds::filter::FilterType::CompositeFilter(
            ds::CompositeFilter {
                op: op as i32,
                filters,
            },
        )),
    }
}

/// Whether `filter` is a composite of nothing: no filter at all.
pub(super) fn is_empty(filter: &ds::Filter) -> bool {
    matches!(
        &filter.filter_type,
        Some(ds::filter::FilterType::CompositeFilter(composite)) if composite.filters.is_empty()
    )
}

/// `name op value`: one property's comparison, the filter every Datastore query of the
/// runtime is built from.
pub(super) fn property_filter(
    name: &str,
    op: ds::property_filter::Operator,
    value: ds::Value,
) -> ds::Filter {
    ds::Filter {
        filter_type: Some(ds::filter::FilterType::PropertyFilter(ds::PropertyFilter {
            property: Some(ds::PropertyReference { name: name.into() }),
            op: op as i32,
            value: Some(value),
        })),
    }
}

/// Entities under the ancestor `parent` (its path below the root, `rooms/lobby`).
pub(super) fn ancestor(parent: &str, partition: &ds::PartitionId) -> ds::Filter {
    property_filter(
        "__key__",
        ds::property_filter::Operator::HasAncestor,
        ds::Value {
            value_type: Some(ds::value::ValueType::KeyValue(ds::Key {
                partition_id: Some(partition.clone()),
                path: convert::path_key(parent),
            })),
            ..Default::default()
        },
    )
}

/// The Datastore property a Firestore field path names.
pub(super) fn property(path: &str) -> Result<String> {
    property_path(path).ok_or_else(|| {
        Error::InvalidQuery(format!(
            "`{path}` has a name with a dot in it, which Datastore mode cannot tell from a nested property"
        ))
    })
}

pub(super) fn property_order(order: &FirestoreQueryOrder) -> Result<ds::PropertyOrder> {
    use ds::property_order::Direction;
    let name = match order.field_name.as_str() {
        "__name__" => "__key__".to_owned(),
        path => property(path)?,
    };
    Ok(ds::PropertyOrder {
        property: Some(ds::PropertyReference { name }),
        direction: match order.direction {
            FirestoreQueryDirection::Ascending => Direction::Ascending,
            FirestoreQueryDirection::Descending => Direction::Descending,
        } as i32,
    })
}

/// A Firestore filter as the Datastore filter that matches the same entities.
pub(super) fn filter(
    filter: &FirestoreQueryFilter,
    partition: &ds::PartitionId,
) -> Result<ds::Filter> {
    use ds::property_filter::Operator as Op;
    use firestore::gcloud_sdk::google::firestore::v1::value::ValueType as F;
    let all = Indexed {
        paths: None,
        partition,
    };
    let compare = |path: &str, op: Op, value: &firestore::FirestoreValue| -> Result<ds::Filter> {
        Ok(property_filter(
            &property(path)?,
            op,
            convert::to_datastore(&value.value, path, &all),
        ))
    };
    let constant = |value_type: F| firestore::FirestoreValue {
        value: firestore::gcloud_sdk::google::firestore::v1::Value {
            value_type: Some(value_type),
        },
    };
    match filter {
        FirestoreQueryFilter::Composite(composite) => {
            let filters = composite
                .for_all_filters
                .iter()
                .map(|filter| self::filter(filter, partition))
                .collect::<Result<Vec<_>>>()?;
            let op = match composite.operator {
                FirestoreQueryFilterCompositeOperator::And => ds::composite_filter::Operator::And,
                FirestoreQueryFilterCompositeOperator::Or => ds::composite_filter::Operator::Or,
            };
            Ok(self::composite(op, filters))
        }
        FirestoreQueryFilter::Compare(None) => Ok(and(Vec::new())),
        FirestoreQueryFilter::Compare(Some(comparison)) => {
            use FirestoreQueryFilterCompare as C;
            match comparison {
                C::LessThan(path, value) => compare(path, Op::LessThan, value),
                C::LessThanOrEqual(path, value) => compare(path, Op::LessThanOrEqual, value),
                C::GreaterThan(path, value) => compare(path, Op::GreaterThan, value),
                C::GreaterThanOrEqual(path, value) => compare(path, Op::GreaterThanOrEqual, value),
                C::Equal(path, value) => compare(path, Op::Equal, value),
                C::NotEqual(path, value) => compare(path, Op::NotEqual, value),
                C::In(path, value) => compare(path, Op::In, value),
                C::NotIn(path, value) => compare(path, Op::NotIn, value),
                // A list property matches an equality on any of its values.
                C::ArrayContains(path, value) => compare(path, Op::Equal, value),
                C::ArrayContainsAny(path, value) => compare(path, Op::In, value),
            }
        }
        FirestoreQueryFilter::Unary(unary) => match unary {
            FirestoreQueryFilterUnary::IsNull(path) => {
                compare(path, Op::Equal, &constant(F::NullValue(0)))
            }
            FirestoreQueryFilterUnary::IsNotNull(path) => {
                compare(path, Op::NotEqual, &constant(F::NullValue(0)))
            }
            FirestoreQueryFilterUnary::IsNan(path) => {
                compare(path, Op::Equal, &constant(F::DoubleValue(f64::NAN)))
            }
            FirestoreQueryFilterUnary::IsNotNan(path) => {
                compare(path, Op::NotEqual, &constant(F::DoubleValue(f64::NAN)))
            }
        },
    }
}
