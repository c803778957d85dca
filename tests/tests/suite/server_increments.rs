//! Measured on the emulator, for counters: what Firestore's integer `increment` transform does
//! at the ends of its range, and what a commit answers about it. Kept as tests, since the
//! counters' refusal of a saturated shard rests on them:
//! - the transform saturates: past `i64::MAX` it stays at `i64::MAX`, and below `i64::MIN` at
//!   `i64::MIN`, and the commit succeeds either way (nothing says the addition was cut);
//! - each write's result carries the transformed value (`transform_results`), so a commit
//!   that left a shard at an end is seen in its answer;
//! - a document read at one microsecond before a commit's time holds its value before that
//!   commit (what tells how much of an addition was cut).

use std::time::Duration;

use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::document_transform::FieldTransform;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::document_transform::field_transform::TransformType;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    BatchGetDocumentsRequest, CommitRequest, Document, DocumentMask, Value, Write,
    batch_get_documents_request, batch_get_documents_response, value::ValueType,
    write::Operation,
};
use sharded_tests::test_db;

/// Commits `value: increment(by)` on `name`: the value the answer says it left, and the
/// commit's time.
pub(crate) async fn add(
    db: &FirestoreDb,
    name: &str,
    by: i64,
) -> (i64, prost_types_timestamp::Timestamp) {
    let write = Write {
        operation: Some(Operation::Update(Document {
            name: name.to_owned(),
            ..Default::default()
        })),
        update_mask: Some(DocumentMask::default()),
        update_transforms: vec![FieldTransform {
            field_path: "value".into(),
            transform_type: Some(TransformType::Increment(Value {
                value_type: Some(ValueType::IntegerValue(by)),
            })),
        }],
        ..Default::default()
    };
    let answer = db
        .client()
        .get()
        .commit(CommitRequest {
            database: db.get_database_path().clone(),
            writes: vec![write],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let result = &answer.write_results[0].transform_results[0];
    let Some(ValueType::IntegerValue(left)) = result.value_type else {
        panic!("{result:?}")
    };
    (left, answer.commit_time.unwrap())
}

/// The integer `value` of `name`, read at `read_time` (now when `None`).
async fn value_at(
    db: &FirestoreDb,
    name: &str,
    read_time: Option<prost_types_timestamp::Timestamp>,
) -> Option<i64> {
    use futures::TryStreamExt as _;
    let request = BatchGetDocumentsRequest {
        database: db.get_database_path().clone(),
        documents: vec![name.to_owned()],
        consistency_selector: read_time
            .map(batch_get_documents_request::ConsistencySelector::ReadTime),
        ..Default::default()
    };
    let answers: Vec<_> = db
        .client()
        .get()
        .batch_get_documents(request)
        .await
        .unwrap()
        .into_inner()
        .try_collect()
        .await
        .unwrap();
    match &answers[0].result {
        Some(batch_get_documents_response::Result::Found(document)) => {
            match document.fields["value"].value_type {
                Some(ValueType::IntegerValue(n)) => Some(n),
                ref other => panic!("{other:?}"),
            }
        }
        _ => None,
    }
}

mod prost_types_timestamp {
    pub use sharded_runtime::firestore::gcloud_sdk::prost_types::Timestamp;
}

/// One microsecond before `time`.
fn just_before(time: &prost_types_timestamp::Timestamp) -> prost_types_timestamp::Timestamp {
    let nanos = i64::from(time.nanos) - 1_000;
    prost_types_timestamp::Timestamp {
        seconds: time.seconds + nanos.div_euclid(1_000_000_000),
        nanos: nanos.rem_euclid(1_000_000_000) as i32,
    }
}

#[tokio::test]
async fn an_integer_increment_saturates_at_both_ends_and_its_answer_shows_it() {
    let test = test_db("server-increments").await;
    let db = &test.db;
    let name = |id: &str| format!("{}/shards/{id}", db.get_documents_path());

    let top = name("top");
    assert_eq!(add(db, &top, i64::MAX).await.0, i64::MAX);
    let (left, time) = add(db, &top, 5).await;
    assert_eq!(left, i64::MAX, "past i64::MAX it stays there");
    assert_eq!(value_at(db, &top, None).await, Some(i64::MAX));
    assert_eq!(
        value_at(db, &top, Some(just_before(&time))).await,
        Some(i64::MAX),
        "the value before the commit that was cut"
    );

    let bottom = name("bottom");
    assert_eq!(add(db, &bottom, -i64::MAX).await.0, -i64::MAX);
    assert_eq!(
        add(db, &bottom, -1).await.0,
        i64::MIN,
        "i64::MIN is reached"
    );
    let (left, time) = add(db, &bottom, -3).await;
    assert_eq!(left, i64::MIN, "below i64::MIN it stays there");
    assert_eq!(
        value_at(db, &bottom, Some(just_before(&time))).await,
        Some(i64::MIN)
    );

    // An addition that ends below the top is whole, and the value before it is readable one
    // microsecond before its commit.
    let middle = name("middle");
    add(db, &middle, 40).await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let (left, time) = add(db, &middle, 2).await;
    assert_eq!(left, 42);
    assert_eq!(
        value_at(db, &middle, Some(just_before(&time))).await,
        Some(40)
    );
}
