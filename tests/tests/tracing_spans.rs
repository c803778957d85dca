//! Every sharded query is a `tracing` span, with one span per chunk query inside.

use std::io::Write;
use std::sync::{Arc, Mutex};

use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_tests::models::Tick;
use sharded_tests::test_db;
use tracing_subscriber::fmt::format::FmtSpan;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

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

    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::DEBUG)
        .with_span_events(FmtSpan::CLOSE)
        .with_ansi(false)
        .finish();
    let _default = tracing::subscriber::set_default(subscriber);
    Tick::query().venue("XNAS").fetch(db).await.unwrap();
    Tick::query().venue("XNAS").count(db).await.unwrap();

    let text = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
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
