//! A query that cannot be right fails, with a typed error; nothing partial is returned.

use std::time::Duration;

use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::{Cursor, Error, Sharded, reads::query_id};
use sharded_tests::models::{Instrument, Tick};
use sharded_tests::{own_emulator, test_db};

fn tick(seq: i64) -> Tick {
    Tick {
        venue: "XNAS".into(),
        at: FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(seq % 7).unwrap(),
        ),
        seq,
    }
}

#[tokio::test]
async fn misuse_is_rejected_before_anything_is_sent() {
    let test = test_db("misuse").await;
    let db = &test.db;

    let zero = Tick::query().venue("XNAS").limit(0).fetch(db).await;
    assert!(matches!(zero, Err(Error::InvalidQuery(_))), "{zero:?}");
    let huge = Tick::query()
        .venue("XNAS")
        .limit(sharded_runtime::limits::MAX_LIMIT + 1)
        .fetch(db)
        .await;
    assert!(matches!(huge, Err(Error::InvalidQuery(_))), "{huge:?}");
    // Values Firestore refuses as "too large to be used in a query" (server_order.rs).
    let long_value = Tick::query().venue("v".repeat(1500)).fetch(db).await;
    assert!(
        matches!(long_value, Err(Error::InvalidQuery(_))),
        "{long_value:?}"
    );
    let longest = Tick::query().venue("v".repeat(1499)).fetch(db).await;
    assert!(longest.is_ok(), "{longest:?}");
    for page in [0, sharded_runtime::limits::MAX_LIMIT + 1] {
        let stream = Tick::query()
            .venue("XNAS")
            .stream_in_pages_of(db, page)
            .await;
        assert!(
            matches!(stream, Err(Error::InvalidQuery(_))),
            "{page}: {:?}",
            stream.err()
        );
    }

    assert!(matches!(
        "not a cursor".parse::<Cursor<Tick, { query_id("venue") }>>(),
        Err(Error::InvalidCursor(_))
    ));

    // A token of one query does not parse as a cursor of another, even over its string form.
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for seq in 0..3 {
        Tick::collection(db)
            .upsert_in(&mut batch, &format!("t{seq}"), &tick(seq))
            .unwrap();
    }
    batch.write().await.unwrap();
    let page = Tick::query().venue("XNAS").page(db, 1).await.unwrap();
    let token = page.next.expect("a full page has a next cursor").to_token();
    let foreign = token.parse::<Cursor<Instrument, { query_id("exchange") }>>();
    assert!(
        matches!(&foreign, Err(Error::InvalidCursor(why)) if why.contains("ticks:venue")),
        "{foreign:?}"
    );
    let own: Cursor<Tick, { query_id("venue") }> = token.parse().unwrap();
    let rest = Tick::query()
        .venue("XNAS")
        .after(own)
        .fetch(db)
        .await
        .unwrap();
    assert_eq!(rest.len(), 2);

    // A token whose order value is not the order field's type (Tick orders by a timestamp)
    // is refused, instead of starting a page at the first document or past the last.
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut contents: serde_json::Value =
        serde_json::from_slice(&engine.decode(&token).unwrap()).unwrap();
    for wrong in [
        serde_json::json!({ "s": "1970-01-01T00:00:02Z" }),
        serde_json::json!({ "i": 2 }),
        serde_json::json!({ "f": 4611686018427387904u64 }),
        serde_json::json!({ "b": true }),
        serde_json::json!("n"),
    ] {
        contents["v"] = wrong.clone();
        let forged = engine.encode(serde_json::to_vec(&contents).unwrap());
        let parsed = forged.parse::<Cursor<Tick, { query_id("venue") }>>();
        assert!(
            matches!(&parsed, Err(Error::InvalidCursor(why)) if why.contains("order value")),
            "{wrong}: {parsed:?}"
        );
    }
}

#[tokio::test]
async fn stopping_the_emulator_mid_query_is_an_error_not_a_hang() {
    let (mut emulator, db) = own_emulator("stopped").await;
    if emulator.pid().is_none() {
        eprintln!("skipped: FIRESTORE_EMULATOR_HOST names an emulator this test must not stop");
        return;
    }
    let stopped_db = db.clone();
    let writer = db.create_simple_batch_writer().await.unwrap();
    for chunk in (0..3000).collect::<Vec<i64>>().chunks(500) {
        let mut batch = writer.new_batch();
        for &seq in chunk {
            Tick::collection(&db)
                .upsert_in(&mut batch, &format!("t{seq}"), &tick(seq))
                .unwrap();
        }
        batch.write().await.unwrap();
    }
    assert_eq!(Tick::SHARD_VALUES.len(), 40, "two chunk queries in flight");

    // The emulator scans once per `in` value, so this query takes a while: stop it meanwhile.
    let query = tokio::spawn(async move { Tick::query().venue("XNAS").fetch(&db).await });
    tokio::time::sleep(Duration::from_millis(150)).await;
    emulator.stop();
    let outcome = tokio::time::timeout(Duration::from_secs(120), query)
        .await
        .expect("the query returns instead of hanging")
        .expect("the query does not panic");
    assert!(matches!(outcome, Err(Error::Firestore(_))), "{outcome:?}");

    let after = tokio::time::timeout(
        Duration::from_secs(120),
        Tick::query().venue("XNAS").count(&stopped_db),
    )
    .await
    .expect("no hang");
    assert!(matches!(after, Err(Error::Firestore(_))), "{after:?}");
}

/// Reads through a connection that drops: every chunk query of a fetch, a page, a count, a
/// sum and a stream (its later pages too) goes through the one retry policy, so a `not-in`
/// over 61 shard values (61 requests per read) returns what it returns without faults, on
/// every seed, where one dropped request among them used to fail the whole query.
#[tokio::test]
async fn every_chunk_query_is_retried_through_dropped_connections() {
    use futures::TryStreamExt as _;
    use sharded_emulator::fault_proxy::{FaultProxy, Faults};
    #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, Sharded)]
    #[sharded(shards = 61, order_by = "at", collection = "dropped_reads")]
    struct Reading {
        #[sharded(index)]
        kind: String,
        #[sharded(range, aggregate)]
        level: i64,
        at: i64,
    }
    let test = test_db("query-retries").await;
    let db = &test.db;
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for n in 0..300i64 {
        let reading = Reading {
            kind: "k".into(),
            level: n % 9,
            at: n % 17,
        };
        Reading::collection(db)
            .upsert_in(&mut batch, &format!("r{n:03}"), &reading)
            .unwrap();
    }
    batch.write().await.unwrap();
    let level = Reading::ranges().level;
    let not_in = Reading::query().kind("k").filter(level.not_in([0, 1]));
    let all = Reading::query().all();
    let expected = (
        not_in.fetch_stored(db).await.unwrap(),
        not_in.count(db).await.unwrap(),
        all.sum(db, Reading::aggregates().level).await.unwrap(),
        not_in.page(db, 25).await.unwrap().items,
    );
    assert_eq!(expected.0.len(), (0..300).filter(|n| n % 9 > 1).count());
    let mut dropped = 0;
    for seed in 0..4 {
        let proxy = FaultProxy::start(
            test.emulator.host(),
            Faults {
                seed,
                drop_chance: 0.03,
                lost_answer_chance: 0.03,
                ..Faults::NONE
            },
        )
        .await
        .unwrap();
        let through = sharded_tests::same_project_via(db, &proxy.host()).await;
        let fetched = not_in.fetch_stored(&through).await.unwrap();
        assert_eq!(fetched, expected.0, "seed {seed}: fetch");
        assert_eq!(
            not_in.count(&through).await.unwrap(),
            expected.1,
            "seed {seed}: count"
        );
        assert_eq!(
            all.sum(&through, Reading::aggregates().level)
                .await
                .unwrap(),
            expected.2,
            "seed {seed}: sum"
        );
        assert_eq!(
            not_in.page(&through, 25).await.unwrap().items,
            expected.3,
            "seed {seed}: page"
        );
        let streamed: Vec<_> = not_in
            .stream_in_pages_of(&through, 7)
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert_eq!(streamed, expected.0, "seed {seed}: stream");
        dropped += proxy.dropped();
    }
    assert!(dropped > 0, "the proxy dropped connections");
}

/// Measured on the emulator: a read at a time it keeps no more is refused with
/// FAILED_PRECONDITION, "The requested 'read_time' is too old." (what a stream that
/// outlived its read time meets: `Error::ReadTimeExpired`). The emulator keeps read times
/// for days where Firestore keeps them an hour (whole minutes for seven days with
/// point-in-time recovery), so no test here outlives one; the error's mapping and the
/// resume cursor it carries are unit-tested in the runtime.
#[tokio::test]
async fn the_emulator_refuses_a_read_time_too_old() {
    use futures::TryStreamExt as _;
    use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
        RunQueryRequest, StructuredQuery, run_query_request, structured_query,
    };
    use sharded_runtime::firestore::gcloud_sdk::prost_types::Timestamp;
    let test = test_db("read-time-too-old").await;
    let db = &test.db;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let read_at = |ago: i64| RunQueryRequest {
        parent: db.get_documents_path().clone(),
        query_type: Some(run_query_request::QueryType::StructuredQuery(
            StructuredQuery {
                from: vec![structured_query::CollectionSelector {
                    collection_id: "c".into(),
                    all_descendants: false,
                }],
                ..Default::default()
            },
        )),
        consistency_selector: Some(run_query_request::ConsistencySelector::ReadTime(
            Timestamp {
                seconds: now - ago,
                nanos: 123_000,
            },
        )),
        ..Default::default()
    };
    let run = |request: RunQueryRequest| async move {
        let responses: Vec<_> = db
            .client()
            .get()
            .run_query(request)
            .await?
            .into_inner()
            .try_collect()
            .await?;
        Ok::<_, sharded_runtime::firestore::gcloud_sdk::tonic::Status>(responses.len())
    };
    // Two hours ago is kept by the emulator (not by Firestore without recovery).
    assert!(run(read_at(7_200)).await.is_ok());
    let refused = run(read_at(8 * 86_400)).await.unwrap_err();
    assert_eq!(
        refused.code(),
        sharded_runtime::firestore::gcloud_sdk::tonic::Code::FailedPrecondition
    );
    assert_eq!(refused.message(), "The requested 'read_time' is too old.");
}
