//! A live query whose stream falls silent opens it again after its idle timeout, from its
//! committed tokens, and goes on exactly; without a timeout it waits. The silence is real: a
//! proxy holds every byte the server sends. Measured first: the emulator sends nothing on a
//! quiet stream, which is why the timeout is off by default. Alone in its binary because it
//! captures `tracing` output.

use std::time::Duration;

use futures::StreamExt;
use sharded_emulator::fault_proxy::{FaultProxy, Faults};
use sharded_runtime::{Sharded, listen::ListenOptions};
use sharded_tests::live::{Reading, shown};
use sharded_tests::logs::Captured;
use sharded_tests::{same_project_via, test_db};

sharded_tests::live_readings!(Quiet, 3, "asc", "live_idle");

/// The listener's own log lines, captured on this thread (the test runs on one).
#[tokio::test(flavor = "current_thread")]
async fn a_silent_stream_is_opened_again_after_the_idle_timeout() {
    let captured = Captured::events();
    let test = test_db("listen-idle").await;
    let collection = Quiet::collection(&test.db);
    collection
        .upsert("a", &Quiet::new("XNAS", 1, 1))
        .await
        .unwrap();
    let proxy = FaultProxy::start(test.emulator.host(), Faults::NONE)
        .await
        .unwrap();
    let db = same_project_via(&test.db, &proxy.host()).await;

    // The emulator's quiet stream: not a byte in two seconds once the snapshot is in.
    let mut quiet = Quiet::all().listen(&db).unwrap();
    quiet.next().await.unwrap().unwrap();
    let before = proxy.bytes_from_server();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(proxy.bytes_from_server(), before, "the emulator spoke");
    drop(quiet);

    let options = ListenOptions::default()
        .with_idle_timeout(Some(Duration::from_millis(500)))
        .with_first_retry(Duration::from_millis(50));
    let mut stream = Quiet::all().listen_with(&db, options).unwrap();
    let first = stream.next().await.unwrap().unwrap();
    assert_eq!(first.documents.len(), 1);

    proxy.set_stalled(true);
    let watched = tokio::spawn(async move { stream.next().await });
    collection
        .upsert("b", &Quiet::new("XNAS", 2, 2))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    proxy.set_stalled(false);
    let next = tokio::time::timeout(Duration::from_secs(30), watched)
        .await
        .expect("a snapshot once the network speaks again")
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        shown(&next.documents),
        shown(&Quiet::all().fetch_stored(&test.db).await.unwrap())
    );
    let log = captured.text();
    assert!(
        log.contains("the stream is idle"),
        "the silence went unnoticed:\n{log}"
    );
}
