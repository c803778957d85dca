//! The documents the benchmarks write, query, serialize and merge: the recipe's instruments,
//! as one unsharded struct and as sharded structs with 3, 30 and 64 shard values.

pub mod bulk;
pub mod clients;
pub mod counters;
pub mod datastore;
pub mod group;
pub mod live;
pub mod purge;
pub mod reads;
pub mod scale;
pub mod tracked;

use rand::Rng;
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    Document, Value, value::ValueType,
};
use sharded_runtime::{Sharded, StoredNames};

/// A price in a currency, in millionths.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StoredNames)]
pub struct Price {
    pub currency: String,
    pub micros: i64,
}

/// The recipe's instrument, unsharded: the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plain {
    pub symbol: String,
    pub price: Price,
    pub exchange: String,
    pub instrument_type: String,
    pub timestamp: FirestoreTimestamp,
}

/// The recipe's hand-written approach: the shard is a field of the struct, set by the caller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandSharded {
    #[serde(flatten)]
    pub plain: Plain,
    pub shard: String,
}

/// The recipe's hand-written approach without `flatten`: every field spelled out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandShardedFlat {
    pub symbol: String,
    pub price: Price,
    pub exchange: String,
    pub instrument_type: String,
    pub timestamp: FirestoreTimestamp,
    pub shard: String,
}

impl From<&Plain> for HandShardedFlat {
    fn from(plain: &Plain) -> Self {
        let plain = plain.clone();
        HandShardedFlat {
            symbol: plain.symbol,
            price: plain.price,
            exchange: plain.exchange,
            instrument_type: plain.instrument_type,
            timestamp: plain.timestamp,
            shard: "y".into(),
        }
    }
}

/// The middle of `values`, the upper one of an even count: every median in BENCHMARKS.md
/// that is not a percentile of timings. Sorts `values` in place, so their first and last are
/// then the spread the report gives beside it.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The nearest-rank `percent`ile of `samples` (sorted in place).
pub fn percentile(samples: &mut [std::time::Duration], percent: usize) -> std::time::Duration {
    samples.sort();
    let rank = (samples.len() * percent).div_ceil(100).saturating_sub(1);
    samples[rank.min(samples.len() - 1)]
}

/// The collection the unsharded baseline is stored in.
pub const PLAIN_COLLECTION: &str = "bench_plain";

macro_rules! sharded_instrument {
    ($(#[$doc:meta] $name:ident: $shards:literal in $collection:literal;)*) => {$(
        #[$doc]
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[serde(rename_all = "camelCase")]
        #[sharded(shards = $shards, order_by = "timestamp", collection = $collection)]
        pub struct $name {
            pub symbol: String,
            #[sharded(index(currency: String))]
            pub price: Price,
            #[sharded(index)]
            pub exchange: String,
            #[sharded(index)]
            pub instrument_type: String,
            pub timestamp: FirestoreTimestamp,
        }

        impl From<&Plain> for $name {
            fn from(plain: &Plain) -> Self {
                let plain = plain.clone();
                $name {
                    symbol: plain.symbol,
                    price: plain.price,
                    exchange: plain.exchange,
                    instrument_type: plain.instrument_type,
                    timestamp: plain.timestamp,
                }
            }
        }
    )*};
}

sharded_instrument! {
    /// 3 shards: one `in` query, merged by the server.
    Sharded3: 3 in "bench_n3";
    /// 30 shards: the most one `in` query holds.
    Sharded30: 30 in "bench_n30";
    /// 64 shards: three concurrent chunk queries, merged here.
    Sharded64: 64 in "bench_n64";
    /// 40 shards: two chunk queries, of 30 and 10 values.
    Sharded40: 40 in "bench_n40";
    /// 300 shards: ten chunk queries.
    Sharded300: 300 in "bench_n300";
}

/// `count` instruments with random fields; timestamps one second apart, newest last.
pub fn instruments(count: usize, rng: &mut impl Rng) -> Vec<(String, Plain)> {
    (0..count)
        .map(|i| {
            let plain = Plain {
                symbol: format!("SYM{i:05}"),
                price: Price {
                    currency: ["USD", "JPY", "EUR"][rng.random_range(0..3)].into(),
                    micros: rng.random_range(1_000_000..900_000_000),
                },
                exchange: ["EXCHG1", "EXCHG2", "EXCHG3"][rng.random_range(0..3)].into(),
                instrument_type: ["commonstock", "etf"][rng.random_range(0..2)].into(),
                timestamp: FirestoreTimestamp(
                    sharded_runtime::firestore::jiff::Timestamp::from_second(
                        1_546_300_800 + i as i64,
                    )
                    .expect("a valid timestamp"),
                ),
            };
            (format!("inst-{i:05}"), plain)
        })
        .collect()
}

/// What one chunk query returns: `limit` documents sorted newest first, as raw Firestore
/// documents (the merge works on those).
pub fn chunk_results(chunks: usize, limit: usize, rng: &mut impl Rng) -> Vec<Vec<Document>> {
    (0..chunks)
        .map(|chunk| {
            let mut documents: Vec<Document> = (0..limit)
                .map(|i| Document {
                    name: format!("projects/p/databases/(default)/documents/bench/c{chunk}-{i}"),
                    fields: [(
                        "timestamp".to_owned(),
                        Value {
                            value_type: Some(ValueType::TimestampValue(
                                sharded_runtime::firestore::gcloud_sdk::prost_types::Timestamp {
                                    seconds: rng.random_range(0..10_000),
                                    nanos: 0,
                                },
                            )),
                        },
                    )]
                    .into(),
                    ..Default::default()
                })
                .collect();
            documents.sort_by(newest_first);
            documents
        })
        .collect()
}

/// The order sharded queries return: timestamp, then document name, both descending.
pub fn newest_first(a: &Document, b: &Document) -> std::cmp::Ordering {
    sharded_runtime::__private::compare_documents(
        a,
        b,
        "timestamp",
        sharded_runtime::indexes::Direction::Descending,
    )
}
