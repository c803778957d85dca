//! How the Firestore emulator itself orders values, measured: the client-side merge of chunk
//! queries (`compare_values`) must agree with every one of these. Each case writes documents
//! with raw values into an unsharded collection, asks the server for them ordered by
//! (value, `__name__`), and compares that order with the merge's comparator.

use sharded_runtime::Sharded as _;
use std::cmp::Ordering;

use sharded_runtime::__private::{compare_references, compare_values};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    Document, Value, value::ValueType,
};
use sharded_runtime::firestore::{
    FirestoreDb, FirestoreQueryCursor, FirestoreQueryDirection, FirestoreValue,
};
use sharded_tests::test_db;

fn value(value_type: ValueType) -> Value {
    Value {
        value_type: Some(value_type),
    }
}

async fn write_raw(db: &FirestoreDb, collection: &str, id: &str, v: Value) {
    let name = format!("{}/{collection}/{id}", db.get_documents_path());
    let document = Document {
        name,
        fields: [("v".to_owned(), v)].into(),
        ..Default::default()
    };
    db.fluent()
        .update()
        .in_col(collection)
        .document(document)
        .execute()
        .await
        .unwrap_or_else(|err| panic!("write {id}: {err}"));
}

/// The ids of `collection` as the server orders them by (v ASC, __name__ ASC).
async fn server_order(db: &FirestoreDb, collection: &str) -> Vec<String> {
    let documents: Vec<Document> = db
        .fluent()
        .select()
        .from(collection)
        .order(|o| o.fields([o.field("v").ascending()]))
        .query()
        .await
        .unwrap();
    documents
        .iter()
        .map(|d| d.name.rsplit('/').next().unwrap().to_owned())
        .collect()
}

/// Writes `cases` (id, value), then checks the merge comparator orders them as the server does.
async fn check_order(db: &FirestoreDb, collection: &str, cases: Vec<(&str, Value)>) -> Vec<String> {
    for (id, v) in &cases {
        write_raw(db, collection, id, v.clone()).await;
    }
    let server = server_order(db, collection).await;
    let mut client = cases.clone();
    client
        .sort_by(|(ia, a), (ib, b)| compare_values(a, b).then_with(|| compare_references(ia, ib)));
    let client: Vec<String> = client.into_iter().map(|(id, _)| id.to_owned()).collect();
    assert_eq!(
        client, server,
        "{collection}: the merge disagrees with the server"
    );
    server
}

#[tokio::test]
async fn the_merge_orders_values_as_the_server_does() {
    let test = test_db("server-order").await;
    let db = &test.db;
    use ValueType::*;

    // Integers and doubles compare by numeric value across the two types, exactly, beyond
    // 2^53 and at the ends of i64; NaN sorts before every other number; -0.0 equals 0.0
    // (ties go by name).
    let two_63 = 9_223_372_036_854_775_808.0_f64;
    let numbers = check_order(
        db,
        "numbers",
        vec![
            ("a-max-int", value(IntegerValue(i64::MAX))),
            ("b-two63-double", value(DoubleValue(two_63))),
            ("c-min-int", value(IntegerValue(i64::MIN))),
            ("d-minus-two63-double", value(DoubleValue(-two_63))),
            ("e-nan", value(DoubleValue(f64::NAN))),
            ("f-neg-inf", value(DoubleValue(f64::NEG_INFINITY))),
            ("g-inf", value(DoubleValue(f64::INFINITY))),
            ("h-neg-zero", value(DoubleValue(-0.0))),
            ("i-zero-int", value(IntegerValue(0))),
            ("j-zero", value(DoubleValue(0.0))),
            ("k-2p53-plus-1-int", value(IntegerValue((1 << 53) + 1))),
            ("l-2p53-double", value(DoubleValue(9_007_199_254_740_992.0))),
            (
                "m-2p53-plus-2-double",
                value(DoubleValue(9_007_199_254_740_994.0)),
            ),
            ("n-max-minus-1", value(IntegerValue(i64::MAX - 1))),
            ("o-half", value(DoubleValue(0.5))),
            // Named so that a comparator calling them equal would put them the wrong way round.
            ("z-max-int", value(IntegerValue(i64::MAX))),
            ("a-two63-double", value(DoubleValue(two_63))),
            ("z-2p53-plus-1-int", value(IntegerValue((1 << 53) + 1))),
            ("a-2p53-double", value(DoubleValue(9_007_199_254_740_992.0))),
            ("z-minus-half", value(DoubleValue(-0.5))),
            ("a-zero-int", value(IntegerValue(0))),
        ],
    )
    .await;
    // Pinned as measured, so a change in the emulator shows up here first.
    assert_eq!(
        numbers,
        [
            "e-nan",
            "f-neg-inf",
            "c-min-int",
            "d-minus-two63-double",
            "z-minus-half",
            "a-zero-int",
            "h-neg-zero",
            "i-zero-int",
            "j-zero",
            "o-half",
            "a-2p53-double",
            "l-2p53-double",
            "k-2p53-plus-1-int",
            "z-2p53-plus-1-int",
            "m-2p53-plus-2-double",
            "n-max-minus-1",
            "a-max-int",
            "z-max-int",
            "a-two63-double",
            "b-two63-double",
            "g-inf",
        ]
    );

    // Strings compare by their first 1,499 UTF-8 bytes, a cut inside a character moving on to
    // its end. A longer value sorts after a whole value with the same kept bytes; cut values
    // with the same kept bytes tie, and ties go by document name. Names are chosen so that
    // comparing 1,500 bytes, ignoring the cut, or cutting inside characters would give another
    // order.
    let p = |n: usize, tail: &str| value(StringValue(format!("{}{tail}", "p".repeat(n))));
    let strings = check_order(
        db,
        "strings",
        vec![
            ("y", p(1499, "a")),
            ("x", p(1499, "b")),
            ("w", p(1499, "")),
            ("v", p(1499, "a")),
            ("g", p(1499, "é")),
            ("h", p(1499, "è")),
            ("t", p(1498, "é")),
            ("u", p(1498, "è")),
            ("s", p(1498, "")),
            ("e", value(StringValue("é".into()))),
            ("f", value(StringValue("z".into()))),
            ("z", value(StringValue(String::new()))),
            // 4-byte characters across the cut: kept whole, so these differ...
            ("r2", value(StringValue(format!("{}x😀", "p".repeat(1497))))),
            ("r1", value(StringValue(format!("{}x😁", "p".repeat(1497))))),
            // ...and what follows them is cut off, so these tie.
            ("q1", value(StringValue(format!("{}😀b", "é".repeat(748))))),
            ("q2", value(StringValue(format!("{}😀a", "é".repeat(748))))),
        ],
    )
    .await;
    assert_eq!(
        strings,
        [
            "z", "s", "w", "g", "h", "v", "x", "y", "u", "t", "r2", "r1", "f", "e", "q1", "q2"
        ]
    );

    let bytes = check_order(
        db,
        "bytes",
        vec![
            ("a", value(BytesValue([vec![7; 1500], vec![9]].concat()))),
            ("b", value(BytesValue([vec![7; 1500], vec![1]].concat()))),
            ("c", value(BytesValue(vec![7; 1499]))),
            ("d", value(BytesValue(vec![8]))),
            ("e", value(BytesValue([vec![7; 1499], vec![9]].concat()))),
            ("f", value(BytesValue([vec![7; 1499], vec![1]].concat()))),
            ("z", value(BytesValue(vec![7; 1500]))),
        ],
    )
    .await;
    // Bytes keep 1,500 bytes, one more than strings, with the same rule past them.
    assert_eq!(bytes, ["c", "f", "z", "a", "b", "e", "d"]);
}

#[tokio::test]
async fn names_order_as_the_server_orders_them() {
    let test = test_db("server-names").await;
    let db = &test.db;
    let ids = [
        "__id10__",
        "__id2__",
        "__id-3__",
        "__id9223372036854775807__",
        "a",
        "B",
        "a-b",
        "é",
        "_",
        "0",
        "10",
        "9",
    ];
    for id in ids {
        write_raw(db, "names", id, value(ValueType::IntegerValue(1))).await;
    }
    let server = server_order(db, "names").await;
    assert_eq!(
        server,
        [
            "__id-3__",
            "__id2__",
            "__id10__",
            "__id9223372036854775807__",
            "0",
            "10",
            "9",
            "B",
            "_",
            "a",
            "a-b",
            "é"
        ]
    );
    let prefix = format!("{}/names/", db.get_documents_path());
    let mut client: Vec<String> = ids.iter().map(|id| format!("{prefix}{id}")).collect();
    client.sort_by(|a, b| compare_references(a, b));
    let client: Vec<String> = client
        .iter()
        .map(|n| n[prefix.len()..].to_owned())
        .collect();
    assert_eq!(client, server);
    assert_eq!(compare_references("c/a", "c/a-b"), Ordering::Less);
}

/// Ids of the form `__id<N>__` are legacy numeric ids (from Datastore); the emulator accepts
/// them, every other `__…__` id is reserved. sharded's own check agrees, id by id, so a
/// document imported with a numeric id can be updated through sharded.
#[tokio::test]
async fn only_numeric_reserved_ids_are_accepted() {
    let test = test_db("server-ids").await;
    let db = &test.db;
    for (id, accepted) in [
        ("__id5__", true),
        ("__id-3__", true),
        ("__x__", false),
        ("__id__", false),
        ("__idx__", false),
        ("__id5x__", false),
    ] {
        let name = format!("{}/ids/{id}", db.get_documents_path());
        let result = db
            .fluent()
            .update()
            .in_col("ids")
            .document(Document {
                name,
                fields: [("v".to_owned(), value(ValueType::IntegerValue(1)))].into(),
                ..Default::default()
            })
            .execute()
            .await;
        assert_eq!(result.is_ok(), accepted, "{id}: {result:?}");
        assert_eq!(
            sharded_runtime::writes::check_document_id(id).is_ok(),
            accepted,
            "{id}: sharded's check disagrees with the server"
        );
    }
    let tick = sharded_tests::models::Tick {
        venue: "XNAS".into(),
        at: sharded_examples::at("2026-11-23T08:00:00Z"),
        seq: 1,
    };
    let ticks = sharded_tests::models::Tick::collection(db);
    ticks.upsert("__id42__", &tick).await.unwrap();
    assert_eq!(ticks.get("__id42__").await.unwrap(), Some(tick));
}

/// The ids of the `long` collection after `cursor`, ordered by (v, `__name__`) in `direction`.
async fn ids_after(
    db: &FirestoreDb,
    cursor: Vec<FirestoreValue>,
    direction: FirestoreQueryDirection,
) -> Vec<String> {
    let documents: Vec<Document> = db
        .fluent()
        .select()
        .from("long")
        .order(move |o| {
            o.fields([
                o.field("v").direction(direction.clone()),
                o.field("__name__").direction(direction.clone()),
            ])
        })
        .start_at(FirestoreQueryCursor::AfterValue(cursor))
        .query()
        .await
        .unwrap();
    documents
        .iter()
        .map(|d| d.name.rsplit('/').next().unwrap().to_owned())
        .collect()
}

/// A cursor at a value longer than 1,499 bytes works, and compares as the value cut to 1,499
/// bytes (see above); a filter value longer than that is refused ("too large to be used in a query"),
/// so sharded refuses such a query before sending it.
#[tokio::test]
async fn long_strings_work_in_cursors_and_are_refused_in_filters() {
    let test = test_db("server-long").await;
    let db = &test.db;
    let long = |tail: &str| ValueType::StringValue(format!("{}{tail}", "p".repeat(1499)));
    for (id, tail) in [("a", "éz"), ("b", "èa"), ("c", "q"), ("d", "")] {
        write_raw(db, "long", id, value(long(tail))).await;
    }
    let after = |v: ValueType, id: &str| {
        vec![
            FirestoreValue::from(value(v)),
            FirestoreValue::from(value(ValueType::ReferenceValue(format!(
                "{}/long/{id}",
                db.get_documents_path()
            )))),
        ]
    };
    // `a`, `b` and `c` are cut to the same 1,499 bytes and tie; `d` is those bytes whole and
    // sorts before them. Descending, after (any of the tied values, `b`): `a`, then `d`.
    for (cursor_tail, expected) in [("éz", ["a", "d"]), ("q", ["a", "d"])] {
        let cursor = after(long(cursor_tail), "b");
        let ids = ids_after(db, cursor, FirestoreQueryDirection::Descending).await;
        assert_eq!(ids, expected, "descending after ({cursor_tail:?}, b)");
    }
    // Ascending, after (tie, `a`): `b` and `c`, the rest of the tie.
    for cursor in [after(long("éz"), "a"), after(long("èa"), "a")] {
        let ids = ids_after(db, cursor, FirestoreQueryDirection::Ascending).await;
        assert_eq!(ids, ["b", "c"]);
    }
    let matching = |field: &'static str, v: String| async move {
        db.fluent()
            .select()
            .from("long")
            .filter(move |q| q.field(field).greater_than_or_equal(v.clone()))
            .query()
            .await
            .map(|documents| documents.len())
    };
    // The longest value a filter takes is 1,499 bytes, whatever the field's name.
    assert_eq!(matching("v", "p".repeat(1499)).await.unwrap(), 4);
    let long_name = "a_field_name_of_forty_bytes_or_so_abcdef";
    assert_eq!(matching(long_name, "p".repeat(1499)).await.unwrap(), 0);
    let too_long = matching("v", "p".repeat(1500)).await.unwrap_err();
    assert!(
        too_long
            .to_string()
            .contains("too large to be used in a query"),
        "{too_long}"
    );
    // A bytes filter value may be one byte longer, as bytes keep one byte more.
    let bytes = |n: usize| async move {
        let v = FirestoreValue::from(value(ValueType::BytesValue(vec![7; n])));
        db.fluent()
            .select()
            .from("long")
            .filter(move |q| q.field("v").greater_than_or_equal(v.clone()))
            .query()
            .await
    };
    assert!(bytes(1500).await.is_ok());
    assert!(bytes(1501).await.is_err());
}

/// A string longer than 1,499 bytes that the server compares whole (a character across byte
/// 1,499 ends it) is refused as a cursor value; a longer string, which it cuts, is taken.
#[tokio::test]
async fn whole_strings_over_1499_bytes_are_refused_in_cursors() {
    use sharded_runtime::__private::usable_in_cursor;
    let test = test_db("server-cursor-values").await;
    let db = &test.db;
    write_raw(db, "c", "x", value(ValueType::StringValue("a".into()))).await;
    let name = format!("{}/c/x", db.get_documents_path());
    for (v, taken) in [
        ("p".repeat(1499), true),
        ("p".repeat(1500), true),
        ("p".repeat(2000), true),
        (format!("{}éz", "p".repeat(1499)), true),
        (format!("{}é", "p".repeat(1498)), false),
        (format!("{}éy", "p".repeat(1498)), true),
        (format!("{}😀", "é".repeat(748)), false),
        (format!("{}😀x", "é".repeat(748)), true),
    ] {
        let v = value(ValueType::StringValue(v));
        let cursor = vec![
            FirestoreValue::from(v.clone()),
            FirestoreValue::from(value(ValueType::ReferenceValue(name.clone()))),
        ];
        let result: Result<Vec<Document>, _> = db
            .fluent()
            .select()
            .from("c")
            .order(|o| o.fields([o.field("v").ascending(), o.field("__name__").ascending()]))
            .start_at(FirestoreQueryCursor::AfterValue(cursor))
            .query()
            .await;
        match &result {
            Ok(_) => assert!(taken, "{v:?} was taken"),
            Err(error) => assert!(
                !taken && error.to_string().contains("the cursor value is too large"),
                "{error}"
            ),
        }
        assert_eq!(usable_in_cursor(&v), taken);
    }
}

/// Which cursor values the server takes, per type and per place in the cursor, each case
/// beside what `usable_in_cursor` (what every sharded read checks before building a cursor)
/// says: a whole string past 1,499 bytes is refused as the order field's value and as a
/// second value (a range-filtered field's, with and without an inequality on it), starting
/// after and before, in both directions; so is an array holding one; a bytes value of any
/// length and a long reference are taken.
#[tokio::test]
async fn cursor_values_the_server_refuses_by_type_and_place() {
    use sharded_runtime::__private::usable_in_cursor;
    use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::ArrayValue;
    let test = test_db("server-cursor-places").await;
    let db = &test.db;
    write_raw(db, "c", "x", value(ValueType::StringValue("a".into()))).await;
    let name = format!("{}/c/x", db.get_documents_path());
    let whole = value(ValueType::StringValue(format!("{}é", "p".repeat(1498))));
    let values = [
        (whole.clone(), false),
        (value(ValueType::StringValue("p".repeat(1499))), true),
        (value(ValueType::BytesValue(vec![7u8; 1501])), true),
        (value(ValueType::BytesValue(vec![7u8; 3000])), true),
        (
            value(ValueType::ArrayValue(ArrayValue {
                values: vec![whole.clone()],
            })),
            false,
        ),
        (
            value(ValueType::ReferenceValue(format!(
                "{}/c/{}",
                db.get_documents_path(),
                "r".repeat(1400)
            ))),
            true,
        ),
    ];
    let reference = FirestoreValue::from(value(ValueType::ReferenceValue(name.clone())));
    for (v, taken) in values {
        assert_eq!(usable_in_cursor(&v), taken, "{v:?}");
        for second in [false, true] {
            for inequality in [false, true] {
                for ascending in [false, true] {
                    for after in [false, true] {
                        let mut cursor = Vec::new();
                        if second {
                            cursor.push(FirestoreValue::from(value(ValueType::IntegerValue(1))));
                        }
                        cursor.extend([FirestoreValue::from(v.clone()), reference.clone()]);
                        let query = db.fluent().select().from("c");
                        let query = match inequality {
                            true => query.filter(|q| q.for_all([q.field("v").not_equal("")])),
                            false => query,
                        };
                        let direction = match ascending {
                            true => FirestoreQueryDirection::Ascending,
                            false => FirestoreQueryDirection::Descending,
                        };
                        let fields: &[&str] = if second {
                            &["at", "v", "__name__"]
                        } else {
                            &["v", "__name__"]
                        };
                        let query = query.order(|o| {
                            o.fields(
                                fields
                                    .iter()
                                    .map(|f| o.field(*f).direction(direction.clone())),
                            )
                        });
                        let cursor = match after {
                            true => FirestoreQueryCursor::AfterValue(cursor),
                            false => FirestoreQueryCursor::BeforeValue(cursor),
                        };
                        let result: Result<Vec<Document>, _> =
                            query.start_at(cursor).limit(1).query().await;
                        let case = format!(
                            "second {second}, inequality {inequality}, ascending {ascending}, after {after}"
                        );
                        match &result {
                            Ok(_) => assert!(taken, "{case}: taken"),
                            Err(error) => assert!(
                                !taken
                                    && error.to_string().contains("the cursor value is too large"),
                                "{case}: {error}"
                            ),
                        }
                    }
                }
            }
        }
    }
}
