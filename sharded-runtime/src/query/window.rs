//! Whether a query is limited, starts at a cursor, or is an OR, in its type: `sum` and `avg`
//! apply to every document a query matches, so a query with a `limit`, `after` or `before`
//! has no `sum` (a compile error saying why), where at run time it could only be refused; and
//! an OR's `sum` of a field declared for some queries only (`aggregate(all, region)`)
//! compiles only when every query of the OR sums it, since each is served by its own index.

use std::marker::PhantomData;

use super::aggregate::numeric::SummedOver;
use super::shape::AllQueries;

/// The window of a [`ShardedQuery`](crate::query::ShardedQuery): [`Whole`] (the default: every
/// document it matches), [`Windowed`] (after [`limit`](crate::query::ShardedQuery::limit) or a
/// cursor: [`after`](crate::query::ShardedQuery::after), [`start_at`](crate::query::ShardedQuery::start_at),
/// [`end_at`](crate::query::ShardedQuery::end_at), [`end_before`](crate::query::ShardedQuery::end_before),
/// [`before`](crate::query::ShardedQuery::before)), or
/// [`Or`] (after [`or`](crate::query::ShardedQuery::or)). Sealed: these are all there is.
pub trait Window: sealed::Sealed + 'static {
    /// The window after [`or_dynamic`](crate::query::ShardedQuery::or_dynamic): the same, without
    /// the OR-ed queries in its type ([`DynamicOr`] for a whole query).
    type Dynamic: Window;
}

/// Every document the query matches: what `T::query()` builds.
#[derive(Debug)]
pub enum Whole {}

/// Some of them: a limit, or a cursor to start or end at.
#[derive(Debug)]
pub enum Windowed {}

/// A query of window `W` OR-ed with the typed query `OTHER`
/// ([`or`](crate::query::ShardedQuery::or)): every document either matches. Its type keeps each
/// query it joins, so that a sum of the OR checks every one of them.
pub struct Or<W, const OTHER: u64>(PhantomData<fn() -> W>, std::convert::Infallible);

impl<W, const OTHER: u64> std::fmt::Debug for Or<W, OTHER> {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.1 {}
    }
}

/// An OR built at run time ([`or_dynamic`](crate::query::ShardedQuery::or_dynamic)): its
/// queries are not in its type, which stays the same however many are OR-ed in a loop. Its
/// sum takes a field every query sums (`#[sharded(aggregate)]`) only.
#[derive(Debug)]
pub enum DynamicOr {}

impl Window for Whole {
    type Dynamic = DynamicOr;
}
impl Window for Windowed {
    type Dynamic = Windowed;
}
impl<W: Window, const OTHER: u64> Window for Or<W, OTHER> {
    type Dynamic = W::Dynamic;
}
impl Window for DynamicOr {
    type Dynamic = DynamicOr;
}

/// A window a field summed by the queries `S` names can be summed over, so that
/// [`sum`](crate::query::ShardedQuery::sum) and [`avg`](crate::query::ShardedQuery::avg) mean what they
/// say: [`Whole`], and an [`Or`] each of whose queries `S` sums ([`SummedOver`] of its query:
/// its index holds the field). `S` is [`AllQueries`] for a field declared for every query.
#[diagnostic::on_unimplemented(
    message = "`sum` and `avg` apply to every document a query matches, not to a limit or a cursor",
    label = "this query has a `limit` or a cursor (`after`, `start_at`, `end_at`, `end_before`, `before`)",
    note = "Firestore orders an aggregation by the aggregated field too, so a limit or a cursor would not pick the query's documents: drop the limit and the cursors to add up every match, or fetch the page and add up its documents"
)]
pub trait Summable<S = AllQueries>: Window {}

impl<S> Summable<S> for Whole {}

impl<S: all_queries::SummedByAllQueries> Summable<S> for DynamicOr {}

mod all_queries {
    use super::AllQueries;

    /// A field every query sums: what the sum of a [`DynamicOr`](super::DynamicOr) takes.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is summed by some queries only, and this OR's queries are not in its type",
        label = "an OR built with `or_dynamic` sums only fields every query sums",
        note = "build the OR with `or` (its type then names each query, whose sums are checked), or declare the field `#[sharded(aggregate)]` for every query"
    )]
    pub trait SummedByAllQueries {}

    impl SummedByAllQueries for AllQueries {}
}

impl<S, W: Summable<S>, const OTHER: u64> Summable<S> for Or<W, OTHER> where S: SummedOver<OTHER> {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Whole {}
    impl Sealed for super::Windowed {}
    impl<W, const OTHER: u64> Sealed for super::Or<W, OTHER> {}
    impl Sealed for super::DynamicOr {}
}
