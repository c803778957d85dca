//! The counters a type declares (`#[sharded(counter(shards = n))]`): a counter field's type,
//! the integers it holds, its shard documents' names, and how their stored parts add up. A
//! counter of document `d` is `n` shard documents, `d/_sharded_counter_<field>/0..n`, each
//! holding a part of the value in `value`; the exact value is their sum.

use std::marker::PhantomData;

use firestore::gcloud_sdk::google::firestore::v1::{Document, value::ValueType};

use crate::error::{Error, Result};

pub use sharded_indexes::{
    COUNTER_COLLECTION_PREFIX, INCREMENTS_COLLECTION, MARKER_AMOUNT_FIELD, MARKER_COMMIT_FIELD,
    MARKER_COUNTER_FIELD, MARKER_EXPIRY_FIELD, MARKER_EXPIRY_TOLERANCE_SECONDS, MARKER_SHARD_FIELD,
    SHARD_INCREMENT_FIELD, SHARD_VALUE_FIELD,
};

/// A Rust type a counter field may have: an integer, as Firestore stores a counter's value
/// (an `Option` of one for a document that has not been folded yet).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a counter",
    label = "a counter's value is an integer",
    note = "declare the field as `i64` (Firestore's integer) or a smaller integer type, or remove `counter`"
)]
pub trait CounterValue {
    /// The values the type holds, and its name, so that a fold refuses a value the field
    /// cannot be read back as.
    const HOLDS: ValueRange;
}

/// The integers a counter field's type holds: `min..=max`, of the type `name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub struct ValueRange {
    pub min: i64,
    pub max: i64,
    pub name: &'static str,
}

impl ValueRange {
    /// Whether `value` is one of them.
    pub(crate) fn holds(&self, value: i64) -> bool {
        (self.min..=self.max).contains(&value)
    }
}

macro_rules! counter_values {
    ($($ty:ty),*) => { $(
        impl CounterValue for $ty {
            const HOLDS: ValueRange = ValueRange {
                min: <$ty>::MIN as i64,
                max: <$ty>::MAX as i64,
                name: stringify!($ty),
            };
        }
        impl CounterValue for Option<$ty> {
            const HOLDS: ValueRange = <$ty as CounterValue>::HOLDS;
        }
    )* };
}
counter_values!(i8, i16, i32, i64, u8, u16, u32);

/// A counter field of `T` (`T::counters().likes`): its path and its number of shard
/// documents, declared by `#[sharded(counter(shards = n))]`.
pub struct CounterField<T> {
    pub(crate) path: &'static str,
    pub(crate) shards: u32,
    /// What the field's Rust type holds: a fold writes nothing else.
    pub(crate) holds: ValueRange,
    pub(crate) marker: PhantomData<fn() -> T>,
}

impl<T> CounterField<T> {
    /// The stored field path.
    pub fn path(&self) -> &'static str {
        self.path
    }

    /// How many shard documents increments are spread over.
    pub fn shards(&self) -> u32 {
        self.shards
    }

    /// The collection id of its shard documents, under a counted document.
    pub(crate) fn collection_id(&self) -> String {
        sharded_indexes::counter_collection_id(self.path)
    }

    /// What the field's Rust type holds.
    pub(crate) fn holds(&self) -> ValueRange {
        self.holds
    }
}

impl<T> Clone for CounterField<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for CounterField<T> {}

impl<T> PartialEq for CounterField<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.path, self.shards) == (other.path, other.shards)
    }
}

impl<T> std::fmt::Debug for CounterField<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CounterField")
            .field(&self.path)
            .field(&self.shards)
            .finish()
    }
}

/// The counter field `path` of `T`, of type `V`, over `shards` shard documents: what the
/// derive's `T::counters()` is made of. `V: CounterValue` refuses a counter on a field that
/// is not an integer, on the field's type.
pub fn counter_field<T, V: CounterValue>(path: &'static str, shards: u32) -> CounterField<T> {
    CounterField {
        path,
        shards: shards.max(1),
        holds: V::HOLDS,
        marker: PhantomData,
    }
}

/// The part of a counter a shard document holds (none is 0).
pub(crate) fn shard_value(shard: &Document) -> Result<i64> {
    match shard.fields.get(SHARD_VALUE_FIELD) {
        None => Ok(0),
        Some(value) => integer(value.value_type.as_ref(), &shard.name),
    }
}

/// The sum of a counter's parts, or an error where it passes i64 (where Firestore's own sum
/// would turn to a double).
pub(crate) fn total(values: impl IntoIterator<Item = i64>, document: &str) -> Result<i64> {
    values.into_iter().try_fold(0i64, |sum, value| {
        sum.checked_add(value)
            .ok_or_else(|| Error::UnexpectedAnswer(format!("counter `{document}` overflows i64")))
    })
}

/// A counter's integer (a sum of none is 0); a double is a sum past i64, which Firestore
/// answers when integers overflow.
pub(crate) fn integer(value: Option<&ValueType>, document: &str) -> Result<i64> {
    match value {
        Some(ValueType::IntegerValue(n)) => Ok(*n),
        Some(ValueType::NullValue(_)) | None => Ok(0),
        other => Err(Error::UnexpectedAnswer(format!(
            "a counter of `{document}` holds {other:?}, not an integer (it overflowed i64, or was written without sharded)"
        ))),
    }
}
