//! How the Firestore emulator answers a BatchWrite request with one bad write among good
//! ones, measured: which mistakes fail the whole request (so the bulk writer checks them
//! before queuing, and sends a refused request's writes again one by one) and which fail
//! only their own write.

use std::collections::HashMap;

use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    BatchWriteRequest, Document, MapValue, Value, Write, value::ValueType, write::Operation,
};
use sharded_runtime::firestore::gcloud_sdk::tonic::Code;
use sharded_tests::test_db;

fn int(n: i64) -> Value {
    Value {
        value_type: Some(ValueType::IntegerValue(n)),
    }
}

fn upsert(db: &FirestoreDb, id: &str, fields: HashMap<String, Value>) -> Write {
    Write {
        operation: Some(Operation::Update(Document {
            name: format!("{}/c/{id}", db.get_documents_path()),
            fields,
            ..Document::default()
        })),
        ..Write::default()
    }
}

/// The request's status, or each write's status code.
async fn batch_write(db: &FirestoreDb, writes: Vec<Write>) -> Result<Vec<Code>, Code> {
    let request = BatchWriteRequest {
        database: db.get_database_path().clone(),
        writes,
        ..BatchWriteRequest::default()
    };
    match db.client().get().batch_write(request).await {
        Ok(response) => Ok(response
            .into_inner()
            .status
            .iter()
            .map(|status| Code::from(status.code))
            .collect()),
        Err(status) => Err(status.code()),
    }
}

fn nested(depth: usize) -> Value {
    (0..depth).fold(int(1), |inner, _| Value {
        value_type: Some(ValueType::MapValue(MapValue {
            fields: [("m".to_owned(), inner)].into(),
        })),
    })
}

#[tokio::test]
async fn which_bad_writes_fail_their_whole_request() {
    let test = test_db("server-batch").await;
    let db = &test.db;
    let good = |id: &str| upsert(db, id, [("n".to_owned(), int(1))].into());
    let with =
        |fields: HashMap<String, Value>| vec![good("a"), upsert(db, "bad", fields), good("b")];

    let reserved = with([("__x__".to_owned(), int(1))].into());
    assert_eq!(
        batch_write(db, reserved).await,
        Err(Code::InvalidArgument),
        "a reserved field name fails the whole request"
    );
    let nested_reserved = with(
        [(
            "m".to_owned(),
            Value {
                value_type: Some(ValueType::MapValue(MapValue {
                    fields: [("__y__".to_owned(), int(1))].into(),
                })),
            },
        )]
        .into(),
    );
    assert_eq!(
        batch_write(db, nested_reserved).await,
        Err(Code::InvalidArgument),
        "at any depth"
    );
    let empty = with([(String::new(), int(1))].into());
    assert_eq!(batch_write(db, empty).await, Err(Code::InvalidArgument));
    let deep = with([("d".to_owned(), nested(120))].into());
    assert_eq!(
        batch_write(db, deep).await,
        Err(Code::InvalidArgument),
        "maps nested past Firestore's depth"
    );
    let big = Value {
        value_type: Some(ValueType::StringValue("x".repeat(1_100_000))),
    };
    assert_eq!(
        batch_write(db, with([("s".to_owned(), big)].into())).await,
        Err(Code::InvalidArgument),
        "a document over 1 MiB"
    );
    let stored = db.fluent().select().from("c").query().await.unwrap();
    assert!(
        stored.is_empty(),
        "the good writes beside them were not applied"
    );

    // The same good writes alone are applied, each with its own status.
    assert_eq!(
        batch_write(db, vec![good("a"), good("b")]).await,
        Ok(vec![Code::Ok, Code::Ok])
    );
}

/// A document read in a transaction, and a BatchWrite to it from outside, measured: a
/// read-only transaction (what sharded's fan-out reads in) locks nothing, even for a query;
/// a read-write one holds the document, and the write waits about 2 s, then fails with
/// ABORTED ("Transaction lock timeout"), which the bulk writer retries.
#[tokio::test]
async fn only_read_write_transactions_hold_what_they_read() {
    use sharded_runtime::Sharded;
    use sharded_runtime::bulk::{Backoff, BulkWriter, BulkWriterOptions, Throttling};
    use sharded_runtime::firestore::{
        FirestoreConsistencySelector, FirestoreTransactionMode, FirestoreTransactionOptions,
    };
    use sharded_tests::models::Tick;
    let test = test_db("server-locks").await;
    let tick = |seq| Tick {
        venue: "v".into(),
        at: sharded_examples::at("2026-11-23T08:00:00Z"),
        seq,
    };
    Tick::collection(&test.db)
        .upsert("t", &tick(0))
        .await
        .unwrap();
    for (mode, locks) in [
        (FirestoreTransactionMode::ReadOnly, false),
        (FirestoreTransactionMode::ReadWrite, true),
    ] {
        let options = FirestoreTransactionOptions::new().with_mode(mode.clone());
        let transaction = test
            .db
            .begin_transaction_with_options(options)
            .await
            .unwrap();
        let pinned =
            test.db
                .clone_with_consistency_selector(FirestoreConsistencySelector::Transaction(
                    transaction.transaction_id().clone(),
                ));
        assert_eq!(
            Tick::query().venue("v").fetch(&pinned).await.unwrap().len(),
            1
        );
        let once = Backoff {
            max_attempts: 1,
            ..Backoff::default()
        };
        let writer = BulkWriter::new(
            &test.db,
            BulkWriterOptions::default()
                .with_throttling(Throttling::Off)
                .with_backoff(once),
        )
        .unwrap();
        let outcome = writer.upsert("t", &tick(1)).await.unwrap().await;
        match outcome {
            Ok(_) => assert!(!locks, "{mode:?}: the write went through"),
            Err(failure) => {
                assert!(locks, "{mode:?}: {failure}");
                assert_eq!(
                    failure.code,
                    sharded_runtime::writes::StatusCode::Aborted,
                    "{failure}"
                );
            }
        }
        drop(writer);
        transaction.rollback().await.unwrap();
    }
}
