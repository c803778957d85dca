//! What the one-snapshot fan-out relies on, measured on the emulator: reads through a
//! read-only transaction all see the moment the transaction began, whatever is written after.

use sharded_runtime::firestore::{
    FirestoreConsistencySelector, FirestoreTransactionMode, FirestoreTransactionOptions,
};
use sharded_runtime::{Sharded, Stored};
use sharded_tests::models::Tick;
use sharded_tests::test_db;

fn tick(seq: i64) -> Tick {
    Tick {
        venue: "XNAS".into(),
        at: sharded_runtime::firestore::FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(seq).unwrap(),
        ),
        seq,
    }
}

#[tokio::test]
async fn reads_in_a_read_only_transaction_see_its_start() {
    let test = test_db("snapshot").await;
    let db = &test.db;
    let ticks = Tick::collection(db);
    ticks.upsert("a", &tick(1)).await.unwrap();

    let transaction = db
        .begin_transaction_with_options(
            FirestoreTransactionOptions::new().with_mode(FirestoreTransactionMode::ReadOnly),
        )
        .await
        .unwrap();
    let pinned = db.clone_with_consistency_selector(FirestoreConsistencySelector::Transaction(
        transaction.transaction_id().clone(),
    ));
    // Written after the transaction began, before its first read.
    ticks.upsert("a", &tick(2)).await.unwrap();
    ticks.upsert("b", &tick(3)).await.unwrap();

    let seen: Option<Stored<Tick>> = Tick::collection(&pinned).get_stored("a").await.unwrap();
    assert_eq!(seen.map(|s| s.document.seq), Some(1));
    let query: Vec<Tick> = pinned
        .fluent()
        .select()
        .from(Tick::COLLECTION)
        .obj()
        .query()
        .await
        .unwrap();
    assert_eq!(query.iter().map(|t| t.seq).collect::<Vec<_>>(), [1]);
    // A sharded query through the pinned client reads the caller's snapshot too, over both
    // chunks of Tick's 40 shard values.
    let sharded: Vec<Tick> = Tick::query().venue("XNAS").fetch(&pinned).await.unwrap();
    assert_eq!(sharded.iter().map(|t| t.seq).collect::<Vec<_>>(), [1]);
    assert_eq!(Tick::query().venue("XNAS").count(&pinned).await.unwrap(), 1);
    transaction.rollback().await.unwrap();

    // Without it, the same reads see the writes.
    let now: Vec<Tick> = Tick::query().venue("XNAS").fetch(db).await.unwrap();
    assert_eq!(now.iter().map(|t| t.seq).collect::<Vec<_>>(), [2, 3]);
}

/// Upserts re-draw the shard, so a rewritten document can move from one chunk query to
/// another; every fetch, count and stream over Tick's two chunks still sees each document once.
#[tokio::test]
async fn a_fan_out_reads_one_moment_while_documents_move_between_chunks() {
    use futures::TryStreamExt;
    let test = test_db("snapshot-moves").await;
    let db = test.db.clone();
    const DOCUMENTS: i64 = 60;
    for seq in 0..DOCUMENTS {
        Tick::collection(&db)
            .upsert(&format!("t{seq}"), &tick(seq % 5))
            .await
            .unwrap();
    }
    let writer_db = db.clone();
    let writer = tokio::spawn(async move {
        for round in 0..600 {
            let seq = round % DOCUMENTS;
            Tick::collection(&writer_db)
                .upsert(&format!("t{seq}"), &tick(seq % 5))
                .await
                .unwrap();
        }
    });
    let mut reads = 0;
    while !writer.is_finished() || reads < 10 {
        let fetched = Tick::query().venue("XNAS").fetch_stored(&db).await.unwrap();
        let mut ids: Vec<&str> = fetched.iter().map(|s| s.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), fetched.len(), "a document appeared twice");
        assert_eq!(fetched.len() as i64, DOCUMENTS, "a document was missed");
        assert_eq!(
            Tick::query().venue("XNAS").count(&db).await.unwrap(),
            DOCUMENTS as u64
        );
        let streamed: Vec<Stored<Tick>> = Tick::query()
            .venue("XNAS")
            .stream(&db)
            .await
            .unwrap()
            .try_collect()
            .await
            .unwrap();
        assert_eq!(streamed.len() as i64, DOCUMENTS);
        reads += 1;
    }
    writer.await.unwrap();
}
