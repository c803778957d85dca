//! What can be summed: the typed field a `sum` names, the queries that sum it, and the number
//! it returns.

use std::marker::PhantomData;

use crate::model::numeric::Numeric;
use crate::query::shape::AllQueries;

/// A numeric field of `T` (`T::aggregates().price`), to pass to
/// [`ShardedQuery::sum`](crate::query::ShardedQuery::sum) and [`avg`](crate::query::ShardedQuery::avg). `S`
/// says which queries sum it: [`AllQueries`] for `#[sharded(aggregate)]`, a marker of the
/// field's own for `#[sharded(aggregate(all, exchange))]`, which only those queries take.
pub struct NumericField<T, S = AllQueries> {
    pub(crate) path: &'static str,
    pub(super) integer: bool,
    pub(super) marker: PhantomData<fn() -> (T, S)>,
}

/// Which queries (by query id) may sum and average a numeric field: implemented by
/// [`AllQueries`] for every query, and by the derive's marker of a field declared
/// `#[sharded(aggregate(all, exchange))]` for the queries it names, whose indexes the plan
/// holds.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not summed or averaged by this query",
    label = "the field's `aggregate(...)` does not name this query",
    note = "add the query's method (`all` for `T::query().all()`) to the field's `#[sharded(aggregate(...))]`: the build then plans the index its sum needs"
)]
pub trait SummedOver<const QUERY: u64> {}

impl<const QUERY: u64> SummedOver<QUERY> for AllQueries {}

/// The numeric field `path` of `T`, of type `V`, summed by the queries `S` names: what the
/// derive's `T::aggregates()` is made of, with every type written out, as `field`. `V:
/// Numeric` is what refuses an aggregate on a field that is not a number, on the field's
/// type.
pub fn numeric_field<T, V: Numeric, S>(path: &'static str) -> NumericField<T, S> {
    NumericField {
        path,
        integer: V::INTEGER,
        marker: PhantomData,
    }
}

impl<T, S> NumericField<T, S> {
    /// The stored field path.
    pub fn path(&self) -> &'static str {
        self.path
    }

    /// The same field, checked against its queries already: what the aggregation runs on.
    pub(crate) fn checked(self) -> NumericField<T> {
        NumericField {
            path: self.path,
            integer: self.integer,
            marker: PhantomData,
        }
    }
}

impl<T, S> Clone for NumericField<T, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, S> Copy for NumericField<T, S> {}

impl<T, S> std::fmt::Debug for NumericField<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("NumericField").field(&self.path).finish()
    }
}

/// A sum as Firestore returns it: an integer while every value is an integer and the sum fits
/// in an `i64`, otherwise a double.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// The exact sum of integers.
    Integer(i64),
    /// A sum with a double in it, or one that overflowed an `i64`.
    Double(f64),
}

impl Number {
    /// The value as a double.
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Integer(i) => i as f64,
            Number::Double(d) => d,
        }
    }
}
