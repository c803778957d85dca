//! Sharded writes and reads inside Firestore transactions, and atomic batches, on the
//! emulator: concurrent transactions that read a sharded query over 40 shard values (two
//! chunks, both at the transaction's snapshot) and write what they read lose no update, and
//! a batch applies whole or not at all.
//!
//! The first test can fail: with the query read through a client outside the transaction
//! (the same code, `fetch(&outside)`), four workers committed the values 1 to 5 four times
//! each, 15 of 20 updates lost.

use futures::FutureExt;
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::{FirestoreDb, FirestoreTransactionOptions};
use sharded_runtime::{
    AtomicBatch, Error, Parent, Sharded,
    limits::MAX_COMMIT_WRITES,
    writes::{TransactionError, transaction_error},
};
use sharded_tests::test_db;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 40, order_by = "at", collection = "tx_counters")]
struct Counter {
    #[sharded(index)]
    name: String,
    value: i64,
    at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", collection = "tx_log")]
struct Entry {
    counter: String,
    value: i64,
    at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "at",
    parent = "rooms",
    collection = "tx_messages"
)]
struct Message {
    text: String,
    at: i64,
}

/// One increment: the counter read through a sharded query inside the transaction, written
/// back (with a new shard, often in the other chunk) with a log entry, both at its commit.
async fn increment(db: &FirestoreDb, worker: usize, step: usize) -> sharded_runtime::Result<i64> {
    let options = FirestoreTransactionOptions {
        max_retries: 200,
        ..FirestoreTransactionOptions::new()
    };
    let value = db
        .run_transaction_with_options(
            |db, transaction| {
                async move {
                    let mut counters = Counter::collection(&db).in_transaction(transaction);
                    let found = Counter::query()
                        .name("visits")
                        .fetch(counters.db())
                        .await
                        .map_err(transaction_error)?;
                    // Time for the other workers to read the same value, were it not locked.
                    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                    let value = found.first().map_or(0, |counter| counter.value) + 1;
                    let counter = Counter {
                        name: "visits".into(),
                        value,
                        at: value,
                    };
                    counters
                        .upsert("visits", &counter)
                        .map_err(transaction_error)?;
                    let mut log = Entry::collection(&db).in_transaction(transaction);
                    let entry = Entry {
                        counter: "visits".into(),
                        value,
                        at: value,
                    };
                    log.insert(&format!("w{worker}s{step}"), &entry)
                        .map_err(transaction_error)?;
                    Ok::<_, TransactionError>(value)
                }
                .boxed()
            },
            options,
        )
        .await?;
    Ok(value)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_transactions_over_a_sharded_query_lose_no_update() {
    let test = test_db("transactions").await;
    let (workers, steps) = (4, 5);
    let tasks: Vec<_> = (0..workers)
        .map(|worker| {
            let db = test.db.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                for step in 0..steps {
                    seen.push(increment(&db, worker, step).await.unwrap());
                }
                seen
            })
        })
        .collect();
    let mut committed = Vec::new();
    for task in tasks {
        committed.extend(task.await.unwrap());
    }
    committed.sort_unstable();
    let total = (workers * steps) as i64;
    // Each commit saw the one before it: the values are 1..=total, each once.
    assert_eq!(committed, (1..=total).collect::<Vec<_>>());
    let counter = Counter::collection(&test.db).get("visits").await.unwrap();
    assert_eq!(counter.map(|c| c.value), Some(total));
    let mut logged: Vec<i64> = Entry::query()
        .all()
        .fetch(&test.db)
        .await
        .unwrap()
        .into_iter()
        .map(|entry| entry.value)
        .collect();
    logged.sort_unstable();
    assert_eq!(logged, (1..=total).collect::<Vec<_>>());
    // Written inside transactions, every document still has a current shard value.
    assert_eq!(
        Counter::collection(&test.db)
            .verify()
            .await
            .unwrap()
            .current,
        1
    );
    assert_eq!(
        Entry::collection(&test.db).verify().await.unwrap().current,
        total as u64
    );
}

#[tokio::test]
async fn an_atomic_batch_applies_whole_or_not_at_all() {
    let test = test_db("atomic-batch").await;
    let entry = |value| Entry {
        counter: "c".into(),
        value,
        at: value,
    };
    let counter = |value| Counter {
        name: "c".into(),
        value,
        at: value,
    };
    let mut batch = AtomicBatch::new(&test.db);
    batch.upsert("a", &entry(1)).unwrap();
    batch.insert("b", &entry(2)).unwrap();
    batch.upsert("c", &counter(3)).unwrap();
    assert_eq!(batch.len(), 3);
    batch.commit().await.unwrap();
    let entries = Entry::collection(&test.db);
    assert_eq!(entries.get("b").await.unwrap(), Some(entry(2)));
    assert_eq!(
        Counter::collection(&test.db).get("c").await.unwrap(),
        Some(counter(3))
    );

    // An insert of an existing document fails the commit: none of its writes applies.
    let mut batch = AtomicBatch::new(&test.db);
    batch.upsert("a", &entry(10)).unwrap();
    batch.delete::<Counter>("c").unwrap();
    batch.insert("b", &entry(20)).unwrap();
    assert!(batch.commit().await.is_err());
    assert_eq!(entries.get("a").await.unwrap(), Some(entry(1)));
    assert!(
        Counter::collection(&test.db)
            .get("c")
            .await
            .unwrap()
            .is_some()
    );

    // Refused before anything is sent: a bad id, and a write past the limit.
    let mut batch = AtomicBatch::new(&test.db);
    assert!(matches!(
        batch.upsert("a/b", &entry(1)),
        Err(Error::InvalidDocumentId { .. })
    ));
    assert!(batch.is_empty());
    for n in 0..MAX_COMMIT_WRITES {
        batch.upsert(&format!("n{n}"), &entry(n as i64)).unwrap();
    }
    assert!(matches!(
        batch.upsert("one-more", &entry(0)),
        Err(Error::InvalidUpdate(_))
    ));
    batch.commit().await.unwrap();
    assert_eq!(
        entries.verify().await.unwrap().current,
        2 + MAX_COMMIT_WRITES as u64
    );
}

/// Writes under parents join a batch through `in_parent` and commit with its top-level
/// writes, whole or not at all; without a parent they are refused before anything is sent.
#[tokio::test]
async fn an_atomic_batch_writes_under_parents_too() {
    let test = test_db("atomic-batch-parents").await;
    let db = &test.db;
    let message = |at| Message {
        text: format!("m{at}"),
        at,
    };
    let entry = Entry {
        counter: "c".into(),
        value: 1,
        at: 1,
    };
    let [lobby, hall] = ["lobby", "hall"].map(|room| Parent::<Message>::new(&[room]).unwrap());
    let mut batch = AtomicBatch::new(db);
    batch.in_parent(&lobby).insert("m", &message(1)).unwrap();
    batch
        .in_parent(&hall)
        .insert("m", &message(2))
        .unwrap()
        .upsert("n", &message(3))
        .unwrap();
    batch.upsert("e", &entry).unwrap();
    // `batch.upsert("m", &message(4))`, without the parent, does not compile
    // (ui/atomic_batch_write_without_parent.rs).
    assert_eq!(batch.len(), 4);
    batch.commit().await.unwrap();
    let in_room = |room| Message::collection_in(db, room);
    assert_eq!(in_room(&lobby).get("m").await.unwrap(), Some(message(1)));
    assert_eq!(in_room(&hall).get("m").await.unwrap(), Some(message(2)));
    assert_eq!(in_room(&hall).get("n").await.unwrap(), Some(message(3)));
    // Each under its parent, with its shard, as every sharded write.
    for room in [&lobby, &hall] {
        assert_eq!(in_room(room).verify().await.unwrap().missing, 0);
    }

    // One failing write under a parent fails the whole commit.
    let mut batch = AtomicBatch::new(db);
    batch.in_parent(&lobby).update("m", &message(10)).unwrap();
    batch.delete::<Entry>("e").unwrap();
    batch.in_parent(&hall).insert("m", &message(20)).unwrap();
    assert!(batch.commit().await.is_err());
    assert_eq!(in_room(&lobby).get("m").await.unwrap(), Some(message(1)));
    assert!(Entry::collection(db).get("e").await.unwrap().is_some());

    let mut batch = AtomicBatch::new(db);
    batch.in_parent(&lobby).update("m", &message(10)).unwrap();
    batch.in_parent(&lobby).delete("gone").unwrap();
    batch.commit().await.unwrap();
    assert_eq!(in_room(&lobby).get("m").await.unwrap(), Some(message(10)));
}

/// Transfers between two counters read with `get_many` inside each transaction: with the
/// reads at the transaction's snapshot (and locking what they read), concurrent transfers
/// lose none, and the total stays what it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_many_in_concurrent_transactions_loses_no_transfer() {
    let test = test_db("transactions-get-many").await;
    let counters = Counter::collection(&test.db);
    for (id, value) in [("from", 100), ("to", 0)] {
        let counter = Counter {
            name: id.into(),
            value,
            at: 0,
        };
        counters.upsert(id, &counter).await.unwrap();
    }
    let (workers, steps) = (3, 4);
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let db = test.db.clone();
            tokio::spawn(async move {
                for _ in 0..steps {
                    let options = FirestoreTransactionOptions {
                        max_retries: 200,
                        ..FirestoreTransactionOptions::new()
                    };
                    db.run_transaction_with_options(
                        |db, transaction| {
                            async move {
                                let mut counters =
                                    Counter::collection(&db).in_transaction(transaction);
                                let read = counters
                                    .get_many(["from", "to", "absent"])
                                    .await
                                    .map_err(transaction_error)?;
                                assert_eq!(read.missing, ["absent"]);
                                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                                for stored in read.found {
                                    let delta = if stored.id == "from" { -1 } else { 1 };
                                    let counter = Counter {
                                        value: stored.document.value + delta,
                                        ..stored.document
                                    };
                                    counters
                                        .update(&stored.id, &counter)
                                        .map_err(transaction_error)?;
                                }
                                Ok::<_, TransactionError>(())
                            }
                            .boxed()
                        },
                        options,
                    )
                    .await
                    .unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let read = counters.get_many(["from", "to"]).await.unwrap();
    let values: Vec<i64> = read.found.iter().map(|s| s.document.value).collect();
    let transfers = (workers * steps) as i64;
    assert_eq!(values, [100 - transfers, transfers]);
}
