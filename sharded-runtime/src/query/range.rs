//! Filters on fields other than the order field (`#[sharded(range)]`): a range, `!=` or
//! `not-in`. Firestore orders such a query by the filtered field after the explicit orders
//! (measured in `tests/tests/suite/server_inequalities.rs`), so a sharded query orders by (order field,
//! filtered field, document name) and its merge and cursors carry all three.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

use firestore::gcloud_sdk::google::firestore::v1::Value;

use super::shape::AllQueries;
use super::values::{to_bound, to_value};
use crate::model::order_key::{OrderBound, OrderKey};

/// A field of `T` with range, `!=` and `not-in` filters (`T::ranges().price`), of Rust type
/// `V`: what [`ShardedQuery::filter`](crate::query::ShardedQuery::filter) takes, through the filter it builds. `S` says which
/// queries take it: [`AllQueries`] for `#[sharded(range)]`, a marker of the field's own for
/// `#[sharded(range(all, exchange))]`, which only those queries take.
pub struct RangeField<T, V, S = AllQueries> {
    path: &'static str,
    marker: Typed<T, V, S>,
}

/// What a [`RangeField`] is typed by, without holding any of it.
type Typed<T, V, S> = PhantomData<fn() -> (T, V, S)>;

/// Which queries (by query id) may filter on a range field: implemented by [`AllQueries`]
/// for every query, and by the derive's marker of a field declared
/// `#[sharded(range(all, exchange))]` for the queries it names, whose indexes the plan holds.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not filtered by range in this query",
    label = "the field's `range(...)` does not name this query",
    note = "add the query's method (`all` for `T::query().all()`) to the field's `#[sharded(range(...))]`: the build then plans the index the filter needs"
)]
pub trait RangedOver<const QUERY: u64> {}

impl<const QUERY: u64> RangedOver<QUERY> for AllQueries {}

/// The range field `path` of `T`, of type `V`, filtered by the queries `S` names: what the
/// derive's `T::ranges()` is made of. `V: OrderKey` refuses a range on a field whose stored
/// value does not order as the merge orders it, on the field's type.
pub fn range_field<T, V: OrderKey, S>(path: &'static str) -> RangeField<T, V, S> {
    RangeField {
        path,
        marker: PhantomData,
    }
}

impl<T, V, S> Clone for RangeField<T, V, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, V, S> Copy for RangeField<T, V, S> {}

impl<T, V, S> std::fmt::Debug for RangeField<T, V, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RangeField").field(&self.path).finish()
    }
}

/// A filter on a [`RangeField`], for [`ShardedQuery::filter`](crate::query::ShardedQuery::filter): built by its
/// [`within`](RangeField::within), [`greater_than`](RangeField::greater_than),
/// [`not_equal`](RangeField::not_equal), [`not_in`](RangeField::not_in) and the others.
pub struct RangeFilter<T, S = AllQueries> {
    pub(super) filter: FieldFilter,
    marker: PhantomData<fn() -> (T, S)>,
}

impl<T, S> std::fmt::Debug for RangeFilter<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.filter.fmt(f)
    }
}

/// A filter on one field, whatever its query's type: what a query keeps.
#[derive(Debug, Clone)]
pub(super) struct FieldFilter {
    pub(super) path: &'static str,
    pub(super) kind: FilterKind,
}

#[derive(Debug, Clone)]
pub(super) enum FilterKind {
    Range {
        lower: Bound<std::result::Result<Value, String>>,
        upper: Bound<std::result::Result<Value, String>>,
    },
    NotEqual(std::result::Result<Value, String>),
    NotIn(Vec<std::result::Result<Value, String>>),
}

impl<T, V: OrderKey, S> RangeField<T, V, S> {
    /// The stored field path.
    pub fn path(&self) -> &'static str {
        self.path
    }

    fn filter(self, kind: FilterKind) -> RangeFilter<T, S> {
        RangeFilter {
            filter: FieldFilter {
                path: self.path,
                kind,
            },
            marker: PhantomData,
        }
    }

    /// Documents whose field lies in `range` (`10.0..20.0`, `10.0..`, `..=5`), of the field's
    /// type or one that converts into it ([`OrderBound`]).
    pub fn within<B, Range>(self, range: Range) -> RangeFilter<T, S>
    where
        B: Clone + OrderBound<V>,
        Range: RangeBounds<B>,
    {
        let convert = |bound: Bound<&B>| bound.cloned().map(OrderBound::into_order_value);
        self.filter(FilterKind::Range {
            lower: to_bound(convert(range.start_bound()).as_ref()),
            upper: to_bound(convert(range.end_bound()).as_ref()),
        })
    }

    /// Documents whose field is greater than `value` (`>`).
    pub fn greater_than(self, value: impl OrderBound<V>) -> RangeFilter<T, S> {
        self.bounded(Bound::Excluded(value.into_order_value()), Bound::Unbounded)
    }

    /// Documents whose field is at least `value` (`>=`).
    pub fn at_least(self, value: impl OrderBound<V>) -> RangeFilter<T, S> {
        self.bounded(Bound::Included(value.into_order_value()), Bound::Unbounded)
    }

    /// Documents whose field is less than `value` (`<`).
    pub fn less_than(self, value: impl OrderBound<V>) -> RangeFilter<T, S> {
        self.bounded(Bound::Unbounded, Bound::Excluded(value.into_order_value()))
    }

    /// Documents whose field is at most `value` (`<=`).
    pub fn at_most(self, value: impl OrderBound<V>) -> RangeFilter<T, S> {
        self.bounded(Bound::Unbounded, Bound::Included(value.into_order_value()))
    }

    fn bounded(self, lower: Bound<V>, upper: Bound<V>) -> RangeFilter<T, S> {
        self.filter(FilterKind::Range {
            lower: to_bound(lower.as_ref()),
            upper: to_bound(upper.as_ref()),
        })
    }

    /// Documents whose field holds a value other than `value` (Firestore's `!=`, which, as on
    /// an unsharded collection, leaves out documents without the field).
    pub fn not_equal(self, value: impl OrderBound<V>) -> RangeFilter<T, S> {
        self.filter(FilterKind::NotEqual(to_value(&value.into_order_value())))
    }

    /// Documents whose field holds none of `values` (Firestore's `not-in`: 1 to 10 values;
    /// documents without the field are left out). Firestore takes no `not-in` beside an
    /// `in`, so each chunk query reads one shard value (`shard == v`): as many queries as
    /// the type has shard values.
    pub fn not_in<B: OrderBound<V>>(
        self,
        values: impl IntoIterator<Item = B>,
    ) -> RangeFilter<T, S> {
        self.filter(FilterKind::NotIn(
            values
                .into_iter()
                .map(|value| to_value(&value.into_order_value()))
                .collect(),
        ))
    }
}
