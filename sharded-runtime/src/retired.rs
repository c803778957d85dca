//! Shard values a type declares `retired(...)`: a rebalance moved every document out of them,
//! so queries read the current set only. Neither the derive nor the build can see the
//! database, so the proof that the rebalance ran is taken where the documents are: before a
//! process first reads a scope (a collection, one parent's, or the group), one query per 30
//! retired values (`shard in [...] ORDER BY order field LIMIT 1`, which the whole-collection
//! index serves) looks for a document that still holds one. Finding one fails the read with
//! [`Error::NotRebalanced`]; finding none is remembered for the rest of the process.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

use firestore::FirestoreDb;

use crate::parent::Scope;
use crate::shard_job::ShardJob;
use crate::stored::shard_value;
use crate::{Error, Result, Sharded};

/// The scopes (with their retired values) checked and found clean in this process.
static CLEAN: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Mutex::default);

/// Whether a rebalance moves documents out of `value`: a previous value the current set
/// dropped, or a retired one.
pub(crate) fn moves_out_of<T: Sharded>(value: &str) -> bool {
    !T::SHARD_VALUES.contains(&value)
        && (T::PREVIOUS_SHARD_VALUES.contains(&value) || T::RETIRED_SHARD_VALUES.contains(&value))
}

/// Every value [`moves_out_of`] says a rebalance moves documents out of.
pub(crate) fn moved_out_of<T: Sharded>() -> Vec<&'static str> {
    T::PREVIOUS_SHARD_VALUES
        .iter()
        .chain(T::RETIRED_SHARD_VALUES)
        .copied()
        .filter(|value| moves_out_of::<T>(value))
        .collect()
}

/// Fails with [`Error::NotRebalanced`] if a document in `scope` holds one of `T`'s retired
/// values; reads the database the first time only, per process, scope and retired set.
pub(crate) async fn check<T: Sharded>(db: &FirestoreDb, scope: &Scope) -> Result<()> {
    if T::RETIRED_SHARD_VALUES.is_empty() {
        return Ok(());
    }
    let key = format!(
        "{}{}/{}\n{}",
        if *scope == Scope::Group { "group:" } else { "" },
        scope.parent_path(db),
        T::COLLECTION,
        T::RETIRED_SHARD_VALUES.join("\n")
    );
    if clean().contains(&key) {
        return Ok(());
    }
    let job = ShardJob::<T>::new(db, scope.clone());
    for chunk in T::RETIRED_SHARD_VALUES.chunks(crate::MAX_DISJUNCTIONS) {
        if let Some(document) = job.retired_page(chunk, 1).await?.first() {
            return Err(Error::NotRebalanced {
                collection: T::COLLECTION,
                document: document.name.clone(),
                value: shard_value::<T>(document).unwrap_or_default().to_owned(),
            });
        }
    }
    clean().insert(key);
    Ok(())
}

fn clean() -> std::sync::MutexGuard<'static, HashSet<String>> {
    // Only inserts happen under the lock, so a poisoned set is still a correct one.
    CLEAN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
