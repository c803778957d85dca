//! The shard field, added to a document as it is serialized for writing.
//!
//! [`WithShard`] serializes the user's value through a serializer adapter that lets every call
//! through to the real serializer and adds one more field when the top-level struct (or map)
//! ends. Nothing is buffered or copied; the cost is one extra `serialize_field` call. In the
//! same pass the write guard ([`crate::guard`]) notes which required paths the document holds.

use rand::Rng;
use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};

use crate::guard::{Position, Required, Watch};

/// A shard value drawn uniformly at random from `values`.
///
/// # Panics
/// If `values` is empty; the derive rejects an empty set of shard values.
pub fn draw_shard(values: &'static [&'static str]) -> &'static str {
    values[rand::rng().random_range(0..values.len())]
}

/// `document` with `field: shard` added when serialized.
pub struct WithShard<'a, T: ?Sized> {
    /// The user's value.
    pub document: &'a T,
    /// The stored name of the shard field.
    pub field: &'static str,
    /// The drawn shard value.
    pub shard: &'static str,
    /// The paths to look for while serializing (the write guard); see [`Required::missing`].
    pub required: Option<&'a Required>,
}

impl<T: ?Sized> std::fmt::Debug for WithShard<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WithShard")
            .field("field", &self.field)
            .field("shard", &self.shard)
            .finish_non_exhaustive()
    }
}

impl<T: Serialize + ?Sized> Serialize for WithShard<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let unguarded = Required::new(&[], 0);
        let required = self.required.unwrap_or(&unguarded);
        self.document.serialize(AddField {
            inner: serializer,
            field: self.field,
            value: self.shard,
            position: Position::top(required),
        })
    }
}

struct AddField<'r, S> {
    inner: S,
    field: &'static str,
    value: &'static str,
    position: Position<'r>,
}

/// The top-level struct or map, which gets the extra field just before it ends.
pub struct WithField<'r, C> {
    inner: Watch<'r, C>,
    field: &'static str,
    value: &'static str,
}

fn not_a_document<E: ser::Error>(what: &str) -> E {
    E::custom(format_args!(
        "a sharded document must serialize as a struct or a map, not {what}"
    ))
}

macro_rules! reject {
    ($($method:ident($($arg:ty),*) $what:literal;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Self::Ok, Self::Error> {
            Err(not_a_document($what))
        })*
    };
}

impl<'r, S: Serializer> Serializer for AddField<'r, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Impossible<S::Ok, S::Error>;
    type SerializeTuple = Impossible<S::Ok, S::Error>;
    type SerializeTupleStruct = Impossible<S::Ok, S::Error>;
    type SerializeTupleVariant = Impossible<S::Ok, S::Error>;
    type SerializeMap = WithField<'r, S::SerializeMap>;
    type SerializeStruct = WithField<'r, S::SerializeStruct>;
    type SerializeStructVariant = Impossible<S::Ok, S::Error>;

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        Ok(WithField {
            inner: Watch::new(self.inner.serialize_struct(name, len + 1)?, self.position),
            field: self.field,
            value: self.value,
        })
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Ok(WithField {
            inner: Watch::new(
                self.inner.serialize_map(len.map(|len| len + 1))?,
                self.position,
            ),
            field: self.field,
            value: self.value,
        })
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
        serialize_f32(f32) "a float";
        serialize_f64(f64) "a float";
        serialize_char(char) "a char";
        serialize_str(&str) "a string";
        serialize_bytes(&[u8]) "bytes";
        serialize_none() "`None`";
        serialize_unit() "`()`";
        serialize_unit_struct(&'static str) "a unit struct";
        serialize_unit_variant(&'static str, u32, &'static str) "an enum";
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<S::Ok, S::Error> {
        Err(not_a_document("an `Option`"))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(not_a_document("a newtype struct"))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<S::Ok, S::Error> {
        Err(not_a_document("an enum"))
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        Err(not_a_document("a sequence"))
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, S::Error> {
        Err(not_a_document("a tuple"))
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        Err(not_a_document("a tuple struct"))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        Err(not_a_document("an enum"))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        Err(not_a_document("an enum"))
    }
}

impl<C: SerializeStruct> SerializeStruct for WithField<'_, C> {
    type Ok = C::Ok;
    type Error = C::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), C::Error> {
        self.inner.serialize_field(key, value)
    }

    fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
        self.inner.skip_field(key)
    }

    fn end(mut self) -> Result<C::Ok, C::Error> {
        self.inner.serialize_field(self.field, self.value)?;
        self.inner.end()
    }
}

impl<C: SerializeMap> SerializeMap for WithField<'_, C> {
    type Ok = C::Ok;
    type Error = C::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), C::Error> {
        self.inner.serialize_key(key)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        self.inner.serialize_value(value)
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), C::Error> {
        self.inner.serialize_entry(key, value)
    }

    fn end(mut self) -> Result<C::Ok, C::Error> {
        self.inner.serialize_entry(self.field, self.value)?;
        self.inner.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Doc {
        symbol: &'static str,
        micros: i64,
    }

    #[derive(Serialize)]
    struct Flattened {
        #[serde(flatten)]
        doc: Doc,
        exchange: &'static str,
    }

    fn json<T: Serialize>(document: &T) -> serde_json::Value {
        serde_json::to_value(WithShard {
            document,
            field: "shard",
            shard: "y",
            required: None,
        })
        .unwrap()
    }

    #[test]
    fn adds_the_shard_to_structs_and_maps() {
        assert_eq!(
            json(&Doc {
                symbol: "AAA",
                micros: 1
            }),
            serde_json::json!({ "symbol": "AAA", "micros": 1, "shard": "y" })
        );
        assert_eq!(
            json(&Flattened {
                doc: Doc {
                    symbol: "B",
                    micros: 2
                },
                exchange: "X"
            }),
            serde_json::json!({ "symbol": "B", "micros": 2, "exchange": "X", "shard": "y" })
        );
        let map = BTreeMap::from([("a", 1)]);
        assert_eq!(json(&map), serde_json::json!({ "a": 1, "shard": "y" }));
    }

    #[test]
    fn rejects_values_that_are_not_documents() {
        let err = serde_json::to_value(WithShard {
            document: &5,
            field: "shard",
            shard: "x",
            required: None,
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "a sharded document must serialize as a struct or a map, not an integer"
        );
        assert!(
            serde_json::to_value(WithShard {
                document: &vec![1],
                field: "s",
                shard: "x",
                required: None,
            })
            .is_err()
        );
    }

    #[test]
    fn draws_only_given_values() {
        const VALUES: &[&str] = &["x", "y", "z"];
        for _ in 0..1000 {
            assert!(VALUES.contains(&draw_shard(VALUES)));
        }
    }
}
