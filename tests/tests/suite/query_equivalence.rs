//! Sharded queries return exactly what the same query returns on an unsharded copy of the data
//! (the recipe's model; `query_exactness.rs` covers every order type and shard count):
//! same documents, same order (ties included), no loss or repeat across pages, same counts.
//! Random data sets with many equal timestamps, random queries, on the real emulator.

use std::ops::Bound;

use rand::Rng;
use rand::rngs::StdRng;
use sharded_runtime::Sharded;
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp, FirestoreValue};
use sharded_tests::equivalence::{Unsharded, check_query, for_each_dataset, write_both};
use sharded_tests::models::{Instrument, Price, Tick};
use sharded_tests::test_db;

fn timestamp(seconds: i64) -> FirestoreTimestamp {
    FirestoreTimestamp(sharded_runtime::firestore::jiff::Timestamp::from_second(seconds).unwrap())
}

/// A random range on the order field, as the sharded query takes it and as plain filters.
type Range = (Bound<i64>, Bound<i64>);

fn random_range(rng: &mut StdRng, times: i64) -> Range {
    let bound = |rng: &mut StdRng| match rng.random_range(0..3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(rng.random_range(0..times)),
        _ => Bound::Excluded(rng.random_range(0..times)),
    };
    (bound(rng), bound(rng))
}

/// The unsharded reference: `field == value` (or every document, with no field) and the range.
async fn reference_ids<T: Sharded>(
    db: &FirestoreDb,
    plain: &str,
    equality: Option<(&str, FirestoreValue)>,
    range: Range,
) -> Vec<String> {
    let mut reference = Unsharded::default().range(&ts_range(range));
    if let Some((field, value)) = equality {
        reference = reference.equal(field, value);
    }
    reference.ids::<T>(db, plain).await.unwrap()
}

fn ts_range(range: Range) -> (Bound<FirestoreTimestamp>, Bound<FirestoreTimestamp>) {
    let map = |b: Bound<i64>| match b {
        Bound::Included(s) => Bound::Included(timestamp(s)),
        Bound::Excluded(s) => Bound::Excluded(timestamp(s)),
        Bound::Unbounded => Bound::Unbounded,
    };
    (map(range.0), map(range.1))
}

const EXCHANGES: [&str; 3] = ["EXCHG1", "EXCHG2", "EXCHG3"];
const TYPES: [&str; 2] = ["commonstock", "etf"];
const CURRENCIES: [&str; 3] = ["USD", "JPY", "EUR"];

#[tokio::test]
async fn three_shards_equal_the_unsharded_query() {
    let test = test_db("equivalence-3").await;
    for_each_dataset(&test, "eq3", 6, |db, rng, label| {
        Box::pin(async move {
            let times = rng.random_range(2..12);
            let size = rng.random_range(40..220);
            let documents: Vec<(String, Instrument)> = (0..size)
                .map(|i| {
                    let instrument = Instrument {
                        symbol: format!("S{i}"),
                        price: Price {
                            currency: CURRENCIES[rng.random_range(0..3)].into(),
                            micros: rng.random_range(0..1_000_000),
                        },
                        exchange: EXCHANGES[rng.random_range(0..3)].into(),
                        instrument_type: TYPES[rng.random_range(0..2)].into(),
                        timestamp: timestamp(rng.random_range(0..times)),
                    };
                    (
                        format!("doc{:05}-{i}", rng.random_range(0..100_000)),
                        instrument,
                    )
                })
                .collect();
            write_both(db, "plain", &documents).await;
            for round in 0..5 {
                let range = random_range(rng, times);
                let limit = rng.random_range(1..30);
                let label = format!("{label} round {round} range {range:?}");
                match rng.random_range(0..4) {
                    3 => {
                        let reference = reference_ids::<Instrument>(db, "plain", None, range).await;
                        let query = Instrument::query().all().range(ts_range(range));
                        check_query(
                            db,
                            query,
                            Ok(reference),
                            limit,
                            &format!("{label} whole collection"),
                        )
                        .await;
                    }
                    0 => {
                        let value = EXCHANGES[rng.random_range(0..3)];
                        let reference = reference_ids::<Instrument>(
                            db,
                            "plain",
                            Some(("exchange", value.into())),
                            range,
                        )
                        .await;
                        let query = Instrument::query().exchange(value).range(ts_range(range));
                        check_query(
                            db,
                            query,
                            Ok(reference),
                            limit,
                            &format!("{label} exchange {value}"),
                        )
                        .await;
                    }
                    1 => {
                        let value = TYPES[rng.random_range(0..2)];
                        let reference = reference_ids::<Instrument>(
                            db,
                            "plain",
                            Some(("instrumentType", value.into())),
                            range,
                        )
                        .await;
                        let query = Instrument::query()
                            .instrument_type(value)
                            .range(ts_range(range));
                        check_query(
                            db,
                            query,
                            Ok(reference),
                            limit,
                            &format!("{label} type {value}"),
                        )
                        .await;
                    }
                    _ => {
                        let value = CURRENCIES[rng.random_range(0..3)];
                        let reference = reference_ids::<Instrument>(
                            db,
                            "plain",
                            Some(("price.currency", value.into())),
                            range,
                        )
                        .await;
                        let query = Instrument::query()
                            .price_currency(value)
                            .range(ts_range(range));
                        check_query(
                            db,
                            query,
                            Ok(reference),
                            limit,
                            &format!("{label} currency {value}"),
                        )
                        .await;
                    }
                }
            }
        })
    })
    .await;
}

#[tokio::test]
async fn forty_shards_merge_to_the_unsharded_query() {
    let test = test_db("equivalence-40").await;
    for_each_dataset(&test, "eq40", 4, |db, rng, label| {
        Box::pin(async move {
            let times = rng.random_range(2..10);
            let size = rng.random_range(60..200);
            let documents: Vec<(String, Tick)> = (0..size)
                .map(|i| {
                    let tick = Tick {
                        venue: EXCHANGES[rng.random_range(0..2)].into(),
                        at: timestamp(rng.random_range(0..times)),
                        seq: i,
                    };
                    (format!("t{:05}-{i}", rng.random_range(0..100_000)), tick)
                })
                .collect();
            write_both(db, "plain", &documents).await;
            for round in 0..4 {
                let range = random_range(rng, times);
                let limit = rng.random_range(1..40);
                let label = format!("{label} round {round} {range:?}");
                if round % 2 == 1 {
                    let reference = reference_ids::<Tick>(db, "plain", None, range).await;
                    let query = Tick::query().all().range(ts_range(range));
                    check_query(db, query, Ok(reference), limit, &format!("{label} all")).await;
                    continue;
                }
                let value = EXCHANGES[rng.random_range(0..2)];
                let reference =
                    reference_ids::<Tick>(db, "plain", Some(("venue", value.into())), range).await;
                let query = Tick::query().venue(value).range(ts_range(range));
                check_query(db, query, Ok(reference), limit, &format!("{label} {value}")).await;
            }
        })
    })
    .await;
}
