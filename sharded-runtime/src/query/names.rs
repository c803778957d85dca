//! A query's cursor and page types, named from the query's type alone.

use super::cursor::Cursor;
use super::reach::Reach;
use super::{Page, ShardedQuery, Window};

/// What a [`ShardedQuery`] pages with. Sealed: it exists so that [`CursorOf`] and [`PageOf`]
/// can name a query's types from the query's own (`CursorOf<InstrumentExchangeQuery>`).
pub trait PagedQuery: sealed::Sealed {
    /// Where a page of this query ended.
    type Cursor;
    /// A page of this query.
    type Page;
}

impl<T, const QUERY: u64, R: Reach, W: Window> PagedQuery for ShardedQuery<T, QUERY, R, W> {
    type Cursor = Cursor<T, QUERY, R>;
    type Page = Page<T, QUERY, R>;
}

/// The [`Cursor`] of the query type `Q`: `CursorOf<InstrumentExchangeQuery>` is
/// `Cursor<Instrument, { query_id("exchange") }>`, and `CursorOf<InstrumentExchangeQuery<InGroup>>`
/// a collection-group query's.
pub type CursorOf<Q> = <Q as PagedQuery>::Cursor;

/// The [`Page`] of the query type `Q`: `PageOf<InstrumentExchangeQuery>` is
/// `Page<Instrument, { query_id("exchange") }>`.
pub type PageOf<Q> = <Q as PagedQuery>::Page;

mod sealed {
    pub trait Sealed {}
    impl<T, const QUERY: u64, R: super::Reach, W: super::Window> Sealed
        for super::ShardedQuery<T, QUERY, R, W>
    {
    }
}
