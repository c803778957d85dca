//! A query's cursor and page types, named from the query's type alone.

/// What a [`ShardedQuery`](super::ShardedQuery) pages with. Sealed: it exists so that
/// [`CursorOf`] and [`PageOf`] can name a query's types from the query's own
/// (`CursorOf<InstrumentExchangeQuery>`).
pub trait PagedQuery: sealed::Sealed {
    /// Where a page of this query ended.
    type Cursor;
    /// A page of this query.
    type Page;
}

/// The [`Cursor`](super::Cursor) of the query type `Q`: `CursorOf<InstrumentExchangeQuery>` is
/// `Cursor<Instrument, { query_id("exchange") }>`, and `CursorOf<InstrumentExchangeQuery<InGroup>>`
/// a collection-group query's.
pub type CursorOf<Q> = <Q as PagedQuery>::Cursor;

/// The [`Page`](super::Page) of the query type `Q`: `PageOf<InstrumentExchangeQuery>` is
/// `Page<Instrument, { query_id("exchange") }>`.
pub type PageOf<Q> = <Q as PagedQuery>::Page;

pub(super) mod sealed {
    pub trait Sealed {}
}
