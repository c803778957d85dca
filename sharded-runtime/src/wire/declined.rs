//! Serializers that read one thing out of a value (a map key's string, a timestamp's instant)
//! and decline every other shape: [`Declined`], and `declines_all_but_strings!`, which writes a
//! `Serializer` impl's associated compound types and its declining methods.

use std::fmt;

/// The value was not read: the caller falls back to another way of handling it.
#[derive(Debug)]
pub(crate) struct Declined;

impl fmt::Display for Declined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a shape this serializer reads")
    }
}

impl std::error::Error for Declined {}

impl serde::ser::Error for Declined {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Declined
    }
}

/// Inside `impl Serializer for X { type Ok = …; type Error = Declined; … }`: the compound
/// types and every method but `serialize_str`, `serialize_some` and `serialize_newtype_struct`
/// (and `collect_str`, which serde defaults to `serialize_str`), each returning `Declined`.
macro_rules! declines_all_but_strings {
    () => {
        type SerializeSeq = ::serde::ser::Impossible<Self::Ok, Self::Error>;
        type SerializeTuple = ::serde::ser::Impossible<Self::Ok, Self::Error>;
        type SerializeTupleStruct = ::serde::ser::Impossible<Self::Ok, Self::Error>;
        type SerializeTupleVariant = ::serde::ser::Impossible<Self::Ok, Self::Error>;
        type SerializeMap = ::serde::ser::Impossible<Self::Ok, Self::Error>;
        type SerializeStruct = ::serde::ser::Impossible<Self::Ok, Self::Error>;
        type SerializeStructVariant = ::serde::ser::Impossible<Self::Ok, Self::Error>;

        declines_all_but_strings! {
            serialize_bool(bool) -> Ok;
            serialize_i8(i8) -> Ok;
            serialize_i16(i16) -> Ok;
            serialize_i32(i32) -> Ok;
            serialize_i64(i64) -> Ok;
            serialize_u8(u8) -> Ok;
            serialize_u16(u16) -> Ok;
            serialize_u32(u32) -> Ok;
            serialize_u64(u64) -> Ok;
            serialize_f32(f32) -> Ok;
            serialize_f64(f64) -> Ok;
            serialize_char(char) -> Ok;
            serialize_bytes(&[u8]) -> Ok;
            serialize_none() -> Ok;
            serialize_unit() -> Ok;
            serialize_unit_struct(&'static str) -> Ok;
            serialize_unit_variant(&'static str, u32, &'static str) -> Ok;
            serialize_seq(Option<usize>) -> SerializeSeq;
            serialize_tuple(usize) -> SerializeTuple;
            serialize_tuple_struct(&'static str, usize) -> SerializeTupleStruct;
            serialize_tuple_variant(&'static str, u32, &'static str, usize) -> SerializeTupleVariant;
            serialize_map(Option<usize>) -> SerializeMap;
            serialize_struct(&'static str, usize) -> SerializeStruct;
            serialize_struct_variant(&'static str, u32, &'static str, usize) -> SerializeStructVariant;
        }

        fn serialize_newtype_variant<V: ::serde::Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &V,
        ) -> Result<Self::Ok, Self::Error> {
            Err($crate::wire::declined::Declined)
        }
    };
    ($($method:ident($($arg:ty),*) -> $out:ident;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Self::$out, Self::Error> {
            Err($crate::wire::declined::Declined)
        })*
    };
}
