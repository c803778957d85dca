//! Whether a query is limited or starts at a cursor, in its type: `sum` and `avg` apply to
//! every document a query matches, so a query with a `limit`, `after` or `before` has no
//! `sum` (a compile error saying why), where at run time it could only be refused.

/// The window of a [`ShardedQuery`](crate::ShardedQuery): [`Whole`] (the default: every
/// document it matches) or [`Windowed`] (after [`limit`](crate::ShardedQuery::limit),
/// [`after`](crate::ShardedQuery::after) or [`before`](crate::ShardedQuery::before)).
/// Sealed: these two are all there is.
pub trait Window: sealed::Sealed + 'static {}

/// Every document the query matches: what `T::query()` builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Whole {}

/// Some of them: a limit, or a cursor to start after or end before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Windowed {}

impl Window for Whole {}
impl Window for Windowed {}

/// A window over which [`sum`](crate::ShardedQuery::sum) and [`avg`](crate::ShardedQuery::avg)
/// mean what they say: [`Whole`] only.
#[diagnostic::on_unimplemented(
    message = "`sum` and `avg` apply to every document a query matches, not to a limit or a cursor",
    label = "this query has a `limit`, `after` or `before`",
    note = "Firestore orders an aggregation by the aggregated field too, so a limit or a cursor would not pick the query's documents: drop `limit`, `after` and `before` to add up every match, or fetch the page and add up its documents"
)]
pub trait EveryMatch: Window {}

impl EveryMatch for Whole {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Whole {}
    impl Sealed for super::Windowed {}
}
