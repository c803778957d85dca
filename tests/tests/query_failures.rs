//! A query that cannot be right fails, with a typed error; nothing partial is returned.

use std::time::Duration;

use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::{Cursor, Error, Sharded, query_id};
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
        .limit(sharded_runtime::MAX_LIMIT + 1)
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
    for page in [0, sharded_runtime::MAX_LIMIT + 1] {
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
