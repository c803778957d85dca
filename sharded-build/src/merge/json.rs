//! Reading and writing the index file's JSON values.

use serde::Serialize;
use serde_json::Value;

pub(crate) fn to_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).expect("index plans serialize")
}

pub(crate) fn str_at<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}
