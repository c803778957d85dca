//! A `FirestoreTimestamp` field stored without the firestore crate's round trip through text.
//!
//! The firestore crate stores a timestamp by printing the instant to an RFC 3339 string on the
//! heap and parsing that string back with a general parser: a struct of one such field took
//! 185–195 ns to serialize against 90 ns for one `String` field (a one-off probe; about a sixth
//! of a recipe instrument's serialization). A document's top-level field is first offered to
//! [`stored_timestamp`]: when the value under the crate's timestamp tag is a `FirestoreInstant`
//! itself (a `FirestoreTimestamp`, `serialize_as_timestamp`, `serialize_as_optional_timestamp`),
//! the instant is converted by the crate's own `to_timestamp`, the function the parsed text
//! goes through. Anything else is left to the firestore crate, so every value is stored
//! exactly as it stores it; the tests hold the two to the same result.

use std::any::TypeId;

use firestore::FirestoreInstant;
use firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};
use firestore::timestamp_utils::to_timestamp;
use serde::ser::{Serialize, Serializer};

use crate::wire::declined::Declined;

/// The newtype name the firestore crate stores as a timestamp (`FirestoreTimestamp` and
/// `#[serde(with = "firestore::serialize_as_timestamp")]`).
const TIMESTAMP_TAG: &str = "FirestoreTimestamp";

/// `value` as a timestamp, when it is a `FirestoreInstant` under the timestamp tag (possibly in
/// an `Option`); `None` otherwise, and the caller serializes it the firestore crate's way.
pub(super) fn stored_timestamp<V: Serialize + ?Sized>(value: &V) -> Option<Value> {
    value.serialize(Probe).ok()
}

/// A field's value: a timestamp newtype around an instant, possibly in an `Option`, or declined.
struct Probe;

impl Serializer for Probe {
    type Ok = Value;
    // Not read here: left to the firestore crate.
    type Error = Declined;

    fn serialize_some<V: Serialize + ?Sized>(self, value: &V) -> Result<Value, Declined> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &V,
    ) -> Result<Value, Declined> {
        let instant = (name == TIMESTAMP_TAG)
            .then(|| as_instant(value))
            .flatten()
            .ok_or(Declined)?;
        Ok(Value {
            value_type: Some(ValueType::TimestampValue(to_timestamp(*instant))),
        })
    }

    fn serialize_str(self, _: &str) -> Result<Value, Declined> {
        Err(Declined)
    }

    declines_all_but_strings!();
}

/// `value` itself when its type is `FirestoreInstant` or a reference to one (serde hands the
/// probe a generic value, and `Any` needs a `'static` bound that serde's signature lacks).
#[allow(unsafe_code)]
fn as_instant<V: ?Sized>(value: &V) -> Option<&FirestoreInstant> {
    // `typeid::of` is `TypeId::of` with every lifetime taken as `'static`.
    let id = typeid::of::<V>();
    let at = std::ptr::from_ref(value);
    if id == TypeId::of::<FirestoreInstant>() {
        // SAFETY: `FirestoreInstant` has no lifetime parameters, so the ids are equal only
        // when `V` is exactly `FirestoreInstant`: the cast changes no type.
        Some(unsafe { &*at.cast::<FirestoreInstant>() })
    } else if id == TypeId::of::<&'static FirestoreInstant>() {
        // SAFETY: `V` is `&'a FirestoreInstant` for some `'a`, and `'a` outlives the borrow of
        // `value` (a `&V` is well-formed only then); the reference read out is returned for
        // that shorter borrow.
        Some(unsafe { *at.cast::<&FirestoreInstant>() })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};
    use serde::Serialize;

    use super::*;
    use firestore::{FirestoreTimestamp, FirestoreValue, firestore_document_from_serializable};

    fn firestore_value<V: Serialize>(value: &V) -> Value {
        <FirestoreValue as From<&V>>::from(value).value
    }

    /// What the firestore crate stores for the document's one field `at`.
    fn stored_by_firestore<D: Serialize>(document: &D) -> Option<Value> {
        firestore_document_from_serializable("", document)
            .unwrap()
            .fields
            .remove("at")
    }

    /// Instants across the whole range the firestore crate's instant holds, before and after
    /// the epoch, at every precision.
    fn instant(rng: &mut StdRng) -> FirestoreInstant {
        let min = FirestoreInstant::MIN.as_second();
        let max = FirestoreInstant::MAX.as_second();
        let nanos = match rng.random_range(0..4) {
            0 => 0,
            1 => rng.random_range(0..1_000) * 1_000_000,
            2 => rng.random_range(0..1_000_000) * 1_000,
            _ => rng.random_range(0..1_000_000_000),
        };
        let seconds = match rng.random_range(0..4) {
            0 => rng.random_range(min..=max),
            1 => rng.random_range(-100_000_000_000i64..100_000_000_000),
            2 => rng.random_range(-2_000..2_000),
            _ => [min, max, -1, 0][rng.random_range(0..4)],
        };
        let nanos = if seconds < 0 { -nanos } else { nanos };
        FirestoreInstant::new(seconds, nanos).unwrap_or(FirestoreInstant::UNIX_EPOCH)
    }

    /// A field with `#[serde(with = "firestore::serialize_as_timestamp")]`, as serde's derive
    /// hands it to the serializer.
    struct Tagged(FirestoreInstant);

    impl Serialize for Tagged {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            firestore::serialize_as_timestamp::serialize(&self.0, serializer)
        }
    }

    /// The same with `serialize_as_optional_timestamp`.
    struct OptionallyTagged(Option<FirestoreInstant>);

    impl Serialize for OptionallyTagged {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            firestore::serialize_as_optional_timestamp::serialize(&self.0, serializer)
        }
    }

    #[derive(Serialize)]
    struct Document<T> {
        at: T,
    }

    #[test]
    fn every_instant_is_stored_as_the_firestore_crate_stores_it() {
        let mut rng = StdRng::seed_from_u64(21);
        for _ in 0..100_000 {
            let instant = instant(&mut rng);
            let timestamp = FirestoreTimestamp(instant);
            let expected = firestore_value(&timestamp);
            assert!(
                matches!(expected.value_type, Some(ValueType::TimestampValue(_))),
                "{instant}"
            );
            assert_eq!(
                stored_by_firestore(&Document { at: timestamp }),
                Some(expected.clone())
            );
            assert_eq!(
                stored_timestamp(&timestamp),
                Some(expected.clone()),
                "{instant}"
            );
            assert_eq!(stored_timestamp(&Some(timestamp)), Some(expected.clone()));
            // The attributes hand the probe the instant by reference and by value.
            let tagged = Tagged(instant);
            assert_eq!(
                stored_by_firestore(&Document { at: &tagged }),
                Some(expected.clone())
            );
            assert_eq!(stored_timestamp(&tagged), Some(expected.clone()));
            let optional = OptionallyTagged(Some(instant));
            assert_eq!(
                stored_by_firestore(&Document { at: &optional }),
                Some(expected.clone())
            );
            assert_eq!(stored_timestamp(&optional), Some(expected));
        }
    }

    #[test]
    fn other_values_are_left_to_the_firestore_crate() {
        /// A newtype of the crate's tag around something that is not an instant.
        struct Impostor;
        impl Serialize for Impostor {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_newtype_struct(TIMESTAMP_TAG, "2024-01-01T00:00:00Z")
            }
        }
        #[derive(Serialize)]
        struct Other(FirestoreTimestamp);

        let now = FirestoreInstant::now();
        assert_eq!(stored_timestamp(&None::<FirestoreTimestamp>), None);
        assert_eq!(stored_timestamp(&OptionallyTagged(None)), None);
        assert_eq!(stored_timestamp(&Other(FirestoreTimestamp(now))), None);
        assert_eq!(stored_timestamp(&Impostor), None);
        // A bare instant is a string to the firestore crate, not a timestamp.
        assert_eq!(stored_timestamp(&now), None);
        assert_eq!(stored_timestamp("2024-01-01T00:00:00Z"), None);
        assert_eq!(stored_timestamp(&7), None);
    }
}
