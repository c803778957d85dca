//! A document for writing, built in one serialization pass: the user's fields, the shard, and
//! the write guard's check that every required path is written.
//!
//! Each field's value goes through the firestore crate's own serializer (so every value is
//! stored exactly as the firestore crate stores it), except a top-level timestamp, which
//! [`timestamp`] converts to the same value without the crate's round trip through text; the
//! top level is ours. It collects the fields straight into the document's map, adds the shard
//! without a serde call, and matches each key against the required paths ([`crate::guard`]);
//! only a value a required path goes into is serialized with its keys watched.

use std::collections::HashMap;

use firestore::FirestoreValue;
use firestore::errors::FirestoreError;
use firestore::gcloud_sdk::google::firestore::v1::{Document, Value, value::ValueType};
use serde::ser::{self, Error as _, Impossible, Serialize, SerializeMap, SerializeStruct};

use crate::write::write_guard::{Position, Watched};

mod timestamp;

/// `document` named `name` with `shard_field: shard` added, and the keys on `position`'s
/// required paths marked as seen. A document that holds a field of the shard field's name
/// itself (a key of a `#[serde(flatten)]` map, which the derive cannot see) is
/// [`Error::InvalidFieldName`](crate::error::Error::InvalidFieldName): its value would be lost under
/// the shard, or become the shard.
pub(crate) fn to_document<T: Serialize + ?Sized>(
    name: &str,
    document: &T,
    shard_field: &'static str,
    shard: &'static str,
    position: Position<'_>,
) -> crate::error::Result<Document> {
    let mut fields = document
        .serialize(TopLevel { position })
        .map_err(|error| match error {
            FirestoreError::SerializeError(e) => {
                FirestoreError::SerializeError(e.with_document_path(name.to_owned()))
            }
            error => error,
        })?;
    let shard = Value {
        value_type: Some(ValueType::StringValue(shard.to_owned())),
    };
    if fields.insert(shard_field.to_owned(), shard).is_some() {
        return Err(crate::error::Error::InvalidFieldName {
            field: shard_field.to_owned(),
            reason: "sharded writes the shard field itself: rename the map key or the struct's `shard_field`",
        });
    }
    Ok(Document {
        name: name.to_owned(),
        fields,
        ..Default::default()
    })
}

/// The document's own struct or map.
struct TopLevel<'r> {
    position: Position<'r>,
}

/// Its fields as they are serialized.
struct Fields<'r> {
    fields: HashMap<String, Value>,
    position: Position<'r>,
    next_key: Option<String>,
}

impl Fields<'_> {
    fn field<V: Serialize + ?Sized>(&mut self, key: &str, value: &V) -> Result<(), FirestoreError> {
        let below = if self.position.watching() {
            let (rest, below) = self.position.advance(key);
            self.position = rest;
            below
        } else {
            self.position
        };
        let stored = if below.watching() {
            to_value(&Watched {
                value,
                position: below,
            })
        } else {
            timestamp::stored_timestamp(value).unwrap_or_else(|| to_value(value))
        };
        if stored.value_type.is_none() {
            // Left out, as the firestore crate leaves out a `None`, unless it failed: its
            // conversion hides the error, which the crate's document serializer reports.
            return no_error(key, value);
        }
        self.fields.insert(key.to_owned(), stored);
        Ok(())
    }
}

/// `value` as the firestore crate stores it; empty for a `None`, or on an error.
fn to_value<V: Serialize + ?Sized>(value: &V) -> Value {
    <FirestoreValue as From<&V>>::from(value).value
}

/// The error that made a value empty, if one did: the value serialized again, alone, by the
/// firestore crate's document serializer.
fn no_error<V: Serialize + ?Sized>(key: &str, value: &V) -> Result<(), FirestoreError> {
    struct Alone<'a, V: ?Sized>(&'a str, &'a V);
    impl<V: Serialize + ?Sized> Serialize for Alone<'_, V> {
        fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_map(Some(1))?;
            map.serialize_entry(self.0, self.1)?;
            map.end()
        }
    }
    firestore::firestore_document_from_serializable("", &Alone(key, value)).map(drop)
}

impl<'r> SerializeStruct for Fields<'r> {
    type Ok = HashMap<String, Value>;
    type Error = FirestoreError;

    fn serialize_field<V: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &V,
    ) -> Result<(), FirestoreError> {
        self.field(key, value)
    }

    fn end(self) -> Result<Self::Ok, FirestoreError> {
        Ok(self.fields)
    }
}

impl<'r> SerializeMap for Fields<'r> {
    type Ok = HashMap<String, Value>;
    type Error = FirestoreError;

    fn serialize_key<K: Serialize + ?Sized>(&mut self, key: &K) -> Result<(), FirestoreError> {
        self.next_key = Some(map_key(key)?);
        Ok(())
    }

    fn serialize_value<V: Serialize + ?Sized>(&mut self, value: &V) -> Result<(), FirestoreError> {
        let key = self
            .next_key
            .take()
            .ok_or_else(|| FirestoreError::custom("a map value without its key"))?;
        self.field(&key, value)
    }

    fn end(self) -> Result<Self::Ok, FirestoreError> {
        Ok(self.fields)
    }
}

/// A map key as the firestore crate takes it: a string, or an integer as its decimal digits.
fn map_key<K: Serialize + ?Sized>(key: &K) -> Result<String, FirestoreError> {
    match to_value(key).value_type {
        Some(ValueType::StringValue(key)) => Ok(key),
        Some(ValueType::IntegerValue(key)) => Ok(key.to_string()),
        _ => Err(FirestoreError::custom("Map key should be a string format")),
    }
}

fn not_a_document(what: &str) -> FirestoreError {
    FirestoreError::custom(format_args!(
        "a sharded document must serialize as a struct or a map, not {what}"
    ))
}

macro_rules! reject {
    ($($method:ident($($arg:ty),*) $what:literal;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Self::Ok, FirestoreError> {
            Err(not_a_document($what))
        })*
    };
}

type Rejected = Impossible<HashMap<String, Value>, FirestoreError>;

impl<'r> ser::Serializer for TopLevel<'r> {
    type Ok = HashMap<String, Value>;
    type Error = FirestoreError;
    type SerializeSeq = Rejected;
    type SerializeTuple = Rejected;
    type SerializeTupleStruct = Rejected;
    type SerializeTupleVariant = Rejected;
    type SerializeMap = Fields<'r>;
    type SerializeStruct = Fields<'r>;
    type SerializeStructVariant = Rejected;

    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Fields<'r>, FirestoreError> {
        Ok(self.fields(len))
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Fields<'r>, FirestoreError> {
        Ok(self.fields(len.unwrap_or(0)))
    }

    fn serialize_newtype_struct<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &V,
    ) -> Result<Self::Ok, FirestoreError> {
        value.serialize(self)
    }

    fn serialize_some<V: Serialize + ?Sized>(self, _: &V) -> Result<Self::Ok, FirestoreError> {
        Err(not_a_document("an `Option`"))
    }

    fn serialize_newtype_variant<V: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &V,
    ) -> Result<Self::Ok, FirestoreError> {
        Err(not_a_document("an enum"))
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Rejected, FirestoreError> {
        Err(not_a_document("a sequence"))
    }

    fn serialize_tuple(self, _: usize) -> Result<Rejected, FirestoreError> {
        Err(not_a_document("a tuple"))
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Rejected, FirestoreError> {
        Err(not_a_document("a tuple struct"))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Rejected, FirestoreError> {
        Err(not_a_document("an enum"))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Rejected, FirestoreError> {
        Err(not_a_document("an enum"))
    }

    reject! {
        serialize_bool(bool) "a bool";
        serialize_i8(i8) "an integer";
        serialize_i16(i16) "an integer";
        serialize_i32(i32) "an integer";
        serialize_i64(i64) "an integer";
        serialize_u8(u8) "an integer";
        serialize_u16(u16) "an integer";
        serialize_u32(u32) "an integer";
        serialize_u64(u64) "an integer";
        serialize_f32(f32) "a number";
        serialize_f64(f64) "a number";
        serialize_char(char) "a string";
        serialize_str(&str) "a string";
        serialize_bytes(&[u8]) "bytes";
        serialize_unit_struct(&'static str) "a unit struct";
    }

    fn serialize_none(self) -> Result<Self::Ok, FirestoreError> {
        Err(not_a_document("an `Option`"))
    }

    fn serialize_unit(self) -> Result<Self::Ok, FirestoreError> {
        Err(not_a_document("a unit"))
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<Self::Ok, FirestoreError> {
        Err(not_a_document("an enum"))
    }
}

impl<'r> TopLevel<'r> {
    fn fields(self, len: usize) -> Fields<'r> {
        Fields {
            // One more for the shard.
            fields: HashMap::with_capacity(len + 1),
            position: self.position,
            next_key: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::write::write_guard::Required;

    fn fields<T: Serialize + ?Sized>(document: &T) -> Result<BTreeMap<String, Value>, String> {
        let nothing = Required::new(&[], &[], 0);
        to_document("d", document, "shard", "y", Position::top(&nothing))
            .map(|document| document.fields.into_iter().collect())
            .map_err(|error| error.to_string())
    }

    fn string(value: &str) -> Value {
        Value {
            value_type: Some(ValueType::StringValue(value.to_owned())),
        }
    }

    #[test]
    fn adds_the_shard_to_structs_and_maps() {
        #[derive(serde::Serialize)]
        struct Doc {
            symbol: &'static str,
        }
        assert_eq!(
            fields(&Doc { symbol: "AAA" }).unwrap(),
            BTreeMap::from([
                ("symbol".to_owned(), string("AAA")),
                ("shard".to_owned(), string("y"))
            ])
        );
        assert_eq!(
            fields(&BTreeMap::from([(7, "a")])).unwrap(),
            BTreeMap::from([
                ("7".to_owned(), string("a")),
                ("shard".to_owned(), string("y"))
            ])
        );
    }

    /// A map key equal to the shard field's name (a flattened map's keys come from data) is
    /// refused, at the top level only, wherever it comes in the map.
    #[test]
    fn refuses_a_key_named_as_the_shard_field() {
        #[derive(serde::Serialize)]
        struct Doc {
            symbol: &'static str,
            #[serde(flatten)]
            extra: BTreeMap<&'static str, i64>,
        }
        for extra in [
            BTreeMap::from([("shard", 1)]),
            BTreeMap::from([("a", 1), ("shard", 2), ("z", 3)]),
        ] {
            let error = fields(&Doc {
                symbol: "AAA",
                extra,
            })
            .unwrap_err();
            assert!(error.contains("invalid field name `shard`"), "{error}");
        }
        assert!(fields(&BTreeMap::from([("shard", "mine")])).is_err());
        // Below the top level, the name is the user's.
        let nested = BTreeMap::from([("inner", BTreeMap::from([("shard", 1)]))]);
        assert_eq!(fields(&nested).unwrap()["shard"], string("y"));
    }

    #[test]
    fn rejects_values_that_are_not_documents() {
        let err = fields(&5).unwrap_err();
        assert!(
            err.contains("a sharded document must serialize as a struct or a map, not an integer"),
            "{err}"
        );
        assert!(fields(&vec![1]).is_err());
        assert!(fields(&BTreeMap::from([((1, 2), 3)])).is_err());
    }
}
