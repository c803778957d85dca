//! Expiry (`#[sharded(expire_at = "expires")]`) on the emulator:
//! - `unexpired(now)` returns exactly what the same query returns on an unsharded collection
//!   with `expires > now`, alone and beside a filter on another range field, in both
//!   directions, pages to the end and back, counts and streams, at 3 and 40 shard values; and
//!   the plan holds the index that serves each of its queries.
//! - `purge_expired(now)` deletes exactly the documents whose expiry is at or before `now`,
//!   one query per shard value (pages counted), and the plan holds the index its query needs;
//!   a resumption goes on after its checkpoint's keys, not from the start; a tracked purge
//!   split over tasks deletes the same, and a finished part sends nothing when run again.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::indexes::QueryScope;
use sharded_runtime::jobs::{
    PURGE_STATE_COLLECTION, PurgeOptions, PurgeProgress, ShardPurge, TaskPart,
};
use sharded_runtime::reads::{RangeField, WHOLE_COLLECTION, query_id};
use sharded_runtime::{Sharded, ShardedQuery};
use sharded_tests::equivalence::{
    FilterOp, Inequality, Unsharded, check_query_and_paging, filtered, write_both,
};
use sharded_tests::test_db;

const VENUE: u64 = query_id("venue");

macro_rules! session {
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[serde(rename_all = "camelCase")]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, collection = $collection, reversible, expire_at = "expires_at")]
        struct $name {
            #[sharded(index)]
            venue: String,
            #[sharded(range)]
            price: i64,
            at: i64,
            expires_at: FirestoreTimestamp,
        }

        impl Session for $name {
            fn new(venue: String, price: i64, at: i64, expires_at: FirestoreTimestamp) -> Self {
                $name {
                    venue,
                    price,
                    at,
                    expires_at,
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
            fn price() -> RangeField<Self, i64> {
                $name::ranges().price
            }
            fn expires(&self) -> FirestoreTimestamp {
                self.expires_at.clone()
            }
        }
    };
}

trait Session:
    Sharded<OrderValue = i64>
    + sharded_runtime::bounds::TopLevel
    + sharded_runtime::bounds::Reversible
    + sharded_runtime::bounds::Expiring<Expiry = FirestoreTimestamp>
    + Clone
    + PartialEq
    + std::fmt::Debug
{
    fn new(venue: String, price: i64, at: i64, expires_at: FirestoreTimestamp) -> Self;
    fn all() -> ShardedQuery<Self, WHOLE_COLLECTION>;
    fn venue(venue: String) -> ShardedQuery<Self, VENUE>;
    fn venues_in(venues: Vec<String>) -> ShardedQuery<Self, VENUE>;
    fn price() -> RangeField<Self, i64>;
    fn expires(&self) -> FirestoreTimestamp;
}

session!(Session3, 3, "desc", "sessions3");
session!(Session40, 40, "asc", "sessions40");

const VENUES: usize = 4;
/// The time the tests' purges and queries take as now.
const NOW: i64 = 1_800_000_000;

fn at(seconds: i64) -> FirestoreTimestamp {
    FirestoreTimestamp(sharded_runtime::firestore::jiff::Timestamp::from_second(seconds).unwrap())
}

/// Documents whose expiries lie a few seconds either side of [`NOW`], with ties on it.
fn random_sessions<T: Session>(rng: &mut StdRng, size: usize) -> Vec<(String, T)> {
    (0..size)
        .map(|i| {
            let session = T::new(
                format!("v{}", rng.random_range(0..VENUES)),
                rng.random_range(0..6),
                rng.random_range(0..5),
                at(NOW + rng.random_range(-4..=4)),
            );
            (format!("s{:05}-{i}", rng.random_range(0..100_000)), session)
        })
        .collect()
}

async fn check_unexpired<T: Session>(db: &FirestoreDb, rng: &mut StdRng) {
    let plain = format!("plain_{}", T::COLLECTION);
    let size = rng.random_range(60..140);
    let documents = random_sessions::<T>(rng, size);
    write_both(db, &plain, &documents).await;
    for round in 0..10 {
        let now = NOW + rng.random_range(-5..=5);
        let limit = rng.random_range(1..20);
        let expired =
            Unsharded::default().inequality(T::EXPIRY_FIELD, Inequality::GreaterThan, at(now));
        let price = [FilterOp::One(Inequality::AtLeast, rng.random_range(0..6))];
        let what = format!("{} round {round} now {now}", T::COLLECTION);
        // The whole collection, alone and beside a price filter.
        check_query_and_paging(
            db,
            T::all().unexpired(at(now)),
            expired.ids::<T>(db, &plain).await,
            limit,
            &format!("{what}: all"),
        )
        .await;
        let (query, reference) = filtered(
            T::all().unexpired(at(now)),
            expired.clone(),
            T::price(),
            &price,
        );
        check_query_and_paging(
            db,
            query,
            reference.ids::<T>(db, &plain).await,
            limit,
            &format!("{what}: all, price {price:?}"),
        )
        .await;
        // An equality and an `in` query, reversed in turn.
        let venue = format!("v{}", rng.random_range(0..VENUES));
        let query = T::venue(venue.clone()).unexpired(at(now));
        let reference = expired.clone().equal("venue", venue.clone());
        match round % 2 {
            0 => {
                check_query_and_paging(
                    db,
                    query,
                    reference.ids::<T>(db, &plain).await,
                    limit,
                    &format!("{what}: venue {venue}"),
                )
                .await
            }
            _ => {
                check_query_and_paging(
                    db,
                    query.reversed(),
                    reference.reversed().ids::<T>(db, &plain).await,
                    limit,
                    &format!("{what}: venue {venue}, reversed"),
                )
                .await
            }
        }
        let venues = vec!["v0".to_owned(), format!("v{}", rng.random_range(1..VENUES))];
        let (query, reference) = filtered(
            T::venues_in(venues.clone()).unexpired(at(now)),
            expired.clone().any_of("venue", venues.clone()),
            T::price(),
            &price,
        );
        check_query_and_paging(
            db,
            query,
            reference.ids::<T>(db, &plain).await,
            limit,
            &format!("{what}: venue in {venues:?}, price {price:?}"),
        )
        .await;
    }
}

#[tokio::test]
async fn unexpired_queries_equal_the_unsharded_query_with_expires_after_now() {
    let test = test_db("expiry-unexpired").await;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("expiry-unexpired"));
    check_unexpired::<Session3>(&test.db, &mut rng).await;
    check_unexpired::<Session40>(&test.db, &mut rng).await;
}

#[test]
fn the_plan_holds_the_ttl_policy_and_the_purge_index() {
    for (plan, description) in [
        (Session3::indexes(), Session3::DESCRIPTION),
        (Session40::indexes(), Session40::DESCRIPTION),
    ] {
        assert_eq!(description.expiry_field, Some("expiresAt"));
        let ttl = plan
            .field_overrides
            .iter()
            .find(|o| o.field_path == "expiresAt")
            .expect("the TTL override");
        assert!(ttl.ttl && ttl.indexes.is_empty(), "{ttl:?}");
        let need = description.purge_need(QueryScope::Collection).unwrap();
        assert!(plan.serving(&need).is_some(), "{need:?}");
    }
}

/// The ids of `T`'s documents left, sorted.
async fn left<T: Session>(db: &FirestoreDb) -> Vec<String> {
    let mut ids: Vec<String> = T::all()
        .fetch_stored(db)
        .await
        .unwrap()
        .into_iter()
        .map(|stored| stored.id)
        .collect();
    ids.sort();
    ids
}

/// The ids of `documents` that have not expired at `now`, sorted.
fn unexpired_ids<T: Session>(documents: &[(String, T)], now: i64) -> Vec<String> {
    let mut ids: Vec<String> = documents
        .iter()
        .filter(|(_, document)| document.expires().0.as_second() > now)
        .map(|(id, _)| id.clone())
        .collect();
    ids.sort();
    ids
}

async fn write<T: Session>(db: &FirestoreDb, documents: &[(String, T)]) {
    write_both(db, &format!("plain_{}", T::COLLECTION), documents).await;
}

async fn check_purge<T: Session>(db: &FirestoreDb, rng: &mut StdRng) {
    let documents = random_sessions::<T>(rng, 400);
    write::<T>(db, &documents).await;
    // Each shard value's expired documents, counted before the purge.
    let mut per_shard = std::collections::BTreeMap::<String, u64>::new();
    for stored in T::all().fetch_stored(db).await.unwrap() {
        if stored.document.expires().0.as_second() <= NOW {
            *per_shard.entry(stored.shard).or_default() += 1;
        }
    }
    let page_size = 7;
    let options = PurgeOptions {
        page_size,
        concurrency: 3,
        ..PurgeOptions::default()
    };
    let mut reports = Vec::new();
    let done = T::collection(db)
        .purge_expired(at(NOW), options.clone(), |progress| {
            reports.push(progress.clone())
        })
        .await
        .unwrap();
    assert_eq!(left::<T>(db).await, unexpired_ids(&documents, NOW));
    let expired = documents.len() - unexpired_ids(&documents, NOW).len();
    assert_eq!(done.deleted, expired as u64);
    assert_eq!((done.changed, done.read), (0, expired as u64));
    assert!(done.is_done() && done.shard_count == T::SHARD_VALUES.len());
    // One query per page of each shard value: its expired documents in pages of 7, and
    // one more for a value whose last page was full (or that held none).
    let queries: u64 = T::SHARD_VALUES
        .iter()
        .map(|value| per_shard.get(*value).copied().unwrap_or(0) / page_size as u64 + 1)
        .sum();
    assert_eq!(done.queries, queries);
    assert_eq!(reports.last(), Some(&done));
    assert_eq!(reports.len() as u64, queries);
    // Nothing is left to delete: a second purge reads one empty page per value.
    let again = T::collection(db)
        .purge_expired(at(NOW), options, |_| {})
        .await
        .unwrap();
    assert_eq!(
        (again.deleted, again.queries),
        (0, T::SHARD_VALUES.len() as u64)
    );
}

#[tokio::test]
async fn a_purge_deletes_exactly_what_expired_one_query_per_shard_page() {
    let test = test_db("expiry-purge").await;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("expiry-purge"));
    check_purge::<Session3>(&test.db, &mut rng).await;
    check_purge::<Session40>(&test.db, &mut rng).await;
}

/// Documents that all expired, each a little before [`NOW`].
fn expired_sessions<T: Session>(rng: &mut StdRng, size: usize) -> Vec<(String, T)> {
    random_sessions::<T>(rng, size)
        .into_iter()
        .map(|(id, mut session)| {
            session = T::new(
                "v0".into(),
                0,
                0,
                at(NOW - 1 - (session.expires().0.as_second() - NOW).abs()),
            );
            (id, session)
        })
        .collect()
}

#[tokio::test]
async fn a_document_given_a_new_expiry_during_a_purge_is_never_deleted_after_it() {
    // A writer pushes back the expiry of expired documents while the purge runs. Each update
    // that succeeded (the document still existed) must survive: either the purge read it
    // unexpired, or its delete, holding the update time it read, fails and counts `changed`.
    // An update that failed found the document deleted already.
    let test = test_db("expiry-changed").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("expiry-changed"));
    let documents = expired_sessions::<Session3>(&mut rng, 300);
    write::<Session3>(db, &documents).await;
    let mut order: Vec<(String, Session3)> = documents.clone();
    rand::seq::SliceRandom::shuffle(order.as_mut_slice(), &mut rng);
    let writer = async {
        let mut kept = Vec::new();
        for (id, session) in &order {
            let pushed = Session3 {
                expires_at: at(NOW + 3600),
                ..session.clone()
            };
            if Session3::collection(db).update(id, &pushed).await.is_ok() {
                kept.push(id.clone());
            }
        }
        kept
    };
    let options = PurgeOptions {
        page_size: 3,
        concurrency: 3,
        ..PurgeOptions::default()
    };
    let collection = Session3::collection(db);
    let purge = collection.purge_expired(at(NOW), options, |_| {});
    let (mut kept, purged) = futures::join!(writer, purge);
    let purged = purged.unwrap();
    kept.sort();
    assert_eq!(left::<Session3>(db).await, kept);
    assert_eq!(purged.deleted + kept.len() as u64, documents.len() as u64);
    assert!(purged.deleted + purged.changed <= purged.read);
    println!(
        "expiry-changed: {} kept, {} deleted, {} changed",
        kept.len(),
        purged.deleted,
        purged.changed
    );
}

#[tokio::test]
async fn a_resumed_purge_goes_on_after_its_checkpoint_keys() {
    // The first page's checkpoint is taken, the documents written again (each to a shard
    // drawn anew), and the purge resumed from it: the keys at or before its cursor in its
    // shard value are not read again, so of the rewritten documents exactly those survive.
    let test = test_db("expiry-resume").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("expiry-resume"));
    let documents = random_sessions::<Session3>(&mut rng, 240);
    write::<Session3>(db, &documents).await;
    let options = PurgeOptions {
        page_size: 5,
        concurrency: 1,
        ..PurgeOptions::default()
    };
    let mut first = None;
    Session3::collection(db)
        .purge_expired(at(NOW), options.clone(), |progress| {
            first.get_or_insert_with(|| progress.clone());
        })
        .await
        .unwrap();
    let checkpoint = first.unwrap();
    assert_eq!((checkpoint.queries, checkpoint.deleted), (1, 5));
    let started: Vec<(String, ShardPurge)> = checkpoint.shards.clone().into_iter().collect();
    let [(value, ShardPurge::After { expiry, name })] = &started[..] else {
        panic!("one shard value started: {checkpoint:?}");
    };
    write::<Session3>(db, &documents).await;
    let cursor = (expiry.seconds, name.clone());
    let mut expected: Vec<String> = Session3::all()
        .fetch_stored(db)
        .await
        .unwrap()
        .into_iter()
        .filter(|stored| {
            let expires = stored.document.expires_at.0.as_second();
            let name = format!(
                "{}/{}/{}",
                db.get_documents_path(),
                Session3::COLLECTION,
                stored.id
            );
            expires > NOW || (stored.shard == *value && (expires, name) <= cursor)
        })
        .map(|stored| stored.id)
        .collect();
    expected.sort();
    let resumed = Session3::collection(db)
        .resume_purge(checkpoint, options, |_| {})
        .await
        .unwrap();
    assert_eq!(left::<Session3>(db).await, expected);
    assert!(resumed.is_done());
}

#[tokio::test]
async fn a_tracked_purge_split_over_tasks_deletes_what_expired_and_resumes_a_retry() {
    let test = test_db("expiry-tracked").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("expiry-tracked"));
    let documents = random_sessions::<Session40>(&mut rng, 300);
    write::<Session40>(db, &documents).await;
    let options = PurgeOptions {
        page_size: 4,
        concurrency: 2,
        ..PurgeOptions::default()
    };
    let part = |index| TaskPart::new(index, 3).unwrap();
    let collection = Session40::collection(db);
    // Part 0's first attempt is stopped once its checkpoint is stored, as a task killed
    // mid-way; its retry goes on from there.
    let state = format!("{PURGE_STATE_COLLECTION}/nightly-0-of-3");
    let stored = async {
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            let document: Option<sharded_runtime::firestore::FirestoreDocument> = db
                .fluent()
                .select()
                .by_id_in(PURGE_STATE_COLLECTION)
                .one("nightly-0-of-3")
                .await
                .unwrap();
            if let Some(document) = document {
                return document;
            }
        }
    };
    // Held to 10 deletes a second, so the attempt outlasts its first stored checkpoint (2 s)
    // however fast the machine: a part has tens of expired documents.
    let slow = PurgeOptions {
        page_size: 1,
        concurrency: 1,
        writer: Some(
            sharded_runtime::bulk::BulkWriterOptions::default()
                .with_throttling(sharded_runtime::bulk::Throttling::ramp().with_maximum(10.0)),
        ),
        ..options.clone()
    };
    let attempt = collection.purge_expired_part("nightly", at(NOW), part(0), slow, |_| {});
    let stopped = tokio::select! {
        _ = stored => true,
        done = attempt => panic!("the attempt ended before its checkpoint was stored ({state}): {done:?}"),
    };
    assert!(stopped);
    let mut first_report: Option<PurgeProgress> = None;
    let retried = collection
        .purge_expired_part("nightly", at(NOW + 1_000), part(0), options.clone(), |p| {
            first_report.get_or_insert_with(|| p.clone());
        })
        .await
        .unwrap();
    // The retry kept the first attempt's time and its counts.
    assert_eq!(retried.now.seconds, NOW);
    assert!(first_report.unwrap().queries >= 2);
    for index in 1..3 {
        collection
            .purge_expired_part("nightly", at(NOW), part(index), options.clone(), |_| {})
            .await
            .unwrap();
    }
    assert_eq!(left::<Session40>(db).await, unexpired_ids(&documents, NOW));
    // A finished part sends nothing when run again.
    let again = collection
        .purge_expired_part("nightly", at(NOW), part(0), options, |_| {})
        .await
        .unwrap();
    assert_eq!(again, retried);
}

/// An expiry stored from a `SystemTime`, which the firestore crate writes as a timestamp.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 4,
    order_by = "at",
    collection = "system_sessions",
    expire_at = "expires"
)]
struct SystemSession {
    at: i64,
    expires: std::time::SystemTime,
}

#[tokio::test]
async fn a_system_time_expiry_filters_and_purges_as_a_timestamp() {
    let test = test_db("expiry-system-time").await;
    let db = &test.db;
    let second = |s: i64| std::time::UNIX_EPOCH + std::time::Duration::from_secs(s as u64);
    let collection = SystemSession::collection(db);
    for i in 0..40i64 {
        let session = SystemSession {
            at: i,
            expires: second(NOW - 20 + i),
        };
        collection
            .upsert(&format!("s{i:02}"), &session)
            .await
            .unwrap();
    }
    let ids = |stored: Vec<sharded_runtime::Stored<SystemSession>>| {
        let mut ids: Vec<String> = stored.into_iter().map(|s| s.id).collect();
        ids.sort();
        ids
    };
    let unexpired = SystemSession::query()
        .all()
        .unexpired(second(NOW))
        .fetch_stored(db)
        .await
        .unwrap();
    let expected: Vec<String> = (21..40).map(|i| format!("s{i:02}")).collect();
    assert_eq!(ids(unexpired), expected);
    let purged = collection
        .purge_expired(second(NOW), PurgeOptions::default(), |_| {})
        .await
        .unwrap();
    assert_eq!(purged.deleted, 21);
    let left = SystemSession::query().all().fetch_stored(db).await.unwrap();
    assert_eq!(ids(left), expected);
}

/// Under parents, with group queries: a purge in one parent, and one across every parent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "at",
    parent = "users",
    collection = "visits",
    collection_group,
    expire_at = "expires"
)]
struct Visit {
    at: i64,
    expires: FirestoreTimestamp,
}

#[tokio::test]
async fn a_purge_in_one_parent_and_across_every_parent() {
    let test = test_db("expiry-group").await;
    let db = &test.db;
    let users = ["ada", "bob", "cy"];
    for user in users {
        let parent = sharded_runtime::Parent::<Visit>::new(&[user]).unwrap();
        for i in 0..20i64 {
            let visit = Visit {
                at: i,
                expires: at(NOW - 10 + i),
            };
            Visit::collection_in(db, &parent)
                .upsert(&format!("v{i:02}"), &visit)
                .await
                .unwrap();
        }
    }
    let left = || async {
        let mut places: Vec<(String, String)> = Visit::query()
            .all()
            .in_group()
            .fetch_stored(db)
            .await
            .unwrap()
            .into_iter()
            .map(|s| (s.parent.unwrap_or_default(), s.id))
            .collect();
        places.sort();
        places
    };
    // `v00`..`v10` expired at NOW: 11 in each parent.
    let ada = sharded_runtime::Parent::<Visit>::new(&["ada"]).unwrap();
    let purged = Visit::collection_in(db, &ada)
        .purge_expired(at(NOW), PurgeOptions::default(), |_| {})
        .await
        .unwrap();
    assert_eq!(purged.deleted, 11);
    let after_one = left().await;
    assert_eq!(after_one.len(), 60 - 11);
    assert!(after_one.contains(&("users/bob".into(), "v00".into())));
    assert!(!after_one.contains(&("users/ada".into(), "v00".into())));
    let purged = Visit::collection_group(db)
        .purge_expired(at(NOW), PurgeOptions::default(), |_| {})
        .await
        .unwrap();
    assert_eq!(purged.deleted, 22);
    let expected: Vec<(String, String)> = users
        .iter()
        .flat_map(|user| (11..20).map(move |i| (format!("users/{user}"), format!("v{i:02}"))))
        .collect();
    assert_eq!(left().await, expected);
    let need = Visit::DESCRIPTION
        .purge_need(QueryScope::CollectionGroup)
        .unwrap();
    assert!(Visit::indexes().serving(&need).is_some());
}

/// Through a proxy that drops connections and loses answers after the emulator applied a
/// request: the purge's queries are retried, each delete is the bulk writer's (a delete whose
/// answer was lost is read back and found done), and the purge deletes exactly what expired,
/// every delete counted once.
#[tokio::test]
async fn a_purge_survives_dropped_connections_and_lost_answers() {
    let test = test_db("expiry-faults").await;
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed("expiry-faults"));
    let documents = random_sessions::<Session3>(&mut rng, 400);
    write::<Session3>(&test.db, &documents).await;
    let proxy = sharded_tests::lossy_proxy(test.emulator.host()).await;
    let through = sharded_tests::same_project_via(&test.db, &proxy.host()).await;
    let fast = sharded_tests::migration::fast_retries();
    let options = PurgeOptions {
        page_size: 9,
        concurrency: 3,
        backoff: fast,
        writer: Some(sharded_tests::migration::unthrottled()),
    };
    let done = Session3::collection(&through)
        .purge_expired(at(NOW), options, |_| {})
        .await
        .unwrap();
    assert!(proxy.dropped() > 0, "the proxy dropped nothing");
    assert_eq!(
        left::<Session3>(&test.db).await,
        unexpired_ids(&documents, NOW)
    );
    let expired = (documents.len() - unexpired_ids(&documents, NOW).len()) as u64;
    assert_eq!((done.deleted, done.changed), (expired, 0));
}
