//! A managed field override keeps what the user set on it (a TTL, array or vector indexes).

use serde_json::Value;

/// A managed override as the file has it, with only what sharding needs set: no ascending or
/// descending single-field index. Every other key the user set (`ttl`) and every other index
/// configuration (`arrayConfig`) stays. Returns it and how many index entries were removed.
pub(crate) fn keep_user_settings(existing: Value, ours: &Value) -> (Value, usize) {
    let Value::Object(mut existing) = existing else {
        return (ours.clone(), 0);
    };
    let indexes: Vec<Value> = existing
        .get("indexes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let before = indexes.len();
    let kept: Vec<Value> = indexes
        .into_iter()
        .filter(|index| index.get("order").is_none())
        .collect();
    let removed = before - kept.len();
    existing.insert("indexes".into(), Value::Array(kept));
    (Value::Object(existing), removed)
}
