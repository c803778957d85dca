//! A live query whose connection goes dead without closing recovers over a fresh
//! connection after its idle timeout, through a proxy that keeps the dead connection open
//! and silent both ways.

use std::time::Duration;

use futures::StreamExt;
use sharded_emulator::fault_proxy::{FaultProxy, Faults};
use sharded_runtime::{Sharded, listen::ListenOptions};
use sharded_tests::live::{Reading, shown};
use sharded_tests::{same_project_via, test_db};

sharded_tests::live_readings!(Quiet, 3, "asc", "live_dead_connection");

/// A connection that goes dead without closing (a NAT dropping its state: it stays open and
/// nothing crosses it either way) is left for a fresh one after the idle timeout: the stream
/// recovers over a new connection, while the dead one never speaks again (over it, recovery
/// waited for HTTP/2 keepalive to give up, about two minutes; here the guard is one).
#[tokio::test(flavor = "current_thread")]
async fn a_dead_connection_is_left_for_a_fresh_one_after_the_idle_timeout() {
    let test = test_db("listen-dead-connection").await;
    let collection = Quiet::collection(&test.db);
    collection
        .upsert("a", &Quiet::new("XNAS", 1, 1))
        .await
        .unwrap();
    let proxy = FaultProxy::start(test.emulator.host(), Faults::NONE)
        .await
        .unwrap();
    let db = same_project_via(&test.db, &proxy.host()).await;
    let options = ListenOptions::default()
        .with_idle_timeout(Some(Duration::from_secs(1)))
        .with_first_retry(Duration::from_millis(50));
    let mut stream = Quiet::all().listen_with(&db, options).unwrap();
    assert_eq!(stream.next().await.unwrap().unwrap().documents.len(), 1);

    let connections = proxy.connections();
    proxy.kill_open_connections_silently();
    collection
        .upsert("b", &Quiet::new("XNAS", 2, 2))
        .await
        .unwrap();
    let next = tokio::time::timeout(Duration::from_secs(60), stream.next())
        .await
        .expect("recovered before keepalive gave up on the dead connection")
        .unwrap()
        .unwrap();
    assert_eq!(
        shown(&next.documents),
        shown(&Quiet::all().fetch_stored(&test.db).await.unwrap())
    );
    assert!(
        proxy.connections() > connections,
        "the stream came back over a new connection"
    );
}
