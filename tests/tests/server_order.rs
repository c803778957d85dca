//! How the Firestore emulator itself orders values, measured: the client-side merge of chunk
//! queries (`compare_values`) must agree with every one of these. Each case writes documents
//! with raw values into an unsharded collection, asks the server for them ordered by
//! (value, `__name__`), and compares that order with the merge's comparator.

use std::cmp::Ordering;

use sharded_runtime::__private::{compare_references, compare_values};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    Document, Value, value::ValueType,
};
use sharded_runtime::firestore::{FirestoreDb, FirestoreQueryCursor, FirestoreValue};
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

    // Strings compare by UTF-8 bytes, but only their first 1,500 bytes: values equal there
    // tie, and ties go by document name.
    let prefix = "p".repeat(1500);
    let strings = check_order(
        db,
        "strings",
        vec![
            ("a", value(StringValue(format!("{prefix}z")))),
            ("b", value(StringValue(format!("{prefix}a")))),
            ("c", value(StringValue(prefix.clone()))),
            ("d", value(StringValue("p".repeat(1499)))),
            ("e", value(StringValue("é".into()))),
            ("f", value(StringValue("z".into()))),
            // A multi-byte character across the 1,500-byte boundary.
            ("g", value(StringValue(format!("{}é", "p".repeat(1499))))),
            // Cut inside the same character as `g`: equal in the first 1,500 bytes.
            ("h", value(StringValue(format!("{}è", "p".repeat(1499))))),
        ],
    )
    .await;
    assert_eq!(strings, ["d", "a", "b", "c", "g", "h", "f", "e"]);

    let bytes = check_order(
        db,
        "bytes",
        vec![
            ("a", value(BytesValue([vec![7; 1500], vec![9]].concat()))),
            ("b", value(BytesValue([vec![7; 1500], vec![1]].concat()))),
            ("c", value(BytesValue(vec![7; 1499]))),
            ("d", value(BytesValue(vec![8]))),
        ],
    )
    .await;
    assert_eq!(bytes, ["c", "a", "b", "d"]);
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
/// them, every other `__…__` id is reserved. sharded's own writes refuse all of them.
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
    }
}

/// A cursor at a value longer than 1,500 bytes works, and compares by the value's first
/// 1,500 bytes; a filter value longer than that is refused ("too large to be used in a query"),
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
    // Descending, after (a value tying with `a` and `b`, `b`): `a`, then `c` and `d` should
    // follow, but the emulator skips `c` (a value of exactly 1,500 bytes); after `c`'s own
    // value it even returns `a`, which sorts before the cursor. So sharded refuses cursors at
    // values over 1,499 bytes instead of trusting them.
    for (cursor_tail, expected) in [("éz", ["a", "d"]), ("q", ["a", "d"])] {
        let cursor = after(long(cursor_tail), "b");
        let documents: Vec<Document> = db
            .fluent()
            .select()
            .from("long")
            .order(move |o| o.fields([o.field("v").descending(), o.field("__name__").descending()]))
            .start_at(FirestoreQueryCursor::AfterValue(cursor))
            .query()
            .await
            .unwrap();
        let ids: Vec<&str> = documents
            .iter()
            .map(|d| d.name.rsplit('/').next().unwrap())
            .collect();
        assert_eq!(ids, expected, "descending after ({cursor_tail:?}, b)");
    }
    // `a` and `b` tie in their first 1,500 bytes, so both cursors sit at (tie, `a`).
    for cursor in [after(long("éz"), "a"), after(long("èa"), "a")] {
        let documents: Vec<Document> = db
            .fluent()
            .select()
            .from("long")
            .order(|o| o.fields([o.field("v").ascending(), o.field("__name__").ascending()]))
            .start_at(FirestoreQueryCursor::AfterValue(cursor))
            .query()
            .await
            .unwrap();
        let ids: Vec<&str> = documents
            .iter()
            .map(|d| d.name.rsplit('/').next().unwrap())
            .collect();
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
}
