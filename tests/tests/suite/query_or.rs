//! OR across a type's typed queries (`T::query().venue(x).or(T::query().kind(k))`) returns
//! exactly what the same OR returns on an unsharded collection, on the emulator: each
//! document once though it matches several disjuncts, in the query's order, pages, counts and
//! streams alike, at 3, 40 and 61 shard values; and each disjunct's index is in the plan.

use std::ops::Bound;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::{FirestoreDb, FirestoreQueryDirection};
use sharded_runtime::{
    Error, Sharded, ShardedQuery,
    reads::{DynamicOr, InCollection, query_id},
};
use sharded_tests::equivalence::{by_then_name, check_query, ids};
use sharded_tests::test_db;

macro_rules! trade {
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, collection = $collection)]
        struct $name {
            #[sharded(index)]
            venue: String,
            #[sharded(index)]
            kind: u32,
            #[sharded(contains)]
            tags: Vec<String>,
            at: i64,
        }

        impl Trade for $name {
            fn new(venue: String, kind: u32, tags: Vec<String>, at: i64) -> Self {
                $name {
                    venue,
                    kind,
                    tags,
                    at,
                }
            }
            fn venue(venue: &str) -> ShardedQuery<Self, { query_id("venue") }> {
                $name::query().venue(venue)
            }
            fn venues(venues: Vec<String>) -> ShardedQuery<Self, { query_id("venue") }> {
                $name::query().venue_in(venues)
            }
            fn kind(kind: u32) -> ShardedQuery<Self, { query_id("kind") }> {
                $name::query().kind(kind)
            }
            fn tagged(tag: &str) -> ShardedQuery<Self, { query_id("tags_contains") }> {
                $name::query().tags_contains(tag)
            }
        }
    };
}

trait Trade: Sharded<OrderValue = i64> + sharded_runtime::bounds::TopLevel + Clone {
    fn new(venue: String, kind: u32, tags: Vec<String>, at: i64) -> Self;
    fn venue(venue: &str) -> ShardedQuery<Self, { query_id("venue") }>;
    fn venues(venues: Vec<String>) -> ShardedQuery<Self, { query_id("venue") }>;
    fn kind(kind: u32) -> ShardedQuery<Self, { query_id("kind") }>;
    fn tagged(tag: &str) -> ShardedQuery<Self, { query_id("tags_contains") }>;
}

trade!(Trade3, 3, "desc", "trades3");
trade!(Trade40, 40, "asc", "trades40");
trade!(Trade61, 61, "desc", "trades61");

/// One disjunct of the reference OR, in the firestore crate's terms.
#[derive(Clone, Debug)]
enum Is {
    Venue(String),
    Venues(Vec<String>),
    Kind(u32),
    Tagged(String),
}

/// The same OR on the unsharded copy, in `T`'s order, within `lower..upper` of `at`.
async fn reference<T: Sharded>(
    db: &FirestoreDb,
    plain: &str,
    disjuncts: &[Is],
    (lower, upper): (Bound<i64>, Bound<i64>),
) -> Vec<String> {
    let direction = match T::DESCRIPTION.direction {
        sharded_runtime::indexes::Direction::Ascending => FirestoreQueryDirection::Ascending,
        sharded_runtime::indexes::Direction::Descending => FirestoreQueryDirection::Descending,
    };
    let disjuncts = disjuncts.to_vec();
    let documents = db
        .fluent()
        .select()
        .from(plain)
        .filter(move |q| {
            let any = disjuncts.iter().map(|is| match is {
                Is::Venue(v) => q.field("venue").eq(v.clone()),
                Is::Venues(v) => q.field("venue").is_in(v.clone()),
                Is::Kind(k) => q.field("kind").eq(*k),
                Is::Tagged(t) => q.field("tags").array_contains(t.clone()),
            });
            let lower = match lower {
                Bound::Included(v) => q.field("at").greater_than_or_equal(v),
                Bound::Excluded(v) => q.field("at").greater_than(v),
                Bound::Unbounded => None,
            };
            let upper = match upper {
                Bound::Included(v) => q.field("at").less_than_or_equal(v),
                Bound::Excluded(v) => q.field("at").less_than(v),
                Bound::Unbounded => None,
            };
            q.for_all([q.for_any(any.collect::<Vec<_>>()), lower, upper])
        })
        .order(move |_| by_then_name("at", direction.clone()))
        .query()
        .await
        .unwrap();
    documents
        .iter()
        .map(|d| sharded_tests::id_of(d).to_owned())
        .collect()
}

/// The sharded OR of `disjuncts`, built in a loop: its type stays the same
/// (`or_dynamic`) however many queries it joins.
fn sharded<T: Trade>(
    disjuncts: &[Is],
) -> ShardedQuery<T, { query_id("venue") }, InCollection, DynamicOr> {
    let mut query: Option<ShardedQuery<T, { query_id("venue") }>> = None;
    let mut rest = Vec::new();
    for is in disjuncts {
        match (is, &query) {
            (Is::Venue(v), None) => query = Some(T::venue(v)),
            (Is::Venues(v), None) => query = Some(T::venues(v.clone())),
            _ => rest.push(is.clone()),
        }
    }
    let first = query.expect("a venue disjunct first");
    let mut rest = rest.into_iter();
    let mut query = match rest.next().expect("an OR has another disjunct") {
        Is::Venue(v) => first.or_dynamic(T::venue(&v)),
        Is::Venues(v) => first.or_dynamic(T::venues(v)),
        Is::Kind(k) => first.or_dynamic(T::kind(k)),
        Is::Tagged(t) => first.or_dynamic(T::tagged(&t)),
    };
    for is in rest {
        query = match is {
            Is::Venue(v) => query.or_dynamic(T::venue(&v)),
            Is::Venues(v) => query.or_dynamic(T::venues(v)),
            Is::Kind(k) => query.or_dynamic(T::kind(k)),
            Is::Tagged(t) => query.or_dynamic(T::tagged(&t)),
        };
    }
    query
}

async fn check_random<T: Trade>(db: &FirestoreDb, rng: &mut StdRng, label: &str) {
    let plain = format!("plain_{}", T::COLLECTION);
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for i in 0..rng.random_range(60..160) {
        let tags: Vec<String> = (0..rng.random_range(0..3))
            .map(|_| format!("t{}", rng.random_range(0..4)))
            .collect();
        let trade = T::new(
            format!("v{}", rng.random_range(0..4)),
            rng.random_range(0..4),
            tags,
            rng.random_range(0..6),
        );
        let id = format!("x{:05}-{i}", rng.random_range(0..100_000));
        T::collection(db)
            .upsert_in(&mut batch, &id, &trade)
            .unwrap();
        batch
            .update_object(&plain, &id, &trade, None, None, Vec::new())
            .unwrap();
    }
    batch.write().await.unwrap();
    for round in 0..5 {
        let mut disjuncts = vec![match rng.random_bool(0.5) {
            true => Is::Venue(format!("v{}", rng.random_range(0..4))),
            false => Is::Venues(vec![
                format!("v{}", rng.random_range(0..4)),
                format!("v{}", rng.random_range(0..4)),
            ]),
        }];
        for _ in 0..rng.random_range(1..3) {
            disjuncts.push(match rng.random_range(0..3) {
                0 => Is::Kind(rng.random_range(0..4)),
                1 => Is::Tagged(format!("t{}", rng.random_range(0..4))),
                _ => Is::Venue(format!("v{}", rng.random_range(0..4))),
            });
        }
        let range = match rng.random_bool(0.5) {
            true => (Bound::Included(1), Bound::Excluded(4)),
            false => (Bound::Unbounded, Bound::Unbounded),
        };
        let limit = rng.random_range(1..20);
        let what = format!("{label} round {round} {disjuncts:?} {range:?} limit {limit}");
        let expected = reference::<T>(db, &plain, &disjuncts, range).await;
        let mut distinct = expected.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(
            distinct.len(),
            expected.len(),
            "{what}: the reference repeats"
        );
        let query = sharded::<T>(&disjuncts).range(range);
        check_query(db, query.clone(), Ok(expected), limit, &what).await;
        for need in query.index_needs().unwrap() {
            assert!(T::indexes().serving(&need).is_some(), "{what}: {need:?}");
        }
    }
}

#[tokio::test]
async fn or_equals_the_unsharded_or_at_3_40_and_61_shards() {
    let test = test_db("query-or").await;
    let seed = sharded_tests::seed("or_equals_the_unsharded_or_at_3_40_and_61_shards");
    let mut rng = StdRng::seed_from_u64(seed);
    check_random::<Trade3>(&test.db, &mut rng, "3 shards").await;
    check_random::<Trade40>(&test.db, &mut rng, "40 shards").await;
    check_random::<Trade61>(&test.db, &mut rng, "61 shards").await;
}

/// A document matching every disjunct comes back once; 40 shard values × 2 disjuncts are 3
/// chunk queries; past 30 disjunctions, a disjunct with a range of its own, and an OR with
/// `all()` are refused before sending.
#[tokio::test]
async fn or_reads_each_document_once_within_firestores_limits() {
    let test = test_db("query-or-limits").await;
    let db = &test.db;
    for i in 0..20 {
        let trade = Trade40::new("v1".into(), 1, vec!["t1".into()], i % 3);
        Trade40::collection(db)
            .upsert(&format!("x{i:02}"), &trade)
            .await
            .unwrap();
    }
    let both = Trade40::query().venue("v1").or(Trade40::query().kind(1));
    let (stored, stats) = both.fetch_with_stats(db).await.unwrap();
    assert_eq!(stored.len(), 20);
    let mut names = ids(&stored);
    names.dedup();
    assert_eq!(names.len(), 20);
    assert_eq!(stats.queries, 3);
    assert_eq!(both.count(db).await.unwrap(), 20);
    let many: Vec<String> = (0..30).map(|v| format!("v{v}")).collect();
    let past = Trade40::query().venue_in(many).or(Trade40::query().kind(1));
    assert!(matches!(past.fetch(db).await, Err(Error::InvalidQuery(_))));
    let ranged = Trade40::query()
        .venue("v1")
        .or(Trade40::query().kind(1).range(0..2));
    assert!(matches!(
        ranged.fetch(db).await,
        Err(Error::InvalidQuery(_))
    ));
    let everything = Trade40::query().all().or(Trade40::query().kind(1));
    assert!(matches!(
        everything.fetch(db).await,
        Err(Error::InvalidQuery(_))
    ));
    assert!(
        both.index_need().is_err(),
        "an OR has one need per disjunct"
    );
    assert_eq!(both.index_needs().unwrap().len(), 2);
}

/// An OR reads one scope. A disjunct given another parent than the whole's is refused
/// before sending (it returned the whole's parent's documents only); one given no parent,
/// or the same one, reads the whole's; over the group, every parent's.
#[tokio::test]
async fn an_or_reads_one_scope() {
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
    #[sharded(
        shards = 3,
        order_by = "at",
        parent = "shops",
        collection = "sales",
        collection_group
    )]
    struct Sale {
        #[sharded(index)]
        region: String,
        #[sharded(index)]
        channel: String,
        at: i64,
    }
    let test = test_db("query-or-scopes").await;
    let db = &test.db;
    let (a, b) = (
        sharded_runtime::Parent::<Sale>::new(&["a"]).unwrap(),
        sharded_runtime::Parent::<Sale>::new(&["b"]).unwrap(),
    );
    for (n, parent) in [&a, &b].into_iter().enumerate() {
        for i in 0..4i64 {
            let sale = Sale {
                region: ["eu", "us"][i as usize % 2].into(),
                channel: ["web", "shop"][i as usize / 2].into(),
                at: i,
            };
            Sale::collection_in(db, parent)
                .upsert(&format!("s{n}{i}"), &sale)
                .await
                .unwrap();
        }
    }
    let ids = |sales: Vec<sharded_runtime::Stored<Sale>>| {
        let mut ids: Vec<String> = sales.into_iter().map(|s| s.id).collect();
        ids.sort();
        ids
    };
    let across = Sale::query()
        .region("eu")
        .in_parent(&a)
        .or(Sale::query().channel("web").in_parent(&b));
    match across.fetch(db).await {
        Err(Error::InvalidQuery(message)) => {
            assert!(message.contains("one scope"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        across.count(db).await,
        Err(Error::InvalidQuery(_))
    ));
    // Either way round: the parent given after the OR is the whole's.
    let after = Sale::query()
        .region("eu")
        .or(Sale::query().channel("web").in_parent(&b))
        .in_parent(&a);
    assert!(matches!(after.fetch(db).await, Err(Error::InvalidQuery(_))));
    let expected = ["s00", "s01", "s02"];
    for same in [
        Sale::query()
            .region("eu")
            .in_parent(&a)
            .or(Sale::query().channel("web")),
        Sale::query()
            .region("eu")
            .in_parent(&a)
            .or(Sale::query().channel("web").in_parent(&a)),
        Sale::query()
            .region("eu")
            .or(Sale::query().channel("web"))
            .in_parent(&a),
    ] {
        assert_eq!(ids(same.fetch_stored(db).await.unwrap()), expected);
    }
    let group = Sale::query()
        .region("eu")
        .in_group()
        .or(Sale::query().channel("web").in_group());
    assert_eq!(
        ids(group.fetch_stored(db).await.unwrap()),
        ["s00", "s01", "s02", "s10", "s11", "s12"]
    );
}
