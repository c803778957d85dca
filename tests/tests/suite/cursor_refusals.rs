//! Refusing only what Firestore refuses. A page after a cursor whose first document holds a
//! value Firestore takes in no cursor (a whole string past 1,499 bytes, measured in
//! `server_order.rs`) answers as Firestore's own `startAfter` does, `previous` included (its
//! look-up starts at the page's cursor, not at that document); and a count-only `aggregate` of
//! a query filtered on a declared range set answers wherever `count` does.

use serde::{Deserialize, Serialize};
use sharded_runtime::reads::count;
use sharded_runtime::{Error, Sharded};
use sharded_tests::test_db;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "at",
    reversible,
    collection = "long_labels",
    ranges(label, weight)
)]
struct Labeled {
    #[sharded(range)]
    label: String,
    #[sharded(range)]
    weight: i64,
    at: i64,
}

/// 1,500 bytes that Firestore compares whole: a two-byte character across byte 1,499.
fn whole_long_label() -> String {
    format!("{}é", "p".repeat(1498))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_first_document_no_cursor_can_hold_answers_with_its_previous() {
    let test = test_db("cursor-refusals").await;
    let db = &test.db;
    let labeled = Labeled::collection(db);
    for (id, at, label) in [
        ("a", 30, "a".to_owned()),
        ("b", 20, whole_long_label()),
        ("c", 10, "b".to_owned()),
        ("d", 5, "c".to_owned()),
    ] {
        let document = Labeled {
            label,
            weight: at,
            at,
        };
        labeled.upsert(id, &document).await.unwrap();
    }
    let query = Labeled::query()
        .all()
        .filter(Labeled::ranges().label.greater_than(String::new()));
    let first = query.page(db, 1).await.unwrap();
    assert_eq!(first.items[0].document.at, 30);
    let next = first.next.clone().expect("a page follows");
    // The page after it starts at the long label: its `previous` is looked up from the page's
    // own cursor.
    let second = query.clone().after(next.clone()).page(db, 1).await.unwrap();
    assert_eq!(
        second
            .items
            .iter()
            .map(|l| l.document.at)
            .collect::<Vec<_>>(),
        [20]
    );
    assert!(second.previous.is_some(), "the first page precedes it");
    assert!(second.next.is_some(), "the third follows it");
    // The same as a fetch after the cursor, and as the query going back from the cursor.
    let after: Vec<i64> = query
        .clone()
        .after(next)
        .fetch(db)
        .await
        .unwrap()
        .iter()
        .map(|l| l.at)
        .collect();
    assert_eq!(after, [20, 10, 5]);
    // Firestore itself refuses the long label as a cursor value, whatever the query: so does
    // a page that would start after it, and says why.
    match query
        .clone()
        .after(second.next.clone().unwrap())
        .page(db, 1)
        .await
    {
        Err(Error::InvalidCursor(why)) => assert!(why.contains("label"), "{why}"),
        other => panic!("{other:?}"),
    }
    // The page before the third document is the long label's alone: its `next` is looked up
    // from its own cursor (the third document, there still), not from its last document.
    let three = query.page(db, 3).await.unwrap();
    let at_third = three.next.clone().expect("d follows");
    let before = query.clone().before(at_third).page(db, 1).await.unwrap();
    assert_eq!(
        before
            .items
            .iter()
            .map(|l| l.document.at)
            .collect::<Vec<_>>(),
        [20]
    );
    assert!(before.next.is_some(), "the third document follows");
    assert!(before.previous.is_some(), "the first precedes");
    assert!(matches!(
        query
            .clone()
            .before(before.previous.clone().unwrap())
            .page(db, 1)
            .await,
        Err(Error::InvalidCursor(_))
    ));
}

/// A count-only `aggregate` of a query filtered on a declared range set (and on one range
/// field) is the query's count, as `count` answers it; with a sum it stays refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_only_aggregate_answers_wherever_count_does() {
    let test = test_db("count-only-aggregate").await;
    let db = &test.db;
    let labeled = Labeled::collection(db);
    for n in 0..12i64 {
        let document = Labeled {
            label: format!("l{}", n % 4),
            weight: n % 5,
            at: n,
        };
        labeled.upsert(&format!("d{n}"), &document).await.unwrap();
    }
    let ranges = Labeled::ranges();
    let one = Labeled::query()
        .all()
        .filter(ranges.label.greater_than("l0".to_owned()));
    let set = one.clone().filter(ranges.weight.at_least(2));
    for query in [one, set] {
        let counted = query.count(db).await.unwrap();
        let (aggregated,) = query.aggregate(db, (count(),)).await.unwrap();
        assert_eq!(aggregated, counted);
        assert!(counted > 0);
    }
}
