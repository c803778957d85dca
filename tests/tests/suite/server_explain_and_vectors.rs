//! Measured on the emulator before any code relies on it (issue 43, items 6 and 7): whether
//! it answers Firestore's query explain (`explain_options`) and vector search
//! (`find_nearest`). What it does decides what the sharded query can be tested against:
//! - explain: the emulator runs the query and returns its documents, but no
//!   `explain_metrics` at all, so a sharded `explain` (each chunk query's metrics summed)
//!   cannot be tested against it; only production answers with metrics;
//! - `find_nearest`: served, beside an `in` pre-filter (what a chunk query's `shard in [..]`
//!   is), nearest first, with its `limit` and the distance in `distance_result_field`: what a
//!   merge of chunk queries by distance needs.

use futures::TryStreamExt as _;
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    ExplainOptions, RunQueryRequest, RunQueryResponse, StructuredQuery, Value, run_query_request,
    structured_query, value::ValueType,
};
use sharded_runtime::firestore::gcloud_sdk::tonic::Status;
use sharded_tests::test_db;

fn collection(id: &str) -> Vec<structured_query::CollectionSelector> {
    vec![structured_query::CollectionSelector {
        collection_id: id.into(),
        all_descendants: false,
    }]
}

async fn run(db: &FirestoreDb, request: RunQueryRequest) -> Result<Vec<RunQueryResponse>, Status> {
    db.client()
        .get()
        .run_query(request)
        .await?
        .into_inner()
        .try_collect()
        .await
}

/// A Firestore vector: a map with `__type__: "__vector__"` and its doubles under `value`.
fn vector(values: &[f64]) -> serde_json::Value {
    serde_json::json!({"__type__": "__vector__", "value": values})
}

/// The same vector as a protocol value.
fn vector_value(values: &[f64]) -> Value {
    use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{ArrayValue, MapValue};
    let double = |d: f64| Value {
        value_type: Some(ValueType::DoubleValue(d)),
    };
    let fields = [
        (
            "__type__".to_owned(),
            Value {
                value_type: Some(ValueType::StringValue("__vector__".into())),
            },
        ),
        (
            "value".to_owned(),
            Value {
                value_type: Some(ValueType::ArrayValue(ArrayValue {
                    values: values.iter().copied().map(double).collect(),
                })),
            },
        ),
    ];
    Value {
        value_type: Some(ValueType::MapValue(MapValue {
            fields: fields.into_iter().collect(),
        })),
    }
}

#[tokio::test]
async fn the_emulator_answers_explain_and_find_nearest_as_measured() {
    let test = test_db("explain-vectors").await;
    let db = &test.db;
    for (id, point) in [("a", [0.0, 1.0]), ("b", [1.0, 0.0]), ("c", [0.9, 0.1])] {
        db.fluent()
            .update()
            .in_col("points")
            .document_id(id)
            .object(&serde_json::json!({"embedding": vector(&point), "n": 1}))
            .execute::<()>()
            .await
            .unwrap();
    }
    let query = StructuredQuery {
        from: collection("points"),
        ..Default::default()
    };
    let explained = run(
        db,
        RunQueryRequest {
            parent: db.get_documents_path().clone(),
            query_type: Some(run_query_request::QueryType::StructuredQuery(query.clone())),
            explain_options: Some(ExplainOptions { analyze: true }),
            ..Default::default()
        },
    )
    .await;
    let explained = explained.unwrap();
    assert_eq!(explained.iter().filter(|r| r.document.is_some()).count(), 3);
    assert!(
        explained.iter().all(|r| r.explain_metrics.is_none()),
        "the emulator answered explain metrics: {explained:?}"
    );

    use structured_query::find_nearest::DistanceMeasure;
    let nearest = StructuredQuery {
        find_nearest: Some(structured_query::FindNearest {
            vector_field: Some(structured_query::FieldReference {
                field_path: "embedding".into(),
            }),
            query_vector: Some(vector_value(&[1.0, 0.0])),
            distance_measure: DistanceMeasure::Euclidean as i32,
            limit: Some(2),
            distance_result_field: "distance".into(),
            ..Default::default()
        }),
        // A pre-filter, as a chunk query's `shard in [..]` would be.
        r#where: Some(structured_query::Filter {
            filter_type: Some(structured_query::filter::FilterType::FieldFilter(
                structured_query::FieldFilter {
                    field: Some(structured_query::FieldReference {
                        field_path: "n".into(),
                    }),
                    op: structured_query::field_filter::Operator::In as i32,
                    value: Some(Value {
                        value_type: Some(ValueType::ArrayValue(
                            sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::ArrayValue {
                                values: vec![Value { value_type: Some(ValueType::IntegerValue(1)) }],
                            },
                        )),
                    }),
                },
            )),
        }),
        ..query
    };
    let found = run(
        db,
        RunQueryRequest {
            parent: db.get_documents_path().clone(),
            query_type: Some(run_query_request::QueryType::StructuredQuery(nearest)),
            ..Default::default()
        },
    )
    .await;
    let ids: Vec<(String, Option<Value>)> = found
        .unwrap()
        .iter()
        .filter_map(|r| r.document.as_ref())
        .map(|d| {
            (
                sharded_tests::id_of(d).to_owned(),
                d.fields.get("distance").cloned(),
            )
        })
        .collect();
    let distance = |value: &Option<Value>| match value.as_ref().and_then(|v| v.value_type.clone()) {
        Some(ValueType::DoubleValue(d)) => d,
        other => panic!("no distance: {other:?}"),
    };
    let names: Vec<&str> = ids.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(names, ["b", "c"], "nearest first, `limit` of them");
    assert_eq!(distance(&ids[0].1), 0.0);
    assert!((distance(&ids[1].1) - 0.02f64.sqrt()).abs() < 1e-12);
}

/// A sharded query's explain over 40 shard values: one explained chunk query per chunk of
/// the plan, at one snapshot, each naming its shard values; analyzed, their documents are
/// the query's. The emulator answers no metrics, so every chunk's are `None`, and so are the
/// totals (a sum over chunks missing one is no total).
#[tokio::test]
async fn a_sharded_explain_sends_every_chunk_query_of_its_plan() {
    use sharded_runtime::Sharded;
    use sharded_tests::models::Tick;

    let test = test_db("explain-sharded").await;
    let db = &test.db;
    for seq in 0..30 {
        let tick = Tick {
            venue: ["XNAS", "XNYS"][(seq % 2) as usize].into(),
            at: sharded_runtime::firestore::FirestoreTimestamp(
                sharded_runtime::firestore::jiff::Timestamp::from_second(seq).unwrap(),
            ),
            seq,
        };
        Tick::collection(db)
            .upsert(&format!("t{seq:02}"), &tick)
            .await
            .unwrap();
    }
    let query = Tick::query().venue("XNAS");
    let explained = query.explain(db, true).await.unwrap();
    assert_eq!(explained.chunks.len(), query.chunk_queries().unwrap());
    assert_eq!(
        explained
            .chunks
            .iter()
            .map(|chunk| chunk.shards)
            .collect::<Vec<_>>(),
        explained.plan.chunk_shards()
    );
    assert_eq!(
        explained
            .chunks
            .iter()
            .map(|chunk| chunk.documents)
            .sum::<usize>(),
        15
    );
    assert!(explained.chunks.iter().all(|chunk| chunk.metrics.is_none()));
    assert_eq!(explained.read_operations(), None);
    assert_eq!(explained.indexes_used(), None);
}
