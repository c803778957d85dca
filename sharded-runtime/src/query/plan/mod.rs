//! A query planned: from the typed builder, one pure function ([`ShardedQuery::plan`])
//! computes everything that will be sent, before anything is: the scope, the chunks of shard
//! values, the filters, orders and direction, the field a range filter orders by, the
//! cursor, the flip that reads a `before` query backwards, and the index each chunk query
//! needs. Every executor (`fetch`, `page`, `count`, `sum`, `stream`, `listen`) takes the plan;
//! it is data, printed by its `Display` and tested without an emulator.

mod chunk;
mod explain;
mod filters;
mod index_needs;
mod send;

use std::ops::Bound;

use firestore::gcloud_sdk::google::firestore::v1::Value;
use firestore::{
    FirestoreQueryDirection, FirestoreQueryFilter, FirestoreQueryFilterCompare,
    FirestoreQueryOrder, FirestoreValue,
};
use sharded_indexes::{Direction, IndexNeed};

use super::{Reach, ShardedQuery, Window};
use crate::error::{Error, Result};
use crate::model::handle::Scope;
use crate::model::sharded::Sharded;
use crate::model::value_order;

pub(crate) use chunk::Chunk;
pub use chunk::shard_chunks;
use chunk::{fan_out, fan_out_together};
pub(crate) use filters::{AnyOf, check_filter_value, compare};
use filters::{Comparison, compared, describe_scope, disjunction, range_filters};
pub use filters::{MAX_FILTER_VALUE_BYTES, MAX_LIMIT, MAX_NOT_IN};
pub(crate) use send::DocumentOrder;

/// What a query sends, computed from the query before anything is: its scope, the chunk
/// queries it fans out into (each over some of the shard values, and for an `in` some of its
/// values), their filters, orders and limit, the cursor they start after, whether it reads
/// backwards (a query that ends [`before`](ShardedQuery::before) a cursor reads the other way
/// from it, and its documents are reversed), and the index each chunk query needs.
///
/// `query.plan()?` shows what a query will cost and which index serves it without sending
/// anything; print it (`{plan}`) to see each chunk query as Firestore will receive it.
#[derive(Debug, Clone)]
pub struct QueryPlan {
    pub(crate) collection: &'static str,
    pub(crate) scope: Scope,
    pub(crate) shard_field: &'static str,
    pub(crate) order_field: &'static str,
    /// The fields range filters are on, which the query orders by after the order field,
    /// in the order Firestore orders them (by path).
    pub(crate) then_by: Vec<&'static str>,
    /// The direction the chunk queries read in (the query's own, or the other for `before`).
    pub(crate) direction: Direction,
    /// Reads backwards from a `before` cursor: the documents come in reverse.
    pub(crate) ends_before: bool,
    pub(crate) filters: Vec<FirestoreQueryFilter>,
    /// For an `in` query, the field and its values (checked, each once); each chunk asks for a
    /// range of them.
    pub(crate) any_of: Option<AnyOf>,
    pub(crate) orders: Vec<FirestoreQueryOrder>,
    pub(crate) chunks: Vec<Chunk>,
    /// A `not-in` query: Firestore takes no `not-in` beside the shard field's `in`, so each
    /// chunk reads one shard value, compared by equality.
    pub(crate) shard_by_equality: bool,
    /// The document the chunk queries start after, or at.
    pub(crate) start: Option<PlannedCursor>,
    /// The document the chunk queries end before, or at.
    pub(crate) end: Option<PlannedCursor>,
    pub(crate) limit: Option<u32>,
    /// The fields a projection reads; every field otherwise.
    pub(crate) mask: Option<Vec<String>>,
    pub(crate) index_needs: Vec<IndexNeed>,
}

/// A document a plan starts or ends at: its values in the query's order, where it is, and
/// whether the document itself is in the query (`start_at`, `end_at`) or not (`after`,
/// `end_before`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlannedCursor {
    pub(crate) values: Vec<Value>,
    pub(crate) parent: Option<String>,
    pub(crate) id: String,
    pub(crate) inclusive: bool,
}

impl QueryPlan {
    /// How many chunk queries one round sends: one per 30 disjunctions of shard values times
    /// the `in` or `array-contains-any` values (or the OR's disjuncts). Firestore bills each at
    /// least one read, even when it matches nothing.
    pub fn chunk_queries(&self) -> usize {
        self.chunks.len()
    }

    /// The shard values each chunk query reads, in the order they are sent.
    pub fn chunk_shards(&self) -> Vec<&'static [&'static str]> {
        self.chunks.iter().map(|chunk| chunk.shards).collect()
    }

    /// What each part of the query asks of a composite index: one need for most queries, one
    /// per disjunct for an OR (Firestore serves each from its own index). Every chunk query
    /// asks the same.
    pub fn index_needs(&self) -> &[IndexNeed] {
        &self.index_needs
    }

    /// The direction the chunk queries read the order field in: the query's, or the other
    /// one for a query that ends [`before`](ShardedQuery::before) a cursor.
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// Whether the chunk queries read backwards from a `before` cursor, their documents
    /// then reversed into the query's order.
    pub fn ends_before(&self) -> bool {
        self.ends_before
    }

    /// The most documents the query returns.
    pub fn limit(&self) -> Option<u32> {
        self.limit
    }

    /// The fields range, `!=` or `not-in` filters are on, which the query orders by after
    /// the order field (and before the document name), by path as Firestore orders them:
    /// none, one, or a set declared with `#[sharded(ranges(...))]`.
    pub fn then_by(&self) -> &[&'static str] {
        &self.then_by
    }

    /// Refuses the plan of a query that ends `before` a cursor, for the reads that take none.
    pub(crate) fn forward_only(self) -> Result<QueryPlan> {
        match self.ends_before {
            true => Err(Error::InvalidQuery(
                "`before` runs with fetch, fetch_stored, page and count, not with a stream, a listener or a sum".into(),
            )),
            false => Ok(self),
        }
    }
}

impl<T: Sharded, const QUERY: u64, R: Reach, W: Window> ShardedQuery<T, QUERY, R, W> {
    /// The query planned: what it sends, checked as Firestore would check it, without sending
    /// anything. An error here is the error running the query returns before it sends
    /// anything.
    pub fn plan(&self) -> Result<QueryPlan> {
        match self.ending_before()? {
            Some(flipped) => {
                let mut plan = flipped.plan_forward()?;
                plan.ends_before = true;
                Ok(plan)
            }
            None => self.plan_forward(),
        }
    }

    /// How many chunk queries one round of this query sends ([`QueryPlan::chunk_queries`]).
    /// The query is checked as running it would check it.
    pub fn chunk_queries(&self) -> Result<usize> {
        Ok(self.plan()?.chunk_queries())
    }

    /// What this query asks of a composite index, from the terms every one of its chunk
    /// queries sends: the shard field and each field it compares by equality or `in`, then
    /// the order field in the query's direction (a range on it is its inequality), on the
    /// type's collection, in the query's scope. `T::indexes().serving(&need)` is the index
    /// of the plan that serves it, and `need.is_served_by_file(..)` tells whether a
    /// `firestore.indexes.json` does: the emulator runs any query without an index,
    /// production does not. An OR has one need per disjunct: ask
    /// [`index_needs`](Self::index_needs).
    pub fn index_need(&self) -> Result<IndexNeed> {
        if !self.or.is_empty() {
            return Err(Error::InvalidQuery(
                "an OR is served by one index per disjunct: ask `index_needs()`".into(),
            ));
        }
        let mut needs = self.plan()?.index_needs;
        Ok(needs.pop().expect("one need"))
    }

    /// What each part of this query asks of an index: for an OR ([`or`](Self::or)), one need
    /// per disjunct (Firestore serves each from its own index and merges them), this query's
    /// first; for any other query, its one [`index_need`](Self::index_need).
    pub fn index_needs(&self) -> Result<Vec<IndexNeed>> {
        Ok(self.plan()?.index_needs)
    }

    /// The plan of this query read in its own direction (no `before`).
    fn plan_forward(&self) -> Result<QueryPlan> {
        self.scope.check::<T>()?;
        let invalid = |why: String| Error::InvalidQuery(why);
        let (shape, mut filters, mut any_of) =
            compared::<T>(QUERY, &self.values, self.any_of.as_deref())?;
        if T::READ_SHARD_VALUES.is_empty() {
            return Err(invalid(format!("`{}` has no shard values", T::COLLECTION)));
        }
        match self.limit {
            Some(0) => {
                return Err(invalid(
                    "`limit(0)` asks for nothing; Firestore rejects it".into(),
                ));
            }
            Some(limit) if limit > MAX_LIMIT => {
                return Err(invalid(format!(
                    "`limit({limit})` is more than Firestore's largest limit, {MAX_LIMIT}"
                )));
            }
            _ => {}
        }
        let mut shapes = vec![shape];
        let or = match self.or.is_empty() {
            true => None,
            false => {
                let mut disjuncts = vec![(shape, std::mem::take(&mut filters), any_of.take())];
                for disjunct in &self.or {
                    if disjunct.scope != Scope::Top && disjunct.scope != self.scope {
                        return Err(invalid(format!(
                            "an OR reads one scope, and its queries read {} and {}: query each parent apart, or the group with `in_group()`",
                            describe_scope(&self.scope),
                            describe_scope(&disjunct.scope)
                        )));
                    }
                    if !disjunct.plain {
                        return Err(invalid(
                            "a query OR-ed with another takes no range, limit or cursor of its own: give them to the whole".into(),
                        ));
                    }
                    disjuncts.push(compared::<T>(
                        disjunct.query,
                        &disjunct.values,
                        disjunct.any_of.as_deref(),
                    )?);
                }
                if disjuncts
                    .iter()
                    .any(|(shape, _, _)| shape.fields.is_empty())
                {
                    return Err(invalid(
                        "`all()` matches every document, so an OR with it is the whole collection: query `all()` alone".into(),
                    ));
                }
                shapes = disjuncts.iter().map(|(shape, _, _)| *shape).collect();
                Some(disjunction(disjuncts))
            }
        };
        let then_by = self.then_by();
        let not_in = range_filters(
            &then_by,
            T::DESCRIPTION.range_sets,
            &self.filters,
            &shape,
            &mut filters,
            !self.or.is_empty(),
            any_of.is_some(),
        )?;
        let chunks = match (&or, &any_of) {
            // Firestore takes no `not-in` beside an `in` (measured): one shard value each.
            _ if not_in => T::READ_SHARD_VALUES
                .chunks(1)
                .map(|shards| Chunk {
                    shards,
                    values: (0, 0),
                })
                .collect(),
            // Every chunk asks for the whole OR, so that a document matching several
            // disjuncts is read by its shard's chunk only.
            (Some((_, disjunctions)), _) => fan_out_together(T::READ_SHARD_VALUES, *disjunctions),
            // A document holds several of the values an `array-contains-any` asks for: each
            // chunk asks for all of them, so that a document is read by its shard's chunk only.
            (None, Some(any_of)) if any_of.contains => {
                fan_out_together(T::READ_SHARD_VALUES, any_of.values.len())
            }
            (None, Some(any_of)) => fan_out(T::READ_SHARD_VALUES, any_of.values.len()),
            (None, None) => fan_out(T::READ_SHARD_VALUES, 0),
        };
        if let Some((or, _)) = or {
            filters.push(or);
        }
        if let Some(chunk) = chunks
            .iter()
            .find(|chunk| chunk.weight() > super::MAX_DISJUNCTIONS)
        {
            return Err(invalid(format!(
                "{} disjunctions in one query; Firestore allows {}",
                chunk.weight(),
                super::MAX_DISJUNCTIONS
            )));
        }
        let order = T::ORDER_FIELD.to_owned();
        use FirestoreQueryFilterCompare::{
            GreaterThan, GreaterThanOrEqual, LessThan, LessThanOrEqual,
        };
        for (bound, inclusive, exclusive) in [
            (
                &self.lower,
                GreaterThanOrEqual as Comparison,
                GreaterThan as Comparison,
            ),
            (&self.upper, LessThanOrEqual, LessThan),
        ] {
            let (compare_with, value) = match bound {
                Bound::Included(value) => (inclusive, value),
                Bound::Excluded(value) => (exclusive, value),
                Bound::Unbounded => continue,
            };
            let value = value.clone().map_err(invalid)?;
            check_filter_value(T::ORDER_FIELD, &value)?;
            let value = FirestoreValue { value };
            filters.push(compare(compare_with(order.clone(), value)));
        }
        // `plan` reads a query that ends `before` a cursor through its flip, which has none.
        debug_assert!(self.before.is_none());
        let direction = super::reach::query_direction::<T, R>();
        let orders = std::iter::once(order)
            .chain(then_by.iter().map(|path| (*path).to_owned()))
            .chain(["__name__".to_owned()])
            .map(|field_name| FirestoreQueryOrder {
                field_name,
                direction: match direction {
                    Direction::Ascending => FirestoreQueryDirection::Ascending,
                    Direction::Descending => FirestoreQueryDirection::Descending,
                },
            })
            .collect();
        let start = match &self.after {
            Some(cursor) => {
                Some(self.planned_cursor(cursor, &then_by, self.start_inclusive, "starts")?)
            }
            None => None,
        };
        let end = match &self.end {
            Some((cursor, inclusive)) => {
                Some(self.planned_cursor(cursor, &then_by, *inclusive, "ends")?)
            }
            None => None,
        };
        let mut plan = QueryPlan {
            collection: T::COLLECTION,
            scope: self.scope.clone(),
            shard_field: T::SHARD_FIELD_PATH,
            order_field: T::ORDER_FIELD,
            then_by,
            direction,
            ends_before: false,
            filters,
            any_of,
            orders,
            chunks,
            shard_by_equality: not_in,
            start,
            end,
            limit: self.limit,
            mask: self.mask.clone(),
            index_needs: Vec::new(),
        };
        plan.index_needs = index_needs::of(&plan, &shapes);
        // Every test run plans its queries here: each chunk query, as the protocol carries
        // it, must be one the type's index plan serves.
        #[cfg(debug_assertions)]
        {
            let indexes = T::indexes();
            for chunk in &plan.chunks {
                let query = plan.structured_query_ordered(
                    *chunk,
                    plan.orders.clone(),
                    None,
                    None,
                    plan.limit,
                )?;
                super::served::check_served(&indexes, &query)?;
            }
        }
        Ok(plan)
    }

    /// The cursor's document and its values in the query's order (the order field, then
    /// `then_by`), checked as Firestore takes cursor values; `where_` says which end of the
    /// query it is ("starts", "ends").
    fn planned_cursor(
        &self,
        cursor: &super::cursor::Position,
        then_by: &[&'static str],
        inclusive: bool,
        where_: &str,
    ) -> Result<PlannedCursor> {
        match cursor.edge {
            None => {}
            Some(super::cursor::Edge::End) => {
                return Err(Error::InvalidCursor(
                    "this cursor points past the query's last document, where no page starts: pass it to `before`".into(),
                ));
            }
            Some(super::cursor::Edge::Start) => {
                return Err(Error::InvalidCursor(format!(
                    "this cursor points before the query's first document: a query that {where_} there matches nothing; pass it to `after`"
                )));
            }
        }
        if !value_order::usable_in_cursor(&cursor.order_value) {
            return Err(Error::InvalidCursor(format!(
                "the cursor's `{}` is a string of more than {MAX_FILTER_VALUE_BYTES} bytes that Firestore compares whole, which it refuses as a cursor value (\"the cursor value is too large\"); no query, sharded or not, can start after this document",
                T::ORDER_FIELD
            )));
        }
        cursor.check_scope(&self.scope)?;
        let mut values = vec![cursor.order_value.clone()];
        for path in then_by {
            let value = cursor.value_of(path)?;
            if !value_order::usable_in_cursor(value) {
                return Err(Error::InvalidCursor(format!(
                    "the cursor's `{path}` is a string of more than {MAX_FILTER_VALUE_BYTES} bytes, which Firestore refuses as a cursor value"
                )));
            }
            values.push(value.clone());
        }
        Ok(PlannedCursor {
            values,
            parent: cursor.parent.clone(),
            id: cursor.id.clone(),
            inclusive,
        })
    }

    /// The fields range filters are on, each once, in the order Firestore orders them by
    /// after the order field (by path).
    pub(super) fn then_by(&self) -> Vec<&'static str> {
        let mut paths: Vec<&'static str> = Vec::new();
        for filter in &self.filters {
            if !paths.contains(&filter.path) {
                paths.push(filter.path);
            }
        }
        paths.sort_by(|a, b| sharded_indexes::field_path::path_order(a, b));
        paths
    }
}
