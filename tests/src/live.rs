//! The listener tests' model and checks: readings written by random concurrent writers while a
//! live query collects snapshots, and what every snapshot must satisfy.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{
    Sharded, ShardedQuery, Stored, WholeCollection,
    indexes::Direction,
    listen::{ChangeKind, QuerySnapshot},
    reads::query_id,
};

/// A readings type (`venue`, `at`, `seq`) with its `Reading` impl: declared with the given
/// `#[sharded(...)]` attributes, or with a shard count, a direction and a collection.
#[macro_export]
macro_rules! live_readings {
    ($(#[$attr:meta])* $name:ident) => {
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, sharded_runtime::Sharded)]
        $(#[$attr])*
        pub struct $name {
            #[sharded(index)]
            pub venue: String,
            pub at: i64,
            pub seq: i64,
        }

        impl $crate::live::Reading for $name {
            fn new(venue: &str, at: i64, seq: i64) -> Self {
                $name {
                    venue: venue.to_owned(),
                    at,
                    seq,
                }
            }
            fn at(&self) -> i64 {
                self.at
            }
            fn all() -> sharded_runtime::WholeCollection<Self> {
                $name::query().all()
            }
            fn venue(
                venue: &str,
            ) -> sharded_runtime::ShardedQuery<Self, { sharded_runtime::reads::query_id("venue") }> {
                $name::query().venue(venue)
            }
        }
    };
    ($name:ident, $shards:literal, $direction:literal, $collection:literal) => {
        $crate::live_readings!(
            #[sharded(shards = $shards, order_by = "at", direction = $direction, collection = $collection)]
            $name
        );
    };
}

pub trait Reading:
    Sharded<OrderValue = i64> + sharded_runtime::bounds::TopLevel + Clone + PartialEq + std::fmt::Debug
{
    fn new(venue: &str, at: i64, seq: i64) -> Self;
    fn at(&self) -> i64;
    fn all() -> WholeCollection<Self>;
    fn venue(venue: &str) -> ShardedQuery<Self, { query_id("venue") }>;
}

crate::live_readings!(Three, 3, "desc", "live3");
crate::live_readings!(SixtyFour, 64, "asc", "live64");

pub const VENUES: [&str; 2] = ["XNAS", "XLON"];

/// Each writer's operations on ids `0..ids`: overwrites with a new `at` (and a new shard),
/// deletes, and creates.
pub async fn write_randomly<T: Reading>(db: FirestoreDb, seed: u64, ids: u32, ops: u32) {
    let mut rng = StdRng::seed_from_u64(seed);
    let collection = T::collection(&db);
    for seq in 0..ops {
        let id = format!("r{}", rng.random_range(0..ids));
        let delete = rng.random_bool(0.2);
        let venue = VENUES[rng.random_range(0..VENUES.len())];
        let reading = T::new(venue, rng.random_range(0..50), seq as i64);
        // Writers on the same ids contend, and the emulator may abort a write for it: retry.
        let mut attempts = 0;
        loop {
            let written = match delete {
                true => collection.delete(&id).await,
                false => collection.upsert(&id, &reading).await.map(drop),
            };
            match written {
                Ok(()) => break,
                Err(error) if attempts < 5 => {
                    attempts += 1;
                    eprintln!("writer retries {id}: {error}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(error) => panic!("{id}: {error}"),
            }
        }
    }
}

/// What a snapshot shows of each document: id and value.
pub fn shown<T: Clone, S: std::borrow::Borrow<Stored<T>>>(documents: &[S]) -> Vec<(String, T)> {
    documents
        .iter()
        .map(|stored| {
            let stored = stored.borrow();
            (stored.id.clone(), stored.document.clone())
        })
        .collect()
}

/// `previous` with `snapshot.changes` applied as documented, one after the other as the
/// SDKs' `docChanges()`: each change removes at its old index (checking that the document
/// there is the one it names, as it was) and inserts its document at its new index.
pub fn apply_changes<T: Clone + PartialEq + std::fmt::Debug>(
    previous: &[Arc<Stored<T>>],
    snapshot: &QuerySnapshot<T>,
) -> Vec<Arc<Stored<T>>> {
    let mut list = previous.to_vec();
    for change in &snapshot.changes {
        if let Some(old) = change.old_index {
            let gone = list.remove(old);
            assert_eq!(
                gone.id, change.document.id,
                "a change removes another document"
            );
            if change.kind == ChangeKind::Removed {
                assert_eq!(
                    gone, change.document,
                    "a removal carries the document as it was"
                );
            }
        }
        if let Some(new) = change.new_index {
            list.insert(new, change.document.clone());
        }
    }
    list
}

/// Checks every snapshot against its predecessor and its own invariants, in the type's
/// direction.
pub fn check_snapshots<T: Reading>(snapshots: &[QuerySnapshot<T>], limit: Option<usize>) {
    check_snapshots_in::<T>(snapshots, limit, false);
}

/// [`check_snapshots`] for a query in the type's direction or, `reversed`, the other.
pub fn check_snapshots_in<T: Reading>(
    snapshots: &[QuerySnapshot<T>],
    limit: Option<usize>,
    reversed: bool,
) {
    assert!(!snapshots.is_empty());
    let mut previous: Vec<Arc<Stored<T>>> = Vec::new();
    for (n, snapshot) in snapshots.iter().enumerate() {
        let ids: HashSet<&str> = snapshot.documents.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(
            ids.len(),
            snapshot.documents.len(),
            "a duplicate in snapshot {n}"
        );
        let mut keys: Vec<(i64, &str)> = snapshot
            .documents
            .iter()
            .map(|s| (s.document.at(), s.id.as_str()))
            .collect();
        if (T::DESCRIPTION.direction == Direction::Descending) != reversed {
            keys.reverse();
        }
        assert!(keys.is_sorted(), "snapshot {n} is out of order: {keys:?}");
        if let Some(limit) = limit {
            assert!(snapshot.documents.len() <= limit);
        }
        for change in &snapshot.changes {
            assert_eq!(
                change.old_index.is_none(),
                change.kind == ChangeKind::Added,
                "snapshot {n}: {change:?}"
            );
            assert_eq!(
                change.new_index.is_none(),
                change.kind == ChangeKind::Removed,
                "snapshot {n}: {change:?}"
            );
        }
        if n == 0 {
            assert!(snapshot.changes.iter().all(|c| c.kind == ChangeKind::Added));
        } else {
            assert!(!snapshot.changes.is_empty(), "snapshot {n} changes nothing");
            assert!(snapshot.read_time >= snapshots[n - 1].read_time);
        }
        assert_eq!(
            apply_changes(&previous, snapshot),
            snapshot.documents,
            "the changes of snapshot {n} do not turn the previous one into it"
        );
        previous = snapshot.documents.clone();
    }
}

/// Listens to `query` on `listener_db` while writers change the collection through `db`;
/// then waits for the listener to show what `fetch` returns, and checks every snapshot.
/// Returns how many snapshots arrived.
pub async fn listen_while_writing<
    T: Reading,
    const Q: u64,
    R: sharded_runtime::bounds::Reach,
    W: sharded_runtime::bounds::Window,
>(
    db: &FirestoreDb,
    listener_db: &FirestoreDb,
    query: ShardedQuery<T, Q, R, W>,
    limit: Option<usize>,
    seed: u64,
) -> usize {
    // Some documents before the listener starts, so its first snapshot has content.
    write_randomly::<T>(db.clone(), seed, 30, 40).await;
    let snapshots: Arc<Mutex<Vec<QuerySnapshot<T>>>> = Arc::default();
    let mut stream = query.listen(listener_db).expect("a valid query");
    let collected = snapshots.clone();
    let listening = tokio::spawn(async move {
        while let Some(snapshot) = stream.next().await {
            collected
                .lock()
                .unwrap()
                .push(snapshot.expect("no listen error"));
        }
    });
    // The writes start once the first snapshot is in, so every one of them is a change.
    for _ in 0..600 {
        if !snapshots.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!snapshots.lock().unwrap().is_empty(), "no first snapshot");
    let writers: Vec<_> = (0..3)
        .map(|w| tokio::spawn(write_randomly::<T>(db.clone(), seed * 10 + w, 30, 60)))
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    let expected = shown(&query.fetch_stored(db).await.unwrap());
    let mut settled = false;
    for _ in 0..600 {
        let last = snapshots
            .lock()
            .unwrap()
            .last()
            .map(|s| shown(&s.documents));
        if last.as_ref() == Some(&expected) {
            settled = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    listening.abort();
    let snapshots = snapshots.lock().unwrap();
    assert!(
        settled,
        "the last snapshot never equalled fetch(): {:?} vs {expected:?}",
        snapshots.last().map(|s| shown(&s.documents))
    );
    check_snapshots_in(&snapshots, limit, R::REVERSED);
    snapshots.len()
}

/// A live counter's stream, as `listen_counter` returns it.
pub type LiveCounter = futures::stream::BoxStream<
    'static,
    sharded_runtime::Result<sharded_runtime::counters::CounterSnapshot>,
>;

/// A live counter's next value, within 30 s.
pub async fn next_counter_value(
    live: &mut LiveCounter,
) -> sharded_runtime::counters::CounterSnapshot {
    tokio::time::timeout(Duration::from_secs(30), live.next())
        .await
        .expect("a value within 30 s")
        .expect("the stream goes on")
        .unwrap()
}
