//! A Rust value as the Firestore value a filter compares with, or why it is not one (checked
//! when the query is prepared, so that building a query never fails).

use std::ops::Bound;

use firestore::FirestoreValue;
use firestore::gcloud_sdk::google::firestore::v1::Value;
use serde::Serialize;

pub(super) fn to_value<V: Serialize + ?Sized>(value: &V) -> std::result::Result<Value, String> {
    let value = <FirestoreValue as From<&V>>::from(value).value;
    match value.value_type {
        Some(_) => Ok(value),
        None => Err(format!(
            "`{}` does not serialize to a Firestore value",
            std::any::type_name::<V>()
        )),
    }
}

pub(super) fn to_bound<V: Serialize>(
    bound: Bound<&V>,
) -> Bound<std::result::Result<Value, String>> {
    match bound {
        Bound::Included(v) => Bound::Included(to_value(v)),
        Bound::Excluded(v) => Bound::Excluded(to_value(v)),
        Bound::Unbounded => Bound::Unbounded,
    }
}
