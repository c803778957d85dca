//! The TypeScript client's live queries while documents move between chunks: Rust rewrites
//! every document again and again (each whole write draws a new shard, so a document leaves
//! one chunk listener's query for another's), which changes nothing a query matches or its
//! order. So every snapshot the client emits must be the unsharded truth itself: no document
//! twice (the chunk it moved into already holds it while the one it left still does), none
//! missing (the chunk it left dropped it before the one it moved into has it), and its
//! `docChanges()` turn the last snapshot into it. Tested through the JS SDK and the Node server
//! SDK at 40 and 61 shard values, on a query of two or three chunks, on an `in` split into
//! chunks by pairs, and on a `not-in` (one chunk query per shard value).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_tests::test_db;

use crate::typescript_client::{
    Doc, NodeProbe, built_client, dataset, description_json, truth, truth_ranged,
};

macro_rules! moving_case {
    ($test:ident, $name:ident, $shards:literal, $collection:literal) => {
        #[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", collection = $collection)]
        struct $name {
            #[sharded(index)]
            device: String,
            at: FirestoreTimestamp,
            #[sharded(range)]
            level: i64,
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $test() {
            let test = test_db("typescript-moving").await;
            let db = &test.db;
            let collection = $name::collection(db);
            let mut docs = dataset($shards + 7, &[]);
            docs.truncate(40);
            let value = |doc: &Doc| $name {
                device: doc.device.into(),
                at: doc.at(),
                level: doc.level,
            };
            for doc in &docs {
                collection.upsert(&doc.id, &value(doc)).await.unwrap();
            }
            let c = $collection;
            let cases = [
                (json!([]), truth(&docs, c, |_| true)),
                (
                    json!([["device", "in", ["d0", "d1", "d2"]]]),
                    truth(&docs, c, |d| d.device != "d3"),
                ),
                (
                    json!([["level", "not-in", [0, 1]]]),
                    truth_ranged(&docs, c, |d| d.level != 0 && d.level != 1),
                ),
            ];
            for sdk in ["web", "admin"] {
                for (filters, expected) in &cases {
                    let label = format!("{} through {sdk}, {filters}", stringify!($name));
                    let snapshots =
                        listen_while(&test, description_json::<$name>(), sdk, filters, || async {
                            // Three rounds of every document rewritten, ten at a time.
                            for _ in 0..3 {
                                for chunk in docs.chunks(10) {
                                    let values: Vec<$name> = chunk.iter().map(value).collect();
                                    futures::future::try_join_all(
                                        chunk
                                            .iter()
                                            .zip(&values)
                                            .map(|(doc, v)| collection.upsert(&doc.id, v)),
                                    )
                                    .await
                                    .unwrap();
                                }
                            }
                        })
                        .await;
                    assert!(!snapshots.is_empty(), "{label}: no snapshot");
                    for (n, snapshot) in snapshots.iter().enumerate() {
                        assert!(snapshot["error"].is_null(), "{label}: {snapshot}");
                        assert_eq!(
                            snapshot["consistent"], true,
                            "{label}, snapshot {n}: {snapshot}"
                        );
                        let paths: Vec<String> =
                            serde_json::from_value(snapshot["paths"].clone()).unwrap();
                        assert_eq!(
                            &paths,
                            expected,
                            "{label}, snapshot {n} of {}",
                            snapshots.len()
                        );
                    }
                }
            }
        }
    };
}

moving_case!(
    documents_moving_between_chunks_at_40_shards,
    Moving40,
    40,
    "ts_moving_40"
);
moving_case!(
    documents_moving_between_chunks_at_61_shards,
    Moving61,
    61,
    "ts_moving_61"
);

/// Listens through the client's probe (`sdk`, `filters`) from its first snapshot, runs
/// `writes`, waits a moment for the listeners to settle, and returns every snapshot shown.
async fn listen_while<F: std::future::Future<Output = ()>>(
    test: &sharded_tests::TestDb,
    description: Value,
    sdk: &str,
    filters: &Value,
    writes: impl FnOnce() -> F,
) -> Vec<Value> {
    let project = sharded_tests::project_id(&test.db);
    let mut probe = NodeProbe::start(&built_client().join("probe/listen.mjs"), None);
    probe.send(&json!({
        "host": test.emulator.host(), "project": project, "sdk": sdk,
        "description": description, "scope": {"parent": null}, "where": filters, "limit": null,
    }));
    let first = probe
        .answers()
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("a first snapshot within 60 s");
    writes().await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    std::iter::once(first).chain(probe.finish()).collect()
}
