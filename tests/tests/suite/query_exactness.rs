//! Sharded queries equal the unsharded query for every order-field type the derive accepts and
//! its edge values: timestamps, i64 at its ends, f64 with NaN, ±infinity and -0.0, strings
//! longer than the 1,500 bytes Firestore compares; both directions; 1, 7, 30, 31 and 61 shard
//! values; shard fields under other and quoted names; a nested index path through a struct with
//! its own serde names. Ties are heavy, so pages end inside runs
//! of equal values. A query the server refuses (a range bound too long) must be refused by
//! sharded before sending. Every page's cursor goes through its token.

use std::fmt::Debug;
use std::ops::Bound;

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::{Sharded, ShardedQuery, StoredNames, WholeCollection, reads::query_id};
use sharded_tests::equivalence::{Unsharded, check_query};
use sharded_tests::test_db;

/// Order values with many ties and the edges of each type.
trait Edgy: Sized {
    fn pick(rng: &mut StdRng, long: bool) -> Self;
}

impl Edgy for FirestoreTimestamp {
    fn pick(rng: &mut StdRng, _: bool) -> Self {
        let micros = [0, 1, 999_999, 1_000_000, 1_700_000_000_000_000];
        let micros = *micros.choose(rng).unwrap();
        FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_microsecond(micros).unwrap(),
        )
    }
}

impl Edgy for i64 {
    fn pick(rng: &mut StdRng, _: bool) -> Self {
        *[i64::MIN, -1, 0, 1, 7, i64::MAX - 1, i64::MAX]
            .choose(rng)
            .unwrap()
    }
}

impl Edgy for f64 {
    fn pick(rng: &mut StdRng, _: bool) -> Self {
        *[
            f64::NAN,
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            0.5,
            9_223_372_036_854_775_808.0,
            f64::INFINITY,
        ]
        .choose(rng)
        .unwrap()
    }
}

impl Edgy for String {
    fn pick(rng: &mut StdRng, long_values: bool) -> Self {
        let long = "p".repeat(1499);
        let mut values = vec![String::new(), "a".into(), "é".into(), long.clone()];
        if long_values {
            values.extend([
                format!("{long}éz"),
                format!("{long}èa"),
                format!("{long}q{}", "z".repeat(rng.random_range(0..40))),
                format!(
                    "{}é{}",
                    "p".repeat(1498),
                    "y".repeat(rng.random_range(0..3))
                ),
                format!(
                    "{}😀{}",
                    "é".repeat(748),
                    "x".repeat(rng.random_range(0..3))
                ),
            ]);
        } else {
            values.extend(["p".repeat(700), format!("{}é", "p".repeat(700))]);
        }
        values.choose(rng).unwrap().clone()
    }
}

// rustfmt re-indents the attribute below on every run (not idempotent inside macro_rules).
#[rustfmt::skip]
macro_rules! model {
    ($name:ident, $ty:ty, $shards:literal, $direction:literal, $shard_field:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[serde(rename_all = "camelCase")]
        #[sharded(
            shards = $shards,
            order_by = "order_value",
            direction = $direction,
            shard_field = $shard_field
        )]
        struct $name {
            #[sharded(index)]
            #[serde(rename = "group-name")]
            group: String,
            #[sharded(index(region_code: String))]
            place: Place,
            order_value: $ty,
            seq: i64,
        }

        impl Row for $name {
            type Value = $ty;
            fn new(group: String, region_code: String, order_value: $ty, seq: i64) -> Self {
                $name {
                    group,
                    place: Place { region_code },
                    order_value,
                    seq,
                }
            }
            fn query(group: &str) -> ShardedQuery<Self, { query_id("group") }> {
                $name::query().group(group)
            }
            fn query_place(region_code: &str) -> ShardedQuery<Self, { query_id("place_region_code") }> {
                $name::query().place_region_code(region_code)
            }
            fn query_all() -> WholeCollection<Self> {
                $name::query().all()
            }
        }
    };
}

trait Row: Sharded<OrderValue = Self::Value> + sharded_runtime::bounds::TopLevel + Debug {
    type Value: Edgy + Serialize + Clone + Debug;
    fn new(group: String, region_code: String, order_value: Self::Value, seq: i64) -> Self;
    fn query(group: &str) -> ShardedQuery<Self, { query_id("group") }>;
    fn query_place(region_code: &str) -> ShardedQuery<Self, { query_id("place_region_code") }>;
    fn query_all() -> WholeCollection<Self>;
}

/// A nested index path through a struct with its own serde names: stored, queried and indexed
/// as `place.regionCode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StoredNames)]
#[serde(rename_all = "camelCase")]
struct Place {
    region_code: String,
}

model!(TimestampDesc7, FirestoreTimestamp, 7, "desc", "shard");
model!(TimestampAsc61, FirestoreTimestamp, 61, "asc", "shard-id");
model!(IntegerDesc31, i64, 31, "desc", "bucket");
model!(IntegerAsc1, i64, 1, "asc", "shard");
model!(DoubleDesc30, f64, 30, "desc", "shard id");
model!(DoubleAsc61, f64, 61, "asc", "shard");
model!(StringAsc31, String, 31, "asc", "shard-id");
model!(StringDesc7, String, 7, "desc", "shard");
model!(StringDesc61, String, 61, "desc", "part");
model!(LongStringAsc31, String, 31, "asc", "shard-id");
model!(LongStringDesc61, String, 61, "desc", "part");
model!(LongStringDesc7, String, 7, "desc", "shard");
model!(IntegerDesc40, i64, 40, "desc", "shard");
model!(TimestampAsc300, FirestoreTimestamp, 300, "asc", "shard");

const GROUPS: [&str; 2] = ["g1", "g2"];
const REGIONS: [&str; 3] = ["eu", "us", "jp"];

fn random_bound<V: Edgy>(rng: &mut StdRng, long_values: bool) -> Bound<V> {
    match rng.random_range(0..4) {
        0 | 1 => Bound::Unbounded,
        2 => Bound::Included(V::pick(rng, long_values)),
        _ => Bound::Excluded(V::pick(rng, long_values)),
    }
}

/// The same query on an unsharded copy: `field == value` (or every document, without a field)
/// and the range, ordered by the order field alone (the server breaks ties by `__name__` in the
/// same direction). `Err` if refused.
async fn reference<T: Row>(
    db: &FirestoreDb,
    plain: &str,
    equality: Option<(&'static str, &str)>,
    range: &(Bound<T::Value>, Bound<T::Value>),
) -> Result<Vec<String>, String> {
    let mut reference = Unsharded::default().range(range);
    if let Some((field, value)) = equality {
        reference = reference.equal(field, value);
    }
    reference.ids::<T>(db, plain).await
}

/// `long_values`: strings over the 1,500 bytes Firestore compares.
async fn check_model<T: Row>(db: &FirestoreDb, rng: &mut StdRng, long_values: bool) {
    let label = std::any::type_name::<T>().rsplit("::").next().unwrap();
    let plain = format!("plain_{}", T::COLLECTION);
    let documents: Vec<(String, T)> = (0..rng.random_range(30..90))
        .map(|seq| {
            let row = T::new(
                GROUPS.choose(rng).unwrap().to_string(),
                REGIONS.choose(rng).unwrap().to_string(),
                T::Value::pick(rng, long_values),
                seq,
            );
            (format!("d{:03}-{seq}", rng.random_range(0..1000)), row)
        })
        .collect();
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for (id, row) in &documents {
        T::collection(db).upsert_in(&mut batch, id, row).unwrap();
        batch
            .update_object(&plain, id, row, None, None, Vec::new())
            .unwrap();
    }
    batch.write().await.unwrap();

    for round in 0..6 {
        let range = (
            random_bound::<T::Value>(rng, long_values),
            random_bound::<T::Value>(rng, long_values),
        );
        let limit = rng.random_range(1..12);
        let shape = rng.random_range(0..3);
        if shape == 2 {
            let what = format!("{label} round {round}: whole collection {range:?} limit {limit}");
            let query = T::query_all().range(range.clone());
            let expected = reference::<T>(db, &plain, None, &range).await;
            check_query(db, query, expected, limit, &what).await;
        } else if shape == 0 {
            let group = *GROUPS.choose(rng).unwrap();
            let what = format!("{label} round {round}: {group} {range:?} limit {limit}");
            let query = T::query(group).range(range.clone());
            let filter = Some(("`group-name`", group));
            let expected = reference::<T>(db, &plain, filter, &range).await;
            check_query(db, query, expected, limit, &what).await;
        } else {
            let region = *REGIONS.choose(rng).unwrap();
            let what = format!("{label} round {round}: region {region} {range:?} limit {limit}");
            let query = T::query_place(region).range(range.clone());
            let filter = Some(("place.regionCode", region));
            let expected = reference::<T>(db, &plain, filter, &range).await;
            check_query(db, query, expected, limit, &what).await;
        }
    }
    // A stream read in small pages goes on after each page's last document; where that is a
    // string Firestore refuses as a cursor, after the last one it can, skipping those read.
    let everything = (Bound::Unbounded, Bound::Unbounded);
    let expected = reference::<T>(db, &plain, None, &everything).await.unwrap();
    for page in [1, 2, 5] {
        use futures::TryStreamExt;
        let streamed: Vec<sharded_runtime::Stored<T>> = T::query_all()
            .stream_in_pages_of(db, page)
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        let ids: Vec<String> = streamed.iter().map(|s| s.id.clone()).collect();
        assert_eq!(ids, expected, "{label}: a stream in pages of {page}");
    }
}

#[tokio::test]
async fn every_order_type_direction_and_shard_count_equals_the_unsharded_query() {
    let test = test_db("exactness").await;
    let seed = sharded_tests::seed(
        "every_order_type_direction_and_shard_count_equals_the_unsharded_query",
    );
    let mut rng = StdRng::seed_from_u64(seed);
    let db = &test.db;
    assert_eq!(
        TimestampDesc7::DESCRIPTION.indexed_fields,
        ["`group-name`", "place.regionCode"]
    );
    check_model::<TimestampDesc7>(db, &mut rng, false).await;
    check_model::<TimestampAsc61>(db, &mut rng, false).await;
    check_model::<IntegerDesc31>(db, &mut rng, false).await;
    check_model::<IntegerAsc1>(db, &mut rng, false).await;
    check_model::<DoubleDesc30>(db, &mut rng, false).await;
    check_model::<DoubleAsc61>(db, &mut rng, false).await;
    check_model::<StringAsc31>(db, &mut rng, false).await;
    check_model::<StringDesc7>(db, &mut rng, false).await;
    check_model::<StringDesc61>(db, &mut rng, false).await;
    // Strings past the 1,499 bytes Firestore compares, cut inside characters too.
    check_model::<LongStringAsc31>(db, &mut rng, true).await;
    check_model::<LongStringDesc61>(db, &mut rng, true).await;
    check_model::<LongStringDesc7>(db, &mut rng, true).await;
    // Past 30 values a limited query asks each chunk for its share, then goes back.
    check_model::<IntegerDesc40>(db, &mut rng, false).await;
    check_model::<TimestampAsc300>(db, &mut rng, false).await;
}
