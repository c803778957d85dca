//! `array-contains` and `array-contains-any` on a `#[sharded(contains)]` array field
//! (`T::query().<field>_contains(x)`, `<field>_contains_any([..])`) return exactly what the same
//! query returns on an unsharded collection, on the emulator. A document holding several of
//! the values of an `array-contains-any` is read by one chunk query only (each chunk asks for
//! every value, over fewer shard values), so it appears once, and counts and sums count it
//! once. Random data with ties, both directions, 3, 40 and 61 shard values, pages to the end,
//! counts, sums, streams; per parent and over a collection group; and the index that serves
//! each query.

use std::collections::HashMap;
use std::ops::Bound;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{
    Error, Parent, Sharded, ShardedQuery,
    reads::{Number, NumericField, query_id},
};
use sharded_tests::equivalence::{
    Unsharded, check_query, for_each_dataset, ids, paged, write_both,
};
use sharded_tests::test_db;

macro_rules! post {
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, collection = $collection)]
        struct $name {
            #[sharded(contains)]
            tags: Vec<String>,
            at: i64,
            #[sharded(aggregate)]
            likes: i64,
        }

        impl Post for $name {
            fn new(tags: Vec<String>, at: i64, likes: i64) -> Self {
                $name { tags, at, likes }
            }
            fn likes(&self) -> i64 {
                self.likes
            }
            fn tagged(tag: String) -> ShardedQuery<Self, { query_id("tags_contains") }> {
                $name::query().tags_contains(tag)
            }
            fn tagged_any(tags: Vec<String>) -> ShardedQuery<Self, { query_id("tags_contains") }> {
                $name::query().tags_contains_any(tags)
            }
            fn summed() -> NumericField<Self> {
                $name::aggregates().likes
            }
        }
    };
}

trait Post: Sharded<OrderValue = i64> + sharded_runtime::bounds::TopLevel + Clone {
    fn new(tags: Vec<String>, at: i64, likes: i64) -> Self;
    fn likes(&self) -> i64;
    fn tagged(tag: String) -> ShardedQuery<Self, { query_id("tags_contains") }>;
    fn tagged_any(tags: Vec<String>) -> ShardedQuery<Self, { query_id("tags_contains") }>;
    fn summed() -> NumericField<Self>;
}

post!(Post3, 3, "desc", "posts3");
post!(Post40, 40, "asc", "posts40");
post!(Post61, 61, "desc", "posts61");

const TAGS: usize = 8;

fn tag(i: usize) -> String {
    format!("t{i}")
}

/// Up to four distinct tags, some documents none: documents often hold several of the tags a
/// query asks for.
fn random_tags(rng: &mut StdRng) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    for _ in 0..rng.random_range(0..=4) {
        let tag = tag(rng.random_range(0..TAGS));
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    tags
}

fn random_range(rng: &mut StdRng) -> (Bound<i64>, Bound<i64>) {
    let mut bound = || match rng.random_range(0..3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(rng.random_range(0..8)),
        _ => Bound::Excluded(rng.random_range(0..8)),
    };
    (bound(), bound())
}

/// `query` against `reference`, every way it runs, its sum, and its index.
async fn check_one<T: Post>(
    db: &FirestoreDb,
    plain: &str,
    query: ShardedQuery<T, { query_id("tags_contains") }>,
    reference: Unsharded,
    likes: &HashMap<&str, i64>,
    limit: u32,
    what: &str,
) {
    let expected = reference.ids::<T>(db, plain).await.unwrap();
    let mut distinct = expected.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        expected.len(),
        "{what}: the reference repeats"
    );
    check_query(db, query.clone(), Ok(expected.clone()), limit, what).await;
    let sum: i64 = expected.iter().map(|id| likes[id.as_str()]).sum();
    let summed = query.sum(db, T::summed()).await.unwrap();
    assert_eq!(summed.as_f64(), sum as f64, "{what}: sum");
    if !expected.is_empty() {
        assert_eq!(summed, Number::Integer(sum), "{what}: sum");
    }
    let need = query.index_need().unwrap();
    assert_eq!(need.contains.as_deref(), Some("tags"), "{what}");
    assert!(T::indexes().serving(&need).is_some(), "{what}: {need:?}");
}

async fn check_random<T: Post>(db: &FirestoreDb, rng: &mut StdRng, label: &str) {
    let plain = format!("plain_{}", T::COLLECTION);
    let times = rng.random_range(2..8);
    let documents: Vec<(String, T)> = (0..rng.random_range(60..200))
        .map(|i| {
            let post = T::new(
                random_tags(rng),
                rng.random_range(0..times),
                rng.random_range(-500..500),
            );
            (format!("p{:05}-{i}", rng.random_range(0..100_000)), post)
        })
        .collect();
    write_both(db, &plain, &documents).await;
    let likes: HashMap<&str, i64> = documents
        .iter()
        .map(|(id, post)| (id.as_str(), post.likes()))
        .collect();
    for round in 0..6 {
        let range = random_range(rng);
        let limit = rng.random_range(1..25);
        let label = format!("{label} round {round} {range:?} limit {limit}");
        if round % 3 == 0 {
            let value = tag(rng.random_range(0..TAGS + 1));
            let reference = Unsharded::default()
                .array_contains("tags", value.clone())
                .range(&range);
            let query = T::tagged(value.clone()).range(range);
            let what = format!("{label} contains {value}");
            check_one(db, &plain, query, reference, &likes, limit, &what).await;
        } else {
            let count = rng.random_range(1..=10);
            let values: Vec<String> = (0..count)
                .map(|_| tag(rng.random_range(0..TAGS + 1)))
                .collect();
            let reference = Unsharded::default()
                .array_contains_any("tags", values.clone())
                .range(&range);
            let query = T::tagged_any(values.clone()).range(range);
            let what = format!("{label} contains any of {values:?}");
            check_one(db, &plain, query, reference, &likes, limit, &what).await;
        }
    }
}

#[tokio::test]
async fn array_queries_equal_the_unsharded_query_at_3_40_and_61_shards() {
    let test = test_db("query-contains").await;
    for_each_dataset(&test, "contains", 2, |db, rng, label| {
        Box::pin(async move {
            check_random::<Post3>(db, rng, &format!("3 shards, {label}")).await;
            check_random::<Post40>(db, rng, &format!("40 shards, {label}")).await;
            check_random::<Post61>(db, rng, &format!("61 shards, {label}")).await;
        })
    })
    .await;
}

/// A document holding every value asked for comes back once, from one chunk query: 40 shard
/// values × 10 values are 14 queries of at most 3 shard values each, all asking for the 10.
/// Past Firestore's limits (31 values, none) the query is refused before sending.
#[tokio::test]
async fn a_document_holding_many_values_comes_back_once() {
    let test = test_db("query-contains-once").await;
    let db = &test.db;
    let every: Vec<String> = (0..10).map(tag).collect();
    for i in 0..30 {
        let post = Post40::new(every.clone(), i % 4, 1);
        Post40::collection(db)
            .upsert(&format!("p{i:02}"), &post)
            .await
            .unwrap();
    }
    let query = Post40::query().tags_contains_any(every.clone());
    let (stored, stats) = query.fetch_with_stats(db).await.unwrap();
    assert_eq!(stored.len(), 30);
    assert_eq!(stats.queries, 14);
    assert_eq!(query.count(db).await.unwrap(), 30);
    assert_eq!(
        query.sum(db, Post40::aggregates().likes).await.unwrap(),
        Number::Integer(30)
    );
    let mut names = ids(&stored);
    names.dedup();
    assert_eq!(names.len(), 30);
    let many: Vec<String> = (0..31).map(tag).collect();
    assert!(matches!(
        Post40::query().tags_contains_any(many).fetch(db).await,
        Err(Error::InvalidQuery(_))
    ));
    assert!(matches!(
        Post40::query()
            .tags_contains_any(Vec::<String>::new())
            .fetch(db)
            .await,
        Err(Error::InvalidQuery(_))
    ));
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 61,
    order_by = "at",
    parent = "boards",
    collection = "notes",
    collection_group
)]
struct Note {
    #[sharded(contains)]
    labels: Vec<u32>,
    at: i64,
}

/// Per board and across every board, against the documents themselves: each note whose
/// labels hold any of the values, by (at, full path) descending, each once.
#[tokio::test]
async fn array_queries_per_parent_and_over_a_group() {
    let test = test_db("query-contains-group").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(61);
    let mut notes: Vec<(String, String, Note)> = Vec::new();
    for i in 0..120 {
        let board = format!("b{}", i % 4);
        let labels: Vec<u32> = (0..rng.random_range(0..4))
            .map(|_| rng.random_range(0..6))
            .collect();
        let note = Note {
            labels,
            at: rng.random_range(0..5),
        };
        let parent = Parent::<Note>::new(&[&board]).unwrap();
        let id = format!("n{}", i % 31);
        Note::collection_in(db, &parent)
            .upsert(&id, &note)
            .await
            .unwrap();
        notes.retain(|(b, n, _)| !(b == &board && n == &id));
        notes.push((board, id, note));
    }
    let expected = |board: Option<&str>, values: &[u32]| {
        let mut matching: Vec<&(String, String, Note)> = notes
            .iter()
            .filter(|(b, _, note)| {
                board.is_none_or(|board| board == b)
                    && note.labels.iter().any(|label| values.contains(label))
            })
            .collect();
        // Descending by `at`, then by full path (`boards/{b}/notes/{id}`) descending.
        matching.sort_by(|x, y| {
            (y.2.at, format!("boards/{}/notes/{}", y.0, y.1))
                .cmp(&(x.2.at, format!("boards/{}/notes/{}", x.0, x.1)))
        });
        matching
            .into_iter()
            .map(|(b, id, _)| (Some(format!("boards/{b}")), id.clone()))
            .collect::<Vec<_>>()
    };
    for values in [vec![1], vec![0, 2, 2], vec![1, 3, 4, 5]] {
        for limit in [1, 4, 9] {
            let group = Note::query().labels_contains_any(values.clone()).in_group();
            assert_eq!(
                paged(db, &group, limit).await,
                expected(None, &values),
                "group {values:?} {limit}"
            );
            assert_eq!(
                group.count(db).await.unwrap(),
                expected(None, &values).len() as u64
            );
            let board = Parent::<Note>::new(&["b2"]).unwrap();
            let one = Note::query()
                .labels_contains_any(values.clone())
                .in_parent(&board);
            assert_eq!(
                paged(db, &one, limit).await,
                expected(Some("b2"), &values),
                "b2 {values:?} {limit}"
            );
        }
        let need = Note::query()
            .labels_contains_any(values.clone())
            .in_group()
            .index_need()
            .unwrap();
        assert!(Note::indexes().serving(&need).is_some(), "{need:?}");
    }
    let single = Note::query().labels_contains(3).in_group();
    assert_eq!(paged(db, &single, 5).await, expected(None, &[3]));
}
