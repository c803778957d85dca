//! Building a query: the derive's equality methods, the scope (a parent, the group), the range
//! on the order field, the limit and the cursor. Nothing is checked or sent here; `prepare`
//! checks what was built.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

use firestore::gcloud_sdk::google::firestore::v1::Value;
use serde::Serialize;

use super::cursor::CursorArgument;
use super::range::{RangeFilter, RangedOver};
use super::values::{to_bound, to_value};
use super::{InCollection, InGroup, Or, Reach, Whole, Window, Windowed};
use crate::model::sharded::Sharded;

/// An equality query on one indexed field or on a declared set of fields, or the whole
/// collection, ordered by the order field, over every shard.
///
/// Built by the derive's `T::query().<field>(value)`, `T::query().<a>_and_<b>(x, y)` or
/// `T::query().all()`. `QUERY` is [`query_id`](crate::query::query_id) of that method's name, so the type names its
/// query by name, not by a field's position: `ShardedQuery<Instrument, { query_id("exchange") }>`.
/// Every query this type can express is served by a composite index the index plan generates:
/// (shard, field(s), order field), or (shard, order field) for the whole collection.
///
/// With at most 30 shard values it is one Firestore query, `shard in [...]`, which the server
/// merges; with more, one query per chunk of ≤ 30 values, sent concurrently and merged here on
/// (order field, document name). Either way the documents and their order are exactly those of
/// the same query on an unsharded collection ordered by (order field, `__name__`).
///
/// `R` is what the query reads: [`InCollection`], one collection (the top-level one, or one
/// parent's); or [`InGroup`], after [`in_group`](Self::in_group), every parent's. Its cursors
/// and pages carry the same `R`, so a group query's cursor does not compile with a per-parent
/// query, nor the reverse.
///
/// `W` is whether it reads every match: [`Whole`](crate::query::Whole), or
/// [`Windowed`](crate::query::Windowed) after [`limit`](Self::limit), [`after`](Self::after) or
/// [`before`](Self::before), which has no [`sum`](Self::sum) or [`avg`](Self::avg).
pub struct ShardedQuery<T, const QUERY: u64, R: Reach = InCollection, W: Window = Whole> {
    /// The values the query's fields equal, in the shape's order; none for the whole collection.
    pub(super) values: Vec<std::result::Result<Value, String>>,
    /// For an `in` query (`T::query().<field>_in([..])`), the values the shape's next field
    /// is one of; `None` otherwise.
    pub(super) any_of: Option<Vec<std::result::Result<Value, String>>>,
    /// The fields a projection reads (`fetch_as`); every field otherwise.
    pub(super) mask: Option<Vec<String>>,
    /// The other queries this one is OR-ed with ([`or`](ShardedQuery::or)), each by its
    /// query and what it compares.
    pub(super) or: Vec<Disjunct>,
    /// Range, `!=` and `not-in` filters on a `#[sharded(range)]` field ([`filter`]).
    ///
    /// [`filter`]: ShardedQuery::filter
    pub(super) filters: Vec<super::range::FieldFilter>,
    pub(super) lower: Bound<std::result::Result<Value, String>>,
    pub(super) upper: Bound<std::result::Result<Value, String>>,
    pub(super) limit: Option<u32>,
    pub(super) after: Option<super::cursor::Position>,
    /// Whether the query starts at `after`'s document ([`start_at`]) rather than after it.
    ///
    /// [`start_at`]: ShardedQuery::start_at
    pub(super) start_inclusive: bool,
    /// The document the query ends at ([`end_at`], `inclusive`) or just before
    /// ([`end_before`]), read forwards.
    ///
    /// [`end_at`]: ShardedQuery::end_at
    /// [`end_before`]: ShardedQuery::end_before
    pub(super) end: Option<(super::cursor::Position, bool)>,
    /// Ends just before this document, keeping the last `limit` before it ([`before`]).
    ///
    /// [`before`]: ShardedQuery::before
    pub(super) before: Option<super::cursor::Position>,
    pub(crate) scope: crate::model::handle::Scope,
    pub(super) marker: Marker<T, R, W>,
}

/// The query's type arguments, owned by none of its values.
type Marker<T, R, W> = PhantomData<fn() -> (T, R, W)>;

impl<T, const QUERY: u64, R: Reach, W: Window> Clone for ShardedQuery<T, QUERY, R, W> {
    fn clone(&self) -> Self {
        self.retyped()
    }
}

impl<T, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// The same query, read as `R2` over `W2`: what cloning, [`in_group`](Self::in_group),
    /// [`reversed`](Self::reversed), a limit and the cursors are made of.
    fn retyped<R2: Reach, W2: Window>(&self) -> ShardedQuery<T, QUERY, R2, W2> {
        ShardedQuery {
            values: self.values.clone(),
            any_of: self.any_of.clone(),
            mask: self.mask.clone(),
            or: self.or.clone(),
            filters: self.filters.clone(),
            lower: self.lower.clone(),
            upper: self.upper.clone(),
            limit: self.limit,
            after: self.after.clone(),
            start_inclusive: self.start_inclusive,
            end: self.end.clone(),
            before: self.before.clone(),
            scope: self.scope.clone(),
            marker: PhantomData,
        }
    }
}

impl<T, const QUERY: u64, R: Reach, W: Window> std::fmt::Debug for ShardedQuery<T, QUERY, R, W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedQuery")
            .field("values", &self.values)
            .field("any_of", &self.any_of)
            .field("mask", &self.mask)
            .field("or", &self.or)
            .field("filters", &self.filters)
            .field("lower", &self.lower)
            .field("upper", &self.upper)
            .field("limit", &self.limit)
            .field("after", &self.after)
            .field("start_inclusive", &self.start_inclusive)
            .field("end", &self.end)
            .field("before", &self.before)
            .field("scope", &self.scope)
            .finish()
    }
}

/// One of the queries an OR joins: which typed query, and the values it compares.
#[derive(Debug, Clone)]
pub(super) struct Disjunct {
    pub(super) query: u64,
    pub(super) values: Vec<std::result::Result<Value, String>>,
    pub(super) any_of: Option<Vec<std::result::Result<Value, String>>>,
    /// Whether it came with no range, limit or cursor of its own.
    pub(super) plain: bool,
    /// Where it was to read: the whole's scope, or none of its own (`Top` on a
    /// subcollection type, which takes the whole's).
    pub(super) scope: crate::model::handle::Scope,
}

impl<T: Sharded, const QUERY: u64, W: Window> ShardedQuery<T, QUERY, InCollection, W> {
    /// The query on one field equal to `value`, taken as the field's type `F`: the whole body
    /// of a generated query method, so that the conversion is compiled here, not in each one.
    #[doc(hidden)]
    pub fn __eq<F: Serialize, V: Into<F>>(value: V) -> Self {
        Self::__whole_collection().__and::<F, V>(value)
    }

    /// This query also on the next field of its shape equal to `value`, taken as `F`.
    #[doc(hidden)]
    pub fn __and<F: Serialize, V: Into<F>>(mut self, value: V) -> Self {
        self.values.push(to_value(&value.into()));
        self
    }

    /// The query on one field equal to any of `values`, each taken as the field's type `F`: the
    /// whole body of a generated `<field>_in` method. Firestore's `in`, with the same index as
    /// the equality; its checks (1 to 30 values) are made when it runs.
    #[doc(hidden)]
    pub fn __in<F: Serialize, V: Into<F>>(values: impl IntoIterator<Item = V>) -> Self {
        let mut query = Self::__whole_collection();
        query.any_of = Some(
            values
                .into_iter()
                .map(|value| to_value(&value.into()))
                .collect(),
        );
        query
    }

    #[doc(hidden)]
    pub fn __whole_collection() -> Self {
        ShardedQuery {
            values: Vec::new(),
            any_of: None,
            mask: None,
            or: Vec::new(),
            filters: Vec::new(),
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
            limit: None,
            after: None,
            start_inclusive: false,
            end: None,
            before: None,
            scope: crate::model::handle::Scope::Top,
            marker: PhantomData,
        }
    }

    /// The query over the documents under `parent` only, for a type declared under parent
    /// documents (`#[sharded(parent = "rooms")]`); such a type's queries need a parent or
    /// [`in_group`](Self::in_group), else [`Error::InvalidParent`](crate::error::Error::InvalidParent) before anything is sent.
    pub fn in_parent(mut self, parent: &crate::model::handle::Parent<T>) -> Self
    where
        T: crate::model::sharded::Subcollection,
    {
        self.scope = crate::model::handle::Scope::under(parent);
        self
    }

    /// The query over every collection with the type's id, under every parent (and the
    /// top-level collection of that id, if there is one: Firestore's collection-group
    /// semantics, which the unsharded query shares): a collection-group query, for a type
    /// that declares `collection_group` (which plans its indexes in that scope; a type that
    /// does not, does not compile). Ties in the order field
    /// go by the documents' full paths, as Firestore orders them, and each result's
    /// [`Stored::parent`](crate::model::stored::Stored::parent) says where it lives. Its cursors and pages are [`InGroup`]'s; a
    /// cursor given before this call is refused when the query runs
    /// ([`Error::InvalidCursor`](crate::error::Error::InvalidCursor)).
    pub fn in_group(self) -> ShardedQuery<T, QUERY, InGroup, W>
    where
        T: crate::model::sharded::CollectionGroup,
    {
        ShardedQuery {
            scope: crate::model::handle::Scope::Group,
            ..self.retyped()
        }
    }
}

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// Only documents whose order field lies in `range`, e.g. `since..until` or `since..`.
    /// Served by the same index: a range on the field the index ends with. Bounds are of the
    /// order field's type, or one that converts into it ([`OrderBound`](crate::model::order_key::OrderBound):
    /// `"a".."b"` for a `String` field); an integer literal takes the field's type
    /// (`10..20` on a `u32` field).
    pub fn range<B, Range>(mut self, range: Range) -> Self
    where
        B: Clone + crate::model::order_key::OrderBound<T::OrderValue>,
        Range: RangeBounds<B>,
    {
        let convert = |bound: Bound<&B>| {
            bound
                .cloned()
                .map(crate::model::order_key::OrderBound::into_order_value)
        };
        self.lower = to_bound(convert(range.start_bound()).as_ref());
        self.upper = to_bound(convert(range.end_bound()).as_ref());
        self
    }

    /// At most `limit` documents; at most [`MAX_LIMIT`](crate::query::MAX_LIMIT), checked before sending.
    /// `None` is no limit, so an optional one is passed as it is. The query becomes
    /// [`Windowed`]: it has no [`sum`](Self::sum) or [`avg`](Self::avg).
    pub fn limit(self, limit: impl Into<Option<u32>>) -> ShardedQuery<T, QUERY, R, Windowed> {
        let mut query = self.retyped();
        query.limit = limit.into();
        query
    }

    /// Starts just after the document `cursor` points at; `None` starts at the beginning, so
    /// a loop over pages passes each page's [`next`](crate::query::Page::next) as it is. The query
    /// becomes [`Windowed`], as with a [`limit`](Self::limit).
    pub fn after(
        self,
        cursor: impl CursorArgument<T, QUERY, R>,
    ) -> ShardedQuery<T, QUERY, R, Windowed> {
        let mut query = self.retyped();
        // After the start of the query is the query from its start.
        query.after = cursor
            .into_position()
            .filter(|position| position.edge != Some(super::cursor::Edge::Start));
        query.start_inclusive = false;
        query
    }

    /// Starts at the document `cursor` points at, that document included when it still
    /// matches: Firestore's `startAt`. A cursor of a document deleted or changed since starts
    /// where it stood in the query's order. `None` starts at the beginning. The query becomes
    /// [`Windowed`], as with [`after`](Self::after), which it replaces.
    pub fn start_at(
        self,
        cursor: impl CursorArgument<T, QUERY, R>,
    ) -> ShardedQuery<T, QUERY, R, Windowed> {
        let mut query = self.after(cursor);
        query.start_inclusive = true;
        query
    }

    /// Ends at the document `cursor` points at, that document included when it still
    /// matches: Firestore's `endAt`, read forwards (a [`limit`](Self::limit) keeps the first
    /// documents up to it). Every chunk query ends there, so the merge is exact as without it.
    /// With [`fetch`](Self::fetch), [`page`](Self::page), [`count`](Self::count),
    /// [`stream`](Self::stream) and [`listen`](Self::listen); beside [`before`](Self::before),
    /// which reads backwards from its own end, it is
    /// [`Error::InvalidQuery`](crate::error::Error::InvalidQuery) before anything is sent. A cursor at
    /// the query's end ([`Page::next`](crate::query::Page::next) of its last page is none) ends
    /// nowhere; one at its start is [`Error::InvalidCursor`](crate::error::Error::InvalidCursor). The
    /// query becomes [`Windowed`].
    pub fn end_at(
        self,
        cursor: impl CursorArgument<T, QUERY, R>,
    ) -> ShardedQuery<T, QUERY, R, Windowed> {
        self.ending(cursor, true)
    }

    /// Ends just before the document `cursor` points at: Firestore's `endBefore`, read
    /// forwards (a [`limit`](Self::limit) keeps the first documents before it, where
    /// [`before`](Self::before) keeps the last). Otherwise as [`end_at`](Self::end_at).
    pub fn end_before(
        self,
        cursor: impl CursorArgument<T, QUERY, R>,
    ) -> ShardedQuery<T, QUERY, R, Windowed> {
        self.ending(cursor, false)
    }

    fn ending(
        self,
        cursor: impl CursorArgument<T, QUERY, R>,
        inclusive: bool,
    ) -> ShardedQuery<T, QUERY, R, Windowed> {
        let mut query = self.retyped();
        // At the end of the query is no end.
        query.end = cursor
            .into_position()
            .filter(|position| position.edge != Some(super::cursor::Edge::End))
            .map(|position| (position, inclusive));
        query
    }

    /// Ends just before the document `cursor` points at, keeping the last documents before it
    /// when limited (Firestore's `endBefore` with `limitToLast`): the page before a page,
    /// from its [`Page::previous`](crate::query::Page::previous), in the query's order. Runs as the
    /// query in the other direction, so the type declares `reversible` (whose indexes serve
    /// it). With [`fetch`](Self::fetch), [`fetch_stored`](Self::fetch_stored),
    /// [`page`](Self::page) and [`count`](Self::count); with [`after`](Self::after), or with
    /// a stream, a listener or a sum, it is [`Error::InvalidQuery`](crate::error::Error::InvalidQuery)
    /// before anything is sent.
    ///
    /// `None` ends nowhere (the query as it is); the query becomes [`Windowed`].
    pub fn before(
        self,
        cursor: impl CursorArgument<T, QUERY, R>,
    ) -> ShardedQuery<T, QUERY, R, Windowed>
    where
        T: crate::model::sharded::Reversible,
    {
        let mut query = self.retyped();
        query.before = cursor.into_position();
        query
    }

    /// The last `limit` documents of the query, in its order: Firestore's `limitToLast`, as
    /// [`before`](Self::before) the query's end with that limit. Read from the end, in the
    /// other direction, and turned back, so the type declares `reversible` (whose indexes
    /// serve it); exact across chunk queries as every limit is. With [`fetch`](Self::fetch),
    /// [`fetch_stored`](Self::fetch_stored) and [`count`](Self::count) (which counts at most
    /// `limit`); a page of it is the query's last page, whose `previous` continues back.
    /// `limit_to_last(0)` is [`Error::InvalidQuery`](crate::error::Error::InvalidQuery), nothing
    /// sent, as `limit(0)` is.
    pub fn limit_to_last(self, limit: u32) -> ShardedQuery<T, QUERY, R, Windowed>
    where
        T: crate::model::sharded::Reversible,
    {
        let end = super::cursor::Cursor::<T, QUERY, R>::at_edge(super::cursor::Edge::End);
        self.before(end).limit(limit)
    }

    /// Whether the query compares fields for equality and nothing else (no range, filter,
    /// `in`, OR, projection, limit or cursor): what a vector search pre-filters by.
    pub(super) fn plain_equality(&self) -> bool {
        matches!(self.lower, Bound::Unbounded)
            && matches!(self.upper, Bound::Unbounded)
            && self.filters.is_empty()
            && self.any_of.is_none()
            && self.or.is_empty()
            && self.mask.is_none()
            && self.limit.is_none()
            && self.after.is_none()
            && self.end.is_none()
            && self.before.is_none()
    }

    /// The same query in the other direction: the documents it returns in reverse order, its
    /// cursors and pages of their own type ([`Reversed`](crate::query::Reversed)), so a cursor of
    /// one direction does not compile with the other. For a type that declares
    /// `reversible`, whose indexes in both directions serve it; reversing twice gives the
    /// query back. Call it after [`in_group`](Self::in_group).
    pub fn reversed(self) -> ShardedQuery<T, QUERY, R::Flipped, W>
    where
        T: crate::model::sharded::Reversible,
    {
        self.flipped()
    }

    /// This query in the other direction, as it is: what [`before`](Self::before) and the
    /// sums (which no direction changes) run.
    pub(super) fn flipped(&self) -> ShardedQuery<T, QUERY, R::Flipped, W> {
        self.retyped()
    }

    /// The documents this query matches or `other` does (Firestore's OR), each once, in this
    /// query's order: `T::query().exchange("XNAS").or(T::query().instrument_type("etf"))`.
    /// `other` is another of the type's typed queries (an equality, an `in`, an array
    /// query); its range, filters, limit and cursors are not taken (give them to the whole), and
    /// `all()` is refused, since it matches everything. Each disjunct is served by its own
    /// query's index ([`index_needs`](Self::index_needs)). Firestore counts the shard values
    /// times the disjuncts (an `in` counts its values) as disjunctions, at most 30 in one
    /// query; every chunk query asks for the whole OR over fewer shard values, so a document
    /// matching several disjuncts is read by one chunk only. More than 30 disjuncts, or a
    /// disjunct with a range or a filter, is
    /// [`Error::InvalidQuery`](crate::error::Error::InvalidQuery) before anything is sent; a
    /// disjunct with a limit or a cursor ([`Windowed`]) does not compile. An OR reads one
    /// scope: `other` reads this query's (the parent given to either, or to the whole), and
    /// one under another parent is [`Error::InvalidQuery`](crate::error::Error::InvalidQuery). The
    /// result keeps this query's cursors and pages; its window is [`Or`], which keeps
    /// `OTHER` in its type, so that a [`sum`](Self::sum) of the OR compiles only when every
    /// query it joins sums the field (a field declared `aggregate(all, region)` is summed by
    /// `region` alone: its OR with `channel` has no sum of it, where a release build sent
    /// one its index file could not serve).
    pub fn or<const OTHER: u64>(
        self,
        other: ShardedQuery<T, OTHER, R>,
    ) -> ShardedQuery<T, QUERY, R, Or<W, OTHER>> {
        let mut query = self.retyped();
        let plain = matches!(other.lower, Bound::Unbounded)
            && matches!(other.upper, Bound::Unbounded)
            && other.limit.is_none()
            && other.after.is_none()
            && other.end.is_none()
            && other.before.is_none()
            && other.filters.is_empty();
        query.or.push(Disjunct {
            query: OTHER,
            values: other.values,
            any_of: other.any_of,
            plain,
            scope: other.scope.clone(),
        });
        query
    }

    /// [`or`](Self::or) for an OR built at run time, a query at a time in a loop: the same
    /// OR, whose type does not grow with each query ([`DynamicOr`](crate::query::DynamicOr)).
    /// Since its queries are not in its type, its [`sum`](Self::sum) and
    /// [`avg`](Self::avg) take only fields every query sums (`#[sharded(aggregate)]`).
    ///
    /// ```ignore
    /// let mut query = T::query().venue(first).or_dynamic(T::query().kind(kind));
    /// for tag in tags {
    ///     query = query.or_dynamic(T::query().tags_contains(tag));
    /// }
    /// ```
    pub fn or_dynamic<const OTHER: u64>(
        self,
        other: ShardedQuery<T, OTHER, R>,
    ) -> ShardedQuery<T, QUERY, R, W::Dynamic> {
        self.or(other).retyped()
    }
}

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// Only documents that pass `filter`, a range, `!=` or `not-in` on a field declared
    /// `#[sharded(range)]` (or `range(...)` naming this query):
    /// `T::query().exchange("XNAS").filter(T::ranges().price.greater_than(10.0))`.
    ///
    /// Firestore orders such a query by the filtered field after the order field, so the
    /// results come by (order field, filtered field, document name), as the same query on an
    /// unsharded collection returns them, served by the index the plan holds for it (the
    /// query's own with the field after the order field). Several filters on one field are
    /// all applied (`> a` and `< b`); filters on two fields, two `!=` or `not-in` filters
    /// (Firestore takes one of that kind per query), a filter on a field the query compares for equality, or one in an OR,
    /// a sum or an average are [`Error::InvalidQuery`](crate::error::Error::InvalidQuery) before
    /// anything is sent. A cursor made by [`Cursor::at`](crate::query::Cursor::at) has no value of
    /// the field and is refused; those of pages and [`Cursor::after`](crate::query::Cursor::after)
    /// carry it.
    pub fn filter<S: RangedOver<QUERY>>(mut self, filter: RangeFilter<T, S>) -> Self {
        self.filters.push(filter.filter);
        self
    }
}

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// Only documents that have not expired at `now`: their expiry field (`expire_at`) is
    /// after it. Firestore's TTL policy deletes an expired document within about a day, in no
    /// order, so until then it still matches a query; this hides it, as if it were gone.
    ///
    /// It is a range filter on the expiry field (`expires > now`), which every query of an
    /// expiring type takes, alone or beside a filter on another range field, served by the
    /// indexes the plan holds for it: the results are those of the same query on an unsharded
    /// collection, by (order field, expiry, document name). What goes for range filters goes
    /// for it (see [`filter`](Self::filter)): not in an OR, no sum or average beside it;
    /// counts, pages, streams and listeners work. `now` is of the field's type, or one that
    /// converts into it; give the same `now` to each page of a listing so that its pages
    /// agree. A listener's `now` is the one it was built with: a document that expires while
    /// it listens stays in its results until it is deleted or written.
    pub fn unexpired(self, now: impl crate::model::order_key::OrderBound<T::Expiry>) -> Self
    where
        T: crate::model::expiry::Expiring,
    {
        self.filter(
            super::range::range_field::<T, T::Expiry, super::shape::AllQueries>(T::EXPIRY_FIELD)
                .greater_than(now),
        )
    }
}

impl<T, const QUERY: u64, R: Reach, W: Window> super::PagedQuery for ShardedQuery<T, QUERY, R, W> {
    type Cursor = super::Cursor<T, QUERY, R>;
    type Page = super::Page<T, QUERY, R>;
}

impl<T, const QUERY: u64, R: Reach, W: Window> super::names::sealed::Sealed
    for ShardedQuery<T, QUERY, R, W>
{
}
