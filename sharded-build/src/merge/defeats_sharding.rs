//! Recipe step 4: an index with the order field but not the shard field keeps the write cap
//! that sharding removes, so the merge removes it (unless the user keeps it on purpose).

use serde_json::Value;

use super::json::str_at;
use super::manifest::Managed;

pub(crate) fn defeats_sharding(m: &Managed, index: &Value) -> bool {
    if str_at(index, "collectionGroup") != Some(&m.description.collection) {
        return false;
    }
    let paths: Vec<&str> = index
        .get("fields")
        .and_then(Value::as_array)
        .map(|fields| {
            fields
                .iter()
                .filter_map(|f| str_at(f, "fieldPath"))
                .collect()
        })
        .unwrap_or_default();
    paths.contains(&m.description.order_field.as_str())
        && !paths.contains(&m.description.shard_field.as_str())
}
