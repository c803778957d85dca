//! The shard-set history: a collection's recorded values may grow, never be lost, since
//! documents stored with a lost value would drop out of every sharded query.

use sharded_indexes::CollectionDescriptionBuf;

use super::manifest::{MANIFEST_KEY, Managed};
use super::messages::describe_values;
use crate::scan::ShardedType;

/// A collection whose shard set lost values since the last build recorded it would hide every
/// document stored with them from every query: refused. Growing keeps the old values and is
/// safe; so is removing the type altogether.
///
/// The one path that drops values: declare the old set as `previous(...)` (queries read both
/// sets while writes move to the new one), rebalance, and then turn `previous(...)` into
/// `retired(...)`: queries read the new set only, and first check, once per process and
/// scope, that no document holds a retired value (`Error::NotRebalanced` if one does). A
/// value once recorded stays declared (current, previous or retired), so no build can drop
/// it unchecked.
pub(crate) fn check_shard_sets(
    previous: &[Managed],
    current: &[Managed],
    types: &[ShardedType],
) -> Result<(), String> {
    for now in current {
        let Some(before) = previous
            .iter()
            .find(|m| m.description.collection == now.description.collection)
        else {
            continue;
        };
        let declared_now = declared_values(&now.description);
        let lost: Vec<String> = declared_values(&before.description)
            .into_iter()
            .filter(|value| !declared_now.contains(value))
            .collect();
        if lost.is_empty() {
            continue;
        }
        let owner = types
            .iter()
            .find(|t| t.description.collection == now.description.collection)
            .map(|t| format!("`{}` ({})", t.name, t.file.display()))
            .unwrap_or_default();
        let was_previous = lost
            .iter()
            .all(|value| before.description.previous_shard_values.contains(value));
        let how = if was_previous {
            "The last build read them as `previous(...)`. Once `rebalance()` has moved every document out of them and `verify()` reports 0 retired, \
             declare them `retired(...)` instead, e.g. `#[sharded(shards = 2, retired(shards = 3))]`: queries then read the new set only, \
             after checking (one read per process and scope) that no document still holds a retired value."
        } else {
            "To raise the write rate, grow the set and keep every old value (`shards = 3` to `shards = 6` keeps \"0\" to \"2\"). \
             To change or shrink the set, declare the old one as `previous(...)`, e.g. `#[sharded(shards = 2, previous(shards = 3))]`: \
             queries then read both sets while writes draw from the new one. Build once so that it is recorded, run `rebalance()` to move \
             every document out of the retired values, and then replace `previous(...)` with `retired(...)`."
        };
        return Err(format!(
            "{owner} shards `{}` over {}, but the last build recorded {}: documents stored with {} would drop out of every sharded query. \
             {how} (The values are recorded under `{MANIFEST_KEY}.shardSets`, and stay recorded while no type shards the \
             collection; delete them there only if no document is stored with them in any database.)",
            now.description.collection,
            describe_values(&now.description.shard_values),
            describe_values(&declared_values(&before.description)),
            describe_values(&lost),
        ));
    }
    Ok(())
}

/// Every value a collection's documents may hold: the current, previous and retired ones.
pub(crate) fn declared_values(description: &CollectionDescriptionBuf) -> Vec<String> {
    description.with(|description| {
        description
            .declared_values()
            .into_iter()
            .map(str::to_owned)
            .collect()
    })
}
