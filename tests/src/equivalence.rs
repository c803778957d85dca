//! The check behind the query property tests: one sharded query against the ids the same
//! query returns on an unsharded copy, every way it can be run.

use futures::TryStreamExt as _;
use sharded_runtime::__private::usable_in_cursor;
use std::ops::Bound;

use sharded_runtime::bounds::{RangedOver, Reach, Window};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    Document, Value, value::ValueType,
};
use sharded_runtime::firestore::select_builder::FirestoreSelectDocBuilder;
use sharded_runtime::firestore::select_filter_builder::FirestoreQueryFilterBuilder;
use sharded_runtime::firestore::{
    FirestoreDb, FirestoreQueryCursor, FirestoreQueryDirection, FirestoreQueryFilter,
    FirestoreQueryOrder, FirestoreValue,
};
use sharded_runtime::reads::{OrderKey, RangeField};
use sharded_runtime::{
    Cursor, Error, Page, Sharded, ShardedQuery, Stored, limits::MAX_DISJUNCTIONS,
};

pub fn ids<T, S: std::borrow::Borrow<Stored<T>>>(stored: &[S]) -> Vec<String> {
    stored.iter().map(|s| s.borrow().id.clone()).collect()
}

/// Checks `query` against `expected`, the unsharded query's ids (or its refusal by the server,
/// which sharded must match with a refusal before sending): its index in the type's plan,
/// every page of `limit` through cursor tokens, the whole fetch, the first `limit`, the
/// stream, and the count.
pub async fn check_query<T: Sharded, const I: u64, R: Reach, W: Window>(
    db: &FirestoreDb,
    query: ShardedQuery<T, I, R, W>,
    expected: Result<Vec<String>, String>,
    limit: u32,
    what: &str,
) {
    let expected = match expected {
        Ok(expected) => expected,
        Err(refused) => {
            let ours = query.fetch_stored(db).await.map(|stored| ids(&stored));
            assert!(
                matches!(ours, Err(Error::InvalidQuery(_))),
                "{what}: the server refused ({refused}) but sharded gave {ours:?}"
            );
            return;
        }
    };
    // Production runs only what an index serves (the emulator runs anything): each query
    // this checks is served by its type's plan, by Firestore's rules.
    let plan = T::indexes();
    for need in query.index_needs().expect("a query the server takes") {
        assert!(
            plan.serving(&need).is_some(),
            "{what}: no index of the plan serves {need:?}"
        );
    }
    check_pages(db, &query, limit, &expected, what).await;
    assert_eq!(
        ids(&query.fetch_stored(db).await.unwrap()),
        expected,
        "{what}: fetch"
    );
    let first = &expected[..expected.len().min(limit as usize)];
    assert_eq!(
        ids(&query.clone().limit(limit).fetch_stored(db).await.unwrap()),
        first,
        "{what}: limit"
    );
    let streamed: Vec<Stored<T>> = query
        .clone()
        .limit(limit)
        .stream(db)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(ids(&streamed), first, "{what}: stream");
    assert_eq!(
        query.count(db).await.unwrap(),
        expected.len() as u64,
        "{what}: count"
    );
}

/// Every page of `query`, each cursor passed through its opaque token as a web client would:
/// together exactly `expected`, only the last one short, each costing what it should.
async fn check_pages<T: Sharded, const I: u64, R: Reach, W: Window>(
    db: &FirestoreDb,
    query: &ShardedQuery<T, I, R, W>,
    limit: u32,
    expected: &[String],
    what: &str,
) {
    let chunks = query.chunk_queries().unwrap();
    // The fan-out over shard values alone is the least any query of the type sends.
    assert!(chunks >= T::READ_SHARD_VALUES.len().div_ceil(MAX_DISJUNCTIONS));
    let mut paged: Vec<String> = Vec::new();
    let mut next: Option<Cursor<T, I, R>> = None;
    loop {
        // Each cursor goes through its token, as a client would hand it back.
        let page_query = query.clone().after(
            next.take()
                .map(|cursor| cursor.to_token().parse::<Cursor<T, I, R>>().unwrap()),
        );
        let page = match page_query.page(db, limit).await {
            Ok(page) => page,
            // Refused, not wrong: Firestore takes no cursor at a string it compares whole past
            // 1,499 bytes (see server_order.rs), so no query could page past that document.
            Err(Error::InvalidCursor(why)) if why.contains("refuses as a cursor value") => {
                let last = paged.last().expect("a cursor follows a page");
                let document: Document = db
                    .fluent()
                    .select()
                    .by_id_in(T::COLLECTION)
                    .one(last)
                    .await
                    .unwrap()
                    .unwrap();
                let value = &document.fields[T::ORDER_FIELD.trim_matches('`')];
                assert!(
                    !usable_in_cursor(value),
                    "{what}: refused a cursor the server takes"
                );
                assert_eq!(paged, expected[..paged.len()], "{what}: pages before it");
                return;
            }
            Err(error) => panic!("{what}: {error}"),
        };
        assert!(page.items.len() <= limit as usize, "{what}: page size");
        // Up to 30 shards: one query, billed reads = documents returned. More: one per chunk,
        // then (rounds 2 to 4) one per chunk that may hold more of the page; no chunk reads
        // more than the page (and its look-ahead), twice over when it has to start again
        // because its last document's order value is too long for a cursor.
        // A reversible type's page after a cursor also looks for a document before it (its
        // `previous`): one more query of one document, in the other direction.
        let behind = usize::from(T::DESCRIPTION.reversible && !paged.is_empty());
        if chunks == 1 {
            assert_eq!(page.stats.queries, 1 + behind, "{what}: queries sent");
            assert_eq!(page.stats.rounds, 1 + behind, "{what}: rounds");
            // The page reads one document more when another page follows (its look-ahead).
            let ahead = usize::from(page.next.is_some());
            let read_behind = usize::from(page.previous.is_some());
            assert_eq!(
                page.stats.documents_read,
                page.items.len() + ahead + read_behind
            );
        } else {
            assert!(page.stats.queries >= chunks, "{what}: queries sent");
            assert!(
                (1..=4 * (1 + behind)).contains(&page.stats.rounds),
                "{what}: rounds"
            );
            assert!(page.stats.documents_read >= page.items.len());
            assert!(
                page.stats.documents_read
                    <= 2 * chunks * (limit as usize + 1) + behind * 4 * chunks
            );
        }
        if page.next.is_some() {
            assert_eq!(
                page.items.len(),
                limit as usize,
                "{what}: only the last page is short"
            );
        }
        paged.extend(ids(&page.items));
        match page.next {
            Some(cursor) => next = Some(cursor),
            None => break,
        }
        assert!(paged.len() <= expected.len(), "{what}: pages repeat");
    }
    assert_eq!(paged, expected, "{what}: pages");
}

/// `T`'s order direction in the firestore crate's terms.
fn order_direction<T: Sharded>() -> FirestoreQueryDirection {
    match T::DESCRIPTION.direction {
        sharded_runtime::indexes::Direction::Ascending => FirestoreQueryDirection::Ascending,
        sharded_runtime::indexes::Direction::Descending => FirestoreQueryDirection::Descending,
    }
}

/// The same query on an unsharded collection: equalities and a range on `T`'s order field,
/// ordered by it and then by `__name__`, no shard filter, optionally limited and after a
/// cursor. What every property test compares a sharded query with.
#[derive(Clone, Default)]
pub struct Unsharded {
    pub equalities: Vec<(String, FirestoreValue)>,
    /// `field in [values]`, the values an array value.
    pub any_of: Option<(String, FirestoreValue)>,
    /// `field array-contains value`, or with `true` `array-contains-any [values]`.
    pub array: Option<(String, FirestoreValue, bool)>,
    pub lower: Option<(FirestoreValue, bool)>,
    pub upper: Option<(FirestoreValue, bool)>,
    pub limit: Option<u32>,
    /// Start after the document with this order value and id.
    pub after: Option<(FirestoreValue, String)>,
    /// Ordered the other way than the type.
    pub reversed: bool,
    /// Inequalities on other fields (`>`, `>=`, `<`, `<=`, `!=`, `not-in`): the query then
    /// orders by the order field alone and the server adds the rest, as a user's unsharded
    /// query would.
    pub inequalities: Vec<(String, Inequality, FirestoreValue)>,
}

/// An inequality of [`Unsharded::inequality`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inequality {
    GreaterThan,
    AtLeast,
    LessThan,
    AtMost,
    NotEqual,
    /// The value an array of the values.
    NotIn,
}

/// What a property test's query narrows the collection to by one equality field: every
/// document, those with one value, or those with any of some values (`in`).
#[derive(Debug, Clone)]
pub enum Scope<V> {
    All,
    Equal(V),
    AnyOf(Vec<V>),
}

impl<V: Clone + std::fmt::Debug> Scope<V> {
    /// One of the three, equally likely, with values from `pool`: `in_sizes` of them for `in`.
    pub fn draw(
        rng: &mut rand::rngs::StdRng,
        pool: &[V],
        in_sizes: std::ops::Range<usize>,
    ) -> Self {
        use rand::Rng;
        let value = |rng: &mut rand::rngs::StdRng| pool[rng.random_range(0..pool.len())].clone();
        match rng.random_range(0..3) {
            0 => Scope::All,
            1 => Scope::Equal(value(rng)),
            _ => {
                let count = rng.random_range(in_sizes);
                Scope::AnyOf((0..count).map(|_| value(rng)).collect())
            }
        }
    }

    /// `reference` narrowed on `field` as the sharded query is.
    pub fn narrow(&self, reference: Unsharded, field: &str) -> Unsharded
    where
        V: Into<FirestoreValue>,
        Vec<V>: Into<FirestoreValue>,
    {
        match self {
            Scope::All => reference,
            Scope::Equal(value) => reference.equal(field, value.clone()),
            Scope::AnyOf(values) => reference.any_of(field, values.clone()),
        }
    }

    /// How a failure names it: `all`, `venue "v1"`, `venue in ["v1", "v2"]`.
    pub fn describe(&self, field: &str) -> String {
        match self {
            Scope::All => "all".to_owned(),
            Scope::Equal(value) => format!("{field} {value:?}"),
            Scope::AnyOf(values) => format!("{field} in {values:?}"),
        }
    }
}

/// One filter on a range field: an inequality with a value, or a `not-in` of values.
#[derive(Debug, Clone)]
pub enum FilterOp<V> {
    One(Inequality, V),
    NotIn(Vec<V>),
}

/// `query` with `ops` on `field`, and its unsharded `reference` with the same.
pub fn filtered<T, V, S, const Q: u64>(
    mut query: ShardedQuery<T, Q>,
    mut reference: Unsharded,
    field: RangeField<T, V, S>,
    ops: &[FilterOp<V>],
) -> (ShardedQuery<T, Q>, Unsharded)
where
    T: Sharded,
    V: OrderKey,
    S: RangedOver<Q>,
{
    for op in ops {
        let (filter, inequality, value) = match op.clone() {
            FilterOp::One(inequality, value) => {
                let filter = match inequality {
                    Inequality::GreaterThan => field.greater_than(value.clone()),
                    Inequality::AtLeast => field.at_least(value.clone()),
                    Inequality::LessThan => field.less_than(value.clone()),
                    Inequality::AtMost => field.at_most(value.clone()),
                    Inequality::NotEqual => field.not_equal(value.clone()),
                    Inequality::NotIn => unreachable!("a not-in is FilterOp::NotIn"),
                };
                (
                    filter,
                    inequality,
                    <FirestoreValue as From<&V>>::from(&value),
                )
            }
            FilterOp::NotIn(values) => {
                let array = <FirestoreValue as From<&Vec<V>>>::from(&values);
                (field.not_in(values), Inequality::NotIn, array)
            }
        };
        query = query.filter(filter);
        reference = reference.inequality(field.path(), inequality, value);
    }
    (query, reference)
}

impl Unsharded {
    /// `field == value` and any more equalities given later.
    pub fn equal(mut self, field: &str, value: impl Into<FirestoreValue>) -> Self {
        self.equalities.push((field.to_owned(), value.into()));
        self
    }

    /// `field in values`.
    pub fn any_of(mut self, field: &str, values: impl Into<FirestoreValue>) -> Self {
        self.any_of = Some((field.to_owned(), values.into()));
        self
    }

    /// `field array-contains value`.
    pub fn array_contains(mut self, field: &str, value: impl Into<FirestoreValue>) -> Self {
        self.array = Some((field.to_owned(), value.into(), false));
        self
    }

    /// `field array-contains-any values`.
    pub fn array_contains_any(mut self, field: &str, values: impl Into<FirestoreValue>) -> Self {
        self.array = Some((field.to_owned(), values.into(), true));
        self
    }

    /// The order field in `range`, as the sharded query's `range` takes it.
    pub fn range<V: Clone + Into<FirestoreValue>>(
        mut self,
        (lower, upper): &(Bound<V>, Bound<V>),
    ) -> Self {
        let bound = |bound: &Bound<V>| match bound {
            Bound::Included(v) => Some((v.clone().into(), true)),
            Bound::Excluded(v) => Some((v.clone().into(), false)),
            Bound::Unbounded => None,
        };
        self.lower = bound(lower);
        self.upper = bound(upper);
        self
    }

    /// `field` compared with `value` by `inequality`.
    pub fn inequality(
        mut self,
        field: &str,
        inequality: Inequality,
        value: impl Into<FirestoreValue>,
    ) -> Self {
        self.inequalities
            .push((field.to_owned(), inequality, value.into()));
        self
    }

    /// Ordered the other way than the type (a reversed query's reference).
    pub fn reversed(mut self) -> Self {
        self.reversed = true;
        self
    }

    /// At most `limit` documents.
    pub fn limit(mut self, limit: u32) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Starts after the document `id`, whose order field holds `order_value`.
    pub fn after(mut self, order_value: impl Into<FirestoreValue>, id: &str) -> Self {
        self.after = Some((order_value.into(), id.to_owned()));
        self
    }

    /// The query on `collection`: filtered, ordered by the order field then `__name__`,
    /// limited and started after the cursor.
    fn select<'db, T: Sharded>(
        &self,
        db: &'db FirestoreDb,
        collection: &str,
    ) -> FirestoreSelectDocBuilder<'db, FirestoreDb> {
        let direction = match (order_direction::<T>(), self.reversed) {
            (direction, false) => direction,
            (FirestoreQueryDirection::Ascending, true) => FirestoreQueryDirection::Descending,
            (FirestoreQueryDirection::Descending, true) => FirestoreQueryDirection::Ascending,
        };
        let by_order_field_alone = !self.inequalities.is_empty();
        let mut select = db
            .fluent()
            .select()
            .from(collection)
            .filter(self.filter::<T>())
            .order(move |o| match by_order_field_alone {
                true => o.fields([o.field(T::ORDER_FIELD).direction(direction.clone())]),
                false => o.fields([
                    o.field(T::ORDER_FIELD).direction(direction.clone()),
                    o.field("__name__").direction(direction.clone()),
                ]),
            });
        if let Some(limit) = self.limit {
            select = select.limit(limit);
        }
        if let Some((value, id)) = &self.after {
            let name = format!("{}/{collection}/{id}", db.get_documents_path());
            let reference = FirestoreValue {
                value: Value {
                    value_type: Some(ValueType::ReferenceValue(name)),
                },
            };
            select = select.start_at(FirestoreQueryCursor::AfterValue(vec![
                value.clone(),
                reference,
            ]));
        }
        select
    }

    fn filter<T: Sharded>(
        &self,
    ) -> impl Fn(FirestoreQueryFilterBuilder) -> Option<FirestoreQueryFilter> + Send + Sync + 'static
    {
        let this = self.clone();
        move |q| {
            let order = T::ORDER_FIELD;
            let equalities = this
                .equalities
                .iter()
                .map(|(field, value)| q.field(field.as_str()).eq(value.clone()));
            let lower = this
                .lower
                .clone()
                .and_then(|(v, inclusive)| match inclusive {
                    true => q.field(order).greater_than_or_equal(v),
                    false => q.field(order).greater_than(v),
                });
            let upper = this
                .upper
                .clone()
                .and_then(|(v, inclusive)| match inclusive {
                    true => q.field(order).less_than_or_equal(v),
                    false => q.field(order).less_than(v),
                });
            let any_of = this
                .any_of
                .clone()
                .and_then(|(field, values)| q.field(field.as_str()).is_in(values));
            let array = this
                .array
                .clone()
                .and_then(|(field, value, any)| match any {
                    true => q.field(field.as_str()).array_contains_any(value),
                    false => q.field(field.as_str()).array_contains(value),
                });
            let inequalities = this.inequalities.iter().map(|(field, inequality, value)| {
                let field = q.field(field.as_str());
                let value = value.clone();
                match inequality {
                    Inequality::GreaterThan => field.greater_than(value),
                    Inequality::AtLeast => field.greater_than_or_equal(value),
                    Inequality::LessThan => field.less_than(value),
                    Inequality::AtMost => field.less_than_or_equal(value),
                    Inequality::NotEqual => field.not_equal(value),
                    Inequality::NotIn => field.is_not_in(value),
                }
            });
            q.for_all(
                equalities
                    .chain([any_of, array, lower, upper])
                    .chain(inequalities)
                    .collect::<Vec<_>>(),
            )
        }
    }

    /// The ids it returns from `collection`, or the server's refusal.
    pub async fn ids<T: Sharded>(
        &self,
        db: &FirestoreDb,
        collection: &str,
    ) -> Result<Vec<String>, String> {
        self.select::<T>(db, collection)
            .query()
            .await
            .map(|documents| {
                documents
                    .iter()
                    .map(|d| crate::id_of(d).to_owned())
                    .collect()
            })
            .map_err(|error| error.to_string())
    }

    /// Firestore's `count` of it over `collection` (its limit and cursor applied).
    pub async fn count<T: Sharded>(&self, db: &FirestoreDb, collection: &str) -> u64 {
        let rows = self
            .select::<T>(db, collection)
            .aggregate(|a| a.fields([a.field("count").count()]))
            .query()
            .await
            .expect("the unsharded count");
        match rows[0].fields["count"].value_type {
            Some(ValueType::IntegerValue(count)) => count as u64,
            ref other => panic!("a count of {other:?}"),
        }
    }

    /// Firestore's `sum` and `avg` of `field` over every document it matches in `collection`,
    /// ordered by the order field alone (ordered by `__name__` too, Firestore refuses them).
    pub async fn sum_and_avg<T: Sharded>(
        &self,
        db: &FirestoreDb,
        collection: &str,
        field: &str,
    ) -> (Value, Value) {
        assert!(self.limit.is_none() && self.after.is_none());
        let direction = order_direction::<T>();
        let field = field.to_owned();
        let rows = db
            .fluent()
            .select()
            .from(collection)
            .filter(self.filter::<T>())
            .order(move |o| o.fields([o.field(T::ORDER_FIELD).direction(direction.clone())]))
            .aggregate(|a| {
                a.fields([
                    a.field("sum").sum(field.clone()),
                    a.field("avg").avg(field.clone()),
                ])
            })
            .query()
            .await
            .expect("the unsharded aggregation");
        let value = |name: &str| {
            rows[0]
                .fields
                .get(name)
                .cloned()
                .expect("an aggregate value")
        };
        (value("sum"), value("avg"))
    }
}

/// The ids the unsharded query `field == value` ordered by `T`'s order field returns from
/// `T`'s own collection: the same query with no shard filter, over every document (a
/// document without a current shard value is in it, and so makes a sharded query differ).
pub async fn unsharded_ids<T: Sharded>(
    db: &FirestoreDb,
    field: &'static str,
    value: impl Into<FirestoreValue>,
) -> Vec<String> {
    Unsharded::default()
        .equal(field, value)
        .ids::<T>(db, T::COLLECTION)
        .await
        .expect("the unsharded query")
}

/// Writes `documents` through sharded into `T::COLLECTION` and plainly (no shard) into
/// `plain`: the data a property test compares a sharded query with its unsharded twin on.
pub async fn write_both<T: sharded_runtime::bounds::TopLevel>(
    db: &FirestoreDb,
    plain: &str,
    documents: &[(String, T)],
) {
    let writer = db.create_simple_batch_writer().await.unwrap();
    for chunk in documents.chunks(400) {
        let mut batch = writer.new_batch();
        for (id, document) in chunk {
            T::collection(db)
                .upsert_in(&mut batch, id, document)
                .unwrap();
            batch
                .update_object(plain, id, document, None, None, Vec::new())
                .unwrap();
        }
        batch.write().await.unwrap();
    }
}

/// (parent, id) of each document, in order.
pub fn places<T, S: std::borrow::Borrow<Stored<T>>>(stored: &[S]) -> Vec<(Option<String>, String)> {
    stored
        .iter()
        .map(|s| (s.borrow().parent.clone(), s.borrow().id.clone()))
        .collect()
}

/// Every page of `query` of `limit`, to the end.
pub async fn paged<T: Sharded, const Q: u64, R: Reach, W: Window>(
    db: &FirestoreDb,
    query: &ShardedQuery<T, Q, R, W>,
    limit: u32,
) -> Vec<(Option<String>, String)> {
    let mut all = Vec::new();
    let mut next = None;
    loop {
        let page_query = query.clone().after(next.take());
        let page = page_query.page(db, limit).await.unwrap();
        all.extend(places(&page.items));
        match page.next {
            Some(cursor) => next = Some(cursor),
            None => return all,
        }
    }
}

/// Every page of `query` of `limit`, forward to the end.
pub async fn pages_forward<T: Sharded, const Q: u64, R: Reach, W: Window>(
    db: &FirestoreDb,
    query: &ShardedQuery<T, Q, R, W>,
    limit: u32,
) -> Vec<Page<T, Q, R>> {
    let mut pages = Vec::new();
    let mut next: Option<Cursor<T, Q, R>> = None;
    loop {
        let page_query = query.clone().after(next.take());
        let page = page_query.page(db, limit).await.unwrap();
        next = page.next.clone();
        pages.push(page);
        if next.is_none() {
            return pages;
        }
    }
}

/// From the last of `forward`'s pages back to the first with `before(previous)`: the same
/// pages (documents and cursors to go forward again), the first with no `previous`.
pub async fn check_paging_back<T, const Q: u64, R: Reach, W: Window>(
    db: &FirestoreDb,
    query: &ShardedQuery<T, Q, R, W>,
    forward: &[Page<T, Q, R>],
    limit: u32,
    what: &str,
) where
    T: Sharded + sharded_runtime::bounds::Reversible + PartialEq + std::fmt::Debug,
{
    let mut index = forward.len() - 1;
    let mut previous = forward[index].previous.clone();
    assert_eq!(
        previous.is_some(),
        forward.len() > 1 && !forward[index].items.is_empty(),
        "{what}: the last page's previous"
    );
    while let Some(cursor) = previous.take() {
        index -= 1;
        let page = query.clone().before(cursor).page(db, limit).await.unwrap();
        assert_eq!(
            page.items, forward[index].items,
            "{what}: page {index} going back"
        );
        assert_eq!(
            page.next.as_ref().map(Cursor::to_token),
            forward[index].next.as_ref().map(Cursor::to_token),
            "{what}: page {index}'s next going back"
        );
        assert_eq!(
            page.previous.is_some(),
            index > 0,
            "{what}: page {index}'s previous"
        );
        previous = page.previous;
    }
    assert_eq!(index, 0, "{what}: back to the first page");
}

/// [`check_query`], then, when the server ran the query (`expected` is `Ok`), every page of
/// `limit` forward and from the last back to the first ([`check_paging_back`]): what a test of
/// one query shape checks of each query it draws. `query` may be reversed already.
pub async fn check_query_and_paging<T, const Q: u64, R: Reach>(
    db: &FirestoreDb,
    query: ShardedQuery<T, Q, R>,
    expected: Result<Vec<String>, String>,
    limit: u32,
    what: &str,
) where
    T: Sharded + sharded_runtime::bounds::Reversible + PartialEq + std::fmt::Debug,
{
    let ran = expected.is_ok();
    check_query(db, query.clone(), expected, limit, what).await;
    if ran {
        let forward = pages_forward(db, &query, limit).await;
        check_paging_back(db, &query, &forward, limit, what).await;
    }
}

/// Where `document` is: its path below the database root (`rooms/r1/notes/n1`).
pub fn relative_path(document: &Document) -> &str {
    document
        .name
        .split_once("/documents/")
        .expect("a document name holds /documents/")
        .1
}

/// (parent, id) of `document`, as [`places`] gives them for stored items: the parent's path
/// below the database root, `None` at top level.
pub fn place_of(document: &Document) -> (Option<String>, String) {
    let segments: Vec<&str> = relative_path(document).split('/').collect();
    let parent = (segments.len() > 2).then(|| segments[..segments.len() - 2].join("/"));
    (parent, segments[segments.len() - 1].to_owned())
}

/// The order of an unsharded query as sharded orders it: `field`, then the document name,
/// both `direction`.
pub fn by_then_name(field: &str, direction: FirestoreQueryDirection) -> Vec<FirestoreQueryOrder> {
    vec![
        FirestoreQueryOrder::new(field.into(), direction.clone()),
        FirestoreQueryOrder::new("__name__".into(), direction),
    ]
}

/// Runs `check` on `datasets` databases of their own (named `{name}-{seed}-{n}`), each with
/// the one generator seeded by [`crate::seed`] (printed, to replay a failure) and a label:
/// the loop every property test over random data runs its types in.
pub async fn for_each_dataset<F>(test: &crate::TestDb, name: &str, datasets: usize, mut check: F)
where
    F: for<'a> FnMut(
        &'a FirestoreDb,
        &'a mut rand::rngs::StdRng,
        String,
    ) -> futures::future::LocalBoxFuture<'a, ()>,
{
    use rand::SeedableRng;
    let seed = crate::seed(name);
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for dataset in 0..datasets {
        let db = test
            .emulator
            .db(&format!("{name}-{seed}-{dataset}"))
            .await
            .expect("a database of the dataset's own");
        check(&db, &mut rng, format!("dataset {dataset}")).await;
    }
}
