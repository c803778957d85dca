//! Projections on the emulator: `fetch_as::<P>()`, `stream_as`, `page_as` and `listen_as` return the same
//! documents in the same order as `fetch`, read as the partial type, and only its fields (with the order field and the
//! shard) come back; a projection of fields the type does not store is refused before
//! sending.

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Deserializer};
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::{Error, Sharded, StoredNames};
use sharded_tests::models::{Instrument, Price, Tick};
use sharded_tests::test_db;

/// The instruments' list view: two of its fields, under their stored names.
#[derive(Debug, Clone, PartialEq, Deserialize, StoredNames)]
#[serde(rename_all = "camelCase")]
struct Listing {
    symbol: String,
    instrument_type: String,
}

/// A field `Instrument` does not store.
#[derive(Debug, Deserialize, StoredNames)]
struct Misnamed {
    #[allow(dead_code)]
    ticker: String,
}

/// A field a projection cannot read by name.
#[derive(Debug, Deserialize, StoredNames)]
struct Skipping {
    #[allow(dead_code)]
    symbol: String,
    #[serde(skip)]
    #[allow(dead_code)]
    local: u8,
}

/// Every top-level key the server sent back, whatever the projection named.
#[derive(Debug)]
struct Keys(Vec<String>);

impl StoredNames for Keys {
    const STORED_NAMES: &'static [(&'static str, Option<&'static str>)] =
        &[("venue", Some("venue"))];
}

impl<'de> Deserialize<'de> for Keys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<String, serde::de::IgnoredAny>::deserialize(deserializer)?;
        // The firestore crate adds its own `_firestore_*` metadata to every document.
        Ok(Keys(
            map.into_keys()
                .filter(|key| !key.starts_with("_firestore_"))
                .collect(),
        ))
    }
}

fn at(seconds: i64) -> FirestoreTimestamp {
    FirestoreTimestamp(sharded_runtime::firestore::jiff::Timestamp::from_second(seconds).unwrap())
}

async fn write_instruments(db: &FirestoreDb, rng: &mut StdRng) {
    for i in 0..80 {
        let instrument = Instrument {
            symbol: format!("S{i}"),
            price: Price {
                currency: ["USD", "JPY"][i % 2].into(),
                micros: rng.random_range(0..1_000),
            },
            exchange: ["EXCHG1", "EXCHG2"][rng.random_range(0..2)].into(),
            instrument_type: ["etf", "commonstock"][rng.random_range(0..2)].into(),
            timestamp: at(rng.random_range(0..6)),
        };
        Instrument::collection(db)
            .upsert(&format!("i{i:03}"), &instrument)
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn a_projection_returns_the_query_read_as_the_partial_type() {
    let test = test_db("projection").await;
    let db = &test.db;
    let mut rng = StdRng::seed_from_u64(3);
    write_instruments(db, &mut rng).await;
    for limit in [None, Some(1), Some(7), Some(200)] {
        let query = Instrument::query().exchange("EXCHG1").limit(limit);
        let full = query.fetch_stored(db).await.unwrap();
        let listed = query.fetch_as::<Listing>(db).await.unwrap();
        assert!(!full.is_empty());
        assert_eq!(listed.len(), full.len(), "{limit:?}");
        for (listing, stored) in listed.iter().zip(&full) {
            assert_eq!((&listing.id, &listing.shard), (&stored.id, &stored.shard));
            assert_eq!(
                listing.document,
                Listing {
                    symbol: stored.document.symbol.clone(),
                    instrument_type: stored.document.instrument_type.clone(),
                }
            );
        }
    }
}

/// 40 shard values, limited (rounds of chunk queries, each asked again after its last
/// document): only the projected field, the order field and the shard come back.
#[tokio::test]
async fn only_the_projected_fields_come_back() {
    let test = test_db("projection-mask").await;
    let db = &test.db;
    for seq in 0..60 {
        let tick = Tick {
            venue: "XNAS".into(),
            at: at(seq % 5),
            seq,
        };
        Tick::collection(db)
            .upsert(&format!("t{seq:02}"), &tick)
            .await
            .unwrap();
    }
    let query = Tick::query().venue("XNAS").limit(25);
    let keys = query.fetch_as::<Keys>(db).await.unwrap();
    let full = query.fetch_stored(db).await.unwrap();
    assert_eq!(
        keys.iter().map(|k| &k.id).collect::<Vec<_>>(),
        full.iter().map(|s| &s.id).collect::<Vec<_>>()
    );
    for stored in &keys {
        assert_eq!(
            stored.document.0,
            ["at", "bucket", "venue"],
            "{}",
            stored.id
        );
    }
}

/// `stream_as`, over 40 shard values in pages of 4 per chunk query (so every later page starts
/// after a projected document): the same documents in the same order as `fetch_stored`, and
/// only the projected field, the order field and the shard.
#[tokio::test]
async fn a_projected_stream_reads_what_the_query_reads_page_after_page() {
    use futures::TryStreamExt as _;
    let test = test_db("projection-stream").await;
    let db = &test.db;
    for seq in 0..90 {
        let tick = Tick {
            venue: ["XNAS", "XNYS"][(seq % 2) as usize].into(),
            at: at(seq % 7),
            seq,
        };
        Tick::collection(db)
            .upsert(&format!("t{seq:02}"), &tick)
            .await
            .unwrap();
    }
    let query = Tick::query().venue("XNAS");
    let keys: Vec<_> = query
        .stream_as_in_pages_of::<Keys>(db, 4)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let full = query.fetch_stored(db).await.unwrap();
    assert_eq!(full.len(), 45);
    assert_eq!(
        keys.iter().map(|k| &k.id).collect::<Vec<_>>(),
        full.iter().map(|s| &s.id).collect::<Vec<_>>()
    );
    assert!(
        keys.iter()
            .all(|k| k.document.0 == ["at", "bucket", "venue"])
    );
    let streamed: Vec<_> = query
        .stream_as::<Keys>(db)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(streamed.len(), 45);
    assert!(matches!(
        Tick::query().all().stream_as::<Misnamed>(db).await.err(),
        Some(Error::InvalidQuery(_))
    ));
}

#[tokio::test]
async fn a_projection_of_fields_the_type_does_not_store_is_refused() {
    let test = test_db("projection-refused").await;
    let db = &test.db;
    let misnamed = Instrument::query().all().fetch_as::<Misnamed>(db).await;
    assert!(
        matches!(misnamed, Err(Error::InvalidQuery(_))),
        "{misnamed:?}"
    );
    let skipping = Instrument::query().all().fetch_as::<Skipping>(db).await;
    assert!(
        matches!(skipping, Err(Error::InvalidQuery(_))),
        "{skipping:?}"
    );
}

/// `page_as` and `listen_as`, over 40 shard values: pages of 7 read as the projection, each
/// after the last by the query's own cursor, are the query's documents in order with only the
/// projected fields; a projected listener's snapshots are the query's, and follow a change.
#[tokio::test]
async fn projected_pages_and_listeners_read_what_the_query_reads() {
    use futures::TryStreamExt;

    let test = test_db("projection-pages").await;
    let db = &test.db;
    for seq in 0..60 {
        let tick = Tick {
            venue: ["XNAS", "XNYS"][(seq % 2) as usize].into(),
            at: at(seq % 5),
            seq,
        };
        Tick::collection(db)
            .upsert(&format!("t{seq:02}"), &tick)
            .await
            .unwrap();
    }
    let query = Tick::query().venue("XNAS");
    let full: Vec<String> = query
        .fetch_stored(db)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(full.len(), 30);
    let mut paged = Vec::new();
    let mut page = query.page_as::<Keys>(db, 7).await.unwrap();
    loop {
        assert!(
            page.items
                .iter()
                .all(|k| k.document.0 == ["at", "bucket", "venue"]),
            "{:?}",
            page.items
        );
        paged.extend(page.items.iter().map(|k| k.id.clone()));
        let Some(next) = page.next else { break };
        page = query
            .clone()
            .after(next)
            .page_as::<Keys>(db, 7)
            .await
            .unwrap();
    }
    assert_eq!(paged, full);

    let mut live = query.clone().limit(5).listen_as::<Keys>(db).unwrap();
    // Bounded, so that a snapshot that never comes fails the test instead of hanging it.
    let within = std::time::Duration::from_secs(60);
    let first = tokio::time::timeout(within, live.try_next())
        .await
        .expect("a first snapshot in time")
        .unwrap()
        .expect("a first snapshot");
    let ids = |snapshot: &sharded_runtime::listen::QuerySnapshot<Keys>| -> Vec<String> {
        snapshot.documents.iter().map(|k| k.id.clone()).collect()
    };
    assert_eq!(ids(&first), full[..5]);
    assert!(
        first
            .documents
            .iter()
            .all(|k| k.document.0 == ["at", "bucket", "venue"])
    );
    // An earlier tick enters the first five (the type reads oldest first), projected too.
    let earliest = Tick {
        venue: "XNAS".into(),
        at: at(-100),
        seq: 100,
    };
    Tick::collection(db)
        .upsert("t100", &earliest)
        .await
        .unwrap();
    let next = tokio::time::timeout(within, live.try_next())
        .await
        .expect("a second snapshot in time")
        .unwrap()
        .expect("a second snapshot");
    assert_eq!(ids(&next)[0], "t100", "{:?}", ids(&next));
    assert_eq!(ids(&next)[1..], full[..4]);
    assert!(matches!(
        Tick::query().all().listen_as::<Misnamed>(db).err(),
        Some(Error::InvalidQuery(_))
    ));
}
