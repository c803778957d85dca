//! `in` on an indexed field (`T::query().<field>_in([..])`) returns exactly what the same query
//! returns on an unsharded collection, on the emulator. Firestore counts `shard in [..] AND
//! field in [..]` as |shards| × |values| disjunctions, at most 30 (measured and kept below), so
//! sharded cuts the (shard value, value) pairs into chunk queries, each pair in one of them:
//! no document is read twice. Random data with ties, both directions, 3, 40 and 61 shard
//! values, values given twice, pages to the end, counts, sums, streams, a live query's first
//! snapshot; per parent and over a collection group.

use std::collections::HashMap;
use std::ops::Bound;

use futures::StreamExt as _;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::bounds::{Reach, Subcollection};
use sharded_runtime::firestore::{FirestoreDb, FirestoreQueryDirection};
use sharded_runtime::{
    Error, Parent, Sharded, ShardedQuery,
    bounds::CollectionGroup,
    reads::{Number, NumericField, query_id},
};
use sharded_tests::equivalence::{
    Unsharded, by_then_name, check_query, for_each_dataset, ids, paged, place_of, places,
    write_both,
};
use sharded_tests::test_db;

macro_rules! reading {
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, collection = $collection)]
        struct $name {
            #[sharded(index)]
            device: String,
            #[sharded(index)]
            kind: u32,
            at: i64,
            #[sharded(aggregate)]
            n: i64,
        }

        impl Reading for $name {
            fn new(device: String, kind: u32, at: i64, n: i64) -> Self {
                $name {
                    device,
                    kind,
                    at,
                    n,
                }
            }
            fn n(&self) -> i64 {
                self.n
            }
            fn devices_in(values: Vec<String>) -> ShardedQuery<Self, { query_id("device") }> {
                $name::query().device_in(values)
            }
            fn kinds_in(values: Vec<u32>) -> ShardedQuery<Self, { query_id("kind") }> {
                $name::query().kind_in(values)
            }
            fn summed() -> NumericField<Self> {
                $name::aggregates().n
            }
        }
    };
}

trait Reading: Sharded<OrderValue = i64> + sharded_runtime::bounds::TopLevel + Clone {
    fn new(device: String, kind: u32, at: i64, n: i64) -> Self;
    fn n(&self) -> i64;
    fn devices_in(values: Vec<String>) -> ShardedQuery<Self, { query_id("device") }>;
    fn kinds_in(values: Vec<u32>) -> ShardedQuery<Self, { query_id("kind") }>;
    fn summed() -> NumericField<Self>;
}

reading!(Reading3, 3, "desc", "readings3");
reading!(Reading40, 40, "asc", "readings40");
reading!(Reading61, 61, "desc", "readings61");

const DEVICES: usize = 10;
const KINDS: u32 = 6;

fn random_readings<T: Reading>(rng: &mut StdRng) -> Vec<(String, T)> {
    let times = rng.random_range(2..10);
    let size = rng.random_range(60..200);
    (0..size)
        .map(|i| {
            let reading = T::new(
                format!("d{}", rng.random_range(0..DEVICES)),
                rng.random_range(0..KINDS),
                rng.random_range(0..times),
                rng.random_range(-1_000..1_000),
            );
            (format!("r{:05}-{i}", rng.random_range(0..100_000)), reading)
        })
        .collect()
}

/// `count` values drawn with replacement (so some repeat) from `pool`.
fn pick<V: Clone>(rng: &mut StdRng, pool: &[V], count: usize) -> Vec<V> {
    (0..count)
        .map(|_| pool[rng.random_range(0..pool.len())].clone())
        .collect()
}

fn random_range(rng: &mut StdRng) -> (Bound<i64>, Bound<i64>) {
    let mut bound = || match rng.random_range(0..3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(rng.random_range(0..10)),
        _ => Bound::Excluded(rng.random_range(0..10)),
    };
    (bound(), bound())
}

/// Random `in` queries on both indexed fields of one random data set, each checked every
/// way it runs against the unsharded query, and its sum against the reference documents'.
async fn check_random_in_queries<T: Reading>(db: &FirestoreDb, rng: &mut StdRng, label: &str) {
    let plain = format!("plain_{}", T::COLLECTION);
    let documents = random_readings::<T>(rng);
    write_both(db, &plain, &documents).await;
    let n_of: HashMap<&str, i64> = documents
        .iter()
        .map(|(id, reading)| (id.as_str(), reading.n()))
        .collect();
    let devices: Vec<String> = (0..DEVICES).map(|d| format!("d{d}")).collect();
    let kinds: Vec<u32> = (0..KINDS + 2).collect();
    for round in 0..6 {
        let range = random_range(rng);
        let limit = rng.random_range(1..30);
        let count = rng.random_range(1..=12);
        let label = format!("{label} round {round} {range:?} limit {limit}");
        if round % 2 == 0 {
            let values = pick(rng, &devices, count);
            let reference = Unsharded::default()
                .any_of("device", values.clone())
                .range(&range);
            let what = format!("{label} device in {values:?}");
            let query = T::devices_in(values).range(range);
            check_one(db, &plain, query, reference, &n_of, limit, &what).await;
        } else {
            let values = pick(rng, &kinds, count);
            let reference = Unsharded::default()
                .any_of("kind", values.clone())
                .range(&range);
            let what = format!("{label} kind in {values:?}");
            let query = T::kinds_in(values).range(range);
            check_one(db, &plain, query, reference, &n_of, limit, &what).await;
        }
    }
}

/// `query` against `reference` on `plain`, every way it runs, and its sum.
async fn check_one<T: Reading, const Q: u64>(
    db: &FirestoreDb,
    plain: &str,
    query: ShardedQuery<T, Q>,
    reference: Unsharded,
    n_of: &HashMap<&str, i64>,
    limit: u32,
    what: &str,
) {
    let expected = reference.ids::<T>(db, plain).await.unwrap();
    let sum: i64 = expected.iter().map(|id| n_of[id.as_str()]).sum();
    check_query(db, query.clone(), Ok(expected.clone()), limit, what).await;
    let summed = query.sum(db, T::summed()).await.unwrap();
    assert_eq!(summed.as_f64(), sum as f64, "{what}: sum");
    if !expected.is_empty() {
        assert_eq!(summed, Number::Integer(sum), "{what}: sum");
    }
}

#[tokio::test]
async fn in_queries_equal_the_unsharded_query_at_3_40_and_61_shards() {
    let test = test_db("query-in").await;
    for_each_dataset(&test, "in", 2, |db, rng, label| {
        Box::pin(async move {
            check_random_in_queries::<Reading3>(db, rng, &format!("3 shards, {label}")).await;
            check_random_in_queries::<Reading40>(db, rng, &format!("40 shards, {label}")).await;
            check_random_in_queries::<Reading61>(db, rng, &format!("61 shards, {label}")).await;
        })
    })
    .await;
}

/// Measured on the emulator, as production documents it: an `in` of more than 30 values, an
/// empty one, and more than 30 disjunctions (3 shard values × 11 values) are refused. Sharded
/// refuses the first two before sending, as the unsharded query is refused, and answers the
/// third, which the server cannot take as one query, in chunk queries: 3 × 11 pairs in two.
#[tokio::test]
async fn in_follows_firestores_limits_and_splits_what_one_query_cannot_hold() {
    let test = test_db("query-in-limits").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(7);
    let plain = "plain_readings3";
    let documents: Vec<(String, Reading3)> = (0..40)
        .map(|i| {
            let reading = Reading3::new(format!("d{}", i % 13), i % 4, i64::from(i % 3), 1);
            (format!("r{i:03}"), reading)
        })
        .collect();
    write_both(db, plain, &documents).await;

    let many: Vec<String> = (0..31).map(|d| format!("d{d}")).collect();
    let refused = Unsharded::default()
        .any_of("device", many.clone())
        .ids::<Reading3>(db, plain)
        .await;
    assert!(refused.is_err(), "the server takes 31 values: {refused:?}");
    let ours = Reading3::query().device_in(many).fetch(db).await;
    assert!(matches!(ours, Err(Error::InvalidQuery(_))), "{ours:?}");

    let refused = Unsharded::default()
        .any_of("device", Vec::<String>::new())
        .ids::<Reading3>(db, plain)
        .await;
    assert!(
        refused.is_err(),
        "the server takes an empty `in`: {refused:?}"
    );
    let ours = Reading3::query()
        .device_in(Vec::<String>::new())
        .fetch(db)
        .await;
    assert!(matches!(ours, Err(Error::InvalidQuery(_))), "{ours:?}");

    let eleven: Vec<String> = (0..11).map(|d| format!("d{d}")).collect();
    let (shards, devices) = (Reading3::SHARD_VALUES.to_vec(), eleven.clone());
    let one_query = db
        .fluent()
        .select()
        .from(Reading3::COLLECTION)
        .filter(move |q| {
            q.for_all([
                q.field(Reading3::DESCRIPTION.shard_field)
                    .is_in(shards.clone()),
                q.field("device").is_in(devices.clone()),
            ])
        })
        .query()
        .await;
    assert!(
        one_query.is_err(),
        "33 disjunctions in one query were taken"
    );
    let expected = Unsharded::default()
        .any_of("device", eleven.clone())
        .ids::<Reading3>(db, plain)
        .await
        .unwrap();
    assert!(!expected.is_empty());
    let (stored, stats) = Reading3::query()
        .device_in(eleven)
        .fetch_with_stats(db)
        .await
        .unwrap();
    assert_eq!(ids(&stored), expected);
    assert_eq!(stats.queries, 2, "3 × 11 pairs in two chunk queries");

    // A value given twice, or in another spelling of the same value, is asked for once.
    let twice = Reading3::query()
        .kind_in([1, 2, 1, 2, 2])
        .fetch_stored(db)
        .await
        .unwrap();
    let expected = Unsharded::default()
        .any_of("kind", vec![1, 2])
        .ids::<Reading3>(db, plain)
        .await
        .unwrap();
    assert_eq!(ids(&twice), expected);
    assert_eq!(
        Reading3::query()
            .kind_in([1, 2, 1])
            .count(db)
            .await
            .unwrap(),
        expected.len() as u64
    );
    let _ = &mut rng;
}

/// 40 shard values × 5 values: the fewest chunk queries of at most 30 pairs is 7 (one group
/// of 5 values over 7 groups of shard values), and a live query's first snapshot holds what
/// the fetch does.
#[tokio::test]
async fn many_shards_and_values_take_the_fewest_chunk_queries_live_too() {
    let test = test_db("query-in-chunks").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(40);
    let documents = random_readings::<Reading40>(&mut rng);
    write_both(db, "plain_readings40", &documents).await;
    let values: Vec<String> = (0..5).map(|d| format!("d{d}")).collect();
    let expected = Unsharded::default()
        .any_of("device", values.clone())
        .ids::<Reading40>(db, "plain_readings40")
        .await
        .unwrap();
    let query = Reading40::query().device_in(values);
    let (stored, stats) = query.fetch_with_stats(db).await.unwrap();
    assert_eq!(ids(&stored), expected);
    assert_eq!(stats.queries, 7);
    let mut live = query.listen(db).unwrap();
    let first = live.next().await.unwrap().unwrap();
    let shown: Vec<String> = first.documents.iter().map(|d| d.id.clone()).collect();
    assert_eq!(shown, expected, "the first snapshot");
}

macro_rules! logged {
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, parent = "devices", collection = $collection, collection_group)]
        struct $name {
            #[sharded(index)]
            kind: u32,
            at: i64,
        }

        impl Logged for $name {
            fn new(kind: u32, at: i64) -> Self {
                $name { kind, at }
            }
            fn kinds_in(values: Vec<u32>) -> ShardedQuery<Self, { query_id("kind") }> {
                $name::query().kind_in(values)
            }
        }
    };
}

trait Logged:
    Sharded + Subcollection + sharded_runtime::bounds::ParentDepth<1> + CollectionGroup
{
    fn new(kind: u32, at: i64) -> Self;
    fn kinds_in(values: Vec<u32>) -> ShardedQuery<Self, { query_id("kind") }>;
}

logged!(Logged3, 3, "desc", "log3");
logged!(Logged61, 61, "asc", "log61");

/// `kind in values` on the unsharded copy: under `device`, or across every device.
async fn logged_reference<T: Sharded>(
    db: &FirestoreDb,
    device: Option<&str>,
    values: &[u32],
) -> Vec<(Option<String>, String)> {
    let plain = format!("plain_{}", T::COLLECTION);
    let direction = match T::DESCRIPTION.direction {
        sharded_runtime::indexes::Direction::Ascending => FirestoreQueryDirection::Ascending,
        sharded_runtime::indexes::Direction::Descending => FirestoreQueryDirection::Descending,
    };
    let mut select = db.fluent().select().from(plain.as_str());
    select = match device {
        Some(device) => select.parent(db.parent_path("devices", device).unwrap()),
        None => select.all_descendants(),
    };
    let values = values.to_vec();
    let documents = select
        .filter(move |q| q.for_all([q.field("kind").is_in(values.clone())]))
        .order(move |_| by_then_name("at", direction.clone()))
        .query()
        .await
        .unwrap();
    documents.iter().map(place_of).collect()
}

async fn check_logged<T: Logged>(db: &FirestoreDb, rng: &mut StdRng) {
    let plain = format!("plain_{}", T::COLLECTION);
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for i in 0..150 {
        // Ids repeat across devices and the order field ties across them.
        let device = format!("dev{}", i % 5);
        let id = format!("e{}", i % 37);
        let document = T::new(rng.random_range(0..KINDS), rng.random_range(0..6));
        let parent = Parent::<T>::new(&[&device]).unwrap();
        T::collection_in(db, &parent)
            .upsert_in(&mut batch, &id, &document)
            .unwrap();
        db.fluent()
            .update()
            .in_col(&plain)
            .document_id(&id)
            .parent(db.parent_path("devices", &device).unwrap())
            .object(&document)
            .add_to_batch(&mut batch)
            .unwrap();
    }
    batch.write().await.unwrap();
    for round in 0..4 {
        let count = rng.random_range(1..=KINDS as usize + 2);
        let values = pick(rng, &(0..KINDS + 2).collect::<Vec<_>>(), count);
        let limit = rng.random_range(1..12);
        let what = format!(
            "{} round {round} kind in {values:?} limit {limit}",
            T::COLLECTION
        );
        let device = format!("dev{}", rng.random_range(0..5));
        let parent = Parent::<T>::new(&[&device]).unwrap();
        let expected = logged_reference::<T>(db, Some(&device), &values).await;
        let query = T::kinds_in(values.clone()).in_parent(&parent);
        assert_eq!(paged(db, &query, limit).await, expected, "{what}: {device}");
        assert_eq!(
            query.count(db).await.unwrap(),
            expected.len() as u64,
            "{what}: {device} count"
        );
        let expected = logged_reference::<T>(db, None, &values).await;
        let group = T::kinds_in(values).in_group();
        assert_eq!(paged(db, &group, limit).await, expected, "{what}: group");
        assert_eq!(
            places(&group.fetch_stored(db).await.unwrap()),
            expected,
            "{what}: group fetch"
        );
        assert_eq!(
            group.count(db).await.unwrap(),
            expected.len() as u64,
            "{what}: group count"
        );
    }
}

#[tokio::test]
async fn in_queries_per_parent_and_over_a_group_equal_the_unsharded_ones() {
    let test = test_db("query-in-group").await;
    let seed =
        sharded_tests::seed("in_queries_per_parent_and_over_a_group_equal_the_unsharded_ones");
    let mut rng = StdRng::seed_from_u64(seed);
    check_logged::<Logged3>(&test.db, &mut rng).await;
    check_logged::<Logged61>(&test.db, &mut rng).await;
}

/// Every `in` query above is served by an index of its type's plan (by Firestore's rules,
/// which the emulator does not apply): the equality's, in the scope the query reads.
#[test]
fn every_in_query_has_its_index_in_the_plan() {
    fn served<T: Sharded, const Q: u64, R: Reach>(query: ShardedQuery<T, Q, R>) {
        let need = query.index_need().unwrap();
        assert!(T::indexes().serving(&need).is_some(), "{need:?}");
    }
    served(Reading3::query().device_in(["d1", "d2"]));
    served(Reading40::query().kind_in([1, 2]).range(3..));
    served(Reading61::query().device_in(["d1"]));
    let parent = Parent::<Logged61>::new(&["dev0"]).unwrap();
    served(Logged61::query().kind_in([1, 2]).in_parent(&parent));
    served(Logged61::query().kind_in([1, 2]).in_group());
    served(Logged3::query().kind_in([1]).in_group());
}
