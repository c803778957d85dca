//! Field transforms in sharded updates: Firestore's server-side increment, maximum, minimum,
//! array union and remove, and request time, typed by the field's Rust type, sent with the
//! update that keeps the document's shard.

use std::marker::PhantomData;
use std::time::SystemTime;

use firestore::FirestoreValue;
use firestore::gcloud_sdk::google::firestore::v1::document_transform::FieldTransform;
use firestore::gcloud_sdk::google::firestore::v1::document_transform::field_transform::{
    ServerValue, TransformType,
};
use firestore::gcloud_sdk::google::firestore::v1::{ArrayValue, Value, value::ValueType};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::numeric::Numeric;
use crate::model::sharded::Sharded;

/// A Rust type a field set to the server's time can be read back as: what
/// [`server_time`](TypedField::server_time) takes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a server time",
    label = "server_time sets a field to a Firestore timestamp",
    note = "it takes `FirestoreTimestamp`, `SystemTime` and `Option`s of them"
)]
pub trait ServerTime {}

impl ServerTime for firestore::FirestoreTimestamp {}
impl ServerTime for SystemTime {}
impl ServerTime for Option<firestore::FirestoreTimestamp> {}
impl ServerTime for Option<SystemTime> {}

/// A stored top-level field of `T` whose Rust type is `V`, to transform on the server. Made
/// by the derive's `T::transforms().<field>` (fields without a serde adapter): which
/// transforms a field has follows its type, so `increment` on a `String` does not compile.
pub struct TypedField<T, V> {
    path: &'static str,
    marker: PhantomData<fn() -> (T, V)>,
}

/// The field `path` of `T`, of type `V`: what the derive's `T::transforms()` is made of.
#[doc(hidden)]
pub const fn typed_field<T, V>(path: &'static str) -> TypedField<T, V> {
    TypedField {
        path,
        marker: PhantomData,
    }
}

impl<T, V> Clone for TypedField<T, V> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, V> Copy for TypedField<T, V> {}

impl<T, V> std::fmt::Debug for TypedField<T, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("TypedField").field(&self.path).finish()
    }
}

impl<T, V> TypedField<T, V> {
    /// The field's path as Firestore names it.
    pub fn path(&self) -> &'static str {
        self.path
    }

    fn with(self, transform_type: TransformType) -> Transform<T> {
        Transform {
            transform: FieldTransform {
                field_path: self.path.to_owned(),
                transform_type: Some(transform_type),
            },
            marker: PhantomData,
        }
    }
}

impl<T, V: Numeric> TypedField<T, V> {
    /// Adds `by` to the stored number, on the server (Firestore's `increment`): concurrent
    /// increments all count. A missing or non-numeric field becomes `by`; integers saturate
    /// at the ends of `i64`, a double beside an integer gives a double.
    pub fn increment(self, by: V) -> Transform<T> {
        self.with(TransformType::Increment(stored(&by)))
    }

    /// The larger of the stored number and `with` (Firestore's `maximum`).
    pub fn maximum(self, with: V) -> Transform<T> {
        self.with(TransformType::Maximum(stored(&with)))
    }

    /// The smaller of the stored number and `with` (Firestore's `minimum`).
    pub fn minimum(self, with: V) -> Transform<T> {
        self.with(TransformType::Minimum(stored(&with)))
    }
}

impl<T, E: Serialize> TypedField<T, Vec<E>> {
    /// Appends each of `values` the stored array does not hold yet, in order (Firestore's
    /// `arrayUnion`); a missing or non-array field becomes `values` without repeats.
    pub fn array_union(self, values: impl IntoIterator<Item = E>) -> Transform<T> {
        self.with(TransformType::AppendMissingElements(array(values)))
    }

    /// Removes every element equal to one of `values` (Firestore's `arrayRemove`); a missing
    /// or non-array field becomes an empty array.
    pub fn array_remove(self, values: impl IntoIterator<Item = E>) -> Transform<T> {
        self.with(TransformType::RemoveAllFromArray(array(values)))
    }
}

impl<T, V: ServerTime> TypedField<T, V> {
    /// The time the server applies the write, to the millisecond (Firestore's `REQUEST_TIME`).
    pub fn server_time(self) -> Transform<T> {
        self.with(TransformType::SetToServerValue(
            ServerValue::RequestTime as i32,
        ))
    }
}

/// One server-side transform of a field of `T`: pass several to
/// [`ShardedCollection::transform`](crate::model::handle::ShardedCollection::transform),
/// [`update_fields_and_transform`](crate::model::handle::ShardedCollection::update_fields_and_transform) or
/// the atomic batch's and transaction's writes of the same names.
pub struct Transform<T> {
    transform: FieldTransform,
    marker: PhantomData<fn() -> T>,
}

impl<T> Clone for Transform<T> {
    fn clone(&self) -> Self {
        Transform {
            transform: self.transform.clone(),
            marker: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Transform<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Transform").field(&self.transform).finish()
    }
}

impl<T> Transform<T> {
    /// The path of the field it transforms.
    pub fn path(&self) -> &str {
        &self.transform.field_path
    }
}

fn stored<V: Serialize + ?Sized>(value: &V) -> Value {
    <FirestoreValue as From<&V>>::from(value).value
}

fn array<E: Serialize>(values: impl IntoIterator<Item = E>) -> ArrayValue {
    ArrayValue {
        values: values.into_iter().map(|value| stored(&value)).collect(),
    }
}

/// `transforms` as the write sends them, checked: at least one unless `fields` are written,
/// each path at most once, none of them a path the write's mask also writes (Google's client
/// libraries refuse both; the emulator applies them in order, and production does not document
/// it), and every value storable.
pub(crate) fn checked<T: Sharded>(
    transforms: &[Transform<T>],
    masked: &[String],
) -> Result<Vec<FieldTransform>> {
    if transforms.is_empty() && masked.is_empty() {
        return Err(Error::InvalidUpdate(
            "no fields to update and no transforms: name at least one".into(),
        ));
    }
    let weight: usize = transforms.iter().map(|t| weight(&t.transform)).sum();
    if weight > MAX_TRANSFORMS {
        return Err(Error::InvalidUpdate(format!(
            "{weight} field transforms in one write (each array element counts): Firestore takes at most {MAX_TRANSFORMS} per document"
        )));
    }
    let mut paths: Vec<&str> = Vec::with_capacity(transforms.len());
    for transform in transforms {
        let path = transform.path();
        if paths.contains(&path) {
            return Err(Error::InvalidUpdate(format!(
                "`{path}` is transformed twice in one write: combine the transforms into one"
            )));
        }
        if masked.iter().any(|field| field == path) {
            return Err(Error::InvalidUpdate(format!(
                "`{path}` is both written and transformed in one write: leave it out of the fields"
            )));
        }
        if !storable(&transform.transform) {
            return Err(Error::InvalidUpdate(format!(
                "a value of the transform of `{path}` cannot be stored in Firestore"
            )));
        }
        paths.push(path);
    }
    Ok(transforms.iter().map(|t| t.transform.clone()).collect())
}

/// Field transforms one document takes in one write, an array transform's elements each
/// counting (Firestore's limit).
pub const MAX_TRANSFORMS: usize = 500;

/// What a transform counts toward [`MAX_TRANSFORMS`].
fn weight(transform: &FieldTransform) -> usize {
    match &transform.transform_type {
        Some(TransformType::AppendMissingElements(array))
        | Some(TransformType::RemoveAllFromArray(array)) => array.values.len().max(1),
        _ => 1,
    }
}

fn storable(transform: &FieldTransform) -> bool {
    match &transform.transform_type {
        Some(TransformType::Increment(value))
        | Some(TransformType::Maximum(value))
        | Some(TransformType::Minimum(value)) => matches!(
            value.value_type,
            Some(ValueType::IntegerValue(_) | ValueType::DoubleValue(_))
        ),
        Some(TransformType::AppendMissingElements(array))
        | Some(TransformType::RemoveAllFromArray(array)) => {
            array.values.iter().all(|value| value.value_type.is_some())
        }
        Some(TransformType::SetToServerValue(_)) => true,
        None => false,
    }
}
