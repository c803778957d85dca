//! The write guard, in the same serialization pass as the shard: while the document is
//! serialized, the keys of its structs and maps are matched against the stored segments of the
//! paths every written document must hold (the order field, the non-optional indexed paths).
//! One bit per path; no hashing, no allocation, and values off those paths pass through
//! untouched.

use std::cell::Cell;

use crate::wire::declined::Declined;

use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

/// The most paths one document is checked for in the serialization pass; a type with more
/// (over 128 indexed fields) is checked on the serialized document instead.
pub const MAX_TRACKED: usize = 128;

/// The required paths of one write, as stored segments, and which have been seen.
#[derive(Debug)]
pub struct Required {
    paths: &'static [&'static str],
    /// Each path's stored segments; empty when each path is its own one segment.
    segments: &'static [&'static [&'static str]],
    /// Bit `n` set: some segment is `n` bytes long (63 for longer ones), so most keys are
    /// ruled out by their length alone.
    lengths: u64,
    seen: Cell<u128>,
}

impl Required {
    /// `paths` (at most `MAX_TRACKED`) with their `segments` as the derive writes them
    /// ([`Tables`](crate::model::sharded::Tables)); `lengths` is `length_mask` of them, which a
    /// caller computes at compile time.
    pub fn new(
        paths: &'static [&'static str],
        segments: &'static [&'static [&'static str]],
        lengths: u64,
    ) -> Self {
        debug_assert!(paths.len() <= MAX_TRACKED);
        debug_assert!(segments.is_empty() || segments.len() == paths.len());
        debug_assert_eq!(lengths, length_mask(paths, segments));
        Required {
            paths,
            segments,
            lengths,
            seen: Cell::new(0),
        }
    }

    /// Every path: the candidates at the top level.
    pub fn all(&self) -> u128 {
        match self.paths.len() {
            MAX_TRACKED => u128::MAX,
            n => (1u128 << n) - 1,
        }
    }

    /// The first path not seen, if any.
    pub fn missing(&self) -> Option<usize> {
        let unseen = self.all() & !self.seen.get();
        (unseen != 0).then(|| unseen.trailing_zeros() as usize)
    }

    /// A key at `depth` among `candidates` (the paths whose earlier segments led here): marks
    /// the paths it ends, and returns those that go on into its value. A key ends a path
    /// whatever its value; a value the firestore crate leaves out (a `None`) behaves as the
    /// unsharded query does, which does not match a missing field either.
    #[inline]
    fn key(&self, candidates: u128, depth: usize, key: &str) -> Matched {
        let mut matched = Matched {
            ended: 0,
            deeper: 0,
        };
        if self.lengths & length_bit(key) == 0 {
            return matched;
        }
        let mut rest = candidates;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let segments = path_segments(self.paths, self.segments, i);
            if segments
                .get(depth)
                .is_some_and(|segment| same(segment, key))
            {
                if segments.len() == depth + 1 {
                    matched.ended |= 1 << i;
                } else {
                    matched.deeper |= 1 << i;
                }
            }
        }
        self.seen.set(self.seen.get() | matched.ended);
        matched
    }
}

/// The paths a key ended, and those that go on into its value.
struct Matched {
    ended: u128,
    deeper: u128,
}

const fn length_bit(segment: &str) -> u64 {
    let len = segment.len();
    1 << if len < 63 { len } else { 63 }
}

/// Path `i`'s stored segments, of `paths` with their `segments` as [`Required::new`] takes
/// them: its own entry in `segments`, or, when `segments` is empty, the path itself as its one
/// segment.
#[inline]
const fn path_segments<'a>(
    paths: &'a [&'a str],
    segments: &'a [&'a [&'a str]],
    i: usize,
) -> &'a [&'a str] {
    if segments.is_empty() {
        std::slice::from_ref(&paths[i])
    } else {
        segments[i]
    }
}

/// Bit `n` set for every segment `n` bytes long (63 for longer ones), of `paths` with their
/// `segments` as [`Required::new`] takes them.
pub const fn length_mask(paths: &[&str], segments: &[&[&str]]) -> u64 {
    let mut mask = 0;
    let mut i = 0;
    while i < paths.len() {
        let path = path_segments(paths, segments, i);
        let mut j = 0;
        while j < path.len() {
            mask |= length_bit(path[j]);
            j += 1;
        }
        i += 1;
    }
    mask
}

/// String equality, first by address: the derive's segment and serde's key are usually the
/// same merged literal.
fn same(segment: &str, key: &str) -> bool {
    segment.len() == key.len() && (std::ptr::eq(segment.as_ptr(), key.as_ptr()) || segment == key)
}

/// Where in the document a serializer is: the paths that may still be completed below.
#[derive(Clone, Copy)]
pub struct Position<'r> {
    pub required: &'r Required,
    pub candidates: u128,
    pub depth: usize,
}

impl<'r> Position<'r> {
    /// The top of a document: every path a candidate.
    pub fn top(required: &'r Required) -> Self {
        Position {
            required,
            candidates: required.all(),
            depth: 0,
        }
    }

    fn after_key(self, key: &str) -> Self {
        self.advance(key).1
    }

    /// The position of `key`'s value, and this position without the paths the key ended or
    /// took deeper: a path goes through one key of a struct or map, so later keys need not
    /// look for it again, and once none is left the rest of the struct costs nothing.
    #[inline]
    pub(crate) fn advance(self, key: &str) -> (Self, Self) {
        let matched = self.required.key(self.candidates, self.depth, key);
        let rest = Position {
            candidates: self.candidates & !(matched.ended | matched.deeper),
            ..self
        };
        let value = Position {
            candidates: matched.deeper,
            depth: self.depth + 1,
            ..self
        };
        (rest, value)
    }

    /// Nothing to watch below: past every required path.
    fn off_path(self) -> Self {
        Position {
            candidates: 0,
            ..self
        }
    }

    pub(crate) fn watching(&self) -> bool {
        self.candidates != 0
    }
}

/// A value serialized with its keys watched from `position` on.
pub(crate) struct Watched<'r, 'v, T: ?Sized> {
    pub(crate) value: &'v T,
    pub(crate) position: Position<'r>,
}

impl<T: Serialize + ?Sized> Serialize for Watched<'_, '_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Track {
            inner: serializer,
            position: self.position,
        })
    }
}

/// A struct or map whose keys are watched: the top-level document (inside the shard adapter)
/// and every struct or map on the way to a required path.
pub struct Watch<'r, C> {
    pub inner: C,
    pub position: Position<'r>,
    /// For maps: where the value of the key just serialized is.
    pub pending: Option<Position<'r>>,
}

impl<'r, C> Watch<'r, C> {
    pub fn new(inner: C, position: Position<'r>) -> Self {
        Watch {
            inner,
            position,
            pending: None,
        }
    }
}

/// Serializes `value` in place of the plain one: watched only where a required path goes on.
macro_rules! watched {
    ($position:expr, $value:expr, |$v:ident| $call:expr) => {{
        let position = $position;
        if !position.watching() {
            let $v = $value;
            $call
        } else {
            let $v = &Watched {
                value: $value,
                position,
            };
            $call
        }
    }};
}

impl<C: SerializeStruct> SerializeStruct for Watch<'_, C> {
    type Ok = C::Ok;
    type Error = C::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), C::Error> {
        if !self.position.watching() {
            return self.inner.serialize_field(key, value);
        }
        let (rest, position) = self.position.advance(key);
        self.position = rest;
        if position.watching() {
            self.inner
                .serialize_field(key, &Watched { value, position })
        } else {
            self.inner.serialize_field(key, value)
        }
    }

    fn skip_field(&mut self, key: &'static str) -> Result<(), C::Error> {
        self.inner.skip_field(key)
    }

    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}

impl<C: SerializeMap> SerializeMap for Watch<'_, C> {
    type Ok = C::Ok;
    type Error = C::Error;

    fn serialize_key<K: Serialize + ?Sized>(&mut self, key: &K) -> Result<(), C::Error> {
        self.pending = Some(key_position(self.position, key));
        self.inner.serialize_key(key)
    }

    fn serialize_value<V: Serialize + ?Sized>(&mut self, value: &V) -> Result<(), C::Error> {
        let position = self
            .pending
            .take()
            .unwrap_or_else(|| self.position.off_path());
        watched!(position, value, |v| self.inner.serialize_value(v))
    }

    fn serialize_entry<K: Serialize + ?Sized, V: Serialize + ?Sized>(
        &mut self,
        key: &K,
        value: &V,
    ) -> Result<(), C::Error> {
        watched!(key_position(self.position, key), value, |v| self
            .inner
            .serialize_entry(key, v))
    }

    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}

/// Where a map's value is, from its key: a string key is matched, any other ends every path.
fn key_position<'r, K: Serialize + ?Sized>(position: Position<'r>, key: &K) -> Position<'r> {
    if position.candidates == 0 {
        return position.off_path();
    }
    key.serialize(KeyString(position))
        .unwrap_or_else(|_| position.off_path())
}

/// Reads a map key: where its value is, if the key is a string.
struct KeyString<'r>(Position<'r>);

impl<'r> Serializer for KeyString<'r> {
    type Ok = Position<'r>;
    // Never surfaces: a key this cannot read just ends the paths through it.
    type Error = Declined;

    fn serialize_str(self, key: &str) -> Result<Self::Ok, Declined> {
        Ok(self.0.after_key(key))
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok, Declined> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Self::Ok, Declined> {
        value.serialize(self)
    }

    declines_all_but_strings!();
}

/// A serializer that passes everything through to `inner`, watching the keys of the structs
/// and maps on the way to a required path.
struct Track<'r, S> {
    inner: S,
    position: Position<'r>,
}

/// Passes a value through.
macro_rules! pass {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $method(self, $($arg: $ty),*) -> Result<Self::Ok, Self::Error> {
            self.inner.$method($($arg),*)
        })*
    };
}

impl<'r, S: Serializer> Serializer for Track<'r, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = S::SerializeSeq;
    type SerializeTuple = S::SerializeTuple;
    type SerializeTupleStruct = S::SerializeTupleStruct;
    type SerializeTupleVariant = S::SerializeTupleVariant;
    type SerializeMap = Watch<'r, S::SerializeMap>;
    type SerializeStruct = Watch<'r, S::SerializeStruct>;
    type SerializeStructVariant = S::SerializeStructVariant;

    pass! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_f32(v: f32);
        serialize_f64(v: f64);
        serialize_char(v: char);
        serialize_str(v: &str);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str);
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        let position = self.position;
        self.inner.serialize_some(&Watched { value, position })
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        let position = self.position;
        self.inner
            .serialize_newtype_struct(name, &Watched { value, position })
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.inner
            .serialize_newtype_variant(name, index, variant, value)
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<S::SerializeSeq, S::Error> {
        self.inner.serialize_seq(len)
    }

    fn serialize_tuple(self, len: usize) -> Result<S::SerializeTuple, S::Error> {
        self.inner.serialize_tuple(len)
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<S::SerializeTupleStruct, S::Error> {
        self.inner.serialize_tuple_struct(name, len)
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<S::SerializeTupleVariant, S::Error> {
        self.inner
            .serialize_tuple_variant(name, index, variant, len)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        Ok(Watch::new(self.inner.serialize_map(len)?, self.position))
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        Ok(Watch::new(
            self.inner.serialize_struct(name, len)?,
            self.position,
        ))
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<S::SerializeStructVariant, S::Error> {
        self.inner
            .serialize_struct_variant(name, index, variant, len)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;

    use super::*;
    use crate::write::document::to_document;

    #[derive(Serialize)]
    struct Venue {
        code: u32,
    }

    #[derive(Serialize)]
    struct Price {
        currency: Option<String>,
        venue: Venue,
    }

    #[derive(Serialize)]
    struct Doc {
        at: i64,
        price: Price,
        #[serde(skip_serializing_if = "Option::is_none")]
        maybe: Option<Venue>,
    }

    #[derive(Serialize)]
    struct Flattened {
        #[serde(flatten)]
        doc: Doc,
        extra: u8,
    }

    const PATHS: &[&str] = &["at", "price.currency", "price.venue.code", "maybe.code"];
    const SEGMENTS: &[&[&str]] = &[
        &["at"],
        &["price", "currency"],
        &["price", "venue", "code"],
        &["maybe", "code"],
    ];

    /// What the guard found missing in `document`, serialized as the write path does.
    fn missing<T: Serialize>(document: &T) -> Option<usize> {
        missing_of(document, PATHS, SEGMENTS)
    }

    fn missing_of<T: Serialize>(
        document: &T,
        paths: &'static [&'static str],
        segments: &'static [&'static [&'static str]],
    ) -> Option<usize> {
        let required = Required::new(paths, segments, length_mask(paths, segments));
        let watched = to_document("", document, "shard", "x", Position::top(&required)).unwrap();
        // Watching changes nothing in what is written.
        let nothing = Required::new(&[], &[], 0);
        let plain = to_document("", document, "shard", "x", Position::top(&nothing)).unwrap();
        assert_eq!(watched, plain);
        required.missing()
    }

    fn doc(currency: Option<&str>, maybe: bool) -> Doc {
        Doc {
            at: 1,
            price: Price {
                currency: currency.map(Into::into),
                venue: Venue { code: 7 },
            },
            maybe: maybe.then_some(Venue { code: 8 }),
        }
    }

    #[test]
    fn finds_every_path_through_structs_options_and_flattened_maps() {
        assert_eq!(missing(&doc(Some("USD"), true)), None);
        // A `None` counts as the key being there (see `Required::key`).
        assert_eq!(missing(&doc(None, true)), None);
        // Skipped when serializing: the path is missing.
        assert_eq!(missing(&doc(Some("USD"), false)), Some(3));
        let flattened = Flattened {
            doc: doc(Some("USD"), true),
            extra: 1,
        };
        assert_eq!(missing(&flattened), None);
    }

    #[test]
    fn without_segments_each_path_is_its_own_one_segment() {
        let top: &[&str] = &["at", "maybe"];
        assert_eq!(missing_of(&doc(None, true), top, &[]), None);
        assert_eq!(missing_of(&doc(None, false), top, &[]), Some(1));
        // A dotted path given without segments is one key with a dot in it, not a nested path.
        let dotted: &[&str] = &["at", "price.currency"];
        assert_eq!(missing_of(&doc(Some("USD"), true), dotted, &[]), Some(1));
        let mut map: BTreeMap<&str, u8> = BTreeMap::new();
        map.insert("price.currency", 1);
        map.insert("at", 1);
        assert_eq!(missing_of(&map, dotted, &[]), None);
        assert_eq!(length_mask(top, &[]), (1 << 2) | (1 << 5));
    }

    #[test]
    fn maps_with_string_keys_are_followed_and_others_are_not() {
        let mut map: BTreeMap<&str, serde_json::Value> = BTreeMap::new();
        map.insert("at", 1.into());
        map.insert(
            "price",
            serde_json::json!({ "currency": "USD", "venue": { "code": 7 } }),
        );
        // `serde_json::Value` serializes its objects as maps.
        assert_eq!(missing(&map), Some(3));
        map.insert("maybe", serde_json::json!({ "code": 1 }));
        assert_eq!(missing(&map), None);
        map.insert(
            "price",
            serde_json::json!({ "currency": "USD", "venue": 7 }),
        );
        assert_eq!(missing(&map), Some(2));
        let numbered: BTreeMap<u32, u32> = BTreeMap::from([(1, 1)]);
        assert_eq!(missing(&numbered), Some(0));
    }
}
