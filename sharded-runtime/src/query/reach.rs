//! What a query reads, in its type: one collection (top-level, or under one parent) or a whole
//! collection group, in the type's direction or (for a `reversible` type) the other. A group
//! query's cursors and pages are of another type than a per-parent query's, and a reversed
//! query's than a forward one's, so one cannot start the other.

use std::marker::PhantomData;

/// The reach of a [`ShardedQuery`](crate::query::ShardedQuery), [`Cursor`](crate::query::Cursor) or
/// [`Page`](crate::query::Page): [`InCollection`] (the default) or [`InGroup`], each in the type's
/// direction, or [`Reversed`] after [`reversed`](crate::query::ShardedQuery::reversed). Sealed:
/// these four are all there is.
pub trait Reach: sealed::Sealed + 'static {
    /// Whether a query of this reach reads every parent's collection.
    #[doc(hidden)]
    const GROUP: bool;
    /// Whether a query of this reach orders in the other direction than the type's.
    #[doc(hidden)]
    const REVERSED: bool;
    /// The same reach in the other direction.
    #[doc(hidden)]
    type Flipped: Reach;
}

/// One collection: the top-level one, or one parent's
/// ([`in_parent`](crate::query::ShardedQuery::in_parent)). What `T::query()` builds.
#[derive(Debug)]
pub enum InCollection {}

/// Every collection with the type's id, under every parent: what
/// [`in_group`](crate::query::ShardedQuery::in_group) turns a query into.
#[derive(Debug)]
pub enum InGroup {}

/// `R` read in the other direction than the type's, for a `reversible` type: what
/// [`reversed`](crate::query::ShardedQuery::reversed) turns a query into. Never constructed.
#[derive(Debug)]
pub struct Reversed<R>(std::convert::Infallible, PhantomData<fn() -> R>);

impl Reach for InCollection {
    const GROUP: bool = false;
    const REVERSED: bool = false;
    type Flipped = Reversed<InCollection>;
}

impl Reach for InGroup {
    const GROUP: bool = true;
    const REVERSED: bool = false;
    type Flipped = Reversed<InGroup>;
}

impl Reach for Reversed<InCollection> {
    const GROUP: bool = false;
    const REVERSED: bool = true;
    type Flipped = InCollection;
}

impl Reach for Reversed<InGroup> {
    const GROUP: bool = true;
    const REVERSED: bool = true;
    type Flipped = InGroup;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::InCollection {}
    impl Sealed for super::InGroup {}
    impl Sealed for super::Reversed<super::InCollection> {}
    impl Sealed for super::Reversed<super::InGroup> {}
}

/// The direction `T`'s queries of reach `R` order in: the type's, or the other for a
/// reversed one.
pub(super) fn query_direction<T: crate::model::sharded::Sharded, R: Reach>()
-> sharded_indexes::Direction {
    match R::REVERSED {
        true => T::ORDER_DIRECTION.reversed(),
        false => T::ORDER_DIRECTION,
    }
}
