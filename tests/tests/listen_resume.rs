//! A live query resumes from its resume tokens when the connection drops: a proxy drops it
//! at random while writers change the collection, every reconnection is logged with the
//! number of targets it resumes, and the snapshots still converge on `fetch()`. Alone in its
//! binary because it captures `tracing` output, whose per-callsite caching other tests'
//! threads would disturb.

use sharded_tests::live::{Reading, SixtyFour, listen_while_writing};
use sharded_tests::logs::Captured;
use sharded_tests::migration::faulty_client;
use sharded_tests::test_db;

/// The listener's own log lines, captured on this thread (the test runs on one).
#[tokio::test(flavor = "current_thread")]
async fn resumes_from_tokens_through_dropped_connections() {
    let captured = Captured::events();
    let test = test_db("listen-faults").await;
    // Whether a drop comes after the first snapshot (so that there are tokens to resume
    // from) depends on the timing; each seed's run checks its snapshots, and at least one of
    // them must have resumed.
    let mut dropped = 0;
    for seed in [7, 8, 9, 10] {
        let (proxy, listener_db) = faulty_client(&test, seed).await;
        let query = SixtyFour::all().limit(10);
        listen_while_writing(&test.db, &listener_db, query, Some(10), 3).await;
        dropped += proxy.dropped();
        if captured.text().contains("resuming=3") {
            break;
        }
    }
    assert!(dropped > 0, "the proxy never dropped the Listen stream");
    let log = captured.text();
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
