//! Shard values a type declares `retired(...)`: a rebalance moved every document out of them,
//! so queries read the current set only. Neither the derive nor the build can see the
//! database, so the proof that the rebalance ran is taken where the documents are: before a
//! process reads a scope (a collection, one parent's, or the group), one query per 30
//! retired values (`shard in [...] ORDER BY order field LIMIT 1`, which the whole-collection
//! index serves) looks for a document that still holds one. Finding one fails the read with
//! [`Error::NotRebalanced`].
//!
//! Finding none is remembered for [`RECHECK_AFTER`], in a memo of at most [`REMEMBERED`]
//! scopes (the oldest forgotten first), so that a chat with millions of rooms neither grows
//! it without bound nor pays a query per room: for a type that declares `collection_group`,
//! one check of the whole group covers every parent (and the group's top-level collection),
//! and only while the group still holds a retired value is each parent checked on its own.
//!
//! What catches a stale writer (a process still on the type before `retired(...)`, drawing a
//! retired value) after a scope was found clean: the next check of that scope, at most
//! [`RECHECK_AFTER`] later, fails reads with [`Error::NotRebalanced`] naming its document;
//! until then that document is missing from the scope's results. `verify()` counts such
//! documents at any time, and `rebalance()` moves them.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

use firestore::gcloud_sdk::google::firestore::v1::Document;
use firestore::{
    FirestoreDb, FirestoreQueryDirection, FirestoreQueryFilter, FirestoreQueryFilterCompare,
    FirestoreQueryFilterComposite, FirestoreQueryFilterCompositeOperator, FirestoreValue,
};
use sharded_indexes::Direction;

use crate::error::{Error, Result};
use crate::model::handle::Scope;
use crate::model::sharded::Sharded;
use crate::model::stored::shard_value;
use crate::wire::retry::Backoff;

/// How long a scope found clean of retired values is taken as clean before it is checked
/// again: the longest a stale writer's document can be missing from results unnoticed.
pub(crate) const RECHECK_AFTER: Duration = Duration::from_secs(10 * 60);

/// The most scopes a process remembers as clean; past it, the oldest is forgotten (and
/// checked again when next read).
pub(crate) const REMEMBERED: usize = 4_096;

/// The scopes (with their retired values) checked and found clean in this process, and when.
static CLEAN: LazyLock<Mutex<Memo>> = LazyLock::new(Mutex::default);

/// Scopes found clean, bounded in number and age.
#[derive(Debug, Default)]
struct Memo {
    checked: HashMap<String, Instant>,
}

impl Memo {
    fn is_clean(&self, key: &str, now: Instant) -> bool {
        self.checked
            .get(key)
            .is_some_and(|at| now.saturating_duration_since(*at) < RECHECK_AFTER)
    }

    fn remember(&mut self, key: String, now: Instant) {
        if self.checked.len() >= REMEMBERED && !self.checked.contains_key(&key) {
            self.checked
                .retain(|_, at| now.saturating_duration_since(*at) < RECHECK_AFTER);
            if self.checked.len() >= REMEMBERED
                && let Some(oldest) = self
                    .checked
                    .iter()
                    .min_by_key(|(_, at)| **at)
                    .map(|(key, _)| key.clone())
            {
                self.checked.remove(&oldest);
            }
        }
        self.checked.insert(key, now);
    }
}

/// Fails with [`Error::NotRebalanced`] if a document in `scope` holds one of `T`'s retired
/// values; reads the database only when the scope (or, for a collection-group type, the
/// whole group) was not found clean in the last [`RECHECK_AFTER`].
pub(crate) async fn check<T: Sharded>(db: &FirestoreDb, scope: &Scope) -> Result<()> {
    if T::RETIRED_SHARD_VALUES.is_empty() {
        return Ok(());
    }
    if T::DESCRIPTION.collection_group && *scope != Scope::Group {
        // The group holds every parent's collection: clean, it covers this one.
        if check_scope::<T>(db, &Scope::Group).await.is_ok() {
            return Ok(());
        }
    }
    check_scope::<T>(db, scope).await
}

/// [`check`] of `scope` alone.
async fn check_scope<T: Sharded>(db: &FirestoreDb, scope: &Scope) -> Result<()> {
    let key = format!(
        "{}{}/{}\n{}",
        if *scope == Scope::Group { "group:" } else { "" },
        scope.parent_path(db),
        T::COLLECTION,
        T::RETIRED_SHARD_VALUES.join("\n")
    );
    if clean().is_clean(&key, Instant::now()) {
        return Ok(());
    }
    let backoff = Backoff::default();
    for chunk in T::RETIRED_SHARD_VALUES.chunks(crate::query::MAX_DISJUNCTIONS) {
        if let Some(document) = holding::<T>(db, scope, chunk, 1, None, &backoff)
            .await?
            .first()
        {
            return Err(Error::NotRebalanced {
                collection: T::COLLECTION,
                document: document.name.clone(),
                value: shard_value::<T>(document).unwrap_or_default().to_owned(),
            });
        }
    }
    clean().remember(key, Instant::now());
    Ok(())
}

/// Up to `limit` documents of `scope` holding one of `values` (at most 30), with only the
/// shard field, first in the order field's order: `shard in [values] ORDER BY order field`,
/// the query the whole-collection index serves, so it reads only such documents. `ids`
/// (bounds on `__name__`, which that index ends with) keeps it to a job's part. Reads are
/// retried with `backoff`.
pub(crate) async fn holding<T: Sharded>(
    db: &FirestoreDb,
    scope: &Scope,
    values: &[&'static str],
    limit: u32,
    ids: Option<FirestoreQueryFilter>,
    backoff: &Backoff,
) -> Result<Vec<Document>> {
    let shard = FirestoreQueryFilter::Compare(Some(FirestoreQueryFilterCompare::In(
        T::SHARD_FIELD_PATH.to_owned(),
        <FirestoreValue as From<Vec<&str>>>::from(values.to_vec()),
    )));
    let filter = match ids {
        Some(ids) => FirestoreQueryFilter::Composite(FirestoreQueryFilterComposite::new(
            vec![shard, ids],
            FirestoreQueryFilterCompositeOperator::And,
        )),
        None => shard,
    };
    let direction = match T::ORDER_DIRECTION {
        Direction::Ascending => FirestoreQueryDirection::Ascending,
        Direction::Descending => FirestoreQueryDirection::Descending,
    };
    crate::wire::retry::retry_reads(backoff, || {
        let (filter, direction) = (filter.clone(), direction.clone());
        scope
            .select(
                db,
                db.fluent()
                    .select()
                    .fields([T::SHARD_FIELD_PATH])
                    .from(T::COLLECTION),
            )
            .filter(move |_| Some(filter.clone()))
            .order(move |o| o.fields([o.field(T::ORDER_FIELD).direction(direction.clone())]))
            .limit(limit)
            .query()
    })
    .await
}

fn clean() -> std::sync::MutexGuard<'static, Memo> {
    // Every change under the lock leaves a correct memo, so a poisoned one is still correct.
    CLEAN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Clean scopes are forgotten after `RECHECK_AFTER`, and the memo never holds more than
    /// `REMEMBERED`: the expired go first, then the oldest.
    #[test]
    fn the_memo_is_bounded_in_size_and_age() {
        let start = Instant::now();
        let mut memo = Memo::default();
        memo.remember("a".into(), start);
        assert!(memo.is_clean("a", start + RECHECK_AFTER - Duration::from_secs(1)));
        assert!(!memo.is_clean("a", start + RECHECK_AFTER));
        assert!(!memo.is_clean("b", start));
        let mut memo = Memo::default();
        for i in 0..REMEMBERED * 3 {
            let at = start + Duration::from_millis(i as u64);
            memo.remember(format!("room{i}"), at);
            assert!(memo.checked.len() <= REMEMBERED);
            assert!(memo.is_clean(&format!("room{i}"), at));
        }
        let last = start + Duration::from_millis(REMEMBERED as u64 * 3 - 1);
        assert!(memo.is_clean(&format!("room{}", REMEMBERED * 3 - 1), last));
        assert!(!memo.is_clean("room0", last), "the oldest is forgotten");
        // Remembering a key again refreshes it without evicting anyone.
        let len = memo.checked.len();
        memo.remember(format!("room{}", REMEMBERED * 3 - 1), last);
        assert_eq!(memo.checked.len(), len);
        // Expired entries go before live ones.
        let later = last + RECHECK_AFTER;
        memo.remember("fresh".into(), later);
        assert_eq!(memo.checked.len(), 1);
    }
}
