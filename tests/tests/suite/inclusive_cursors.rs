//! `start_at`, `end_at` and `end_before` (Firestore's `startAt`, `endAt`, `endBefore`, read
//! forwards), alone and together, with `after`, a limit, `count`, pages and streams, exact
//! across chunk queries at 3, 40 and 61 shard values in both directions: against Firestore's
//! own cursors on an unsharded copy (measured first: a cursor at (order value, name) is a
//! position in the query's order, the named document included by `startAt` and `endAt`), at
//! documents that exist and at positions of documents that do not.

use futures::TryStreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};
use sharded_runtime::firestore::{FirestoreDb, FirestoreQueryCursor, FirestoreValue};
use sharded_runtime::{Cursor, Error, Sharded, ShardedQuery, WholeCollection, reads::query_id};
use sharded_tests::test_db;

macro_rules! visits {
    ($name:ident, $shards:literal, $direction:literal, $descending:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", direction = $direction, collection = $collection, reversible)]
        struct $name {
            #[sharded(index)]
            page: String,
            at: i64,
        }

        impl Visit for $name {
            const DESCENDING: bool = $descending;
            fn new(page: &str, at: i64) -> Self {
                $name {
                    page: page.into(),
                    at,
                }
            }
            fn page(page: &str) -> ShardedQuery<Self, { query_id("page") }> {
                $name::query().page(page)
            }
            fn all() -> WholeCollection<Self> {
                $name::query().all()
            }
        }
    };
}

trait Visit:
    Sharded<OrderValue = i64>
    + sharded_runtime::bounds::TopLevel
    + sharded_runtime::bounds::Reversible
    + Serialize
{
    const DESCENDING: bool;
    fn new(page: &str, at: i64) -> Self;
    fn page(page: &str) -> ShardedQuery<Self, { query_id("page") }>;
    fn all() -> WholeCollection<Self>;
}

visits!(Three, 3, "asc", false, "visits3");
visits!(Forty, 40, "asc", false, "visits40");
visits!(SixtyOne, 61, "desc", true, "visits61");

const PAGES: [&str; 2] = ["home", "cart"];

/// A position in the query's order: (order value, id).
type Position = (i64, String);

/// A case: its name, the sharded query, and where the unsharded one starts and ends (each a
/// position, and whether it is included).
type Case<'p, T, const Q: u64> = (
    &'static str,
    ShardedQuery<T, Q, sharded_runtime::reads::InCollection, sharded_runtime::reads::Windowed>,
    Option<(&'p Position, bool)>,
    Option<(&'p Position, bool)>,
);

/// The written documents matching `page` (all without one), in the query's order.
fn ordered<T: Visit>(written: &[(Position, &str)], page: Option<&str>) -> Vec<Position> {
    let mut kept: Vec<Position> = written
        .iter()
        .filter(|(_, p)| page.is_none_or(|page| page == *p))
        .map(|(position, _)| position.clone())
        .collect();
    kept.sort();
    if T::DESCENDING {
        kept.reverse();
    }
    kept
}

/// Whether `a` comes before `b` in the query's order.
fn before<T: Visit>(a: &Position, b: &Position) -> bool {
    match T::DESCENDING {
        false => a < b,
        true => a > b,
    }
}

/// Firestore's own query over the plain copy, ordered as `T`, with `start` and `end` cursors
/// at positions: what the expected slices below are checked against first.
async fn firestores_own<T: Visit>(
    db: &FirestoreDb,
    start: Option<(&Position, bool)>,
    end: Option<(&Position, bool)>,
) -> Vec<String> {
    let direction = if T::DESCENDING {
        sharded_runtime::firestore::FirestoreQueryDirection::Descending
    } else {
        sharded_runtime::firestore::FirestoreQueryDirection::Ascending
    };
    let values = |(at, id): &Position| {
        vec![
            FirestoreValue {
                value: Value {
                    value_type: Some(ValueType::IntegerValue(*at)),
                },
            },
            FirestoreValue {
                value: Value {
                    value_type: Some(ValueType::ReferenceValue(format!(
                        "{}/plain/{id}",
                        db.get_documents_path()
                    ))),
                },
            },
        ]
    };
    let mut select = db.fluent().select().from("plain").order(move |o| {
        o.fields([
            o.field("at").direction(direction.clone()),
            o.field("__name__").direction(direction.clone()),
        ])
    });
    if let Some((position, inclusive)) = start {
        select = select.start_at(match inclusive {
            true => FirestoreQueryCursor::BeforeValue(values(position)),
            false => FirestoreQueryCursor::AfterValue(values(position)),
        });
    }
    if let Some((position, inclusive)) = end {
        select = select.end_at(match inclusive {
            true => FirestoreQueryCursor::AfterValue(values(position)),
            false => FirestoreQueryCursor::BeforeValue(values(position)),
        });
    }
    select
        .query()
        .await
        .unwrap()
        .iter()
        .map(|document| sharded_tests::id_of(document).to_owned())
        .collect()
}

/// The documents of `all` (in order) from `start` to `end`, each `(position, inclusive)`.
fn slice<T: Visit>(
    all: &[Position],
    start: Option<(&Position, bool)>,
    end: Option<(&Position, bool)>,
) -> Vec<String> {
    all.iter()
        .filter(|p| match start {
            None => true,
            Some((s, inclusive)) => before::<T>(s, p) || (inclusive && *p == s),
        })
        .filter(|p| match end {
            None => true,
            Some((e, inclusive)) => before::<T>(p, e) || (inclusive && *p == e),
        })
        .map(|(_, id)| id.clone())
        .collect()
}

fn ids<T>(stored: Vec<sharded_runtime::Stored<T>>) -> Vec<String> {
    stored.into_iter().map(|s| s.id).collect()
}

/// A random position: a written document's, or one between documents (an id no document
/// has, as a cursor of a document deleted since).
fn random_position(rng: &mut StdRng, all: &[Position]) -> Position {
    let (at, id) = all[rng.random_range(0..all.len())].clone();
    match rng.random_range(0..3) {
        0 => (at, format!("{id}x")),
        _ => (at, id),
    }
}

async fn check<T: Visit, const Q: u64>(
    db: &FirestoreDb,
    query: ShardedQuery<T, Q>,
    all: &[Position],
    rng: &mut StdRng,
    what: &str,
) {
    if all.is_empty() {
        return;
    }
    for round in 0..6 {
        let mut a = random_position(rng, all);
        let mut b = random_position(rng, all);
        if before::<T>(&b, &a) {
            std::mem::swap(&mut a, &mut b);
        }
        let (ca, cb) = (
            Cursor::at(&a.0, &a.1).unwrap(),
            Cursor::at(&b.0, &b.1).unwrap(),
        );
        let limit = rng.random_range(1..12u32);
        let what = format!("{what} round {round} from {a:?} to {b:?}, limit {limit}");
        let cases: Vec<Case<T, Q>> = vec![
            (
                "start_at",
                query.clone().start_at(ca.clone()),
                Some((&a, true)),
                None,
            ),
            (
                "end_at",
                query.clone().end_at(cb.clone()),
                None,
                Some((&b, true)),
            ),
            (
                "end_before",
                query.clone().end_before(cb.clone()),
                None,
                Some((&b, false)),
            ),
            (
                "start_at end_at",
                query.clone().start_at(ca.clone()).end_at(cb.clone()),
                Some((&a, true)),
                Some((&b, true)),
            ),
            (
                "after end_before",
                query.clone().after(ca.clone()).end_before(cb.clone()),
                Some((&a, false)),
                Some((&b, false)),
            ),
        ];
        for (name, sharded, start, end) in cases {
            let expected = slice::<T>(all, start, end);
            let what = format!("{what}: {name}");
            if round == 0 && what.contains("all") {
                // The expected slice is Firestore's own.
                assert_eq!(
                    firestores_own::<T>(db, start, end).await,
                    expected,
                    "{what}: Firestore"
                );
            }
            assert_eq!(
                ids(sharded.fetch_stored(db).await.unwrap()),
                expected,
                "{what}"
            );
            assert_eq!(
                sharded.count(db).await.unwrap(),
                expected.len() as u64,
                "{what}: count"
            );
            let limited = sharded.clone().limit(limit);
            let first: Vec<String> = expected.iter().take(limit as usize).cloned().collect();
            assert_eq!(
                ids(limited.fetch_stored(db).await.unwrap()),
                first,
                "{what}: limited"
            );
            assert_eq!(
                limited.count(db).await.unwrap(),
                first.len() as u64,
                "{what}: limited count"
            );
            // Pages of `limit`, each after the last, keep the end.
            let mut paged = Vec::new();
            let mut page = sharded.clone().page(db, limit).await.unwrap();
            loop {
                paged.extend(ids(page.items));
                let Some(next) = page.next else { break };
                let next_page = match end {
                    None => query.clone().after(next).page(db, limit).await,
                    Some(_) => {
                        let bounded = match name {
                            "end_before" | "after end_before" => {
                                query.clone().after(next).end_before(cb.clone())
                            }
                            _ => query.clone().after(next).end_at(cb.clone()),
                        };
                        bounded.page(db, limit).await
                    }
                };
                page = next_page.unwrap();
            }
            assert_eq!(paged, expected, "{what}: pages");
            let streamed: Vec<String> = sharded
                .stream(db)
                .await
                .unwrap()
                .map_ok(|stored| stored.id)
                .try_collect()
                .await
                .unwrap();
            assert_eq!(streamed, expected, "{what}: stream");
            if round == 0 {
                // A live query's first snapshot: every chunk's target starts and ends there.
                let mut live = limited.listen(db).unwrap();
                let snapshot =
                    tokio::time::timeout(std::time::Duration::from_secs(60), live.try_next())
                        .await
                        .expect("a first snapshot in time")
                        .unwrap()
                        .expect("a first snapshot");
                let listened: Vec<String> = snapshot
                    .documents
                    .iter()
                    .map(|stored| stored.id.clone())
                    .collect();
                assert_eq!(listened, first, "{what}: listen");
            }
        }
    }
    // `before` reads backwards from its own end: another end beside it is refused, with
    // nothing sent.
    let a = all[0].clone();
    let ca = Cursor::at(&a.0, &a.1).unwrap();
    let both = query.clone().end_at(ca.clone()).before(ca);
    assert!(matches!(both.fetch(db).await, Err(Error::InvalidQuery(_))));
}

async fn equal_firestores_cursors<T: Visit>(name: &str) {
    let test = test_db(name).await;
    let db = &test.db;
    let seed = sharded_tests::seed("inclusive_cursors");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut written: Vec<(Position, &str)> = Vec::new();
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for i in 0..rng.random_range(40..90) {
        // Many ties on `at`: the names order them.
        let (page, at) = (PAGES[rng.random_range(0..2)], rng.random_range(0..6));
        let id = format!("v{:03}", (i * 37) % 101);
        let visit = T::new(page, at);
        T::collection(db)
            .upsert_in(&mut batch, &id, &visit)
            .unwrap();
        batch
            .update_object("plain", &id, &visit, None, None, Vec::new())
            .unwrap();
        written.push(((at, id), page));
    }
    batch.write().await.unwrap();
    let what = format!("seed {seed}");
    check(
        db,
        T::all(),
        &ordered::<T>(&written, None),
        &mut rng,
        &format!("{what} all"),
    )
    .await;
    for page in PAGES {
        let all = ordered::<T>(&written, Some(page));
        check(db, T::page(page), &all, &mut rng, &format!("{what} {page}")).await;
    }
}

#[tokio::test]
async fn three_shards_in_one_query() {
    equal_firestores_cursors::<Three>("cursors-3").await;
}

#[tokio::test]
async fn forty_shards_in_two_chunks() {
    equal_firestores_cursors::<Forty>("cursors-40").await;
}

#[tokio::test]
async fn sixty_one_shards_descending_in_three_chunks() {
    equal_firestores_cursors::<SixtyOne>("cursors-61").await;
}
