//! Compound equality on declared field sets, and `sum`/`avg`, against the same queries on an
//! unsharded copy of the data, on the emulator: random data with many equal order values,
//! random field values, ranges and limits, for 3 shard values (one query), 40 (two chunk
//! queries) and 61 (three), in both directions. Documents, order, pages, counts, sums and
//! averages; counts also with a limit, after a cursor, and with both (which Firestore's count
//! applies); integer sums exact, including sums past `i64::MAX`.

use std::collections::HashMap;
use std::ops::Bound;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};
use sharded_runtime::{
    Cursor, Sharded, ShardedQuery,
    reads::{Number, query_id},
};
use sharded_tests::equivalence::{Unsharded, check_query};
use sharded_tests::test_db;

macro_rules! trades {
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, collection = $collection)]
        #[sharded(index(venue, side), index(venue, side, desk))]
        struct $name {
            venue: String,
            side: String,
            #[serde(rename = "desk name")]
            desk: String,
            #[sharded(aggregate)]
            qty: i64,
            #[sharded(aggregate)]
            price: f64,
            at: i64,
        }

        impl Trade for $name {
            fn new(venue: &str, side: &str, desk: &str, qty: i64, price: f64, at: i64) -> Self {
                $name {
                    venue: venue.into(),
                    side: side.into(),
                    desk: desk.into(),
                    qty,
                    price,
                    at,
                }
            }
            fn pair(venue: &str, side: &str) -> ShardedQuery<Self, { query_id("venue_and_side") }> {
                $name::query().venue_and_side(venue, side)
            }
            fn triple(
                venue: &str,
                side: &str,
                desk: &str,
            ) -> ShardedQuery<Self, { query_id("venue_and_side_and_desk") }> {
                $name::query().venue_and_side_and_desk(venue, side, desk)
            }
            fn at(&self) -> i64 {
                self.at
            }
            fn all() -> sharded_runtime::WholeCollection<Self> {
                $name::query().all()
            }
            fn qty() -> sharded_runtime::reads::NumericField<Self> {
                $name::aggregates().qty
            }
            fn price() -> sharded_runtime::reads::NumericField<Self> {
                $name::aggregates().price
            }
        }
    };
}

trait Trade: Sharded<OrderValue = i64> + sharded_runtime::bounds::TopLevel + Serialize {
    fn new(venue: &str, side: &str, desk: &str, qty: i64, price: f64, at: i64) -> Self;
    fn pair(venue: &str, side: &str) -> ShardedQuery<Self, { query_id("venue_and_side") }>;
    fn triple(
        venue: &str,
        side: &str,
        desk: &str,
    ) -> ShardedQuery<Self, { query_id("venue_and_side_and_desk") }>;
    fn at(&self) -> i64;
    fn all() -> sharded_runtime::WholeCollection<Self>;
    fn qty() -> sharded_runtime::reads::NumericField<Self>;
    fn price() -> sharded_runtime::reads::NumericField<Self>;
}

trades!(Three, 3, "desc", "trades3");
trades!(Forty, 40, "asc", "trades40");
trades!(SixtyOne, 61, "desc", "trades61");

const VENUES: [&str; 3] = ["XNAS", "XLON", "XTKS"];
const SIDES: [&str; 2] = ["buy", "sell"];
const DESKS: [&str; 2] = ["a", "b"];

/// Writes `trades` through sharded into `T::COLLECTION` and plainly (no shard) into `plain`.
async fn write_both<T: Trade>(db: &FirestoreDb, plain: &str, trades: &[(String, T)]) {
    let writer = db.create_simple_batch_writer().await.unwrap();
    for chunk in trades.chunks(200) {
        let mut batch = writer.new_batch();
        for (id, trade) in chunk {
            T::collection(db).upsert_in(&mut batch, id, trade).unwrap();
            batch
                .update_object(plain, id, trade, None, None, Vec::new())
                .unwrap();
        }
        batch.write().await.unwrap();
    }
}

fn random_range(rng: &mut StdRng, times: i64) -> (Bound<i64>, Bound<i64>) {
    let mut bound = || match rng.random_range(0..3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(rng.random_range(0..times)),
        _ => Bound::Excluded(rng.random_range(0..times)),
    };
    (bound(), bound())
}

/// Our sum equals Firestore's: the same integer, or a double within rounding.
fn assert_same_sum(ours: Number, theirs: &Value, what: &str) {
    match (ours, &theirs.value_type) {
        (Number::Integer(ours), Some(ValueType::IntegerValue(theirs))) => {
            assert_eq!(ours, *theirs, "{what}: integer sum")
        }
        (Number::Double(ours), Some(ValueType::DoubleValue(theirs))) => {
            assert_close(ours, *theirs, what)
        }
        (ours, theirs) => panic!("{what}: sum {ours:?}, unsharded {theirs:?}"),
    }
}

fn assert_same_avg(ours: Option<f64>, theirs: &Value, what: &str) {
    match (ours, &theirs.value_type) {
        (None, Some(ValueType::NullValue(_))) => {}
        (Some(ours), Some(ValueType::DoubleValue(theirs))) => assert_close(ours, *theirs, what),
        (ours, theirs) => panic!("{what}: avg {ours:?}, unsharded {theirs:?}"),
    }
}

/// Equal up to the rounding a reordered floating-point sum may add.
fn assert_close(ours: f64, theirs: f64, what: &str) {
    let scale = ours.abs().max(theirs.abs()).max(1.0);
    assert!(
        (ours - theirs).abs() <= scale * 1e-12,
        "{what}: {ours} vs unsharded {theirs}"
    );
}

/// `sum` and `avg` of `query` against `reference`'s, and its `count` as it is, with a limit,
/// after a cursor at a random document of `expected` (the reference's ids in order), and with
/// both, as Firestore's count applies them (`sum` and `avg` of those do not compile: the UI
/// case `sum_of_a_limited_query`).
async fn check_aggregates<T: Trade, const Q: u64>(
    db: &FirestoreDb,
    query: &ShardedQuery<T, Q>,
    reference: &Unsharded,
    expected: &[String],
    order_values: &HashMap<String, i64>,
    rng: &mut StdRng,
    what: &str,
) {
    for (field, path) in [(T::qty(), "qty"), (T::price(), "price")] {
        let (sum, avg) = reference.sum_and_avg::<T>(db, "plain", path).await;
        let what = format!("{what} {path}");
        assert_same_sum(query.sum(db, field).await.unwrap(), &sum, &what);
        assert_same_avg(query.avg(db, field).await.unwrap(), &avg, &what);
        let (both_sum, both_avg) = query.sum_and_avg(db, field).await.unwrap();
        assert_same_sum(both_sum, &sum, &what);
        assert_same_avg(both_avg, &avg, &what);
    }
    let limit = rng.random_range(1..20);
    let mut variants = vec![
        ("", query.clone().limit(None), reference.clone()),
        (
            " limited",
            query.clone().limit(limit),
            reference.clone().limit(limit),
        ),
    ];
    if !expected.is_empty() {
        let id = &expected[rng.random_range(0..expected.len())];
        let at = order_values[id];
        let after = Cursor::at(&at, id).unwrap();
        variants.push((
            " after a cursor",
            query.clone().after(after.clone()),
            reference.clone().after(at, id),
        ));
        variants.push((
            " after a cursor, limited",
            query.clone().after(after).limit(limit),
            reference.clone().after(at, id).limit(limit),
        ));
    }
    for (variant, query, reference) in variants {
        assert_eq!(
            query.count(db).await.unwrap(),
            reference.count::<T>(db, "plain").await,
            "{what}{variant}: count"
        );
    }
}

async fn equal_the_unsharded_queries<T: Trade>(name: &str, datasets: usize) {
    let test = test_db(name).await;
    let seed = sharded_tests::seed("equal_the_unsharded_queries");
    let mut rng = StdRng::seed_from_u64(seed);
    for dataset in 0..datasets {
        let db = test
            .emulator
            .db(&format!("{name}-{seed}-{dataset}"))
            .await
            .unwrap();
        let times = rng.random_range(2..12);
        // The last data set's quantities sum past i64::MAX: Firestore then returns a double.
        let max_qty = if dataset + 1 == datasets {
            i64::MAX / 20
        } else {
            1_000_000
        };
        let trades: Vec<(String, T)> = (0..rng.random_range(60..220))
            .map(|i| {
                let trade = T::new(
                    VENUES[rng.random_range(0..3)],
                    SIDES[rng.random_range(0..2)],
                    DESKS[rng.random_range(0..2)],
                    rng.random_range(0..max_qty),
                    rng.random_range(-1e6..1e6),
                    rng.random_range(0..times),
                );
                (format!("t{:05}-{i}", rng.random_range(0..100_000)), trade)
            })
            .collect();
        write_both(&db, "plain", &trades).await;
        let order_values: HashMap<String, i64> = trades
            .iter()
            .map(|(id, trade)| (id.clone(), trade.at()))
            .collect();
        let all = Unsharded::default();
        let expected = all.ids::<T>(&db, "plain").await.unwrap();
        let what = format!("dataset {dataset} all");
        check_aggregates(
            &db,
            &T::all(),
            &all,
            &expected,
            &order_values,
            &mut rng,
            &what,
        )
        .await;
        if dataset + 1 == datasets {
            let (sum, _) = all.sum_and_avg::<T>(&db, "plain", "qty").await;
            assert!(
                matches!(sum.value_type, Some(ValueType::DoubleValue(_))),
                "the quantities were to sum past i64::MAX: {sum:?}"
            );
        }
        for round in 0..4 {
            let range = random_range(&mut rng, times);
            let limit = rng.random_range(1..30);
            let (venue, side, desk) = (
                VENUES[rng.random_range(0..3)],
                SIDES[rng.random_range(0..2)],
                DESKS[rng.random_range(0..2)],
            );
            let label = format!("dataset {dataset} round {round} {range:?} {venue} {side}");
            let pair = Unsharded::default()
                .equal("venue", venue)
                .equal("side", side)
                .range(&range);
            let query = T::pair(venue, side).range(range);
            let expected = pair.ids::<T>(&db, "plain").await;
            check_query(&db, query.clone(), expected.clone(), limit, &label).await;
            let expected = expected.unwrap();
            check_aggregates(
                &db,
                &query,
                &pair,
                &expected,
                &order_values,
                &mut rng,
                &label,
            )
            .await;
            // A field renamed with a space: quoted in the filter, the index and the document.
            let triple = pair.clone().equal("`desk name`", desk);
            let query = T::triple(venue, side, desk).range(range);
            let expected = triple.ids::<T>(&db, "plain").await;
            let label = format!("{label} {desk}");
            check_query(&db, query.clone(), expected.clone(), limit, &label).await;
            let expected = expected.unwrap();
            check_aggregates(
                &db,
                &query,
                &triple,
                &expected,
                &order_values,
                &mut rng,
                &label,
            )
            .await;
        }
    }
}

#[tokio::test]
async fn three_shards() {
    equal_the_unsharded_queries::<Three>("sets-3", 4).await;
}

#[tokio::test]
async fn forty_shards_in_two_chunks() {
    equal_the_unsharded_queries::<Forty>("sets-40", 3).await;
}

#[tokio::test]
async fn sixty_one_shards_in_three_chunks() {
    equal_the_unsharded_queries::<SixtyOne>("sets-61", 3).await;
}

/// Integer sums whose chunk sums overflow an `i64` part way but whose total fits: Firestore
/// returns the exact integer, and so does the sharded sum, whatever chunk holds which value
/// and in whatever order the chunks come back. One value per chunk, each chunk's sum exact.
#[tokio::test]
async fn integer_sums_stay_exact_when_chunk_sums_overflow_part_way() {
    let test = test_db("sets-overflow").await;
    let shard_of_chunk = |chunk: usize| SixtyOne::SHARD_VALUES[chunk * 30];
    let cases: [[i64; 3]; 4] = [
        [i64::MAX, i64::MAX, -i64::MAX],
        [i64::MAX, -i64::MAX, i64::MAX],
        [-i64::MAX, i64::MAX, i64::MAX],
        [i64::MIN, -1, 1],
    ];
    for (n, quantities) in cases.iter().enumerate() {
        let db = test
            .emulator
            .db(&format!("sets-overflow-{n}"))
            .await
            .unwrap();
        let writer = db.create_simple_batch_writer().await.unwrap();
        let mut batch = writer.new_batch();
        for (chunk, qty) in quantities.iter().enumerate() {
            let trade = SixtyOne::new("XNAS", "buy", "a", *qty, 1.0, chunk as i64);
            let mut stored = serde_json::to_value(&trade).unwrap();
            stored[SixtyOne::SHARD_FIELD] = shard_of_chunk(chunk).into();
            let id = format!("t{chunk}");
            batch
                .update_object(SixtyOne::COLLECTION, &id, &stored, None, None, Vec::new())
                .unwrap();
            batch
                .update_object("plain", &id, &trade, None, None, Vec::new())
                .unwrap();
        }
        batch.write().await.unwrap();
        let (theirs, _) = Unsharded::default()
            .sum_and_avg::<SixtyOne>(&db, "plain", "qty")
            .await;
        let ours = SixtyOne::all().sum(&db, SixtyOne::qty()).await.unwrap();
        assert_same_sum(ours, &theirs, &format!("{quantities:?}"));
        let exact: i128 = quantities.iter().map(|q| i128::from(*q)).sum();
        match i64::try_from(exact) {
            Ok(exact) => assert_eq!(ours, Number::Integer(exact), "{quantities:?}"),
            Err(_) => assert!(matches!(ours, Number::Double(_)), "{quantities:?}"),
        }
    }
}

/// Legacy documents whose aggregated field holds a null or a string (data written before
/// sharded, which a backfill shards as it is): Firestore's `avg` skips them, and so does the
/// sharded one across chunks, which weights each chunk by its count of numbers.
async fn averages_skip_legacy_values<T: Trade>(name: &str) {
    let test = test_db(name).await;
    let seed = sharded_tests::seed("averages_skip_legacy_values");
    let mut rng = StdRng::seed_from_u64(seed);
    for dataset in 0..3 {
        let db = test
            .emulator
            .db(&format!("{name}-{seed}-{dataset}"))
            .await
            .unwrap();
        let trades: Vec<(String, T)> = (0..rng.random_range(40..120))
            .map(|i| {
                let trade = T::new(
                    VENUES[rng.random_range(0..3)],
                    SIDES[rng.random_range(0..2)],
                    DESKS[rng.random_range(0..2)],
                    rng.random_range(-1_000..1_000),
                    rng.random_range(-1e6..1e6),
                    rng.random_range(0..5),
                );
                (format!("t{i:03}"), trade)
            })
            .collect();
        write_both(&db, "plain", &trades).await;
        // A share of the documents, in both collections, hold no number in `qty` and `price`.
        let writer = db.create_simple_batch_writer().await.unwrap();
        let mut batch = writer.new_batch();
        for (id, _) in &trades {
            let legacy = match rng.random_range(0..4) {
                0 => serde_json::json!({ "qty": null, "price": null }),
                1 => serde_json::json!({ "qty": "n/a", "price": "n/a" }),
                _ => continue,
            };
            for collection in [T::COLLECTION, "plain"] {
                batch
                    .update_object(
                        collection,
                        id,
                        &legacy,
                        Some(vec!["qty".into(), "price".into()]),
                        None,
                        Vec::new(),
                    )
                    .unwrap();
            }
        }
        batch.write().await.unwrap();
        for round in 0..3 {
            let (venue, side) = (
                VENUES[rng.random_range(0..3)],
                SIDES[rng.random_range(0..2)],
            );
            let what = format!("dataset {dataset} round {round} {venue} {side}");
            let pair = Unsharded::default()
                .equal("venue", venue)
                .equal("side", side);
            for (field, path) in [(T::qty(), "qty"), (T::price(), "price")] {
                let (theirs_sum, theirs_avg) = pair.sum_and_avg::<T>(&db, "plain", path).await;
                let (ours_sum, ours_avg) =
                    T::pair(venue, side).sum_and_avg(&db, field).await.unwrap();
                assert_same_sum(ours_sum, &theirs_sum, &format!("{what} {path}"));
                assert_same_avg(ours_avg, &theirs_avg, &format!("{what} {path}"));
                let (theirs_sum, theirs_avg) = Unsharded::default()
                    .sum_and_avg::<T>(&db, "plain", path)
                    .await;
                let (ours_sum, ours_avg) = T::all().sum_and_avg(&db, field).await.unwrap();
                assert_same_sum(ours_sum, &theirs_sum, &format!("{what} all {path}"));
                assert_same_avg(ours_avg, &theirs_avg, &format!("{what} all {path}"));
            }
        }
    }
}

#[tokio::test]
async fn averages_skip_legacy_values_in_two_chunks() {
    averages_skip_legacy_values::<Forty>("legacy-40").await;
}

#[tokio::test]
async fn averages_skip_legacy_values_in_three_chunks() {
    averages_skip_legacy_values::<SixtyOne>("legacy-61").await;
}

/// Writes each `(shard value, qty)` as a trade of `SixtyOne` in that shard value, and plainly
/// into `plain`; `None` stores the string "n/a" in `qty` and `price` (legacy data a backfill
/// adopted; the firestore crate leaves a null out, and a missing field is not counted).
async fn write_in_shards(db: &FirestoreDb, trades: &[(&str, Option<i64>)]) {
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for (i, (shard, qty)) in trades.iter().enumerate() {
        let trade = SixtyOne::new("XNAS", "buy", "a", qty.unwrap_or(0), 1.0, i as i64);
        let mut plain = serde_json::to_value(&trade).unwrap();
        if qty.is_none() {
            plain["qty"] = "n/a".into();
            plain["price"] = "n/a".into();
        }
        let mut stored = plain.clone();
        stored[SixtyOne::SHARD_FIELD] = (*shard).into();
        let id = format!("t{i:03}");
        batch
            .update_object(SixtyOne::COLLECTION, &id, &stored, None, None, Vec::new())
            .unwrap();
        batch
            .update_object("plain", &id, &plain, None, None, Vec::new())
            .unwrap();
    }
    batch.write().await.unwrap();
}

/// Ours against the unsharded query's, for `qty` (an integer) and `price` (a double), with
/// `sum`, `avg` and `sum_and_avg`; the integer sum also against the exact total.
async fn check_against_unsharded(db: &FirestoreDb, trades: &[(&str, Option<i64>)], what: &str) {
    for (field, path) in [(SixtyOne::qty(), "qty"), (SixtyOne::price(), "price")] {
        let what = format!("{what} {path}");
        let (theirs_sum, theirs_avg) = Unsharded::default()
            .sum_and_avg::<SixtyOne>(db, "plain", path)
            .await;
        let all = SixtyOne::all();
        let (sum, avg) = all.sum_and_avg(db, field).await.unwrap();
        assert_same_sum(sum, &theirs_sum, &what);
        assert_same_avg(avg, &theirs_avg, &what);
        assert_eq!(all.sum(db, field).await.unwrap(), sum, "{what}");
        assert_eq!(all.avg(db, field).await.unwrap(), avg, "{what}");
    }
    let exact: i128 = trades
        .iter()
        .filter_map(|(_, qty)| qty.map(i128::from))
        .sum();
    let ours = SixtyOne::all().sum(db, SixtyOne::qty()).await.unwrap();
    match i64::try_from(exact) {
        Ok(exact) => assert_eq!(ours, Number::Integer(exact), "{what}"),
        Err(_) => assert!(matches!(ours, Number::Double(_)), "{what}: {ours:?}"),
    }
}

/// A chunk whose own integer sum passes `i64::MAX` comes back from Firestore as a double;
/// the sharded sum is still the exact integer the unsharded query returns (the chunk is
/// asked again one shard value at a time, and a value still past `i64::MAX` is read and
/// added exactly). The case found (`i64::MAX` in "0" and "1", `-i64::MAX` in "21"), then
/// random big and small integers in random shard values, with legacy strings.
#[tokio::test]
async fn integer_sums_are_exact_when_one_chunk_overflows() {
    let test = test_db("sum-chunk-overflow").await;
    let found: Vec<(&str, Option<i64>)> = vec![
        ("0", Some(i64::MAX)),
        ("1", Some(i64::MAX)),
        ("21", Some(-i64::MAX)),
    ];
    let db = test.emulator.db("sum-chunk-overflow-found").await.unwrap();
    write_in_shards(&db, &found).await;
    check_against_unsharded(&db, &found, "the case found").await;
    assert_eq!(
        SixtyOne::all().sum(&db, SixtyOne::qty()).await.unwrap(),
        Number::Integer(i64::MAX)
    );
    // Two in one shard value: that value is read.
    let same_value: Vec<(&str, Option<i64>)> = vec![
        ("5", Some(i64::MAX)),
        ("5", Some(i64::MAX)),
        ("40", Some(-i64::MAX)),
        ("40", Some(-3)),
    ];
    let db = test
        .emulator
        .db("sum-chunk-overflow-one-value")
        .await
        .unwrap();
    write_in_shards(&db, &same_value).await;
    check_against_unsharded(&db, &same_value, "one shard value past i64::MAX").await;
    let seed = sharded_tests::seed("integer_sums_are_exact_when_one_chunk_overflows");
    let mut rng = StdRng::seed_from_u64(seed);
    for dataset in 0..6 {
        let trades: Vec<(&str, Option<i64>)> = (0..rng.random_range(3..16))
            .map(|_| {
                let shard = SixtyOne::SHARD_VALUES[rng.random_range(0..61)];
                let qty = match rng.random_range(0..6) {
                    0 => Some(i64::MAX),
                    1 => Some(-i64::MAX),
                    2 => Some(rng.random_range(i64::MAX / 4..=i64::MAX)),
                    3 => Some(-rng.random_range(i64::MAX / 4..=i64::MAX)),
                    4 => None,
                    _ => Some(rng.random_range(-10..10)),
                };
                (shard, qty)
            })
            .collect();
        let db = test
            .emulator
            .db(&format!("sum-chunk-overflow-{seed}-{dataset}"))
            .await
            .unwrap();
        write_in_shards(&db, &trades).await;
        check_against_unsharded(
            &db,
            &trades,
            &format!("seed {seed} dataset {dataset}: {trades:?}"),
        )
        .await;
    }
}

/// A chunk whose values average exactly 0 does not say how many of its documents hold a
/// number: 5, -5 and two strings in one chunk and 6 in another average 2 (6 over 3 numbers),
/// not 6 / 5. Then random small values, many zero averages, and many legacy strings.
#[tokio::test]
async fn averages_are_exact_when_a_chunk_averages_zero_beside_legacy_values() {
    let test = test_db("avg-zero-chunk").await;
    let found: Vec<(&str, Option<i64>)> = vec![
        ("0", Some(5)),
        ("3", Some(-5)),
        ("7", None),
        ("9", None),
        ("40", Some(6)),
    ];
    let db = test.emulator.db("avg-zero-chunk-found").await.unwrap();
    write_in_shards(&db, &found).await;
    check_against_unsharded(&db, &found, "the case found").await;
    assert_eq!(
        SixtyOne::all().avg(&db, SixtyOne::qty()).await.unwrap(),
        Some(2.0)
    );
    let seed =
        sharded_tests::seed("averages_are_exact_when_a_chunk_averages_zero_beside_legacy_values");
    let mut rng = StdRng::seed_from_u64(seed);
    for dataset in 0..8 {
        let trades: Vec<(&str, Option<i64>)> = (0..rng.random_range(2..20))
            .map(|_| {
                let shard = SixtyOne::SHARD_VALUES[rng.random_range(0..61)];
                let qty = rng.random_bool(0.6).then(|| rng.random_range(-2..=2));
                (shard, qty)
            })
            .collect();
        let db = test
            .emulator
            .db(&format!("avg-zero-chunk-{seed}-{dataset}"))
            .await
            .unwrap();
        write_in_shards(&db, &trades).await;
        check_against_unsharded(
            &db,
            &trades,
            &format!("seed {seed} dataset {dataset}: {trades:?}"),
        )
        .await;
    }
}

/// The same inside a transaction: the chunks asked again and the values read see the
/// transaction's snapshot. Chunks of 61 shard values: "0" to "20", "21" to "40", "41" on.
#[tokio::test]
async fn exact_sums_and_averages_inside_a_transaction() {
    use futures::FutureExt;
    let test = test_db("sum-in-transaction").await;
    let trades: Vec<(&str, Option<i64>)> = vec![
        ("0", Some(i64::MAX)),
        ("1", Some(i64::MAX)),
        ("22", Some(4)),
        ("23", Some(-4)),
        ("24", None),
        ("41", Some(-i64::MAX)),
        ("45", Some(-3)),
    ];
    write_in_shards(&test.db, &trades).await;
    let (sum, avg) = test
        .db
        .run_transaction(|db, transaction| {
            async move {
                let db = db.clone_with_consistency_selector(
                    sharded_runtime::firestore::FirestoreConsistencySelector::Transaction(
                        transaction.transaction_id().clone(),
                    ),
                );
                SixtyOne::all()
                    .sum_and_avg(&db, SixtyOne::qty())
                    .await
                    .map_err(sharded_runtime::writes::transaction_error)
            }
            .boxed()
        })
        .await
        .unwrap();
    // The first chunk's sum passes i64::MAX; the second averages 0 over 2 of its 3.
    assert_eq!(sum, Number::Integer(i64::MAX - 3));
    assert_eq!(avg, Some((i64::MAX - 3) as f64 / 6.0));
}

/// A shard value whose own sum passes `i64::MAX` (Firestore answers a double) leaves its
/// share open: its documents' values are read and added exactly. That costs a billed read
/// per document of the shard value, so it is reported, in the query's stats and as a
/// `tracing` warning; a sum the answers settle reads none.
#[tokio::test]
async fn a_sum_settled_by_reading_values_reports_what_it_read() {
    let test = test_db("sets-read-values").await;
    let db = &test.db;
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    // Two documents in one shard value summing past i64::MAX, and one elsewhere bringing the
    // total back under it.
    for (n, (shard, qty)) in [(5, i64::MAX), (5, 10), (40, -20)].into_iter().enumerate() {
        let trade = SixtyOne::new("XNAS", "buy", "a", qty, 1.0, n as i64);
        let mut stored = serde_json::to_value(&trade).unwrap();
        stored[SixtyOne::SHARD_FIELD] = SixtyOne::SHARD_VALUES[shard].into();
        batch
            .update_object(
                SixtyOne::COLLECTION,
                format!("t{n}"),
                &stored,
                None,
                None,
                Vec::new(),
            )
            .unwrap();
    }
    batch.write().await.unwrap();
    let captured = sharded_tests::logs::Captured::events();
    let (sum, _, stats) = SixtyOne::all()
        .sum_and_avg_with_stats(db, SixtyOne::qty())
        .await
        .unwrap();
    assert_eq!(sum, Number::Integer(i64::MAX - 10));
    assert_eq!(
        stats.documents_read, 2,
        "the open shard value's documents: {stats:?}"
    );
    // Three chunk queries, the open chunk asked again per shard value, one value read.
    let chunks = sharded_runtime::__private::shard_chunks(SixtyOne::SHARD_VALUES);
    let open = chunks
        .iter()
        .find(|chunk| chunk.contains(&SixtyOne::SHARD_VALUES[5]))
        .unwrap();
    assert_eq!(
        (stats.queries, stats.rounds),
        (chunks.len() + open.len() + 1, 2),
        "{stats:?}"
    );
    let logged = captured.text();
    assert!(
        logged.contains("WARN") && logged.contains("documents_read=2"),
        "{logged}"
    );
    // A sum the answers settle reads no document, and warns of none.
    let captured = sharded_tests::logs::Captured::events();
    let (_, _, stats) = SixtyOne::pair("XNAS", "buy")
        .sum_and_avg_with_stats(db, SixtyOne::price())
        .await
        .unwrap();
    assert_eq!(
        (stats.documents_read, stats.queries, stats.rounds),
        (0, 3, 1)
    );
    assert!(!captured.text().contains("WARN"), "{}", captured.text());
}
