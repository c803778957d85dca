//! A query checked and turned into Firestore terms, before anything is sent: its shape, limit,
//! filter values, range, cursor and the chunks of shard values it fans out over.

use std::ops::Bound;

use firestore::gcloud_sdk::google::firestore::v1::{ArrayValue, Document, Value, value::ValueType};
use firestore::{
    FirestoreDb, FirestoreQueryDirection, FirestoreQueryFilter, FirestoreQueryFilterCompare,
    FirestoreQueryFilterComposite, FirestoreQueryFilterCompositeOperator, FirestoreQueryOrder,
    FirestoreValue,
};
use sharded_indexes::Direction;

use super::chunk::{Chunk, fan_out, fan_out_together};
use super::range::FilterKind;
use super::{MAX_DISJUNCTIONS, QueryShape, Reach, ShardedQuery, Window, shape};
use crate::value_order;
use crate::{Error, Result, Sharded};

/// A query checked and turned into Firestore terms, before anything is sent.
pub(super) struct Prepared {
    pub(super) filters: Vec<FirestoreQueryFilter>,
    pub(super) orders: Vec<FirestoreQueryOrder>,
    pub(super) start_after: Option<Vec<FirestoreValue>>,
    /// For an `in` query, the field and its values (checked, each once); each chunk asks
    /// for a range of them.
    pub(super) any_of: Option<AnyOf>,
    pub(super) chunks: Vec<Chunk>,
    /// A `not-in` query: Firestore takes no `not-in` beside the shard field's `in`, so each
    /// chunk reads one shard value, compared by equality.
    pub(super) shard_by_equality: bool,
}

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// Checks the query and turns it into Firestore terms; an error here means nothing was sent.
    pub(super) fn prepare(&self, db: &FirestoreDb) -> Result<Prepared> {
        let mut prepared = self.terms()?;
        prepared.start_after = match &self.after {
            Some(cursor) => {
                let name = cursor.document_name(db, T::COLLECTION);
                let mut values = vec![cursor.order_value.clone()];
                if let Some(path) = self.then_by() {
                    values.push(cursor.value_of(path)?.clone());
                }
                Some(cursor_values(values, name))
            }
            None => None,
        };
        // Every test run sends its queries through here: each chunk query, as the protocol
        // carries it, must be one the type's plan serves.
        #[cfg(debug_assertions)]
        {
            let plan = T::indexes();
            for chunk in &prepared.chunks {
                let query = self.structured_query(
                    &prepared,
                    *chunk,
                    prepared.start_after.clone(),
                    self.limit,
                )?;
                super::served::check_served(&plan, &query)?;
            }
        }
        Ok(prepared)
    }

    /// The cursor values that start a chunk query just after `document`, in this query's
    /// order; `None` when the document lacks one of them or one is a string Firestore refuses
    /// as a cursor value (over 1,500 bytes).
    pub(super) fn after_document_values(&self, document: &Document) -> Option<Vec<FirestoreValue>> {
        let mut values = vec![value_order::field_value(document, T::ORDER_FIELD)?.clone()];
        if let Some(path) = self.then_by() {
            values.push(value_order::field_value(document, path)?.clone());
        }
        if !values.iter().all(value_order::usable_in_cursor) {
            return None;
        }
        Some(cursor_values(values, document.name.clone()))
    }

    /// [`prepare`](Self::prepare) but for the cursor's values, which name the database.
    pub(super) fn terms(&self) -> Result<Prepared> {
        self.scope.check::<T>()?;
        let invalid = |why: String| Error::InvalidQuery(why);
        let (shape, mut filters, mut any_of) =
            compared::<T>(QUERY, &self.values, self.any_of.as_deref())?;
        if T::READ_SHARD_VALUES.is_empty() {
            return Err(invalid(format!("`{}` has no shard values", T::COLLECTION)));
        }
        match self.limit {
            Some(0) => {
                return Err(invalid(
                    "`limit(0)` asks for nothing; Firestore rejects it".into(),
                ));
            }
            Some(limit) if limit > MAX_LIMIT => {
                return Err(invalid(format!(
                    "`limit({limit})` is more than Firestore's largest limit, {MAX_LIMIT}"
                )));
            }
            _ => {}
        }
        let or = match self.or.is_empty() {
            true => None,
            false => {
                let mut disjuncts = vec![(shape, std::mem::take(&mut filters), any_of.take())];
                for disjunct in &self.or {
                    if disjunct.scope != crate::parent::Scope::Top && disjunct.scope != self.scope {
                        return Err(invalid(format!(
                            "an OR reads one scope, and its queries read {} and {}: query each parent apart, or the group with `in_group()`",
                            describe_scope(&self.scope),
                            describe_scope(&disjunct.scope)
                        )));
                    }
                    if !disjunct.plain {
                        return Err(invalid(
                            "a query OR-ed with another takes no range, limit or cursor of its own: give them to the whole".into(),
                        ));
                    }
                    disjuncts.push(compared::<T>(
                        disjunct.query,
                        &disjunct.values,
                        disjunct.any_of.as_deref(),
                    )?);
                }
                if disjuncts
                    .iter()
                    .any(|(shape, _, _)| shape.fields.is_empty())
                {
                    return Err(invalid(
                        "`all()` matches every document, so an OR with it is the whole collection: query `all()` alone".into(),
                    ));
                }
                Some(disjunction(disjuncts))
            }
        };
        let not_in =
            self.range_filters(&shape, &mut filters, !self.or.is_empty(), any_of.is_some())?;
        let chunks = match (&or, &any_of) {
            // Firestore takes no `not-in` beside an `in` (measured): one shard value each.
            _ if not_in => T::READ_SHARD_VALUES
                .chunks(1)
                .map(|shards| Chunk {
                    shards,
                    values: (0, 0),
                })
                .collect(),
            // Every chunk asks for the whole OR, so that a document matching several
            // disjuncts is read by its shard's chunk only.
            (Some((_, disjunctions)), _) => fan_out_together(T::READ_SHARD_VALUES, *disjunctions),
            // A document holds several of the values an `array-contains-any` asks for: each
            // chunk asks for all of them, so that a document is read by its shard's chunk only.
            (None, Some(any_of)) if any_of.contains => {
                fan_out_together(T::READ_SHARD_VALUES, any_of.values.len())
            }
            (None, Some(any_of)) => fan_out(T::READ_SHARD_VALUES, any_of.values.len()),
            (None, None) => fan_out(T::READ_SHARD_VALUES, 0),
        };
        if let Some((or, _)) = or {
            filters.push(or);
        }
        if let Some(chunk) = chunks
            .iter()
            .find(|chunk| chunk.weight() > MAX_DISJUNCTIONS)
        {
            return Err(invalid(format!(
                "{} disjunctions in one query; Firestore allows {MAX_DISJUNCTIONS}",
                chunk.weight()
            )));
        }
        let order = T::ORDER_FIELD.to_owned();
        use FirestoreQueryFilterCompare::{
            GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual,
        };
        for (bound, inclusive, exclusive) in [
            (
                &self.lower,
                GreaterThanOrEqual as Comparison,
                GreaterThan as Comparison,
            ),
            (&self.upper, LessThanOrEqual, LessThan),
        ] {
            let (compare_with, value) = match bound {
                Bound::Included(value) => (inclusive, value),
                Bound::Excluded(value) => (exclusive, value),
                Bound::Unbounded => continue,
            };
            let value = value.clone().map_err(invalid)?;
            check_filter_value(T::ORDER_FIELD, &value)?;
            let value = FirestoreValue { value };
            filters.push(compare(compare_with(order.clone(), value)));
        }
        if self.before.is_some() {
            return Err(invalid(
                "`before` runs with fetch, fetch_stored, page and count, not with a stream, a listener or a sum".into(),
            ));
        }
        let direction = match super::reach::query_direction::<T, R>() {
            Direction::Ascending => FirestoreQueryDirection::Ascending,
            Direction::Descending => FirestoreQueryDirection::Descending,
        };
        let orders = std::iter::once(order)
            .chain(self.then_by().map(str::to_owned))
            .chain(["__name__".to_owned()])
            .map(|field_name| FirestoreQueryOrder {
                field_name,
                direction: direction.clone(),
            })
            .collect();
        if self
            .after
            .as_ref()
            .is_some_and(|cursor| cursor.edge.is_some())
        {
            return Err(Error::InvalidCursor(
                "this cursor points past the query's last document, where no page starts: pass it to `before`".into(),
            ));
        }
        if let Some(cursor) = &self.after
            && !value_order::usable_in_cursor(&cursor.order_value)
        {
            return Err(Error::InvalidCursor(format!(
                "the cursor's `{}` is a string of more than {MAX_FILTER_VALUE_BYTES} bytes that Firestore compares whole, which it refuses as a cursor value (\"the cursor value is too large\"); no query, sharded or not, can start after this document",
                T::ORDER_FIELD
            )));
        }
        if let Some(cursor) = &self.after {
            cursor.check_scope(&self.scope)?;
            if let Some(path) = self.then_by()
                && !value_order::usable_in_cursor(cursor.value_of(path)?)
            {
                return Err(Error::InvalidCursor(format!(
                    "the cursor's `{path}` is a string of more than {MAX_FILTER_VALUE_BYTES} bytes, which Firestore refuses as a cursor value"
                )));
            }
        }
        Ok(Prepared {
            filters,
            orders,
            start_after: None,
            any_of,
            chunks,
            shard_by_equality: not_in,
        })
    }

    /// Checks the range filters ([`filter`](Self::filter)) and adds them to `filters`;
    /// whether one is a `not-in`.
    fn range_filters(
        &self,
        shape: &QueryShape,
        filters: &mut Vec<FirestoreQueryFilter>,
        or: bool,
        any_of: bool,
    ) -> Result<bool> {
        let invalid = |why: String| Err(Error::InvalidQuery(why));
        let Some(path) = self.then_by() else {
            return Ok(false);
        };
        if or {
            return invalid("a range filter on another field does not go with an OR: Firestore would order each disjunct by it; filter each query apart".into());
        }
        if let Some(other) = self.filters.iter().find(|filter| filter.path != path) {
            return invalid(format!(
                "range filters on `{path}` and `{}`: each orders the query by its field, which needs an index of its own; filter on one field",
                other.path
            ));
        }
        if shape.fields.contains(&path) {
            return invalid(format!(
                "`{}` compares `{path}` for equality already; a range on it is that value or nothing",
                shape.name
            ));
        }
        // Firestore takes one filter of the `!=` kind per query (`!=`, `not-in`, and the
        // `is not NaN` and `is not null` a `!=` of NaN or null is), whatever their values
        // (measured in `tests/server_inequalities.rs`).
        let not_ins = self
            .filters
            .iter()
            .filter(|filter| matches!(filter.kind, FilterKind::NotIn(_)))
            .count();
        let not_equals = self
            .filters
            .iter()
            .filter(|filter| matches!(filter.kind, FilterKind::NotEqual(_)))
            .count();
        if not_ins + not_equals > 1 {
            return invalid(format!(
                "{} `!=` and {} `not-in` filters on `{path}`: Firestore takes one `!=` or `not-in` per query; merge them into one `not_in([..])`",
                not_equals, not_ins
            ));
        }
        if not_ins == 1 && any_of {
            return invalid(format!(
                "Firestore takes no `not-in` (on `{path}`) beside an `in` or `array-contains-any`"
            ));
        }
        use FirestoreQueryFilterCompare::{
            GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual, NotEqual, NotIn,
        };
        let checked = |value: &std::result::Result<Value, String>| -> Result<FirestoreValue> {
            let value = value.clone().map_err(Error::InvalidQuery)?;
            check_filter_value(path, &value)?;
            Ok(FirestoreValue { value })
        };
        for filter in &self.filters {
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
}

/// Where a query reads, for messages.
fn describe_scope(scope: &crate::parent::Scope) -> String {
    match scope {
        crate::parent::Scope::Top => "the top-level collection".to_owned(),
        crate::parent::Scope::Under(parent) => format!("under `{parent}`"),
        crate::parent::Scope::Group => "the collection group".to_owned(),
    }
}

/// A typed query's shape, its equality (or `array-contains`) filters and its `in` (or
/// `array-contains-any`), checked: the part of a query, or of each disjunct of an OR, that
/// compares the query's fields.
type Compared = (QueryShape, Vec<FirestoreQueryFilter>, Option<AnyOf>);

fn compared<T: Sharded>(
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
fn disjunction(disjuncts: Vec<Compared>) -> (FirestoreQueryFilter, usize) {
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
pub(super) struct AnyOf {
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

/// The cursor values a query starts just after: a document's order value (and the value of
/// the field a range filter is on), then its full name, as the query orders.
fn cursor_values(values: Vec<Value>, name: String) -> Vec<FirestoreValue> {
    values
        .into_iter()
        .chain([Value {
            value_type: Some(ValueType::ReferenceValue(name)),
        }])
        .map(|value| FirestoreValue { value })
        .collect()
}

/// Firestore's limit on values in one `not-in` filter.
pub const MAX_NOT_IN: usize = 10;

/// Firestore's largest query limit (an `int32`).
pub const MAX_LIMIT: u32 = i32::MAX as u32;

/// The longest string a filter may compare with, in UTF-8 bytes: the server refuses longer
/// ones ("too large to be used in a query"; measured in `tests/server_order.rs`). A bytes
/// value may have one byte more.
pub const MAX_FILTER_VALUE_BYTES: usize = value_order::INDEXED_STRING_BYTES;

/// Refuses, before sending, a filter value the server would reject as too large; values
/// inside arrays and maps count too.
pub(super) fn check_filter_value(path: &str, value: &Value) -> Result<()> {
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

pub(super) fn compare(compare: FirestoreQueryFilterCompare) -> FirestoreQueryFilter {
    FirestoreQueryFilter::Compare(Some(compare))
}
