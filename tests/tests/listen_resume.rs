//! A live query resumes from its resume tokens when the connection drops: a proxy drops it
//! at random while writers change the collection, every reconnection is logged with the
//! number of targets it resumes, and the snapshots still converge on `fetch()`. Alone in its
//! binary because it captures `tracing` output, whose per-callsite caching other tests'
//! threads would disturb.

use std::sync::{Arc, Mutex};

use sharded_tests::live::{Reading, SixtyFour, listen_while_writing};
use sharded_tests::migration::faulty_client;
use sharded_tests::test_db;

/// The listener's own log lines, captured on this thread (the test runs on one).
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn resumes_from_tokens_through_dropped_connections() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let test = test_db("listen-faults").await;
    let (proxy, listener_db) = faulty_client(&test, 7).await;
    let query = SixtyFour::all().limit(10);
    listen_while_writing(&test.db, &listener_db, query, Some(10), 3).await;
    assert!(
        proxy.dropped() > 0,
        "the proxy never dropped the Listen stream"
    );
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let connections: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("sharded listener"))
        .collect();
    assert!(
        connections.iter().any(|line| line.contains("resuming=3")),
        "no reconnection resumed every target from a token:\n{}",
        connections.join("\n")
    );
}
