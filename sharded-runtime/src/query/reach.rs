//! What a query reads, in its type: one collection (top-level, or under one parent) or a whole
//! collection group. A group query's cursors and pages are of another type than a per-parent
//! query's, so one cannot start the other.

/// The reach of a [`ShardedQuery`](crate::ShardedQuery), [`Cursor`](crate::Cursor) or
/// [`Page`](crate::Page): [`InCollection`] (the default) or [`InGroup`]. Sealed: these two are
/// all there is.
pub trait Reach: sealed::Sealed + 'static {
    /// Whether a query of this reach reads every parent's collection.
    #[doc(hidden)]
    const GROUP: bool;
}

/// One collection: the top-level one, or one parent's
/// ([`in_parent`](crate::ShardedQuery::in_parent)). What `T::query()` builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InCollection {}

/// Every collection with the type's id, under every parent: what
/// [`in_group`](crate::ShardedQuery::in_group) turns a query into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InGroup {}

impl Reach for InCollection {
    const GROUP: bool = false;
}

impl Reach for InGroup {
    const GROUP: bool = true;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::InCollection {}
    impl Sealed for super::InGroup {}
}
