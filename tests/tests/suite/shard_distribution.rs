//! The shard is drawn uniformly at random each time a document is serialized for writing.

use std::collections::HashMap;

use sharded_runtime::__private::serialize;
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::value::ValueType;
use sharded_tests::models::{Instrument, Price, Tick};

const DRAWS: usize = 120_000;

/// Pearson's chi-square statistic of `counts` against a uniform distribution.
fn chi_square(counts: &[usize]) -> f64 {
    let total: usize = counts.iter().sum();
    let expected = total as f64 / counts.len() as f64;
    counts
        .iter()
        .map(|&count| (count as f64 - expected).powi(2) / expected)
        .sum()
}

/// Serializes `document` `DRAWS` times the way every write does, and counts the stored shards.
fn stored_shard_counts<T: Sharded>(document: &T) -> Vec<usize> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for _ in 0..DRAWS {
        let stored = serialize(document, "").expect("serializes");
        match stored
            .fields
            .get(T::SHARD_FIELD)
            .and_then(|v| v.value_type.clone())
        {
            Some(ValueType::StringValue(shard)) => *counts.entry(shard).or_default() += 1,
            other => panic!("shard field missing or not a string: {other:?}"),
        }
    }
    let mut observed: Vec<String> = counts.keys().cloned().collect();
    observed.sort();
    let mut expected: Vec<String> = T::SHARD_VALUES.iter().map(|v| v.to_string()).collect();
    expected.sort();
    assert_eq!(
        observed, expected,
        "every shard value and nothing else is drawn"
    );
    T::SHARD_VALUES.iter().map(|value| counts[*value]).collect()
}

// Critical values of chi-square at p = 1e-6: a fair draw fails once in a million runs.
const CRITICAL_DF2: f64 = 27.63;
const CRITICAL_DF39: f64 = 96.13;

#[test]
fn the_statistic_tells_skew_from_noise() {
    assert!(chi_square(&[40_000, 40_100, 39_900]) < CRITICAL_DF2);
    assert!(chi_square(&[41_000, 39_500, 39_500]) > CRITICAL_DF2);
}

#[test]
fn three_recipe_shards_are_uniform() {
    let instrument = Instrument {
        symbol: "AAA".into(),
        price: Price {
            currency: "USD".into(),
            micros: 34_790_000,
        },
        exchange: "EXCHG1".into(),
        instrument_type: "commonstock".into(),
        timestamp: FirestoreTimestamp::default(),
    };
    let counts = stored_shard_counts(&instrument);
    let statistic = chi_square(&counts);
    assert!(
        statistic < CRITICAL_DF2,
        "counts {counts:?}, chi-square {statistic}"
    );
}

#[test]
fn forty_shards_are_uniform() {
    let tick = Tick {
        venue: "XNAS".into(),
        at: FirestoreTimestamp::default(),
        seq: 1,
    };
    let counts = stored_shard_counts(&tick);
    let statistic = chi_square(&counts);
    assert!(
        statistic < CRITICAL_DF39,
        "counts {counts:?}, chi-square {statistic}"
    );
}
