//! Every sharded query is a `tracing` span, with one span per chunk query inside.

use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_tests::logs::Captured;
use sharded_tests::models::Tick;
use sharded_tests::test_db;

#[tokio::test]
async fn sharded_queries_and_their_chunks_are_spans() {
    let test = test_db("tracing").await;
    let db = &test.db;
    for seq in 0..3 {
        let tick = Tick {
            venue: "XNAS".into(),
            at: FirestoreTimestamp(
                sharded_runtime::firestore::jiff::Timestamp::from_second(seq).unwrap(),
            ),
            seq,
        };
        Tick::collection(db)
            .upsert(&format!("t{seq}"), &tick)
            .await
            .unwrap();
    }

    let captured = Captured::events_and_span_closes();
    Tick::query().venue("XNAS").fetch(db).await.unwrap();
    Tick::query().venue("XNAS").count(db).await.unwrap();

    let text = captured.text();
    // The lines where one of sharded's own spans closes (the firestore crate's spans, nested
    // inside them, close on lines of their own).
    let closed: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("sharded_runtime::query: close"))
        .collect();
    let query = |operation: &str| {
        closed
            .iter()
            .find(|l| {
                !l.contains("sharded_chunk") && l.contains(&format!("operation=\"{operation}\""))
            })
            .unwrap_or_else(|| panic!("no {operation} span in:\n{text}"))
            .to_string()
    };
    let fetch = query("fetch");
    for field in [
        "collection=\"ticks\"",
        "field=\"venue\"",
        "shards=40",
        "chunks=2",
        "documents_read=3",
    ] {
        assert!(fetch.contains(field), "{field} in {fetch}");
    }
    assert!(query("count").contains("chunks=2"));
    // Tick's 40 shard values are two chunk queries per query.
    let chunks = closed
        .iter()
        .filter(|l| l.contains("sharded_chunk"))
        .count();
    assert_eq!(chunks, 4, "{text}");
}
