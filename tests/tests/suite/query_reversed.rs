//! Both directions and the previous page, on the emulator, for `reversible` types: a reversed
//! query returns exactly what the same query ordered the other way returns on an unsharded
//! collection (ties by document name the other way too), and paging back with
//! `before(page.previous)` gives the same pages as paging forward, in reverse, from any page
//! to the first. Random data with ties, 3, 40 and 61 shard values, per parent and over a
//! group; counts, sums, and the index that serves each query.

use std::ops::Bound;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{
    Cursor, Parent, Sharded, ShardedQuery,
    reads::{Number, NumericField, Reversed, query_id},
};
use sharded_tests::equivalence::{
    Unsharded, check_paging_back, check_query, for_each_dataset, ids, pages_forward, write_both,
};
use sharded_tests::test_db;

macro_rules! log {
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, collection = $collection, reversible)]
        struct $name {
            #[sharded(index)]
            level: u32,
            at: i64,
            #[sharded(aggregate)]
            bytes: i64,
        }

        impl Log for $name {
            fn new(level: u32, at: i64, bytes: i64) -> Self {
                $name { level, at, bytes }
            }
            fn at_level(level: u32) -> ShardedQuery<Self, { query_id("level") }> {
                $name::query().level(level)
            }
            fn summed() -> NumericField<Self> {
                $name::aggregates().bytes
            }
        }
    };
}

trait Log:
    Sharded<OrderValue = i64>
    + sharded_runtime::bounds::TopLevel
    + sharded_runtime::bounds::Reversible
    + Clone
{
    fn new(level: u32, at: i64, bytes: i64) -> Self;
    fn at_level(level: u32) -> ShardedQuery<Self, { query_id("level") }>;
    fn summed() -> NumericField<Self>;
}

log!(Log3, 3, "desc", "logs3");
log!(Log40, 40, "asc", "logs40");
log!(Log61, 61, "desc", "logs61");

fn random_range(rng: &mut StdRng) -> (Bound<i64>, Bound<i64>) {
    let mut bound = || match rng.random_range(0..3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(rng.random_range(0..8)),
        _ => Bound::Excluded(rng.random_range(0..8)),
    };
    (bound(), bound())
}

async fn check_random<T: Log + PartialEq + std::fmt::Debug>(
    db: &FirestoreDb,
    rng: &mut StdRng,
    label: &str,
) {
    let plain = format!("plain_{}", T::COLLECTION);
    let times = rng.random_range(2..8);
    let documents: Vec<(String, T)> = (0..rng.random_range(40..160))
        .map(|i| {
            let log = T::new(
                rng.random_range(0..3),
                rng.random_range(0..times),
                rng.random_range(0..1_000),
            );
            (format!("l{:05}-{i}", rng.random_range(0..100_000)), log)
        })
        .collect();
    write_both(db, &plain, &documents).await;
    for round in 0..4 {
        let range = random_range(rng);
        let limit = rng.random_range(1..15);
        let level = rng.random_range(0..3);
        let what = format!("{label} round {round} level {level} {range:?} limit {limit}");
        let forward_query = T::at_level(level).range(range);
        let reversed_query = forward_query.clone().reversed();
        let reference = Unsharded::default().equal("level", level).range(&range);
        let expected = reference
            .clone()
            .reversed()
            .ids::<T>(db, &plain)
            .await
            .unwrap();
        let mut forward_expected = reference.ids::<T>(db, &plain).await.unwrap();
        forward_expected.reverse();
        assert_eq!(expected, forward_expected, "{what}: the reference reversed");
        check_query(
            db,
            reversed_query.clone(),
            Ok(expected.clone()),
            limit,
            &what,
        )
        .await;
        assert_eq!(
            reversed_query.sum(db, T::summed()).await.unwrap(),
            forward_query.sum(db, T::summed()).await.unwrap(),
            "{what}: sum"
        );
        // Paging back, in both directions.
        let forward = pages_forward(db, &forward_query, limit).await;
        check_paging_back(
            db,
            &forward_query,
            &forward,
            limit,
            &format!("{what} forward"),
        )
        .await;
        let reversed = pages_forward(db, &reversed_query, limit).await;
        check_paging_back(
            db,
            &reversed_query,
            &reversed,
            limit,
            &format!("{what} reversed"),
        )
        .await;
        // `before` without pages: the last documents before a cursor, and their count.
        let all = forward_query.fetch_stored(db).await.unwrap();
        if all.len() > 2 {
            let at = rng.random_range(1..all.len());
            let cursor = Cursor::<T, { query_id("level") }>::after(&all[at]).unwrap();
            let before = forward_query.clone().before(cursor.clone());
            assert_eq!(
                ids(&before.fetch_stored(db).await.unwrap()),
                ids(&all[..at]),
                "{what}: before"
            );
            let last = before.clone().limit(limit).fetch_stored(db).await.unwrap();
            assert_eq!(
                ids(&last),
                ids(&all[at.saturating_sub(limit as usize)..at]),
                "{what}: the last {limit} before"
            );
            assert_eq!(
                before.clone().limit(limit).count(db).await.unwrap(),
                at.min(limit as usize) as u64,
                "{what}: count before"
            );
            let need = before.index_need().unwrap();
            assert!(T::indexes().serving(&need).is_some(), "{what}: {need:?}");
        }
        for need in [
            forward_query.index_need().unwrap(),
            reversed_query.index_need().unwrap(),
            sharded_runtime::WholeCollection::<T>::__whole_collection()
                .reversed()
                .index_need()
                .unwrap(),
        ] {
            assert!(T::indexes().serving(&need).is_some(), "{what}: {need:?}");
        }
    }
}

#[tokio::test]
async fn reversed_queries_and_previous_pages_equal_the_unsharded_ones() {
    let test = test_db("query-reversed").await;
    for_each_dataset(&test, "reversed", 2, |db, rng, label| {
        Box::pin(async move {
            check_random::<Log3>(db, rng, &format!("3 shards, {label}")).await;
            check_random::<Log40>(db, rng, &format!("40 shards, {label}")).await;
            check_random::<Log61>(db, rng, &format!("61 shards, {label}")).await;
        })
    })
    .await;
}

/// A reversed query's cursor is of its own type, and its token parses as no forward
/// cursor's (nor the reverse).
#[tokio::test]
async fn a_cursor_of_one_direction_is_no_cursor_of_the_other() {
    let test = test_db("query-reversed-cursors").await;
    let db = &test.db;
    for i in 0..5 {
        Log3::collection(db)
            .upsert(&format!("l{i}"), &Log3::new(1, i, 1))
            .await
            .unwrap();
    }
    let forward = Log3::query().level(1).page(db, 2).await.unwrap();
    let reversed = Log3::query().level(1).reversed().page(db, 2).await.unwrap();
    let forward_token = forward.next.unwrap().to_token();
    let reversed_token = reversed.next.unwrap().to_token();
    // The derive's aliases name a reversed query's type, its cursor and its page.
    let named: Log3LevelQueryReversed = Log3::query().level(1).reversed();
    let every: sharded_runtime::WholeCollectionReversed<Log3> = Log3::query().all().reversed();
    let resumed: sharded_runtime::PageOf<Log3LevelQueryReversed> = named
        .after(
            reversed_token
                .parse::<sharded_runtime::CursorOf<Log3LevelQueryReversed>>()
                .unwrap(),
        )
        .page(db, 2)
        .await
        .unwrap();
    assert_eq!(resumed.items.len(), 2);
    assert_eq!(every.fetch(db).await.unwrap().len(), 5);
    assert!(
        forward_token
            .parse::<Cursor<Log3, { query_id("level") }, Reversed<sharded_runtime::reads::InCollection>>>()
            .is_err()
    );
    assert!(
        reversed_token
            .parse::<Cursor<Log3, { query_id("level") }>>()
            .is_err()
    );
    assert_eq!(
        Log3::query()
            .all()
            .reversed()
            .sum(db, Log3::aggregates().bytes)
            .await
            .unwrap(),
        Number::Integer(5)
    );
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 61,
    order_by = "at",
    parent = "hosts",
    collection = "events",
    collection_group,
    reversible
)]
struct Event {
    #[sharded(index)]
    kind: u32,
    at: i64,
}

/// Per parent and over the group: reversed, ties by full path the other way, and paged back.
#[tokio::test]
async fn reversed_and_paged_back_per_parent_and_over_a_group() {
    let test = test_db("query-reversed-group").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(9);
    let mut events: Vec<(String, String, i64)> = Vec::new();
    for i in 0..90 {
        let host = format!("h{}", i % 3);
        let id = format!("e{}", i % 31);
        let at = rng.random_range(0..4);
        let parent = Parent::<Event>::new(&[&host]).unwrap();
        Event::collection_in(db, &parent)
            .upsert(&id, &Event { kind: 1, at })
            .await
            .unwrap();
        events.retain(|(h, e, _)| !(h == &host && e == &id));
        events.push((host, id, at));
    }
    // Ascending by `at`, then by full path ascending: the reversed order of the type's.
    let mut expected: Vec<(Option<String>, String)> = {
        let mut sorted = events.clone();
        sorted.sort_by(|x, y| {
            (x.2, format!("hosts/{}/events/{}", x.0, x.1))
                .cmp(&(y.2, format!("hosts/{}/events/{}", y.0, y.1)))
        });
        sorted
            .into_iter()
            .map(|(h, e, _)| (Some(format!("hosts/{h}")), e))
            .collect()
    };
    let group = Event::query().kind(1).in_group().reversed();
    for limit in [1, 4, 10] {
        let pages = pages_forward(db, &group, limit).await;
        let got: Vec<(Option<String>, String)> = pages
            .iter()
            .flat_map(|page| page.items.iter().map(|s| (s.parent.clone(), s.id.clone())))
            .collect();
        assert_eq!(got, expected, "group, limit {limit}");
        check_paging_back(db, &group, &pages, limit, &format!("group, limit {limit}")).await;
    }
    expected.retain(|(parent, _)| parent.as_deref() == Some("hosts/h1"));
    let parent = Parent::<Event>::new(&["h1"]).unwrap();
    let one = Event::query().kind(1).in_parent(&parent).reversed();
    let pages = pages_forward(db, &one, 3).await;
    let got: Vec<(Option<String>, String)> = pages
        .iter()
        .flat_map(|page| page.items.iter().map(|s| (s.parent.clone(), s.id.clone())))
        .collect();
    assert_eq!(got, expected);
    check_paging_back(db, &one, &pages, 3, "h1").await;
    let need = group.index_need().unwrap();
    assert!(Event::indexes().serving(&need).is_some(), "{need:?}");
}

/// Pages walked back and forth from anywhere, with documents deleted between pages (some
/// walks emptying the end of the query): each page is exactly the documents next to its
/// cursor in the query's order as they are then, `next` is there exactly when a document
/// follows the page and `previous` exactly when one precedes it, an emptied page included.
async fn check_walk<T: Log + PartialEq + std::fmt::Debug>(db: &FirestoreDb, rng: &mut StdRng) {
    // (at, id) of every live document; ids order as their names do.
    let mut live: Vec<(i64, String)> = Vec::new();
    for n in 0..60 {
        let at = rng.random_range(0..12);
        let id = format!("d{n:03}");
        T::collection(db)
            .upsert(&id, &T::new(1, at, 1))
            .await
            .unwrap();
        live.push((at, id));
    }
    let descending = T::DESCRIPTION.direction == sharded_runtime::indexes::Direction::Descending;
    let sort = |live: &mut Vec<(i64, String)>| {
        live.sort();
        if descending {
            live.reverse();
        }
    };
    sort(&mut live);
    let query = T::at_level(1);
    let limit = rng.random_range(2..7);
    let ids = |items: &[sharded_runtime::Stored<T>]| {
        items.iter().map(|item| item.id.clone()).collect::<Vec<_>>()
    };
    // The page's documents, as positions in `live`, and which way it was read.
    let mut page = query.clone().page(db, limit).await.unwrap();
    let mut expected: Vec<String> = live
        .iter()
        .take(limit as usize)
        .map(|d| d.1.clone())
        .collect();
    for step in 0..25 {
        let what = format!("{} step {step} limit {limit}", T::COLLECTION);
        assert_eq!(ids(&page.items), expected, "{what}: the page");
        // Delete a few documents anywhere (now and then the whole end of the query).
        if rng.random_bool(0.15) {
            let keep = rng.random_range(0..live.len().max(1));
            for (_, id) in live.drain(keep..) {
                T::collection(db).delete(&id).await.unwrap();
            }
        } else {
            for _ in 0..rng.random_range(0..3) {
                if live.is_empty() {
                    break;
                }
                let (_, id) = live.remove(rng.random_range(0..live.len()));
                T::collection(db).delete(&id).await.unwrap();
            }
        }
        let key_of = |item: &sharded_runtime::Stored<T>| (item.document.at(), item.id.clone());
        let before_key = |key: &(i64, String)| -> Vec<String> {
            let mut ordered = live.clone();
            ordered.push(key.clone());
            sort(&mut ordered);
            let at = ordered.iter().position(|d| d == key).unwrap();
            ordered[..at]
                .iter()
                .filter(|d| *d != key)
                .map(|d| d.1.clone())
                .collect()
        };
        let after_key = |key: &(i64, String)| -> Vec<String> {
            let mut ordered = live.clone();
            ordered.push(key.clone());
            sort(&mut ordered);
            let at = ordered.iter().rposition(|d| d == key).unwrap();
            ordered[at + 1..]
                .iter()
                .filter(|d| *d != key)
                .map(|d| d.1.clone())
                .collect()
        };
        // Go back or forth, where the page says one can.
        let mut back = rng.random_bool(0.5);
        match (back, page.previous.clone(), page.next.clone()) {
            (true, Some(previous), _) | (false, Some(previous), None) => {
                back = true;
                let before: Vec<String> = match page.items.first() {
                    Some(first) => before_key(&key_of(first)),
                    None => live.iter().map(|d| d.1.clone()).collect(),
                };
                expected = before[before.len().saturating_sub(limit as usize)..].to_vec();
                page = query
                    .clone()
                    .before(previous)
                    .page(db, limit)
                    .await
                    .unwrap();
            }
            (_, _, Some(next)) => {
                back = false;
                let after: Vec<String> = match page.items.last() {
                    Some(last) => after_key(&key_of(last)),
                    None => live.iter().map(|d| d.1.clone()).collect(),
                };
                expected = after.into_iter().take(limit as usize).collect();
                page = query.clone().after(next).page(db, limit).await.unwrap();
            }
            // Nowhere to go: every document gone around an empty query, or the only page.
            (_, None, None) => {
                back = false;
                let everything = query.clone().page(db, limit).await.unwrap();
                assert!(
                    live.len() <= limit as usize,
                    "{what}: a page with neither previous nor next in a query of {} documents",
                    live.len()
                );
                expected = live.iter().map(|d| d.1.clone()).collect();
                page = everything;
            }
        }
        let what = format!("{what}, then {}", if back { "back" } else { "forth" });
        // The page's cursors say exactly what lies around it.
        assert_eq!(ids(&page.items), expected, "{what}");
        let precedes = match page.items.first() {
            Some(first) => !before_key(&key_of(first)).is_empty(),
            None => false,
        };
        let follows = match page.items.last() {
            Some(last) => !after_key(&key_of(last)).is_empty(),
            None => false,
        };
        if !page.items.is_empty() {
            assert_eq!(page.previous.is_some(), precedes, "{what}: previous");
            assert_eq!(page.next.is_some(), follows, "{what}: next");
        } else if back {
            // An empty page before a cursor: the query's start follows it, if anything does.
            assert!(
                page.previous.is_none(),
                "{what}: previous of an empty page before"
            );
            assert_eq!(
                page.next.is_some(),
                !live.is_empty(),
                "{what}: next of an empty page"
            );
        } else {
            // An empty page after a cursor (its end deleted): the query's end precedes it.
            assert!(page.next.is_none(), "{what}: next of an empty page after");
            assert_eq!(
                page.previous.is_some(),
                !live.is_empty(),
                "{what}: previous of an empty page"
            );
        }
    }
}

trait At {
    fn at(&self) -> i64;
}

impl<T: Log> At for T
where
    T: serde::Serialize,
{
    fn at(&self) -> i64 {
        serde_json::to_value(self).unwrap()["at"].as_i64().unwrap()
    }
}

#[tokio::test]
async fn pages_walk_back_and_forth_from_anywhere_while_documents_are_deleted() {
    let test = test_db("query-reversed-walk").await;
    let seed =
        sharded_tests::seed("pages_walk_back_and_forth_from_anywhere_while_documents_are_deleted");
    let mut rng = StdRng::seed_from_u64(seed);
    for _ in 0..2 {
        let db = test
            .emulator
            .db(&format!("walk-{}", rng.random::<u32>()))
            .await
            .unwrap();
        check_walk::<Log3>(&db, &mut rng).await;
        check_walk::<Log61>(&db, &mut rng).await;
    }
}
