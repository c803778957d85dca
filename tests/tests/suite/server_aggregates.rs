//! How the Firestore emulator aggregates, measured: `count`, `sum` and `avg` over an unsharded
//! query apply its limit and its cursor; which documents they count and skip; and that a sum
//! orders by the summed field too, so its "first N" is not the query's (why sharded's `sum`
//! and `avg` refuse a limit or a cursor, while its `count` applies them).

use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    Document, Value, value::ValueType,
};
use sharded_runtime::firestore::{FirestoreDb, FirestoreQueryCursor};
use sharded_tests::test_db;

async fn write(db: &FirestoreDb, id: &str, at: i64, qty: Option<Value>) {
    match qty {
        Some(qty) => write_fields(db, id, at, &[("qty", qty)]).await,
        None => write_fields(db, id, at, &[]).await,
    }
}

/// (count, sum, avg) of `qty` over `c` ordered by `at`, with `limit` and after `after`, in one
/// aggregation request.
async fn aggregate(
    db: &FirestoreDb,
    limit: Option<u32>,
    after: Option<i64>,
) -> (Value, Value, Value) {
    let mut select = db
        .fluent()
        .select()
        .from("c")
        .order(|o| o.fields([o.field("at").ascending()]));
    if let Some(limit) = limit {
        select = select.limit(limit);
    }
    if let Some(after) = after {
        select = select.start_at(FirestoreQueryCursor::AfterValue(vec![after.into()]));
    }
    let rows = select
        .aggregate(|a| {
            a.fields([
                a.field("count").count(),
                a.field("sum").sum("qty"),
                a.field("avg").avg("qty"),
            ])
        })
        .query()
        .await
        .unwrap();
    let get = |name: &str| rows[0].fields[name].clone();
    (get("count"), get("sum"), get("avg"))
}

async fn count_only(db: &FirestoreDb) -> Value {
    let rows = db
        .fluent()
        .select()
        .from("c")
        .order(|o| o.fields([o.field("at").ascending()]))
        .aggregate(|a| a.fields([a.field("count").count()]))
        .query()
        .await
        .unwrap();
    rows[0].fields["count"].clone()
}

fn int(i: i64) -> Value {
    Value {
        value_type: Some(ValueType::IntegerValue(i)),
    }
}

fn double(d: f64) -> Value {
    Value {
        value_type: Some(ValueType::DoubleValue(d)),
    }
}

#[tokio::test]
async fn aggregations_apply_the_limit_and_the_cursor_and_avg_skips_non_numbers() {
    let test = test_db("server-aggregates").await;
    let db = &test.db;
    for at in 1..=10 {
        write(db, &format!("d{at:02}"), at, Some(int(at))).await;
    }
    // Over the whole query: 10 documents, 1 + ... + 10.
    assert_eq!(
        aggregate(db, None, None).await,
        (int(10), int(55), double(5.5))
    );
    // The limit applies: the first 3 by `at`.
    assert_eq!(
        aggregate(db, Some(3), None).await,
        (int(3), int(6), double(2.0))
    );
    // So does the cursor: after at = 7, documents 8, 9, 10.
    assert_eq!(
        aggregate(db, None, Some(7)).await,
        (int(3), int(27), double(9.0))
    );
    assert_eq!(
        aggregate(db, Some(2), Some(7)).await,
        (int(2), int(17), double(8.5))
    );
    // A string, a null and a missing `qty`. `count` alone counts all three; beside a `sum` or
    // `avg` of `qty` in the same request, only the documents that have a `qty` (the string and
    // the null): the field must exist. Neither is summed nor averaged. So a count beside a sum
    // is the average's denominator only when every such value is a number, which is why
    // `#[sharded(aggregate)]` takes only types stored as a number on every document.
    write(
        db,
        "s",
        11,
        Some(Value {
            value_type: Some(ValueType::StringValue("x".into())),
        }),
    )
    .await;
    write(
        db,
        "n",
        12,
        Some(Value {
            value_type: Some(ValueType::NullValue(0)),
        }),
    )
    .await;
    write(db, "m", 13, None).await;
    assert_eq!(count_only(db).await, int(13));
    assert_eq!(
        aggregate(db, None, None).await,
        (int(12), int(55), double(5.5))
    );
    // No numeric value at all: the sum is 0 and the average null.
    assert_eq!(
        aggregate(db, None, Some(10)).await,
        (
            int(2),
            int(0),
            Value {
                value_type: Some(ValueType::NullValue(0))
            }
        )
    );
}

#[tokio::test]
async fn a_sum_orders_by_the_summed_field_and_refuses_an_order_by_name() {
    let test = test_db("server-aggregate-order").await;
    let db = &test.db;
    // Equal `at`; by name "a" < "b", by qty 9 > 1.
    write(db, "a", 1, Some(int(9))).await;
    write(db, "b", 1, Some(int(1))).await;
    // The query's own first document, ordered by `at` then name, is "a".
    let first = db
        .fluent()
        .select()
        .from("c")
        .order(|o| o.fields([o.field("at").ascending(), o.field("__name__").ascending()]))
        .limit(1)
        .query()
        .await
        .unwrap();
    assert!(first[0].name.ends_with("/a"));
    // A sum over the first document sums "b": ties in `at` are broken by `qty`, not by name.
    assert_eq!(aggregate(db, Some(1), None).await.1, int(1));
    // And ordering by name as well is refused outright.
    let refused = db
        .fluent()
        .select()
        .from("c")
        .order(|o| o.fields([o.field("at").ascending(), o.field("__name__").ascending()]))
        .limit(1)
        .aggregate(|a| a.fields([a.field("sum").sum("qty")]))
        .query()
        .await;
    assert!(
        refused
            .as_ref()
            .is_err_and(|error| error.to_string().contains("after __name__")),
        "{refused:?}"
    );
}

/// Writes document `id` of `c` with `at` and `fields`, replacing what it held.
async fn write_fields(db: &FirestoreDb, id: &str, at: i64, fields: &[(&str, Value)]) {
    let mut stored: std::collections::HashMap<String, Value> = [("at".to_owned(), int(at))].into();
    for (name, value) in fields {
        stored.insert((*name).to_owned(), value.clone());
    }
    let document = Document {
        name: format!("{}/c/{id}", db.get_documents_path()),
        fields: stored,
        ..Default::default()
    };
    db.fluent()
        .update()
        .in_col("c")
        .document(document)
        .execute()
        .await
        .unwrap();
}

/// Several aggregations of different fields in one request aggregate only the documents that
/// hold every field they name, a null included: `count` counts them, and each `sum` and `avg`
/// reads only them. So `query.aggregate(&db, (count(), sum(a), avg(b)))` is not the answers
/// of three requests where a document lacks a field.
#[tokio::test]
async fn several_aggregations_in_one_request_read_only_documents_with_every_aggregated_field() {
    let test = test_db("server-aggregate-several").await;
    let db = &test.db;
    let null = Value {
        value_type: Some(ValueType::NullValue(0)),
    };
    write_fields(db, "both", 1, &[("qty", int(2)), ("price", int(10))]).await;
    write_fields(db, "qty", 2, &[("qty", int(3))]).await;
    write_fields(db, "price", 3, &[("price", int(100))]).await;
    write_fields(db, "null", 4, &[("qty", int(5)), ("price", null)]).await;
    write_fields(db, "none", 5, &[]).await;
    let rows = db
        .fluent()
        .select()
        .from("c")
        .order(|o| o.fields([o.field("at").ascending()]))
        .aggregate(|a| {
            a.fields([
                a.field("count").count(),
                a.field("sum_qty").sum("qty"),
                a.field("avg_qty").avg("qty"),
                a.field("sum_price").sum("price"),
                a.field("avg_price").avg("price"),
            ])
        })
        .query()
        .await
        .unwrap();
    let get = |name: &str| rows[0].fields[name].clone();
    // "both" and "null": the documents with a `qty` and a `price`.
    assert_eq!(get("count"), int(2));
    assert_eq!(get("sum_qty"), int(7));
    assert_eq!(get("avg_qty"), double(3.5));
    // The null is no number: skipped by the sum and the average, counted all the same.
    assert_eq!(get("sum_price"), int(10));
    assert_eq!(get("avg_price"), double(10.0));
    // One field's aggregations read the documents with that field.
    let count_and_sum = db
        .fluent()
        .select()
        .from("c")
        .order(|o| o.fields([o.field("at").ascending()]))
        .aggregate(|a| a.fields([a.field("count").count(), a.field("sum_qty").sum("qty")]))
        .query()
        .await
        .unwrap();
    assert_eq!(count_and_sum[0].fields["count"], int(3));
    assert_eq!(count_and_sum[0].fields["sum_qty"], int(10));
}
