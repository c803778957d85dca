//! The terms a plan is made of, each checked as Firestore checks it: equality and `in`
//! filters, an OR's disjunction, range, `!=` and `not-in` filters, and the limits Firestore
//! puts on values.

use std::ops::Bound;

use firestore::gcloud_sdk::google::firestore::v1::{ArrayValue, Value, value::ValueType};
use firestore::{
    FirestoreQueryFilter, FirestoreQueryFilterCompare, FirestoreQueryFilterComposite,
    FirestoreQueryFilterCompositeOperator, FirestoreValue,
};

use crate::error::{Error, Result};
use crate::model::handle::Scope;
use crate::model::sharded::Sharded;
use crate::model::value_order;
use crate::query::range::{FieldFilter, FilterKind};
use crate::query::{MAX_DISJUNCTIONS, QueryShape, shape};

/// Checks the range filters (`filter`) on `paths` (the fields they order by after the order
/// field, in the order Firestore orders them), and adds them to `filters`; whether one is a
/// `not-in`. Several fields are one of the type's `range_sets` (`ranges(a, b)`), whose
/// indexes the plan holds.
pub(super) fn range_filters(
    paths: &[&'static str],
    range_sets: &[&[&str]],
    field_filters: &[FieldFilter],
    shape: &QueryShape,
    filters: &mut Vec<FirestoreQueryFilter>,
    or: bool,
    any_of: bool,
) -> Result<bool> {
    let invalid = |why: String| Err(Error::InvalidQuery(why));
    let Some(&first) = paths.first() else {
        return Ok(false);
    };
    let named = || {
        paths
            .iter()
            .map(|path| format!("`{path}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if or {
        return invalid("a range filter on another field does not go with an OR: Firestore would order each disjunct by it; filter each query apart".into());
    }
    if paths.len() > 1
        && !range_sets
            .iter()
            .any(|set| set.len() == paths.len() && paths.iter().all(|path| set.contains(path)))
    {
        return invalid(format!(
            "range filters on {}: each orders the query by its field, so filtering on them together needs an index of its own, planned for the sets declared with `#[sharded(ranges(...))]` on the struct; declare this one, or filter on one field",
            named()
        ));
    }
    if let Some(path) = paths.iter().find(|path| shape.fields.contains(path)) {
        return invalid(format!(
            "`{}` compares `{path}` for equality already; a range on it is that value or nothing",
            shape.name
        ));
    }
    // Firestore takes one filter of the `!=` kind per query (`!=`, `not-in`, and the
    // `is not NaN` and `is not null` a `!=` of NaN or null is), whatever their fields and
    // values (measured in `tests/tests/suite/server_inequalities.rs`).
    let not_ins = field_filters
        .iter()
        .filter(|filter| matches!(filter.kind, FilterKind::NotIn(_)))
        .count();
    let not_equals = field_filters
        .iter()
        .filter(|filter| matches!(filter.kind, FilterKind::NotEqual(_)))
        .count();
    if not_ins + not_equals > 1 {
        let on = match paths.len() {
            1 => format!("on `{first}`"),
            _ => format!("on {}", named()),
        };
        return invalid(format!(
            "{} `!=` and {} `not-in` filters {on}: Firestore takes one `!=` or `not-in` per query; merge them into one `not_in([..])`",
            not_equals, not_ins
        ));
    }
    if let Some(not_in) = field_filters
        .iter()
        .find(|filter| matches!(filter.kind, FilterKind::NotIn(_)))
        && any_of
    {
        return invalid(format!(
            "Firestore takes no `not-in` (on `{}`) beside an `in` or `array-contains-any`",
            not_in.path
        ));
    }
    use FirestoreQueryFilterCompare::{
        GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual, NotEqual, NotIn,
    };
    let checked = |path: &str, value: &std::result::Result<Value, String>| {
        let value = value.clone().map_err(Error::InvalidQuery)?;
        check_filter_value(path, &value)?;
        Ok::<_, Error>(FirestoreValue { value })
    };
    for filter in field_filters {
        let path = filter.path;
        let checked = |value: &std::result::Result<Value, String>| checked(path, value);
        match &filter.kind {
            FilterKind::Range { lower, upper } => {
                for (bound, inclusive, exclusive) in [
                    (
                        lower,
                        GreaterThanOrEqual as Comparison,
                        GreaterThan as Comparison,
                    ),
                    (upper, LessThanOrEqual, LessThan),
                ] {
                    let (compare_with, value) = match bound {
                        Bound::Included(value) => (inclusive, value),
                        Bound::Excluded(value) => (exclusive, value),
                        Bound::Unbounded => continue,
                    };
                    filters.push(compare(compare_with(path.to_owned(), checked(value)?)));
                }
            }
            FilterKind::NotEqual(value) => {
                filters.push(compare(NotEqual(path.to_owned(), checked(value)?)));
            }
            FilterKind::NotIn(values) => {
                if values.is_empty() || values.len() > MAX_NOT_IN {
                    return invalid(format!(
                        "`not-in` on `{path}` with {} values; Firestore takes 1 to {MAX_NOT_IN}",
                        values.len()
                    ));
                }
                let values = values
                    .iter()
                    .map(|value| checked(value).map(|value| value.value))
                    .collect::<Result<Vec<Value>>>()?;
                let array = FirestoreValue {
                    value: Value {
                        value_type: Some(ValueType::ArrayValue(ArrayValue { values })),
                    },
                };
                filters.push(compare(NotIn(path.to_owned(), array)));
            }
        }
    }
    Ok(not_ins == 1)
}

/// Where a query reads, for messages.
pub(super) fn describe_scope(scope: &Scope) -> String {
    match scope {
        Scope::Top => "the top-level collection".to_owned(),
        Scope::Under(parent) => format!("under `{parent}`"),
        Scope::Group => "the collection group".to_owned(),
    }
}

/// A typed query's shape, its equality (or `array-contains`) filters and its `in` (or
/// `array-contains-any`), checked: the part of a query, or of each disjunct of an OR, that
/// compares the query's fields.
type Compared = (QueryShape, Vec<FirestoreQueryFilter>, Option<AnyOf>);

pub(super) fn compared<T: Sharded>(
    query: u64,
    values: &[std::result::Result<Value, String>],
    any_of: Option<&[std::result::Result<Value, String>]>,
) -> Result<Compared> {
    let invalid = |why: String| Error::InvalidQuery(why);
    let shape = shape_of::<T>(query, values.len() + usize::from(any_of.is_some()))?;
    let mut filters = Vec::new();
    for (field, value) in shape.fields.iter().zip(values) {
        let value = value.clone().map_err(invalid)?;
        check_filter_value(field, &value)?;
        let field = (*field).to_owned();
        let value = FirestoreValue { value };
        filters.push(compare(match shape.contains {
            true => FirestoreQueryFilterCompare::ArrayContains(field, value),
            false => FirestoreQueryFilterCompare::Equal(field, value),
        }));
    }
    let any_of = match any_of {
        Some(any) => {
            let field = shape.fields[values.len()];
            Some(AnyOf {
                field: field.to_owned(),
                values: any_of_values(field, any, shape.contains)?,
                contains: shape.contains,
            })
        }
        None => None,
    };
    Ok((shape, filters, any_of))
}

/// The shape of `T`'s query `query`, comparing `count` fields.
pub(super) fn shape_of<T: Sharded>(query: u64, count: usize) -> Result<QueryShape> {
    shape::<T>(query)
        .filter(|s| s.fields.len() == count)
        .ok_or_else(|| {
            Error::InvalidQuery(format!(
                "`{}` has no query with id {query} on {count} field(s)",
                T::COLLECTION,
            ))
        })
}

/// The OR of `disjuncts` as one filter, and how many disjunctions Firestore counts in it
/// (an `in` or `array-contains-any` counts its values).
pub(super) fn disjunction(disjuncts: Vec<Compared>) -> (FirestoreQueryFilter, usize) {
    let mut count = 0;
    let mut any = Vec::with_capacity(disjuncts.len());
    for (_, mut filters, any_of) in disjuncts {
        count += any_of.as_ref().map_or(1, |any_of| any_of.values.len());
        if let Some(any_of) = any_of {
            filters.push(any_of.filter(0, any_of.values.len()));
        }
        any.push(match filters.len() {
            1 => filters.pop().expect("one filter"),
            _ => FirestoreQueryFilter::Composite(FirestoreQueryFilterComposite {
                for_all_filters: filters,
                operator: FirestoreQueryFilterCompositeOperator::And,
            }),
        });
    }
    let or = FirestoreQueryFilter::Composite(FirestoreQueryFilterComposite {
        for_all_filters: any,
        operator: FirestoreQueryFilterCompositeOperator::Or,
    });
    (or, count)
}

/// An `in` (or, on an array field, an `array-contains-any`) checked: its field and values.
#[derive(Debug, Clone)]
pub(crate) struct AnyOf {
    pub(super) field: String,
    pub(super) values: Vec<Value>,
    /// `array-contains-any` rather than `in`.
    pub(super) contains: bool,
}

impl AnyOf {
    /// The filter on the values `start..end`.
    pub(super) fn filter(&self, start: usize, end: usize) -> FirestoreQueryFilter {
        let values = FirestoreValue {
            value: Value {
                value_type: Some(ValueType::ArrayValue(ArrayValue {
                    values: self.values[start..end].to_vec(),
                })),
            },
        };
        let field = self.field.clone();
        compare(match self.contains {
            true => FirestoreQueryFilterCompare::ArrayContainsAny(field, values),
            false => FirestoreQueryFilterCompare::In(field, values),
        })
    }
}

/// The values of an `in` (`array-contains-any` when `contains`) on `field`, as Firestore
/// takes them (1 to 30, each no longer than a filter value may be), each once: a value given
/// twice, or two that Firestore holds equal (`1` and `1.0`), would otherwise be asked for by
/// two chunk queries, which would each return its documents.
fn any_of_values(
    field: &str,
    values: &[std::result::Result<Value, String>],
    contains: bool,
) -> Result<Vec<Value>> {
    let operator = match contains {
        true => "array-contains-any",
        false => "in",
    };
    if values.is_empty() {
        return Err(Error::InvalidQuery(format!(
            "`{operator}` on `{field}` with no values matches nothing; Firestore rejects it"
        )));
    }
    if values.len() > MAX_DISJUNCTIONS {
        return Err(Error::InvalidQuery(format!(
            "`{operator}` on `{field}` with {} values; Firestore allows {MAX_DISJUNCTIONS}",
            values.len()
        )));
    }
    let mut distinct: Vec<Value> = Vec::with_capacity(values.len());
    for value in values {
        let value = value.clone().map_err(Error::InvalidQuery)?;
        check_filter_value(field, &value)?;
        let seen = distinct
            .iter()
            .any(|other| value_order::compare_values(other, &value) == std::cmp::Ordering::Equal);
        if !seen {
            distinct.push(value);
        }
    }
    Ok(distinct)
}

/// Firestore's limit on values in one `not-in` filter.
pub const MAX_NOT_IN: usize = 10;

/// Firestore's largest query limit (an `int32`).
pub const MAX_LIMIT: u32 = i32::MAX as u32;

/// The longest string a filter may compare with, in UTF-8 bytes: the server refuses longer
/// ones ("too large to be used in a query"; measured in `tests/tests/suite/server_order.rs`). A bytes
/// value may have one byte more.
pub const MAX_FILTER_VALUE_BYTES: usize = value_order::INDEXED_STRING_BYTES;

/// Refuses, before sending, a filter value the server would reject as too large; values
/// inside arrays and maps count too.
pub(crate) fn check_filter_value(path: &str, value: &Value) -> Result<()> {
    let too_long = match &value.value_type {
        Some(ValueType::StringValue(s)) => s.len() > MAX_FILTER_VALUE_BYTES,
        Some(ValueType::BytesValue(b)) => b.len() > value_order::INDEXED_BYTES_BYTES,
        Some(ValueType::ArrayValue(array)) => {
            return array
                .values
                .iter()
                .try_for_each(|v| check_filter_value(path, v));
        }
        Some(ValueType::MapValue(map)) => {
            return map
                .fields
                .values()
                .try_for_each(|v| check_filter_value(path, v));
        }
        _ => false,
    };
    if too_long {
        return Err(Error::InvalidQuery(format!(
            "a value compared with `{path}` is longer than Firestore takes in a query ({MAX_FILTER_VALUE_BYTES} bytes of a string, {} of bytes)",
            value_order::INDEXED_BYTES_BYTES
        )));
    }
    Ok(())
}

/// A comparison of a field path with a value.
pub(super) type Comparison = fn(String, FirestoreValue) -> FirestoreQueryFilterCompare;

pub(crate) fn compare(compare: FirestoreQueryFilterCompare) -> FirestoreQueryFilter {
    FirestoreQueryFilter::Compare(Some(compare))
}
