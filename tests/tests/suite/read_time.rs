//! Reads at a point in time (Firestore's `read_time`): a client pinned with the firestore
//! crate's `clone_with_consistency_selector(ReadTime(t))` makes every chunk query of a fetch,
//! a page, a count, a sum, a stream and a `get_many` read that moment: one snapshot across
//! chunks (no transaction of the library's own), the unsharded query's answer at `t`, however
//! the documents moved between chunks since. A live query reads the present, so a pinned
//! client cannot listen: `Error::InvalidQuery`, nothing sent.

use std::collections::BTreeMap;

use futures::TryStreamExt as _;
use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::{FirestoreConsistencySelector, FirestoreDb, FirestoreTimestamp};
use sharded_runtime::{Error, Sharded};
use sharded_tests::test_db;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 40, order_by = "at", collection = "rt_readings")]
struct Reading {
    #[sharded(index)]
    device: String,
    #[sharded(aggregate)]
    value: i64,
    at: FirestoreTimestamp,
}

fn reading(i: i64, value: i64) -> Reading {
    Reading {
        device: format!("d{}", i % 3),
        value,
        at: FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(1_700_000_000 + i % 17)
                .unwrap(),
        ),
    }
}

/// The ids of `documents` in the query's order: `at` descending, then id descending.
fn in_order(documents: &BTreeMap<String, Reading>, keep: impl Fn(&Reading) -> bool) -> Vec<String> {
    let mut ids: Vec<(&FirestoreTimestamp, &String)> = documents
        .iter()
        .filter(|(_, r)| keep(r))
        .map(|(id, r)| (&r.at, id))
        .collect();
    ids.sort_by(|a, b| (b.0.0, b.1).cmp(&(a.0.0, a.1)));
    ids.into_iter().map(|(_, id)| id.clone()).collect()
}

fn pinned(db: &FirestoreDb, at: std::time::SystemTime) -> FirestoreDb {
    let at = sharded_runtime::firestore::jiff::Timestamp::try_from(at).unwrap();
    db.clone_with_consistency_selector(FirestoreConsistencySelector::ReadTime(at))
}

#[tokio::test]
async fn every_read_of_a_pinned_client_is_the_unsharded_answer_at_its_read_time() {
    let test = test_db("read-time").await;
    let db = &test.db;
    let readings = Reading::collection(db);
    let mut then = BTreeMap::new();
    let mut last = None;
    for i in 0..60 {
        let id = format!("r{i:02}");
        let value = reading(i, i * 7 % 11 - 3);
        last = Some(readings.upsert(&id, &value).await.unwrap().update_time);
        then.insert(id, value);
    }
    let at = last.unwrap();
    // Afterwards: deletes, rewrites (each draws a new shard, so documents move between the
    // two chunk queries), and new documents.
    for i in 0..20 {
        let id = format!("r{i:02}");
        match i % 3 {
            0 => readings.delete(&id).await.unwrap(),
            _ => drop(readings.upsert(&id, &reading(i + 5, 100)).await.unwrap()),
        }
        readings
            .upsert(&format!("n{i:02}"), &reading(i, 1))
            .await
            .unwrap();
    }
    let past = pinned(db, at);
    let all = Reading::query().all();
    let d1 = Reading::query().device("d1");
    let ids = |items: Vec<sharded_runtime::Stored<Reading>>| -> Vec<String> {
        items.into_iter().map(|s| s.id).collect()
    };

    // Firestore's own unsharded query at the read time: the baseline.
    use sharded_runtime::firestore::path;
    let unsharded: Vec<String> = past
        .fluent()
        .select()
        .from("rt_readings")
        .order(|o| {
            o.fields([
                o.field(path!(Reading::at)).desc(),
                o.field("__name__").desc(),
            ])
        })
        .query()
        .await
        .unwrap()
        .iter()
        .map(|d| sharded_tests::id_of(d).to_owned())
        .collect();
    assert_eq!(unsharded, in_order(&then, |_| true));
    // Fetches and counts, of every document and of one device.
    assert_eq!(
        ids(all.fetch_stored(&past).await.unwrap()),
        in_order(&then, |_| true)
    );
    assert_eq!(
        ids(d1.fetch_stored(&past).await.unwrap()),
        in_order(&then, |r| r.device == "d1")
    );
    assert_eq!(all.count(&past).await.unwrap(), 60);
    assert_ne!(all.count(db).await.unwrap(), 60, "the present differs");
    // Sums.
    let sum: i64 = then.values().map(|r| r.value).sum();
    let summed = all.sum(&past, Reading::aggregates().value).await.unwrap();
    assert_eq!(summed, sharded_runtime::reads::Number::Integer(sum));
    // Pages, each at the read time.
    let mut paged = Vec::new();
    let mut page = all.page(&past, 7).await.unwrap();
    loop {
        paged.extend(page.items.iter().map(|s| s.id.clone()));
        let Some(next) = page.next.clone() else { break };
        page = all.clone().after(next).page(&past, 7).await.unwrap();
    }
    assert_eq!(paged, in_order(&then, |_| true));
    // A stream, its later pages too.
    let streamed: Vec<String> = all
        .stream_in_pages_of(&past, 5)
        .await
        .unwrap()
        .map_ok(|s| s.id)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(streamed, in_order(&then, |_| true));
    // Documents by id, in more than one request: the deleted ones were there, the new ones
    // were not.
    let asked: Vec<String> = then
        .keys()
        .cloned()
        .chain((0..20).map(|i| format!("n{i:02}")))
        .collect();
    let many = Reading::collection(&past).get_many(&asked).await.unwrap();
    let found: Vec<String> = many.found.iter().map(|s| s.id.clone()).collect();
    assert_eq!(found, then.keys().cloned().collect::<Vec<_>>());
    assert_eq!(many.missing.len(), 20);
    // A live query reads the present: refused before anything is sent.
    assert!(matches!(all.listen(&past), Err(Error::InvalidQuery(_))));
}
