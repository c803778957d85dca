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

/// A stream reads every chunk in pages (300 documents) at one read time: consumed slowly
/// while every document is rewritten (most move to the other chunk), some are deleted and
/// others created, it yields exactly what a fetch saw just before it began, in order, page
/// after page.
#[tokio::test]
async fn a_stream_over_many_pages_reads_one_moment() {
    use futures::StreamExt;
    let test = test_db("snapshot-stream-pages").await;
    let db = test.db.clone();
    const DOCUMENTS: i64 = 900;
    let writer = db.create_simple_batch_writer().await.unwrap();
    for chunk in (0..DOCUMENTS).collect::<Vec<_>>().chunks(300) {
        let mut batch = writer.new_batch();
        for &seq in chunk {
            Tick::collection(&db)
                .upsert_in(&mut batch, &format!("t{seq:04}"), &tick(seq % 7))
                .unwrap();
        }
        batch.write().await.unwrap();
    }
    let seen = |stored: &[Stored<Tick>]| -> Vec<(String, i64)> {
        stored
            .iter()
            .map(|s| (s.id.clone(), s.document.seq))
            .collect()
    };
    let before = seen(&Tick::query().venue("XNAS").fetch_stored(&db).await.unwrap());
    assert_eq!(before.len() as i64, DOCUMENTS);
    let mut stream = Tick::query().venue("XNAS").stream(&db).await.unwrap();
    let mut streamed = Vec::new();
    for _ in 0..10 {
        streamed.push(stream.next().await.unwrap().unwrap());
    }
    for chunk in (0..DOCUMENTS).collect::<Vec<_>>().chunks(300) {
        let mut batch = writer.new_batch();
        for &seq in chunk {
            let id = format!("t{seq:04}");
            match seq % 10 {
                0 => {
                    batch.delete_by_id(Tick::COLLECTION, &id, None).unwrap();
                }
                _ => Tick::collection(&db)
                    .upsert_in(&mut batch, &id, &tick(seq % 7 + 100))
                    .unwrap(),
            }
            Tick::collection(&db)
                .upsert_in(&mut batch, &format!("n{seq:04}"), &tick(seq % 3))
                .unwrap();
        }
        batch.write().await.unwrap();
    }
    while let Some(tick) = stream.next().await {
        streamed.push(tick.unwrap());
        if streamed.len() % 100 == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
    assert_eq!(seen(&streamed), before);
}

/// Measured: the emulator closes a read-only transaction left idle for 60 s ("Transaction is
/// invalid or closed"; Firestore's limit is about 270 s). A stream paused longer than that
/// half-way still yields the rest of its one moment: it holds no transaction, and reads its
/// later pages at the first pages' read time.
#[tokio::test]
async fn a_stream_outlives_a_transactions_lifetime() {
    use futures::StreamExt;
    let test = test_db("snapshot-stream-outlives").await;
    let db = test.db.clone();
    for seq in 0..60 {
        Tick::collection(&db)
            .upsert(&format!("t{seq:02}"), &tick(seq % 5))
            .await
            .unwrap();
    }
    let seen = |stored: &[Stored<Tick>]| -> Vec<(String, i64)> {
        stored
            .iter()
            .map(|s| (s.id.clone(), s.document.seq))
            .collect()
    };
    let before = seen(&Tick::query().venue("XNAS").fetch_stored(&db).await.unwrap());
    let transaction = db
        .begin_transaction_with_options(
            FirestoreTransactionOptions::new().with_mode(FirestoreTransactionMode::ReadOnly),
        )
        .await
        .unwrap();
    let pinned = db.clone_with_consistency_selector(FirestoreConsistencySelector::Transaction(
        transaction.transaction_id().clone(),
    ));
    assert!(Tick::collection(&pinned).get("t00").await.is_ok());
    let mut stream = Tick::query()
        .venue("XNAS")
        .stream_in_pages_of(&db, 5)
        .await
        .unwrap();
    let mut streamed = Vec::new();
    for _ in 0..7 {
        streamed.push(stream.next().await.unwrap().unwrap());
    }
    for seq in 0..60 {
        Tick::collection(&db)
            .upsert(&format!("t{seq:02}"), &tick(seq % 5 + 10))
            .await
            .unwrap();
    }
    tokio::time::sleep(std::time::Duration::from_secs(65)).await;
    let closed = Tick::collection(&pinned).get("t00").await;
    assert!(
        closed
            .as_ref()
            .is_err_and(|error| error.to_string().contains("invalid or closed")),
        "the emulator keeps an idle transaction past 60 s now: {closed:?}"
    );
    while let Some(tick) = stream.next().await {
        streamed.push(tick.unwrap());
    }
    assert_eq!(seen(&streamed), before);
}
