//! `limit_to_last(n)`: the last `n` documents of a query, in its order (Firestore's
//! `limitToLast`), exact across chunk queries, at 3 and 40 shard values: what the unsharded
//! query's last `n` are, computed here from the documents written; its count; and its page,
//! the query's last, whose `previous` walks back to the first.

use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::{Error, Sharded};
use sharded_tests::test_db;

macro_rules! case {
    ($test:ident, $name:ident, $shards:literal, $collection:literal) => {
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", collection = $collection, reversible)]
        struct $name {
            #[sharded(index)]
            device: String,
            at: FirestoreTimestamp,
        }

        #[tokio::test]
        async fn $test() {
            let test = test_db("limit-to-last").await;
            let db = &test.db;
            let collection = $name::collection(db);
            // (at, id): many ties on `at`, so the names decide.
            let mut written: Vec<(i64, String, &str)> = Vec::new();
            for i in 0..60i64 {
                let id = format!("d{:02}", (i * 37) % 60);
                let device = ["a", "b"][(i % 2) as usize];
                let at = FirestoreTimestamp(
                    sharded_runtime::firestore::jiff::Timestamp::from_second(1_700_000_000 + i % 7)
                        .unwrap(),
                );
                collection
                    .upsert(
                        &id,
                        &$name {
                            device: device.into(),
                            at,
                        },
                    )
                    .await
                    .unwrap();
                written.push((1_700_000_000 + i % 7, id, device));
            }
            // The query's order: `at` descending, then the name descending.
            let order = |keep: &dyn Fn(&str) -> bool| -> Vec<String> {
                let mut kept: Vec<&(i64, String, &str)> =
                    written.iter().filter(|w| keep(w.2)).collect();
                kept.sort_by(|x, y| (y.0, &y.1).cmp(&(x.0, &x.1)));
                kept.into_iter().map(|w| w.1.clone()).collect()
            };
            let ids = |items: Vec<sharded_runtime::Stored<$name>>| -> Vec<String> {
                items.into_iter().map(|s| s.id).collect()
            };
            for n in [1u32, 7, 29, 60, 75] {
                let all = order(&|_| true);
                let last = &all[all.len().saturating_sub(n as usize)..];
                let read = $name::query()
                    .all()
                    .limit_to_last(n)
                    .fetch_stored(db)
                    .await
                    .unwrap();
                assert_eq!(ids(read), last, "the last {n}");
                let count = $name::query()
                    .all()
                    .limit_to_last(n)
                    .count(db)
                    .await
                    .unwrap();
                assert_eq!(count as usize, last.len());
                let of_b = order(&|d| d == "b");
                let last_b = &of_b[of_b.len().saturating_sub(n as usize)..];
                let read = $name::query()
                    .device("b")
                    .limit_to_last(n)
                    .fetch_stored(db)
                    .await
                    .unwrap();
                assert_eq!(ids(read), last_b, "the last {n} of device b");
            }
            // Its page is the query's last; `previous` walks back to the first.
            let all = order(&|_| true);
            let mut page = $name::query()
                .all()
                .limit_to_last(9)
                .page(db, 9)
                .await
                .unwrap();
            let mut back: Vec<String> = Vec::new();
            loop {
                let mut seen: Vec<String> = page.items.iter().map(|s| s.id.clone()).collect();
                seen.extend(back);
                back = seen;
                let Some(previous) = page.previous.clone() else {
                    break;
                };
                page = $name::query()
                    .all()
                    .before(previous)
                    .page(db, 9)
                    .await
                    .unwrap();
            }
            assert_eq!(back, all);
            assert!(matches!(
                $name::query().all().limit_to_last(0).fetch(db).await,
                Err(Error::InvalidQuery(_))
            ));
        }
    };
}

case!(the_last_n_at_3_shards, Sample3, 3, "last_samples_3");
case!(the_last_n_at_40_shards, Sample40, 40, "last_samples_40");
