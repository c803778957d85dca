//! The pieces of the backfill and rebalance tests: a collection's stored state, a concurrent
//! writer that records what it changed, and a job run that is interrupted once.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::Value;
use sharded_runtime::{
    Result, Sharded,
    jobs::{Checkpoint, Progress, ShardJob},
};

use crate::{all_documents, id_of};

/// Retries quick enough for tests through faults, which need not wait out Google's 1 s
/// first backoff.
pub fn fast_retries() -> sharded_runtime::bulk::Backoff {
    sharded_runtime::bulk::Backoff {
        initial: Duration::from_millis(20),
        maximum: Duration::from_millis(500),
        ..sharded_runtime::bulk::Backoff::default()
    }
}

/// A writer's options for tests: no ramp (the emulator is no production key range) and
/// [`fast_retries`].
pub fn unthrottled() -> sharded_runtime::bulk::BulkWriterOptions {
    sharded_runtime::bulk::BulkWriterOptions::default()
        .with_throttling(sharded_runtime::bulk::Throttling::Off)
        .with_backoff(fast_retries())
}

/// A proxy in front of `test`'s emulator that drops 1 % of the chunks it forwards (closing
/// the connection), 1 % more of the answers, and delays 5 % by up to 10 ms, from `seed`; and a client of `test`'s
/// project through it.
pub async fn faulty_client(
    test: &crate::TestDb,
    seed: u64,
) -> (sharded_emulator::fault_proxy::FaultProxy, FirestoreDb) {
    use sharded_emulator::fault_proxy::{FaultProxy, Faults};
    let faults = Faults {
        seed,
        drop_chance: 0.01,
        lost_answer_chance: 0.01,
        delay_chance: 0.05,
        max_delay: Duration::from_millis(10),
        ..Faults::NONE
    };
    let proxy = FaultProxy::start(test.emulator.host(), faults)
        .await
        .expect("start the proxy");
    let client = crate::same_project_via(&test.db, &proxy.host()).await;
    (proxy, client)
}

/// A document's fields, as Firestore stores them.
pub type Fields = HashMap<String, Value>;

/// `document`'s fields as Firestore would store them.
pub fn fields_of<S: Serialize>(document: &S) -> Fields {
    sharded_runtime::firestore::firestore_document_from_serializable("x/y", document)
        .expect("serializable")
        .fields
}

/// Every document of `collection`: its fields other than `shard_field`, and its shard value.
pub async fn stored_state(
    db: &FirestoreDb,
    collection: &str,
    shard_field: &str,
) -> BTreeMap<String, (Fields, Option<Value>)> {
    all_documents(db, collection)
        .await
        .into_iter()
        .map(|document| {
            let mut fields = document.fields.clone();
            let shard = fields.remove(shard_field);
            (id_of(&document).to_owned(), (fields, shard))
        })
        .collect()
}

/// What a concurrent writer did to one document.
#[derive(Debug, Clone)]
pub enum Change {
    /// Written whole (an upsert or a create).
    Replaced(Fields),
    /// One top-level field updated, field-masked.
    Masked(String, Value),
    /// Deleted.
    Deleted,
}

/// Every document a concurrent writer touched (once each), and how.
pub type Changes = BTreeMap<String, Change>;

/// Writes through sharded while a job runs, a write every few milliseconds, and records what
/// it did:
/// - upserts of existing documents (which draw a shard) with new field values,
/// - field-masked updates of `masked` (which keep whatever shard the document has, so an
///   unsharded one stays unsharded for the job to find, with a new update time),
/// - deletes, and creates under new ids.
pub fn concurrent_writer<T: sharded_runtime::bounds::TopLevel>(
    db: FirestoreDb,
    existing: Vec<String>,
    make: impl Fn(u32) -> T + Send + 'static,
    masked: sharded_runtime::writes::Field<T>,
) -> tokio::task::JoinHandle<Changes> {
    tokio::spawn(async move {
        let collection = T::collection(&db);
        let mut changes = Changes::new();
        for (i, id) in existing.iter().enumerate() {
            let document = make(1_000_000 + i as u32);
            match i % 6 {
                0 | 1 => {
                    collection.upsert(id, &document).await.expect("upsert");
                    changes.insert(id.clone(), Change::Replaced(fields_of(&document)));
                }
                2 | 3 => {
                    collection
                        .update_fields(id, &document, std::slice::from_ref(&masked))
                        .await
                        .expect("update_fields");
                    let value = fields_of(&document)
                        .remove(masked.path())
                        .expect("a top-level stored field");
                    changes.insert(id.clone(), Change::Masked(masked.path().to_owned(), value));
                }
                4 => {
                    collection.delete(id).await.expect("delete");
                    changes.insert(id.clone(), Change::Deleted);
                }
                _ => {
                    let new_id = format!("new{i:05}x{:08x}", rand::random::<u32>());
                    collection.upsert(&new_id, &document).await.expect("create");
                    changes.insert(new_id, Change::Replaced(fields_of(&document)));
                }
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        changes
    })
}

/// `before` (without shards) with `changes` applied.
pub fn expected_state(
    before: &BTreeMap<String, (Fields, Option<Value>)>,
    changes: &Changes,
) -> BTreeMap<String, Fields> {
    let mut expected: BTreeMap<String, Fields> = before
        .iter()
        .map(|(id, (fields, _))| (id.clone(), fields.clone()))
        .collect();
    for (id, change) in changes {
        match change {
            Change::Replaced(fields) => {
                expected.insert(id.clone(), fields.clone());
            }
            Change::Masked(path, value) => {
                expected
                    .get_mut(id)
                    .expect("only existing documents are updated")
                    .insert(path.clone(), value.clone());
            }
            Change::Deleted => {
                expected.remove(id);
            }
        }
    }
    expected
}

/// Runs `job`, drops it (as a crash would) after `interrupt_after` progress reports, and
/// returns the last checkpoint it reported.
pub async fn run_interrupted<T: Sharded>(
    job: ShardJob<'_, T>,
    interrupt_after: usize,
) -> Checkpoint {
    let reports: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut stop = Some(stop);
    let seen = reports.clone();
    let run = job.run(move |progress| {
        let mut seen = seen.lock().unwrap();
        seen.push(progress.clone());
        if seen.len() == interrupt_after
            && let Some(stop) = stop.take()
        {
            let _ = stop.send(());
        }
    });
    tokio::select! {
        result = run => panic!("the job finished before it was interrupted: {result:?}"),
        _ = stopped => {}
    }
    let reports = reports.lock().unwrap();
    let last = reports.last().expect("progress was reported");
    assert!(last.scanned > 0 && last.total.is_some());
    last.checkpoint.clone().expect("a checkpoint after a page")
}

/// Runs `job` to the end, checking that progress only grows.
pub async fn run_to_end<T: Sharded>(job: ShardJob<'_, T>) -> Result<Progress> {
    let mut last_scanned = 0;
    job.run(|progress| {
        assert!(progress.scanned >= last_scanned);
        last_scanned = progress.scanned;
    })
    .await
}

/// Asserts that every document of `T`'s collection holds a current shard value: what
/// `verify()` counts as outstanding is none.
pub async fn assert_nothing_outstanding<T: sharded_runtime::bounds::TopLevel>(db: &FirestoreDb) {
    let census = T::collection(db)
        .verify()
        .await
        .expect("verify the collection");
    assert_eq!(census.outstanding(), 0, "{census:?}");
}
