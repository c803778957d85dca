//! A live query started again from a checkpoint (a later process would keep its bytes)
//! resumes every target from the checkpoint's tokens; its first snapshot is the query's result
//! now, and its changes turn the checkpoint's snapshot into it.
//!
//! Measured here too: the emulator answers a resume token with a reset and the whole result
//! (as many bytes as a fresh listener, through a proxy that counts them), so the saving in
//! reads a token brings on Firestore cannot be shown on it. Alone in its binary because it
//! captures `tracing` output.

use futures::StreamExt;
use sharded_emulator::fault_proxy::{FaultProxy, Faults};
use sharded_runtime::{
    Error, Sharded,
    listen::{ListenCheckpoint, ListenOptions, QuerySnapshot},
};
use sharded_tests::live::{Reading, apply_changes, shown};
use sharded_tests::logs::Captured;
use sharded_tests::{same_project_via, test_db};

sharded_tests::live_readings!(Resumable, 40, "desc", "live_checkpoint");

const DOCUMENTS: i64 = 300;

fn with_checkpoints() -> ListenOptions {
    ListenOptions::default().with_checkpoints(true)
}

async fn first_snapshot(
    stream: &mut sharded_runtime::listen::SnapshotStream<Resumable>,
) -> QuerySnapshot<Resumable> {
    stream.next().await.expect("a snapshot").expect("no error")
}

/// The listener's own log lines, captured on this thread (the test runs on one).
#[tokio::test(flavor = "current_thread")]
async fn a_listener_resumed_from_a_checkpoint_starts_from_its_tokens() {
    let captured = Captured::events();
    let test = test_db("listen-checkpoint").await;
    let collection = Resumable::collection(&test.db);
    for n in 0..DOCUMENTS {
        collection
            .upsert(&format!("r{n}"), &Resumable::new("XNAS", n, n))
            .await
            .unwrap();
    }
    let query = Resumable::all();
    let proxy = |_| FaultProxy::start(test.emulator.host(), Faults::NONE);

    // A listener whose snapshot is kept as bytes, then stopped.
    let before = proxy(()).await.unwrap();
    let mut stream = query
        .listen_with(
            &same_project_via(&test.db, &before.host()).await,
            with_checkpoints(),
        )
        .unwrap();
    let kept = first_snapshot(&mut stream).await;
    drop(stream);
    assert_eq!(kept.documents.len(), DOCUMENTS as usize);
    let bytes = kept.checkpoint.as_ref().expect("checkpoints on").to_bytes();

    // Meanwhile: three rewritten (one into another shard's chunk), two deleted, two added.
    for n in [3, 150, 299] {
        collection
            .upsert(&format!("r{n}"), &Resumable::new("XLON", n + 1000, n))
            .await
            .unwrap();
    }
    for n in [7, 8] {
        collection.delete(&format!("r{n}")).await.unwrap();
    }
    for n in [DOCUMENTS, DOCUMENTS + 1] {
        collection
            .upsert(&format!("r{n}"), &Resumable::new("XNAS", -n, n))
            .await
            .unwrap();
    }
    let now = query.fetch_stored(&test.db).await.unwrap();

    let resumed_proxy = proxy(()).await.unwrap();
    let checkpoint = ListenCheckpoint::from_bytes(&bytes).unwrap();
    let mut resumed = query
        .listen_from(
            &same_project_via(&test.db, &resumed_proxy.host()).await,
            checkpoint.clone(),
            ListenOptions::default(),
        )
        .unwrap();
    let snapshot = first_snapshot(&mut resumed).await;
    drop(resumed);
    let log = captured.text();
    assert!(
        log.lines()
            .any(|line| line.contains("sharded listener connects") && line.contains("resuming=2")),
        "the resumed listener did not send both targets' tokens:\n{log}"
    );
    assert_eq!(shown(&snapshot.documents), shown(&now));
    assert_eq!(
        shown(&apply_changes(&kept.documents, &snapshot)),
        shown(&now),
        "the first snapshot's changes turn the checkpoint's snapshot into it"
    );
    assert_eq!(snapshot.changes.len(), 7, "{:?}", snapshot.changes);

    let fresh_proxy = proxy(()).await.unwrap();
    let mut fresh = query
        .listen(&same_project_via(&test.db, &fresh_proxy.host()).await)
        .unwrap();
    assert_eq!(
        shown(&first_snapshot(&mut fresh).await.documents),
        shown(&now)
    );
    drop(fresh);
    let (resumed_bytes, fresh_bytes) = (
        resumed_proxy.bytes_from_server(),
        fresh_proxy.bytes_from_server(),
    );
    eprintln!("bytes from the server: resumed {resumed_bytes}, fresh {fresh_bytes}");
    assert!(
        resumed_bytes * 10 > fresh_bytes * 9,
        "the emulator now honours resume tokens ({resumed_bytes} bytes resumed, {fresh_bytes} \
         fresh): show the saving here and update ListenCheckpoint's rustdoc"
    );

    // A checkpoint is the query's own: another query's is refused before anything is sent.
    let other = Resumable::all().limit(5);
    assert!(matches!(
        other.listen_from(&test.db, checkpoint, ListenOptions::default()),
        Err(Error::InvalidCheckpoint(_))
    ));
}
