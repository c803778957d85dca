//! What `query.aggregate(&db, (count(), sum(a), avg(b)))` asks: one to five aggregations, as
//! Firestore takes them in one aggregation query, typed so that each answer comes back as its
//! own Rust type and a field a query does not sum does not compile.

use std::marker::PhantomData;

use super::{Number, NumericField, SummedOver};
use crate::query::shape::AllQueries;
use crate::query::window::Summable;

/// `count()` in an [`aggregate`](crate::query::ShardedQuery::aggregate): how many documents the
/// query matches that hold every field the other aggregations of the call name (Firestore's
/// rule for several aggregations in one query, measured in
/// `tests/tests/suite/server_aggregates.rs`). Answers a `u64`.
#[derive(Debug, Clone, Copy)]
pub struct Count;

/// `sum(field)` in an [`aggregate`](crate::query::ShardedQuery::aggregate). Answers a [`Number`].
pub struct Sum<T, S = AllQueries>(NumericField<T, S>);

/// `avg(field)` in an [`aggregate`](crate::query::ShardedQuery::aggregate). Answers an
/// `Option<f64>`: `None` where no document holds a number in the field.
pub struct Avg<T, S = AllQueries>(NumericField<T, S>);

/// The count of an [`aggregate`](crate::query::ShardedQuery::aggregate) call, as Firestore's SDKs
/// spell it: `query.aggregate(&db, (count(), sum(fields.qty)))`.
pub fn count() -> Count {
    Count
}

/// The sum of `field` (`T::aggregates().qty`) in an
/// [`aggregate`](crate::query::ShardedQuery::aggregate) call.
pub fn sum<T, S>(field: NumericField<T, S>) -> Sum<T, S> {
    Sum(field)
}

/// The average of `field` (`T::aggregates().qty`) in an
/// [`aggregate`](crate::query::ShardedQuery::aggregate) call.
pub fn avg<T, S>(field: NumericField<T, S>) -> Avg<T, S> {
    Avg(field)
}

/// One aggregation the query `QUERY` of `T`, of window `W`, can answer: [`count()`], and
/// [`sum`] or [`avg`] of a field the query sums (`#[sharded(aggregate)]`, or
/// `aggregate(...)` naming the query) over a query without a limit or a cursor.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an aggregation this query answers",
    label = "not `count()`, or a `sum`/`avg` of a field this query sums",
    note = "`sum` and `avg` take a field of the query's own type declared `#[sharded(aggregate)]` (or `aggregate(...)` naming the query), over a query without a limit or a cursor"
)]
pub trait Aggregation<T, const QUERY: u64, W>: hidden::Sealed {
    /// What it answers: `u64`, [`Number`] or `Option<f64>`.
    type Output;
    #[doc(hidden)]
    fn asked(&self) -> hidden::Asked;
    #[doc(hidden)]
    fn answer(&self, totals: &hidden::Totals) -> Self::Output;
}

/// One to five [`Aggregation`]s in a tuple, as Firestore takes them in one aggregation query:
/// `(count(), sum(fields.qty), avg(fields.price))`, answered as `(u64, Number, Option<f64>)`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a set of aggregations this query answers",
    label = "not a tuple of one to five of `count()`, `sum(field)` and `avg(field)`",
    note = "Firestore takes one to five aggregations in one query: pass them as a tuple, `(count(),)` for one, each a field this query sums"
)]
pub trait Aggregations<T, const QUERY: u64, W>: hidden::Sealed {
    /// The answers, in the tuple's order.
    type Output;
    #[doc(hidden)]
    fn asked(&self) -> Vec<hidden::Asked>;
    #[doc(hidden)]
    fn answer(&self, totals: &hidden::Totals) -> Self::Output;
}

impl<T, const QUERY: u64, W: Summable> Aggregation<T, QUERY, W> for Count {
    type Output = u64;
    fn asked(&self) -> hidden::Asked {
        hidden::Asked::Count
    }
    fn answer(&self, totals: &hidden::Totals) -> u64 {
        totals.count
    }
}

impl<T, const QUERY: u64, W: Summable<S>, S: SummedOver<QUERY>> Aggregation<T, QUERY, W>
    for Sum<T, S>
{
    type Output = Number;
    fn asked(&self) -> hidden::Asked {
        hidden::Asked::Sum(hidden::Field::of(self.0))
    }
    fn answer(&self, totals: &hidden::Totals) -> Number {
        totals.of(self.0.path).0
    }
}

impl<T, const QUERY: u64, W: Summable<S>, S: SummedOver<QUERY>> Aggregation<T, QUERY, W>
    for Avg<T, S>
{
    type Output = Option<f64>;
    fn asked(&self) -> hidden::Asked {
        hidden::Asked::Avg(hidden::Field::of(self.0))
    }
    fn answer(&self, totals: &hidden::Totals) -> Option<f64> {
        totals.of(self.0.path).1
    }
}

macro_rules! aggregations {
    ($($name:ident . $index:tt),+) => {
        impl<$($name: hidden::Sealed),+> hidden::Sealed for ($($name,)+) {}

        impl<T, const QUERY: u64, W, $($name: Aggregation<T, QUERY, W>),+> Aggregations<T, QUERY, W>
            for ($($name,)+)
        {
            type Output = ($($name::Output,)+);
            fn asked(&self) -> Vec<hidden::Asked> {
                vec![$(self.$index.asked()),+]
            }
            fn answer(&self, totals: &hidden::Totals) -> Self::Output {
                ($(self.$index.answer(totals),)+)
            }
        }
    };
}

aggregations!(A.0);
aggregations!(A.0, B.1);
aggregations!(A.0, B.1, C.2);
aggregations!(A.0, B.1, C.2, D.3);
aggregations!(A.0, B.1, C.2, D.3, E.4);

impl hidden::Sealed for Count {}
impl<T, S> hidden::Sealed for Sum<T, S> {}
impl<T, S> hidden::Sealed for Avg<T, S> {}

impl<T, S> Clone for Sum<T, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, S> Copy for Sum<T, S> {}
impl<T, S> std::fmt::Debug for Sum<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Sum").field(&self.0.path).finish()
    }
}
impl<T, S> Clone for Avg<T, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, S> Copy for Avg<T, S> {}
impl<T, S> std::fmt::Debug for Avg<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Avg").field(&self.0.path).finish()
    }
}

/// What the traits above carry between the call and the executor: public to name in them,
/// out of reach of users.
pub mod hidden {
    use super::{Number, NumericField, PhantomData};

    pub trait Sealed {}

    /// A summed field as the executor needs it: its path, and whether it holds integers.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Field {
        pub(crate) path: &'static str,
        pub(crate) integer: bool,
    }

    impl Field {
        pub(super) fn of<T, S>(field: NumericField<T, S>) -> Field {
            Field {
                path: field.path,
                integer: field.integer,
            }
        }

        /// The field as the typed executor takes it, already checked against the query by
        /// the trait bounds.
        pub(crate) fn numeric<T>(self) -> NumericField<T> {
            NumericField {
                path: self.path,
                integer: self.integer,
                marker: PhantomData,
            }
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Asked {
        Count,
        Sum(Field),
        Avg(Field),
    }

    /// The answers of every aggregation asked: the count, and each field's sum and average.
    #[derive(Debug, Clone, PartialEq)]
    pub struct Totals {
        pub(crate) count: u64,
        pub(crate) fields: Vec<(&'static str, Number, Option<f64>)>,
    }

    impl Totals {
        pub(crate) fn of(&self, path: &str) -> (Number, Option<f64>) {
            self.fields
                .iter()
                .find(|(field, ..)| *field == path)
                .map(|(_, sum, avg)| (*sum, *avg))
                .expect("every field asked is totalled")
        }
    }
}
