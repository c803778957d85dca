//! Range, `!=` and `not-in` filters on fields other than the order field
//! (`#[sharded(range)]`, `T::query().venue(v).filter(T::ranges().price.greater_than(3))`)
//! return exactly what the same query returns on an unsharded collection ordered by the order
//! field alone, on the emulator: the server orders such a query by the filtered field after
//! the order field, then by name (measured in `server_inequalities.rs`), and so do sharded's
//! merge and cursors. Random data with ties (and documents without the field, and `-0.0`,
//! `±∞`), both directions, 3, 40 and 61 shard values, equality and `in` queries, two filters
//! on one field, pages to the end and back, counts, streams, and the index that serves each.

use futures::StreamExt as _;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::bounds::Reach;
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{
    Cursor, Error, Sharded, ShardedQuery,
    reads::{RangeField, WHOLE_COLLECTION, query_id},
};
use sharded_tests::equivalence::{
    FilterOp, Inequality, Scope, Unsharded, check_query_and_paging, filtered, for_each_dataset,
    paged, place_of, write_both,
};
use sharded_tests::test_db;

const VENUE: u64 = query_id("venue");

/// A projection of every `Trade` type.
#[derive(Debug, Deserialize, sharded_runtime::StoredNames)]
#[allow(dead_code)]
struct VenueOnly {
    venue: String,
}

macro_rules! trade {
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, collection = $collection, reversible)]
        struct $name {
            #[sharded(index)]
            venue: String,
            #[sharded(range)]
            price: i64,
            #[serde(skip_serializing_if = "Option::is_none")]
            #[sharded(range(all, venue))]
            qty: Option<f64>,
            at: i64,
        }

        impl Trade for $name {
            fn new(venue: String, price: i64, qty: Option<f64>, at: i64) -> Self {
                $name {
                    venue,
                    price,
                    qty,
                    at,
                }
            }
            fn all() -> ShardedQuery<Self, WHOLE_COLLECTION> {
                $name::query().all()
            }
            fn venue(venue: String) -> ShardedQuery<Self, VENUE> {
                $name::query().venue(venue)
            }
            fn venues_in(venues: Vec<String>) -> ShardedQuery<Self, VENUE> {
                $name::query().venue_in(venues)
            }
            fn price() -> RangeField<Self, i64> {
                $name::ranges().price
            }
            fn qty_in_all(
                query: ShardedQuery<Self, WHOLE_COLLECTION>,
                reference: Unsharded,
                ops: &[FilterOp<f64>],
            ) -> (ShardedQuery<Self, WHOLE_COLLECTION>, Unsharded) {
                filtered(query, reference, $name::ranges().qty, ops)
            }
            fn qty_in_venue(
                query: ShardedQuery<Self, VENUE>,
                reference: Unsharded,
                ops: &[FilterOp<f64>],
            ) -> (ShardedQuery<Self, VENUE>, Unsharded) {
                filtered(query, reference, $name::ranges().qty, ops)
            }
        }
    };
}

trait Trade:
    Sharded<OrderValue = i64>
    + sharded_runtime::bounds::TopLevel
    + sharded_runtime::bounds::Reversible
    + Clone
    + PartialEq
    + std::fmt::Debug
{
    fn new(venue: String, price: i64, qty: Option<f64>, at: i64) -> Self;
    fn all() -> ShardedQuery<Self, WHOLE_COLLECTION>;
    fn venue(venue: String) -> ShardedQuery<Self, VENUE>;
    fn venues_in(venues: Vec<String>) -> ShardedQuery<Self, VENUE>;
    fn price() -> RangeField<Self, i64>;
    /// `qty` is declared `range(all, venue)`: its marker type takes those two queries.
    fn qty_in_all(
        query: ShardedQuery<Self, WHOLE_COLLECTION>,
        reference: Unsharded,
        ops: &[FilterOp<f64>],
    ) -> (ShardedQuery<Self, WHOLE_COLLECTION>, Unsharded);
    fn qty_in_venue(
        query: ShardedQuery<Self, VENUE>,
        reference: Unsharded,
        ops: &[FilterOp<f64>],
    ) -> (ShardedQuery<Self, VENUE>, Unsharded);
}

trade!(Trade3, 3, "desc", "trades3");
trade!(Trade40, 40, "asc", "trades40");
trade!(Trade61, 61, "desc", "trades61");

const VENUES: usize = 6;
const QTYS: [f64; 7] = [-1.5, -0.0, 0.0, 1.0, 2.5, f64::INFINITY, f64::NEG_INFINITY];

fn random_trades<T: Trade>(rng: &mut StdRng) -> Vec<(String, T)> {
    let times = rng.random_range(2..8);
    let size = rng.random_range(60..160);
    (0..size)
        .map(|i| {
            let qty = match rng.random_range(0..5) {
                0 => None,
                _ => Some(QTYS[rng.random_range(0..QTYS.len())]),
            };
            let trade = T::new(
                format!("v{}", rng.random_range(0..VENUES)),
                rng.random_range(0..8),
                qty,
                rng.random_range(0..times),
            );
            (format!("t{:05}-{i}", rng.random_range(0..100_000)), trade)
        })
        .collect()
}

fn random_ops<V: Clone>(rng: &mut StdRng, pool: &[V]) -> Vec<FilterOp<V>> {
    let kind = rng.random_range(0..10);
    let count = rng.random_range(1..=4);
    let mut value = || pool[rng.random_range(0..pool.len())].clone();
    let one = |inequality, value| FilterOp::One(inequality, value);
    match kind {
        0 => vec![one(Inequality::GreaterThan, value())],
        1 => vec![one(Inequality::AtLeast, value())],
        2 => vec![one(Inequality::LessThan, value())],
        3 => vec![one(Inequality::AtMost, value())],
        4 => vec![one(Inequality::NotEqual, value())],
        5 => vec![FilterOp::NotIn((0..count).map(|_| value()).collect())],
        // Two filters on one field: a window.
        6 => vec![
            one(Inequality::AtLeast, value()),
            one(Inequality::LessThan, value()),
        ],
        7 => vec![
            one(Inequality::GreaterThan, value()),
            one(Inequality::NotEqual, value()),
        ],
        // One `!=` kind of filter per query: the server refuses a second, so must sharded.
        8 => vec![
            one(Inequality::NotEqual, value()),
            one(Inequality::NotEqual, value()),
        ],
        _ => vec![
            one(Inequality::NotEqual, value()),
            FilterOp::NotIn((0..count).map(|_| value()).collect()),
        ],
    }
}

async fn check_one<T: Trade, const Q: u64, R: Reach>(
    db: &FirestoreDb,
    plain: &str,
    query: ShardedQuery<T, Q, R>,
    reference: Unsharded,
    limit: u32,
    what: &str,
) {
    let expected = reference.ids::<T>(db, plain).await;
    if let Ok(expected) = &expected {
        // A projection reads the filtered field too, which the merge orders by.
        let projected = query.fetch_as::<VenueOnly>(db).await.unwrap();
        let ids: Vec<&str> = projected.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, *expected, "{what}: fetch_as");
    }
    check_query_and_paging(db, query, expected, limit, what).await;
}

async fn check_random_filters<T: Trade>(db: &FirestoreDb, rng: &mut StdRng, label: &str) {
    let plain = format!("plain_{}", T::COLLECTION);
    let documents = random_trades::<T>(rng);
    write_both(db, &plain, &documents).await;
    let venues: Vec<String> = (0..VENUES + 1).map(|v| format!("v{v}")).collect();
    let prices: Vec<i64> = (-1..9).collect();
    for round in 0..8 {
        let limit = rng.random_range(1..25);
        // The query: the whole collection, one venue, or some (`in`).
        let scope = Scope::draw(rng, &venues, 1..4);
        let reversed = rng.random_bool(0.5);
        let price = rng.random_bool(0.5);
        let price_ops = random_ops(rng, &prices);
        let qty_ops = random_ops(rng, &QTYS);
        let filters = match price {
            true => format!("price {price_ops:?}"),
            false => format!("qty {qty_ops:?}"),
        };
        let what = format!(
            "{label} round {round} limit {limit} reversed {reversed}: {}, {filters}",
            scope.describe("venue")
        );
        let reference = match reversed {
            true => Unsharded::default().reversed(),
            false => Unsharded::default(),
        };
        let reference = scope.narrow(reference, "venue");
        let query = match scope {
            Scope::All => {
                let (query, reference) = match price {
                    true => filtered(T::all(), reference, T::price(), &price_ops),
                    false => T::qty_in_all(T::all(), reference, &qty_ops),
                };
                check_either_way(db, &plain, query, reference, reversed, limit, &what).await;
                continue;
            }
            Scope::Equal(venue) => T::venue(venue),
            Scope::AnyOf(venues) => T::venues_in(venues),
        };
        let (query, reference) = match price {
            true => filtered(query, reference, T::price(), &price_ops),
            false => T::qty_in_venue(query, reference, &qty_ops),
        };
        check_either_way(db, &plain, query, reference, reversed, limit, &what).await;
    }
}

/// `query` checked as it is, or reversed (its reference reversed already).
async fn check_either_way<T: Trade, const Q: u64>(
    db: &FirestoreDb,
    plain: &str,
    query: ShardedQuery<T, Q>,
    reference: Unsharded,
    reversed: bool,
    limit: u32,
    what: &str,
) {
    match reversed {
        true => check_one(db, plain, query.reversed(), reference, limit, what).await,
        false => check_one(db, plain, query, reference, limit, what).await,
    }
}

#[tokio::test]
async fn filters_on_other_fields_equal_the_unsharded_query_at_3_40_and_61_shards() {
    let test = test_db("query-ranges").await;
    for_each_dataset(&test, "ranges", 2, |db, rng, label| {
        Box::pin(async move {
            check_random_filters::<Trade3>(db, rng, &format!("3 shards, {label}")).await;
            check_random_filters::<Trade40>(db, rng, &format!("40 shards, {label}")).await;
            check_random_filters::<Trade61>(db, rng, &format!("61 shards, {label}")).await;
        })
    })
    .await;
}

/// What sharded refuses before sending, each with the reason: filters on two fields, a
/// `not-in` beside an `in` or a `!=`, a range on a field the query compares for equality, an
/// OR, a sum, too many `not-in` values, and a cursor without the filtered field's value; and
/// what `not-in` costs: one query per shard value.
#[tokio::test]
async fn misuse_of_filters_is_refused_before_sending() {
    let test = test_db("query-ranges-misuse").await;
    let db = &test.db;
    let refused = |result: sharded_runtime::Result<Vec<Trade3>>, why: &str| match result {
        Err(Error::InvalidQuery(message)) => {
            assert!(message.contains(why), "{message}")
        }
        other => panic!("{why}: {other:?}"),
    };
    let price = Trade3::ranges().price;
    let qty = Trade3::ranges().qty;
    refused(
        Trade3::query()
            .all()
            .filter(price.greater_than(1))
            .filter(qty.less_than(2.0))
            .fetch(db)
            .await,
        "range filters on `price`, `qty`",
    );
    refused(
        Trade3::query()
            .venue_in(["v1", "v2"])
            .filter(price.not_in([1, 2]))
            .fetch(db)
            .await,
        "no `not-in`",
    );
    refused(
        Trade3::query()
            .all()
            .filter(price.not_in([1]))
            .filter(price.not_equal(2))
            .fetch(db)
            .await,
        "one `!=` or `not-in` per query",
    );
    refused(
        Trade3::query()
            .all()
            .filter(price.not_equal(1))
            .filter(price.not_equal(2))
            .fetch(db)
            .await,
        "one `!=` or `not-in` per query",
    );
    refused(
        Trade3::query()
            .all()
            .filter(price.not_in(0..11))
            .fetch(db)
            .await,
        "with 11 values",
    );
    refused(
        Trade3::query()
            .venue("v1")
            .or(Trade3::query().venue("v2"))
            .filter(price.greater_than(1))
            .fetch(db)
            .await,
        "OR",
    );
    let sum = Trade3::query()
        .all()
        .filter(price.greater_than(1))
        .count(db)
        .await;
    assert_eq!(sum.unwrap(), 0, "a count is taken");
    // A cursor made from an order value alone has no price to start after.
    let cursor = Cursor::at(&3, "t1").unwrap();
    match Trade3::query()
        .all()
        .filter(price.greater_than(1))
        .after(cursor)
        .fetch(db)
        .await
    {
        Err(Error::InvalidCursor(message)) => assert!(message.contains("`price`"), "{message}"),
        other => panic!("{other:?}"),
    }
    // `not-in` reads one shard value per query; a range reads them all in one.
    let not_in = Trade40::query()
        .all()
        .filter(Trade40::ranges().price.not_in([1]));
    assert_eq!(not_in.chunk_queries().unwrap(), 40);
    let range = Trade40::query()
        .all()
        .filter(Trade40::ranges().price.greater_than(1));
    assert_eq!(range.chunk_queries().unwrap(), 2);
    // The index each is served by: the query's own with the field after the order field.
    for need in [
        not_in.index_need().unwrap(),
        range.index_need().unwrap(),
        Trade40::query()
            .venue("v1")
            .filter(Trade40::ranges().qty.at_most(1.0))
            .reversed()
            .index_need()
            .unwrap(),
    ] {
        let index = Trade40::indexes().serving(&need).cloned();
        let index = index.unwrap_or_else(|| panic!("no index serves {need:?}"));
        assert_eq!(
            index.fields.len(),
            need.orders.len() + need.equalities.len()
        );
    }
}

/// A sum of a filtered query is refused: the plan has no index with both fields.
#[tokio::test]
async fn a_sum_of_a_filtered_query_is_refused() {
    #[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
    #[sharded(shards = 3, order_by = "at", collection = "summed_trades")]
    struct Summed {
        #[sharded(range)]
        price: i64,
        #[sharded(aggregate)]
        qty: i64,
        at: i64,
    }
    let test = test_db("query-ranges-sum").await;
    let summed = Summed::query()
        .all()
        .filter(Summed::ranges().price.greater_than(1))
        .sum(&test.db, Summed::aggregates().qty)
        .await;
    assert!(
        matches!(&summed, Err(Error::InvalidQuery(why)) if why.contains("filtered by range on `price`")),
        "{summed:?}"
    );
}

macro_rules! metered {
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, parent = "meters", collection = $collection, collection_group)]
        struct $name {
            #[sharded(range)]
            value: i64,
            at: i64,
        }

        impl Metered for $name {
            fn new(value: i64, at: i64) -> Self {
                $name { value, at }
            }
            fn value() -> RangeField<Self, i64> {
                $name::ranges().value
            }
            fn all() -> ShardedQuery<Self, WHOLE_COLLECTION> {
                $name::query().all()
            }
        }
    };
}

trait Metered:
    Sharded + sharded_runtime::bounds::ParentDepth<1> + sharded_runtime::CollectionGroup
{
    fn new(value: i64, at: i64) -> Self;
    fn value() -> RangeField<Self, i64>;
    fn all() -> ShardedQuery<Self, WHOLE_COLLECTION>;
}

metered!(Metered3, 3, "desc", "metered3");
metered!(Metered61, 61, "asc", "metered61");

/// The unsharded query under `meter` (or across every meter) with `ops` on `value`, ordered
/// by `at` alone: (parent path, id) of each result.
async fn metered_reference<T: Sharded>(
    db: &FirestoreDb,
    meter: Option<&str>,
    ops: &[FilterOp<i64>],
) -> Result<Vec<(Option<String>, String)>, String> {
    let plain = format!("plain_{}", T::COLLECTION);
    let direction = match T::DESCRIPTION.direction {
        sharded_runtime::indexes::Direction::Ascending => {
            sharded_runtime::firestore::FirestoreQueryDirection::Ascending
        }
        sharded_runtime::indexes::Direction::Descending => {
            sharded_runtime::firestore::FirestoreQueryDirection::Descending
        }
    };
    let mut select = db.fluent().select().from(plain.as_str());
    select = match meter {
        Some(meter) => select.parent(db.parent_path("meters", meter).unwrap()),
        None => select.all_descendants(),
    };
    let ops = ops.to_vec();
    let documents = select
        .filter(move |q| {
            q.for_all(ops.iter().map(|op| {
                let field = q.field("value");
                match op.clone() {
                    FilterOp::One(Inequality::GreaterThan, v) => field.greater_than(v),
                    FilterOp::One(Inequality::AtLeast, v) => field.greater_than_or_equal(v),
                    FilterOp::One(Inequality::LessThan, v) => field.less_than(v),
                    FilterOp::One(Inequality::AtMost, v) => field.less_than_or_equal(v),
                    FilterOp::One(Inequality::NotEqual, v) => field.not_equal(v),
                    FilterOp::One(Inequality::NotIn, _) => unreachable!(),
                    FilterOp::NotIn(values) => field.is_not_in(values),
                }
            }))
        })
        .order(move |o| o.fields([o.field("at").direction(direction.clone())]))
        .query()
        .await
        .map_err(|refused| refused.to_string())?;
    Ok(documents.iter().map(place_of).collect())
}

fn with_ops<T: Metered, const Q: u64, R: Reach>(
    mut query: ShardedQuery<T, Q, R>,
    ops: &[FilterOp<i64>],
) -> ShardedQuery<T, Q, R> {
    let field = T::value();
    for op in ops {
        query = query.filter(match op.clone() {
            FilterOp::One(Inequality::GreaterThan, v) => field.greater_than(v),
            FilterOp::One(Inequality::AtLeast, v) => field.at_least(v),
            FilterOp::One(Inequality::LessThan, v) => field.less_than(v),
            FilterOp::One(Inequality::AtMost, v) => field.at_most(v),
            FilterOp::One(Inequality::NotEqual, v) => field.not_equal(v),
            FilterOp::One(Inequality::NotIn, _) => unreachable!(),
            FilterOp::NotIn(values) => field.not_in(values),
        });
    }
    query
}

async fn check_metered<T: Metered>(db: &FirestoreDb, rng: &mut StdRng) {
    let plain = format!("plain_{}", T::COLLECTION);
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for i in 0..150 {
        // Ids repeat across meters, and both ordered fields tie across them.
        let meter = format!("m{}", i % 5);
        let id = format!("e{}", i % 37);
        let document = T::new(rng.random_range(0..6), rng.random_range(0..5));
        let parent = sharded_runtime::Parent::<T>::new(&[&meter]).unwrap();
        T::collection_in(db, &parent)
            .upsert_in(&mut batch, &id, &document)
            .unwrap();
        db.fluent()
            .update()
            .in_col(&plain)
            .document_id(&id)
            .parent(db.parent_path("meters", &meter).unwrap())
            .object(&document)
            .add_to_batch(&mut batch)
            .unwrap();
    }
    batch.write().await.unwrap();
    let values: Vec<i64> = (-1..7).collect();
    for round in 0..4 {
        let ops = random_ops(rng, &values);
        let limit = rng.random_range(1..12);
        let what = format!("{} round {round} {ops:?} limit {limit}", T::COLLECTION);
        let meter = format!("m{}", rng.random_range(0..5));
        let parent = sharded_runtime::Parent::<T>::new(&[&meter]).unwrap();
        let query = with_ops(T::all().in_parent(&parent), &ops);
        let group = with_ops(T::all().in_group(), &ops);
        let Ok(expected) = metered_reference::<T>(db, Some(&meter), &ops).await else {
            // The server refuses it (two `!=`), so sharded refuses it before sending.
            for refused in [
                query.fetch_stored(db).await.err(),
                group.fetch_stored(db).await.err(),
            ] {
                assert!(matches!(refused, Some(Error::InvalidQuery(_))), "{what}");
            }
            continue;
        };
        assert_eq!(paged(db, &query, limit).await, expected, "{what}: {meter}");
        assert_eq!(
            query.count(db).await.unwrap(),
            expected.len() as u64,
            "{what}: {meter} count"
        );
        let expected = metered_reference::<T>(db, None, &ops).await.unwrap();
        assert_eq!(paged(db, &group, limit).await, expected, "{what}: group");
        assert_eq!(
            group.count(db).await.unwrap(),
            expected.len() as u64,
            "{what}: group count"
        );
        for need in [query.index_need().unwrap(), group.index_need().unwrap()] {
            assert!(T::indexes().serving(&need).is_some(), "{what}: {need:?}");
        }
        // A live query's first snapshot: the same documents in the same order.
        let mut live = group.clone().listen(db).unwrap();
        let first = live.next().await.unwrap().unwrap();
        let shown: Vec<(Option<String>, String)> = first
            .documents
            .iter()
            .map(|d| (d.parent.clone(), d.id.clone()))
            .collect();
        assert_eq!(shown, expected, "{what}: the group's first snapshot");
    }
}

#[tokio::test]
async fn filters_per_parent_over_a_group_and_live_equal_the_unsharded_ones() {
    let test = test_db("query-ranges-group").await;
    let seed =
        sharded_tests::seed("filters_per_parent_over_a_group_and_live_equal_the_unsharded_ones");
    let mut rng = StdRng::seed_from_u64(seed);
    check_metered::<Metered3>(&test.db, &mut rng).await;
    check_metered::<Metered61>(&test.db, &mut rng).await;
}
