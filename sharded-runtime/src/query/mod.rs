//! Typed queries over a sharded collection whose results equal the same query on an unsharded
//! collection: same documents, same order (ties broken by document name), page after page.

mod aggregate;
mod builder;
mod count;
mod cursor;
mod explain;
mod fetch;
pub(crate) mod get_many;
pub(crate) mod listen;
pub(crate) mod merge;
mod names;
mod nearest;
pub(crate) mod plan;
mod projection;
pub(crate) mod queries;
mod range;
mod reach;
mod reads;
pub(crate) mod retired;
// Only debug builds check each query against the plan before sending it.
mod limit_split;
#[cfg(debug_assertions)]
mod served;
mod shape;
pub(crate) mod snapshot;
mod spans;
mod stream;
mod values;
mod window;

pub use crate::model::value_order::{
    compare_documents, compare_references, compare_values, usable_in_cursor,
};
pub(crate) use aggregate::aggregate_asked;
pub use aggregate::{
    Aggregation, Aggregations, Avg, Count, Number, NumericField, Sum, SummedOver, avg, count,
    numeric_field, sum,
};
pub use builder::ShardedQuery;
pub(crate) use count::count_of;
pub use cursor::{Cursor, CursorArgument};
pub use explain::{ExplainedChunk, ExplainedQuery};
pub use listen::{
    ChangeKind, DocumentChange, ListenCheckpoint, ListenOptions, QuerySnapshot, SnapshotStream,
};
pub use merge::{merge_sorted, merge_streams};
pub use names::{CursorOf, PageOf, PagedQuery};
pub use nearest::{MAX_NEIGHBORS, Neighbor, VectorField, VectorValue, vector_field};
pub(crate) use plan::DocumentOrder;
pub use plan::{MAX_FILTER_VALUE_BYTES, MAX_LIMIT, MAX_NOT_IN, QueryPlan, shard_chunks};
pub use queries::{Queries, queries};
pub use range::{RangeField, RangeFilter, RangedOver, range_field};
pub use reach::{InCollection, InGroup, Reach, Reversed};
pub(crate) use shape::QueryShape;
pub use shape::{AllQueries, query_id};
pub use window::{DynamicOr, Or, Summable, Whole, Window, Windowed};

use crate::model::sharded::Sharded;
use crate::model::stored::Stored;

/// Firestore's limit on values in one `in` filter, and on disjunctions in one query.
pub const MAX_DISJUNCTIONS: usize = 30;

/// The `QUERY` of the whole-collection query, `T::query().all()`: no equality filter, ordered
/// by the order field, served by the index (shard, order field).
pub const WHOLE_COLLECTION: u64 = query_id("all");

/// The query `T::query().all()`: every document of the collection, by the order field;
/// `WholeCollection<T, InGroup>` after `.in_group()`, `WholeCollection<T, InCollection,
/// Windowed>` after a limit or a cursor. `CursorOf<WholeCollection<T>>` and
/// `PageOf<..>` are its cursor and page.
pub type WholeCollection<T, R = InCollection, W = Whole> = ShardedQuery<T, WHOLE_COLLECTION, R, W>;

/// The query `T::query().all().reversed()` of a `reversible` type: every document, the other
/// way; `WholeCollectionReversed<T, InGroup>` after `.in_group()`. Its cursors and pages are
/// `CursorOf<WholeCollectionReversed<T>>` and `PageOf<..>`.
pub type WholeCollectionReversed<T, R = InCollection, W = Whole> =
    ShardedQuery<T, WHOLE_COLLECTION, Reversed<R>, W>;

/// The shape of `T`'s query `QUERY`, read from the collection's description: the queries are
/// `all`, then one per indexed field, one per field set, then one per array field, in the
/// description's order, and
/// the derive names them in that order (`Tables::query_names`), so that the fields each
/// compares are written once, in the description, for every user's build to compile.
fn shape<T: Sharded>(query: u64) -> Option<QueryShape> {
    if query == WHOLE_COLLECTION {
        return Some(QueryShape::new("all", &[]));
    }
    let names = T::TABLES.query_names;
    let position = names.iter().position(|name| query_id(name) == query)?;
    let indexed = T::DESCRIPTION.indexed_fields;
    let sets = T::DESCRIPTION.field_sets;
    if let Some(field) = indexed.get(position..=position) {
        return Some(QueryShape::new(names[position], field));
    }
    if let Some(set) = sets.get(position - indexed.len()) {
        return Some(QueryShape::new(names[position], set));
    }
    let array = position - indexed.len() - sets.len();
    let field = T::DESCRIPTION.array_fields.get(array..=array)?;
    Some(QueryShape::contains(names[position], field))
}

/// How a `QUERY` is named in spans and cursor tokens: its method's name.
pub(crate) fn query_name<T: Sharded>(query: u64) -> &'static str {
    shape::<T>(query).map_or("?", |shape| shape.name)
}

/// One page of results and the cursor of the next. `I` is what its items read as: the
/// query's type `T`, or a projection of it ([`page_as`](ShardedQuery::page_as)), whose
/// cursors are the query's all the same.
#[non_exhaustive]
pub struct Page<T, const QUERY: u64, R: Reach = InCollection, I = T> {
    /// The documents of this page, in query order.
    pub items: Vec<Stored<I>>,
    /// Where the next page starts; `None` when no document follows this page. On a page
    /// before a cursor, looked up with one more query of one document (an empty page before a
    /// cursor has the query's start as its next).
    pub next: Option<Cursor<T, QUERY, R>>,
    /// Where the page before this one ends, for [`before`](ShardedQuery::before) (a
    /// `reversible` type): the cursor of this page's first document, or, on an empty page
    /// after a cursor, the end of the query (so an emptied last page still goes back); `None`
    /// when no document precedes the page (the first page, one whose earlier documents were
    /// deleted), and on a type that is not `reversible`. A page after a cursor of a
    /// reversible type looks it up with one more query of one document, in the other
    /// direction (counted in [`stats`](Self::stats)).
    pub previous: Option<Cursor<T, QUERY, R>>,
    /// What fetching the page cost.
    pub stats: QueryStats,
}

// By hand: derives would also ask `T` and `R`, which a page only names in its cursors' type.
impl<T, const QUERY: u64, R: Reach, I: Clone> Clone for Page<T, QUERY, R, I> {
    fn clone(&self) -> Self {
        Page {
            items: self.items.clone(),
            next: self.next.clone(),
            previous: self.previous.clone(),
            stats: self.stats,
        }
    }
}

impl<T, const QUERY: u64, R: Reach, I: PartialEq> PartialEq for Page<T, QUERY, R, I> {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
            && self.next == other.next
            && self.previous == other.previous
            && self.stats == other.stats
    }
}

impl<T, const QUERY: u64, R: Reach, I: std::fmt::Debug> std::fmt::Debug for Page<T, QUERY, R, I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page")
            .field("items", &self.items)
            .field("next", &self.next)
            .field("previous", &self.previous)
            .field("stats", &self.stats)
            .finish()
    }
}

/// What a fetch cost. Firestore bills one read per document a query returns. With more than
/// 30 shard values, a limited query asks each chunk for a little more than its share of the
/// limit and goes back only to chunks that may hold more of it, so `documents_read` is a little
/// over the documents kept (about ⌈1.3·limit⌉ + chunks on average); a page also reads the one
/// document it looks ahead at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct QueryStats {
    /// Queries sent.
    pub queries: usize,
    /// Documents the server returned, before the merge kept `limit` of them.
    pub documents_read: usize,
    /// Rounds of queries, each sent concurrently (one network round trip of latency each): 1,
    /// unless a limited query past 30 shard values went back to some chunks (at most 4).
    pub rounds: usize,
}

impl QueryStats {
    /// These stats and `more`'s, sent after them: queries, documents and rounds added.
    pub(crate) fn add(&mut self, more: QueryStats) {
        self.queries += more.queries;
        self.documents_read += more.documents_read;
        self.rounds += more.rounds;
    }

    /// What one query that returned `documents_read` documents cost: an unsharded query's
    /// stats, to compare a sharded one's with.
    pub fn of_one_query(documents_read: usize) -> QueryStats {
        QueryStats {
            queries: 1,
            documents_read,
            rounds: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::stored::Stored;

    /// Neither `Clone` nor `PartialEq` nor `Debug`: a page's traits ask them of its items only.
    struct Unclonable;

    #[test]
    fn a_page_of_projections_is_cloned_and_compared_without_its_query_type() {
        let page: Page<Unclonable, 7, InGroup, u32> = Page {
            items: vec![Stored {
                id: "a".to_owned(),
                parent: None,
                shard: "0".to_owned(),
                document: 5,
            }],
            next: None,
            previous: None,
            stats: QueryStats::default(),
        };
        let copy = page.clone();
        assert_eq!(copy, page);
        assert_eq!(copy.items[0].document, 5);
        assert!(format!("{page:?}").contains("document: 5"));
        let other = Page {
            items: Vec::new(),
            ..page.clone()
        };
        assert_ne!(other, page);
    }
}
