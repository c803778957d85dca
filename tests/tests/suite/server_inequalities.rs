//! Measured on the emulator, for the filters on fields other than the order field
//! (`#[sharded(range)]`: ranges, `!=` and `not-in`), and kept as tests, since sharded's
//! queries rest on them:
//! - `not-in` cannot stand beside `in` (the shard filter), `array-contains-any` or OR: a
//!   sharded `not-in` sends one query per shard value (`shard == v`), which the server takes.
//! - `!=` stands beside the shard filter's `in`.
//! - An inequality on another field orders the results by that field after the explicit
//!   orders: with `ORDER BY at, __name__` given, the server refuses the query ("order by
//!   clause cannot contain more fields after the key"); with `ORDER BY at` alone it orders by
//!   `at`, then the inequality field in the same direction, then the name; `ORDER BY at, f,
//!   __name__` given explicitly is taken and orders the same. A merge and its cursors then
//!   need three values, not two, which is what sharded sends.

use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::value::ValueType;
use sharded_tests::test_db;

async fn write(db: &FirestoreDb) {
    for i in 0..12i64 {
        let document = serde_json::json!({
            "shard": (i % 3).to_string(),
            "f": (i * 7) % 5,
            "at": i % 3,
        });
        db.fluent()
            .insert()
            .into("c")
            .document_id(format!("d{i:02}"))
            .object(&document)
            .execute::<serde_json::Value>()
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn inequalities_on_other_fields_as_the_emulator_takes_them() {
    let test = test_db("server-inequalities").await;
    let db = &test.db;
    write(db).await;
    let shards = || vec!["0", "1", "2"];

    let not_in = db
        .fluent()
        .select()
        .from("c")
        .filter(move |q| {
            q.for_all([
                q.field("shard").is_in(shards()),
                q.field("f").is_not_in(vec![1, 2]),
            ])
        })
        .query()
        .await;
    let refused = not_in.unwrap_err().to_string();
    assert!(
        refused.contains("'NOT_IN' cannot be used in the same query with 'IN'"),
        "{refused}"
    );

    let after_the_key = db
        .fluent()
        .select()
        .from("c")
        .filter(move |q| {
            q.for_all([
                q.field("shard").is_in(shards()),
                q.field("f").greater_than(1),
            ])
        })
        .order(|o| o.fields([o.field("at").desc(), o.field("__name__").desc()]))
        .query()
        .await;
    let refused = after_the_key.unwrap_err().to_string();
    assert!(
        refused.contains("order by clause cannot contain more fields after the key"),
        "{refused}"
    );

    let ordered = db
        .fluent()
        .select()
        .from("c")
        .filter(move |q| {
            q.for_all([
                q.field("shard").is_in(shards()),
                q.field("f").greater_than(1),
            ])
        })
        .order(|o| o.fields([o.field("at").desc()]))
        .query()
        .await
        .unwrap();
    let int = |value: &Option<ValueType>| match value {
        Some(ValueType::IntegerValue(i)) => *i,
        other => panic!("{other:?}"),
    };
    let keys: Vec<(i64, i64, String)> = ordered
        .iter()
        .map(|d| {
            (
                int(&d.fields["at"].value_type),
                int(&d.fields["f"].value_type),
                d.name.rsplit('/').next().unwrap().to_owned(),
            )
        })
        .collect();
    let mut expected = keys.clone();
    expected.sort_by(|a, b| b.cmp(a));
    assert_eq!(
        keys, expected,
        "by at, then f, then the name, all descending"
    );
    assert_eq!(keys.len(), 7);
}

/// The queries sharded sends for a filter on another field, each taken, in the order the
/// unsharded query (ordered by `at` alone) returns.
#[tokio::test]
async fn the_queries_sharded_sends_for_other_fields_are_taken() {
    let test = test_db("server-inequalities-sent").await;
    let db = &test.db;
    write(db).await;
    let ids = |documents: Vec<
        sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::Document,
    >| {
        documents
            .iter()
            .map(|d| d.name.rsplit('/').next().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let shards = || vec!["0", "1", "2"];
    // `!=` beside the shard filter's `in`, ordered explicitly by (at, f, __name__).
    let not_equal = db
        .fluent()
        .select()
        .from("c")
        .filter(move |q| q.for_all([q.field("shard").is_in(shards()), q.field("f").not_equal(1)]))
        .order(|o| {
            o.fields([
                o.field("at").desc(),
                o.field("f").desc(),
                o.field("__name__").desc(),
            ])
        })
        .query()
        .await
        .unwrap();
    let unsharded = db
        .fluent()
        .select()
        .from("c")
        .filter(|q| q.for_all([q.field("f").not_equal(1)]))
        .order(|o| o.fields([o.field("at").desc()]))
        .query()
        .await
        .unwrap();
    assert_eq!(ids(not_equal.clone()), ids(unsharded));
    assert_eq!(not_equal.len(), 10, "12 documents, 2 of them with f == 1");
    // `not-in` beside `shard == v`, one shard value per query.
    let mut merged = Vec::new();
    for shard in ["0", "1", "2"] {
        let part = db
            .fluent()
            .select()
            .from("c")
            .filter(move |q| {
                q.for_all([
                    q.field("shard").eq(shard),
                    q.field("f").is_not_in(vec![1, 2]),
                ])
            })
            .order(|o| {
                o.fields([
                    o.field("at").asc(),
                    o.field("f").asc(),
                    o.field("__name__").asc(),
                ])
            })
            .query()
            .await
            .unwrap();
        merged.extend(part);
    }
    let int = |d: &sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::Document,
               f: &str| {
        match d.fields[f].value_type {
            Some(ValueType::IntegerValue(i)) => i,
            ref other => panic!("{other:?}"),
        }
    };
    merged.sort_by(|a, b| {
        (int(a, "at"), int(a, "f"), a.name.clone()).cmp(&(
            int(b, "at"),
            int(b, "f"),
            b.name.clone(),
        ))
    });
    let unsharded = db
        .fluent()
        .select()
        .from("c")
        .filter(|q| q.for_all([q.field("f").is_not_in(vec![1, 2])]))
        .order(|o| o.fields([o.field("at").asc()]))
        .query()
        .await
        .unwrap();
    assert_eq!(ids(merged), ids(unsharded));
}

/// Firestore takes one `!=`, `not-in`, `is not NaN` or `is not null` per query, whatever
/// their fields and values: two `!=` on one field are refused as a `!=` beside a `not-in`
/// is, and so is a `!=` of NaN beside another `!=`. A `!=` beside a range is taken.
#[tokio::test]
async fn one_not_equal_kind_of_filter_per_query() {
    let test = test_db("server-not-equal-kinds").await;
    let db = &test.db;
    write(db).await;
    let single = "Only a single 'NOT_EQUAL', 'NOT_IN', 'IS_NOT_NAN', or 'IS_NOT_NULL' filter allowed per query.";
    let refused = |result: Result<Vec<_>, sharded_runtime::firestore::errors::FirestoreError>| {
        let _: &Vec<sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::Document> =
            match &result {
                Ok(documents) => documents,
                Err(_) => return result.unwrap_err().to_string(),
            };
        panic!("taken: {} documents", result.unwrap().len())
    };
    let two = db
        .fluent()
        .select()
        .from("c")
        .filter(|q| q.for_all([q.field("f").not_equal(1), q.field("f").not_equal(2)]))
        .query()
        .await;
    assert!(refused(two).contains(single));
    let nan_and = db
        .fluent()
        .select()
        .from("c")
        .filter(|q| q.for_all([q.field("f").not_equal(f64::NAN), q.field("f").not_equal(2)]))
        .query()
        .await;
    assert!(refused(nan_and).contains(single));
    let two_fields = db
        .fluent()
        .select()
        .from("c")
        .filter(|q| q.for_all([q.field("f").not_equal(1), q.field("at").not_equal(2)]))
        .query()
        .await;
    assert!(refused(two_fields).contains(single));
    let range_and = db
        .fluent()
        .select()
        .from("c")
        .filter(|q| q.for_all([q.field("f").not_equal(1), q.field("f").greater_than(0)]))
        .query()
        .await
        .unwrap();
    assert_eq!(range_and.len(), 7, "f in 2..=4 of 0..=4");
}

/// Inequalities on two fields besides the order field (issue 43 item 4), measured before a
/// sharded query sends them: the server takes them beside the shard field's `in`, and with
/// `ORDER BY at` alone it orders by `at`, then the inequality fields by their names (`f`
/// before `g`, whatever order the filters came in), then the name; the explicit `ORDER BY at,
/// f, g, __name__` is taken and orders the same. So a sharded query on two filtered fields
/// would merge and page on four values, and need an index (shard, equalities, at, f, g) per
/// query, pair of fields and direction.
#[tokio::test]
async fn inequalities_on_two_other_fields_order_by_their_names() {
    let test = test_db("server-two-inequalities").await;
    let db = &test.db;
    for i in 0..24i64 {
        let document = serde_json::json!({
            "shard": (i % 3).to_string(),
            "at": i % 2,
            "f": (i * 5) % 4,
            "g": (i * 7) % 5,
        });
        db.fluent()
            .insert()
            .into("c")
            .document_id(format!("d{i:02}"))
            .object(&document)
            .execute::<serde_json::Value>()
            .await
            .unwrap();
    }
    let shards = || vec!["0", "1", "2"];
    let int = |value: &Option<ValueType>| match value {
        Some(ValueType::IntegerValue(i)) => *i,
        other => panic!("{other:?}"),
    };
    let read = |documents: Vec<sharded_runtime::firestore::FirestoreDocument>| {
        documents
            .iter()
            .map(|d| {
                (
                    int(&d.fields["at"].value_type),
                    int(&d.fields["f"].value_type),
                    int(&d.fields["g"].value_type),
                    d.name.rsplit('/').next().unwrap().to_owned(),
                )
            })
            .collect::<Vec<_>>()
    };
    // The filters in both orders: `g` first, then `f`.
    let implicit = db
        .fluent()
        .select()
        .from("c")
        .filter(move |q| {
            q.for_all([
                q.field("shard").is_in(shards()),
                q.field("g").less_than(4),
                q.field("f").greater_than(0),
            ])
        })
        .order(|o| o.fields([o.field("at").ascending()]))
        .query()
        .await
        .unwrap();
    let implicit = read(implicit);
    let mut expected = implicit.clone();
    expected.sort();
    assert_eq!(implicit, expected, "by at, then f, then g, then the name");
    assert!(implicit.iter().all(|(_, f, g, _)| *f > 0 && *g < 4));
    assert!(implicit.len() > 5, "{implicit:?}");
    let explicit = db
        .fluent()
        .select()
        .from("c")
        .filter(move |q| {
            q.for_all([
                q.field("shard").is_in(shards()),
                q.field("f").greater_than(0),
                q.field("g").less_than(4),
            ])
        })
        .order(|o| {
            o.fields([
                o.field("at").ascending(),
                o.field("f").ascending(),
                o.field("g").ascending(),
                o.field("__name__").ascending(),
            ])
        })
        .query()
        .await
        .unwrap();
    assert_eq!(read(explicit), implicit);
}

/// What a Listen target with inequalities on two fields gets from the emulator, beside one
/// on a single field (measured before a sharded listener on a `ranges(...)` set relies on
/// it): the query over a field and the same over two, each opened as the only target of a
/// stream of its own, its responses counted until it is marked current. The two-field
/// target is served as the one-field one is: its documents, then `CURRENT`.
#[tokio::test]
async fn a_listen_target_with_inequalities_on_two_fields() {
    use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
        ListenRequest, StructuredQuery, Target, listen_request, listen_response::ResponseType,
        target, target_change::TargetChangeType,
    };
    use sharded_runtime::firestore::{
        FirestoreQueryCollection, FirestoreQueryDirection, FirestoreQueryFilter,
        FirestoreQueryFilterCompare, FirestoreQueryFilterComposite,
        FirestoreQueryFilterCompositeOperator, FirestoreQueryOrder, FirestoreQueryParams,
        FirestoreValue,
    };
    let test = test_db("server-two-inequalities-listen").await;
    let db = &test.db;
    write(db).await;
    for i in 0..12i64 {
        db.fluent()
            .update()
            .fields(["g"])
            .in_col("c")
            .document_id(format!("d{i:02}"))
            .object(&serde_json::json!({ "g": (i * 7) % 4 }))
            .execute::<serde_json::Value>()
            .await
            .unwrap();
    }
    let int = |i: i64| -> FirestoreValue { i.into() };
    // What each target is sent, and whether it is marked current.
    let mut seen = Vec::new();
    for fields in [vec!["f"], vec!["f", "g"]] {
        let mut filters = vec![FirestoreQueryFilter::Compare(Some(
            FirestoreQueryFilterCompare::In("shard".into(), vec!["0", "1", "2"].into()),
        ))];
        let mut order = vec!["at".to_owned()];
        for field in &fields {
            filters.push(FirestoreQueryFilter::Compare(Some(
                FirestoreQueryFilterCompare::GreaterThan((*field).into(), int(0)),
            )));
            order.push((*field).to_owned());
        }
        order.push("__name__".to_owned());
        let params = FirestoreQueryParams::new(FirestoreQueryCollection::Single("c".into()))
            .with_filter(FirestoreQueryFilter::Composite(
                FirestoreQueryFilterComposite::new(
                    filters,
                    FirestoreQueryFilterCompositeOperator::And,
                ),
            ))
            .with_order_by(
                order
                    .into_iter()
                    .map(|field_name| FirestoreQueryOrder {
                        field_name,
                        direction: FirestoreQueryDirection::Ascending,
                    })
                    .collect(),
            );
        let query = StructuredQuery::try_from(params).unwrap();
        let request = ListenRequest {
            database: db.get_database_path().to_string(),
            target_change: Some(listen_request::TargetChange::AddTarget(Target {
                target_id: 7,
                target_type: Some(target::TargetType::Query(target::QueryTarget {
                    parent: db.get_documents_path().to_string(),
                    query_type: Some(target::query_target::QueryType::StructuredQuery(query)),
                })),
                ..Default::default()
            })),
            ..Default::default()
        };
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
        sender.send(request).unwrap();
        let requests = futures::stream::poll_fn(move |cx| receiver.poll_recv(cx));
        let mut client = db.client().get();
        let mut responses = client
            .listen(sharded_runtime::firestore::gcloud_sdk::tonic::Request::new(
                requests,
            ))
            .await
            .unwrap()
            .into_inner();
        let (mut documents, mut current, mut error) = (0, false, None);
        let until = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        while let Ok(response) = tokio::time::timeout_at(until, responses.message()).await {
            match response {
                Ok(Some(response)) => match response.response_type {
                    Some(ResponseType::DocumentChange(_)) => documents += 1,
                    Some(ResponseType::TargetChange(change))
                        if change.target_change_type == TargetChangeType::Current as i32 =>
                    {
                        current = true
                    }
                    _ => {}
                },
                Ok(None) => break,
                Err(status) => {
                    error = Some(status.code());
                    break;
                }
            }
            if current {
                break;
            }
        }
        drop(sender);
        seen.push((fields.len(), documents, current, error));
    }
    let matching = |fields: usize| {
        (0..12i64)
            .filter(|i| (i * 7) % 5 > 0 && (fields == 1 || (i * 7) % 4 > 0))
            .count()
    };
    // Each is sent its documents and marked current, as one field is.
    assert_eq!(
        seen,
        [(1, matching(1), true, None), (2, matching(2), true, None)],
        "{seen:?}"
    );
    assert!(matching(2) < matching(1));
}
