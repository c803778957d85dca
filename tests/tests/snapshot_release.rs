//! A fan-out over more than 30 shard values reads in one read-only transaction, released
//! on the server after the reads (from a task of its own, off the read's critical path):
//! after a fetch and a count, and for a stream once its first pages are read.

use std::time::Duration;

use futures::StreamExt;
use sharded_runtime::Sharded;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    GetDocumentRequest, get_document_request::ConsistencySelector,
};
use sharded_tests::logs::Captured;
use sharded_tests::models::Tick;
use sharded_tests::test_db;

/// The transactions of the log lines saying `what`.
fn transactions(captured: &Captured, what: &str) -> Vec<String> {
    captured
        .text()
        .lines()
        .filter(|line| line.contains(what))
        .filter_map(|line| line.split("transaction=").nth(1))
        .map(|rest| {
            rest.split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// Waits up to 5 s for the log to say that each of `begun` was released.
async fn released_in_time(captured: &Captured, begun: &[String]) {
    let mut released = Vec::new();
    for _ in 0..200 {
        released = transactions(captured, "snapshot released");
        if released.len() >= begun.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    released.sort();
    let mut begun = begun.to_vec();
    begun.sort();
    assert_eq!(released, begun, "a snapshot was not released");
}

#[tokio::test]
async fn snapshots_are_released_after_fetches_counts_and_dropped_streams() {
    let test = test_db("snapshot-release").await;
    let collection = Tick::collection(&test.db);
    for seq in 0..60 {
        let tick = Tick {
            venue: "XNAS".into(),
            at: sharded_examples::at("2026-11-23T08:00:00Z"),
            seq,
        };
        collection.upsert(&format!("t{seq}"), &tick).await.unwrap();
    }
    let captured = Captured::events();

    let read_in = |transaction: Vec<u8>| {
        let db = test.db.clone();
        async move {
            db.client()
                .get()
                .get_document(GetDocumentRequest {
                    name: format!("{}/ticks/t0", db.get_documents_path()),
                    consistency_selector: Some(ConsistencySelector::Transaction(transaction)),
                    ..GetDocumentRequest::default()
                })
                .await
        }
    };
    // A fetch and a count return before their rollbacks; each snapshot is released all the
    // same.
    assert_eq!(
        Tick::query()
            .venue("XNAS")
            .fetch(&test.db)
            .await
            .unwrap()
            .len(),
        60
    );
    assert_eq!(
        Tick::query().venue("XNAS").count(&test.db).await.unwrap(),
        60
    );
    let begun = transactions(&captured, "snapshot begun");
    assert_eq!(begun.len(), 2);
    released_in_time(&captured, &begun).await;
    for transaction in &begun {
        let closed = read_in(unhex(transaction)).await;
        assert_eq!(
            closed.map(|_| ()).map_err(|status| status.code()),
            Err(sharded_runtime::firestore::gcloud_sdk::tonic::Code::InvalidArgument),
            "a fetch's or a count's transaction is still open"
        );
    }
    let captured = Captured::events();

    // A stream holds its transaction only for its first pages: released while it lives,
    // the rest read at the transaction's read time.
    let mut stream = Tick::query().venue("XNAS").stream(&test.db).await.unwrap();
    assert!(stream.next().await.unwrap().is_ok());
    let begun = transactions(&captured, "snapshot begun");
    assert_eq!(begun.len(), 1, "40 shard values read in one transaction");
    released_in_time(&captured, &begun).await;
    // On the server: a read in that transaction is refused now ("invalid or closed").
    let closed = read_in(unhex(&begun[0])).await;
    assert_eq!(
        closed.map(|_| ()).map_err(|status| status.code()),
        Err(sharded_runtime::firestore::gcloud_sdk::tonic::Code::InvalidArgument),
        "the stream's transaction is still open"
    );
    let mut rest = 1;
    while let Some(tick) = stream.next().await {
        tick.unwrap();
        rest += 1;
    }
    assert_eq!(rest, 60);
}
