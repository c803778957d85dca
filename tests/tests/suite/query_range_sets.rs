//! Range filters on several fields at once (`#[sharded(ranges(qty, price))]`, issue 43 item
//! 4) return exactly what the same query returns on an unsharded collection, on the
//! emulator: the server orders such a query by the order field, then the filtered fields by
//! their names (measured in `server_inequalities.rs`), and so do sharded's merge, cursors and
//! listeners. Random data with ties and documents without a field, both directions, 3, 40 and
//! 61 shard values, the whole collection, an equality and an `in` query, pages to the end and
//! back, counts and streams; each query served by an index of the plan. Sets not declared are
//! refused before sending, with the attribute that declares them.

use futures::StreamExt as _;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{
    Error, Sharded, ShardedQuery,
    reads::{WHOLE_COLLECTION, query_id},
};
use sharded_tests::equivalence::{
    FilterOp, Inequality, Scope, Unsharded, check_query_and_paging, filtered, for_each_dataset,
    ids, write_both,
};
use sharded_tests::test_db;

const VENUE: u64 = query_id("venue");

macro_rules! lot {
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        /// `ranges(qty, price)` names the set out of Firestore's order: it is planned and
        /// sent as (price, qty).
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, collection = $collection, reversible, ranges(qty, price))]
        struct $name {
            #[sharded(index)]
            venue: String,
            #[sharded(range)]
            price: i64,
            #[serde(skip_serializing_if = "Option::is_none")]
            #[sharded(range(all, venue))]
            qty: Option<f64>,
            #[sharded(range)]
            weight: i64,
            at: i64,
        }

        impl Lot for $name {
            fn new(venue: String, price: i64, qty: Option<f64>, at: i64) -> Self {
                $name {
                    venue,
                    price,
                    qty,
                    weight: at % 3,
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
            fn both_in_all(
                query: ShardedQuery<Self, WHOLE_COLLECTION>,
                reference: Unsharded,
                price: &[FilterOp<i64>],
                qty: &[FilterOp<f64>],
            ) -> (ShardedQuery<Self, WHOLE_COLLECTION>, Unsharded) {
                let (query, reference) = filtered(query, reference, $name::ranges().price, price);
                filtered(query, reference, $name::ranges().qty, qty)
            }
            fn both_in_venue(
                query: ShardedQuery<Self, VENUE>,
                reference: Unsharded,
                price: &[FilterOp<i64>],
                qty: &[FilterOp<f64>],
            ) -> (ShardedQuery<Self, VENUE>, Unsharded) {
                let (query, reference) = filtered(query, reference, $name::ranges().price, price);
                filtered(query, reference, $name::ranges().qty, qty)
            }
        }
    };
}

trait Lot:
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
    /// `query` filtered on `price` by `price` and on `qty` by `qty`, and the reference with
    /// the same (`qty`'s `range(all, venue)` marker takes those two queries).
    fn both_in_all(
        query: ShardedQuery<Self, WHOLE_COLLECTION>,
        reference: Unsharded,
        price: &[FilterOp<i64>],
        qty: &[FilterOp<f64>],
    ) -> (ShardedQuery<Self, WHOLE_COLLECTION>, Unsharded);
    fn both_in_venue(
        query: ShardedQuery<Self, VENUE>,
        reference: Unsharded,
        price: &[FilterOp<i64>],
        qty: &[FilterOp<f64>],
    ) -> (ShardedQuery<Self, VENUE>, Unsharded);
}

lot!(Lot3, 3, "desc", "lots3");
lot!(Lot40, 40, "asc", "lots40");
lot!(Lot61, 61, "desc", "lots61");

/// The index file of a type with a declared set, for the Firebase CLI's validation.
pub(crate) fn indexes_json() -> String {
    Lot3::indexes().to_json()
}

const VENUES: usize = 4;
const QTYS: [f64; 6] = [-1.5, -0.0, 0.0, 1.0, 2.5, f64::INFINITY];

fn random_lots<T: Lot>(rng: &mut StdRng) -> Vec<(String, T)> {
    let times = rng.random_range(2..6);
    let size = rng.random_range(60..140);
    (0..size)
        .map(|i| {
            let qty = match rng.random_range(0..5) {
                0 => None,
                _ => Some(QTYS[rng.random_range(0..QTYS.len())]),
            };
            let lot = T::new(
                format!("v{}", rng.random_range(0..VENUES)),
                rng.random_range(0..5),
                qty,
                rng.random_range(0..times),
            );
            (format!("l{:05}-{i}", rng.random_range(0..100_000)), lot)
        })
        .collect()
}

/// One or two filters on one field; a `!=` kind of filter (one per query, whatever the
/// fields: the server refuses a second, and so must sharded) now and then.
fn random_ops<V: Clone>(rng: &mut StdRng, pool: &[V]) -> Vec<FilterOp<V>> {
    let kind = rng.random_range(0..8);
    let mut value = || pool[rng.random_range(0..pool.len())].clone();
    let one = |inequality, value| FilterOp::One(inequality, value);
    match kind {
        0 => vec![one(Inequality::GreaterThan, value())],
        1 => vec![one(Inequality::AtLeast, value())],
        2 => vec![one(Inequality::LessThan, value())],
        3 => vec![one(Inequality::AtMost, value())],
        4 => vec![
            one(Inequality::AtLeast, value()),
            one(Inequality::LessThan, value()),
        ],
        5 => vec![one(Inequality::NotEqual, value())],
        6 => vec![FilterOp::NotIn(vec![value(), value()])],
        _ => vec![
            one(Inequality::GreaterThan, value()),
            one(Inequality::AtMost, value()),
        ],
    }
}

async fn check_one<T: Lot, const Q: u64, R: sharded_runtime::bounds::Reach>(
    db: &FirestoreDb,
    plain: &str,
    query: ShardedQuery<T, Q, R>,
    reference: Unsharded,
    limit: u32,
    what: &str,
) {
    let expected = reference.ids::<T>(db, plain).await;
    if expected.is_ok() {
        // The chunk queries order by (at, price, qty, name): the plan says so, and the
        // index it needs holds them in that order.
        let plan = query.plan().unwrap();
        assert_eq!(plan.then_by(), ["price", "qty"], "{what}");
        let need = query.index_need().unwrap();
        let orders: Vec<&str> = need.orders.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(orders, ["at", "price", "qty"], "{what}");
    }
    check_query_and_paging(db, query, expected, limit, what).await;
}

async fn check_random_sets<T: Lot>(db: &FirestoreDb, rng: &mut StdRng, label: &str) {
    let plain = format!("plain_{}", T::COLLECTION);
    let documents = random_lots::<T>(rng);
    write_both(db, &plain, &documents).await;
    let venues: Vec<String> = (0..VENUES + 1).map(|v| format!("v{v}")).collect();
    let prices: Vec<i64> = (-1..6).collect();
    for round in 0..6 {
        let limit = rng.random_range(1..20);
        let reversed = rng.random_bool(0.5);
        let price_ops = random_ops(rng, &prices);
        let qty_ops = random_ops(rng, &QTYS);
        let scope = Scope::draw(rng, &venues, 1..3);
        let what = format!(
            "{label} round {round} limit {limit} reversed {reversed}: price {price_ops:?}, qty {qty_ops:?}, {}",
            scope.describe("venue")
        );
        let reference = match reversed {
            true => Unsharded::default().reversed(),
            false => Unsharded::default(),
        };
        let reference = scope.narrow(reference, "venue");
        let query = match scope {
            Scope::All => {
                let (query, reference) = T::both_in_all(T::all(), reference, &price_ops, &qty_ops);
                check_either_way(db, &plain, query, reference, reversed, limit, &what).await;
                continue;
            }
            Scope::Equal(venue) => T::venue(venue),
            Scope::AnyOf(venues) => T::venues_in(venues),
        };
        let (query, reference) = T::both_in_venue(query, reference, &price_ops, &qty_ops);
        check_either_way(db, &plain, query, reference, reversed, limit, &what).await;
    }
}

async fn check_either_way<T: Lot, const Q: u64>(
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
async fn filters_on_a_declared_set_equal_the_unsharded_query_at_3_40_and_61_shards() {
    let test = test_db("query-range-sets").await;
    for_each_dataset(&test, "range-sets", 2, |db, rng, label| {
        Box::pin(async move {
            check_random_sets::<Lot3>(db, rng, &format!("3 shards, {label}")).await;
            check_random_sets::<Lot40>(db, rng, &format!("40 shards, {label}")).await;
            check_random_sets::<Lot61>(db, rng, &format!("61 shards, {label}")).await;
        })
    })
    .await;
}

/// A listener on a query filtered on the set shows what a fetch of it returns, first and
/// after writes that move documents into, out of and within it.
#[tokio::test]
async fn a_listener_on_a_declared_set_follows_its_fetch() {
    let test = test_db("query-range-sets-live").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("range-sets-live"));
    let lots = Lot40::collection(db);
    for (id, lot) in random_lots::<Lot40>(&mut rng) {
        lots.upsert(&id, &lot).await.unwrap();
    }
    let query = Lot40::query()
        .all()
        .filter(Lot40::ranges().price.at_least(1))
        .filter(Lot40::ranges().qty.less_than(2.0))
        .limit(15);
    let mut live = query.listen(db).unwrap();
    let mut shown: Option<Vec<String>> = None;
    for step in 0..4 {
        let fetched = ids(&query.fetch_stored(db).await.unwrap());
        // A listener shows a snapshot when its result changes: wait for the one that
        // shows what the fetch read (each snapshot between is a state the writes passed).
        while shown.as_ref() != Some(&fetched) {
            let snapshot = tokio::time::timeout(std::time::Duration::from_secs(30), live.next())
                .await
                .unwrap_or_else(|_| {
                    panic!(
                        "step {step}: no snapshot of {fetched:?} in 30 s; the last showed {shown:?}"
                    )
                })
                .expect("the listener goes on")
                .unwrap();
            shown = Some(ids(&snapshot.documents));
        }
        // Writes that enter the result at its start (the earliest `at`, ordered among the
        // ties by price, then qty) and one that leaves it (its price below the filter's).
        for n in 0..3 {
            let lot = Lot40::new(
                format!("v{}", rng.random_range(0..VENUES)),
                rng.random_range(1..5),
                Some(QTYS[rng.random_range(0..4)]),
                0,
            );
            lots.upsert(&format!("live-{step}-{n}"), &lot)
                .await
                .unwrap();
        }
        if let Some(leaving) = fetched.get(fetched.len() / 2) {
            let mut lot = lots.get(leaving).await.unwrap().unwrap();
            lot.price = 0;
            lots.upsert(leaving, &lot).await.unwrap();
        }
    }
}

/// Several fields are filtered together only as a set the struct declares: another pair, a
/// set beside an OR, and a sum are refused before anything is sent, with what to declare;
/// a second `!=` kind of filter on another field is refused as Firestore refuses it.
#[tokio::test]
async fn filters_on_fields_not_declared_together_are_refused_before_sending() {
    let test = test_db("query-range-sets-misuse").await;
    let db = &test.db;
    let ranges = Lot3::ranges();
    let refused = |result: sharded_runtime::Result<Vec<Lot3>>, why: &str| match result {
        Err(Error::InvalidQuery(message)) => assert!(message.contains(why), "{why}: {message}"),
        other => panic!("{why}: {other:?}"),
    };
    let undeclared = Lot3::query()
        .all()
        .filter(ranges.price.greater_than(1))
        .filter(ranges.weight.less_than(2));
    assert!(undeclared.plan().is_err());
    refused(
        undeclared.fetch(db).await,
        "range filters on `price`, `weight`",
    );
    refused(
        Lot3::query()
            .all()
            .filter(ranges.price.greater_than(1))
            .filter(ranges.qty.less_than(2.0))
            .filter(ranges.weight.less_than(2))
            .fetch(db)
            .await,
        "#[sharded(ranges(...))]",
    );
    refused(
        Lot3::query()
            .all()
            .filter(ranges.price.not_equal(1))
            .filter(ranges.qty.not_in([2.0]))
            .fetch(db)
            .await,
        "one `!=` or `not-in` per query",
    );
    refused(
        Lot3::query()
            .venue("v1")
            .or(Lot3::query().venue("v2"))
            .filter(ranges.price.greater_than(1))
            .filter(ranges.qty.less_than(2.0))
            .fetch(db)
            .await,
        "OR",
    );
    let sum = Lot3::query()
        .all()
        .filter(ranges.price.greater_than(1))
        .filter(ranges.qty.less_than(2.0))
        .count(db)
        .await;
    assert_eq!(sum.unwrap(), 0, "a count is taken");
    // The set's indexes: the whole collection and the venue query, each direction; the
    // query comparing `price` by equality has none (a range beside it is refused).
    let plan = Lot3::indexes();
    let with_set = plan
        .indexes
        .iter()
        .filter(|index| {
            let fields: Vec<&str> = index.fields.iter().map(|f| f.field_path.as_str()).collect();
            fields.ends_with(&["at", "price", "qty"])
        })
        .count();
    assert_eq!(with_set, 4, "{:#?}", plan.indexes);
}

/// A subcollection whose group is queried too, with a declared set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 40,
    order_by = "at",
    direction = "desc",
    parent = "meters",
    collection = "gauges40",
    collection_group,
    ranges(value, load)
)]
struct Gauge {
    #[sharded(range)]
    value: i64,
    #[sharded(range)]
    load: i64,
    at: i64,
}

/// The unsharded query under `meter` (or over the group) with `value >= v` and `load < l`,
/// ordered by `at` alone: the server orders by `at`, then `load`, then `value` (by name),
/// then the name.
async fn gauge_reference(
    db: &FirestoreDb,
    meter: Option<&str>,
    v: i64,
    l: i64,
) -> Vec<(Option<String>, String)> {
    let mut select = db.fluent().select().from("plain_gauges40");
    select = match meter {
        Some(meter) => select.parent(db.parent_path("meters", meter).unwrap()),
        None => select.all_descendants(),
    };
    let documents = select
        .filter(move |q| {
            q.for_all([
                q.field("value").greater_than_or_equal(v),
                q.field("load").less_than(l),
            ])
        })
        .order(|o| o.fields([o.field("at").descending()]))
        .query()
        .await
        .unwrap();
    documents
        .iter()
        .map(sharded_tests::equivalence::place_of)
        .collect()
}

/// Per parent and over the group, at 40 shard values in two chunks: pages, counts and a
/// listener's first snapshot equal the unsharded query's, each query served by the plan's
/// indexes (the group's in their own scope), and the order is (at, load, value, name).
#[tokio::test]
async fn a_declared_set_per_parent_and_over_the_group_equals_the_unsharded_query() {
    let test = test_db("query-range-sets-group").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("range-sets-group"));
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for i in 0..150 {
        // Ids repeat across meters, and every ordered field ties across them.
        let meter = format!("m{}", i % 5);
        let id = format!("g{}", i % 37);
        let gauge = Gauge {
            value: rng.random_range(0..5),
            load: rng.random_range(0..5),
            at: rng.random_range(0..4),
        };
        let parent = sharded_runtime::Parent::<Gauge>::new(&[&meter]).unwrap();
        Gauge::collection_in(db, &parent)
            .upsert_in(&mut batch, &id, &gauge)
            .unwrap();
        db.fluent()
            .update()
            .in_col("plain_gauges40")
            .document_id(&id)
            .parent(db.parent_path("meters", &meter).unwrap())
            .object(&gauge)
            .add_to_batch(&mut batch)
            .unwrap();
    }
    batch.write().await.unwrap();
    let ranges = Gauge::ranges();
    for round in 0..4 {
        let (v, l) = (rng.random_range(0..4), rng.random_range(1..5));
        let limit = rng.random_range(1..12);
        let what = format!("round {round}: value >= {v}, load < {l}, limit {limit}");
        let meter = format!("m{}", rng.random_range(0..5));
        let parent = sharded_runtime::Parent::<Gauge>::new(&[&meter]).unwrap();
        let filtered = |query: ShardedQuery<Gauge, WHOLE_COLLECTION>| {
            query
                .filter(ranges.value.at_least(v))
                .filter(ranges.load.less_than(l))
        };
        let query = filtered(Gauge::query().all()).in_parent(&parent);
        let group = filtered(Gauge::query().all()).in_group();
        assert_eq!(group.plan().unwrap().then_by(), ["load", "value"], "{what}");
        let expected = gauge_reference(db, Some(&meter), v, l).await;
        assert_eq!(
            sharded_tests::equivalence::paged(db, &query, limit).await,
            expected,
            "{what}: {meter}"
        );
        assert_eq!(
            query.count(db).await.unwrap(),
            expected.len() as u64,
            "{what}"
        );
        let expected = gauge_reference(db, None, v, l).await;
        assert!(!expected.is_empty(), "{what}: the group matches nothing");
        assert_eq!(
            sharded_tests::equivalence::paged(db, &group, limit).await,
            expected,
            "{what}: group"
        );
        assert_eq!(
            group.count(db).await.unwrap(),
            expected.len() as u64,
            "{what}"
        );
        for need in [query.index_need().unwrap(), group.index_need().unwrap()] {
            assert!(
                Gauge::indexes().serving(&need).is_some(),
                "{what}: {need:?}"
            );
        }
        let mut live = group.clone().listen(db).unwrap();
        let first = live.next().await.unwrap().unwrap();
        assert_eq!(
            sharded_tests::equivalence::places(&first.documents),
            expected,
            "{what}: the group's first snapshot"
        );
    }
}
