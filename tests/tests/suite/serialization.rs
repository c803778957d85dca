//! The write path serializes a document's top level itself (adding the shard and checking the
//! required paths as it goes) and each value through the firestore crate: seeded random
//! documents of many value kinds, flattened or not, come out exactly as the firestore crate's
//! own document serializer makes them, plus the shard; a value that fails to serialize fails
//! the write instead of being left out.

use std::collections::{BTreeMap, HashMap};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_runtime::__private::{serialize, serialize_unguarded};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};
use sharded_runtime::firestore::{
    FirestoreLatLng, FirestoreTimestamp, firestore_document_from_serializable,
};
use sharded_runtime::{Error, Sharded, StoredNames};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Kind {
    Unit,
    Newtype(i64),
    Tuple(i32, String),
    Struct { a: bool, b: Option<f64> },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, StoredNames)]
#[serde(rename_all = "camelCase")]
struct Inner {
    currency: String,
    amount_micros: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    tags: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[serde(rename_all = "camelCase")]
#[sharded(shards = 5, order_by = "at")]
struct Everything {
    #[sharded(index)]
    name: String,
    #[sharded(index(currency: String))]
    price: Inner,
    count: u32,
    signed: i64,
    ratio: f64,
    flag: bool,
    maybe: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped_when_none: Option<i64>,
    list: Vec<i64>,
    nested_list: Vec<Vec<String>>,
    map: BTreeMap<String, i64>,
    numbered: BTreeMap<u16, String>,
    kind: Kind,
    kinds: Vec<Kind>,
    when: Option<FirestoreTimestamp>,
    place: FirestoreLatLng,
    unit: (),
    at: FirestoreTimestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shard_values = ["p", "q"], order_by = "at")]
struct Flattened {
    #[sharded(index)]
    symbol: String,
    #[serde(flatten)]
    inner: Inner,
    #[serde(flatten)]
    extra: HashMap<String, i64>,
    at: FirestoreTimestamp,
}

fn word(rng: &mut StdRng) -> String {
    let len = rng.random_range(0..12);
    (0..len)
        .map(|_| {
            *['a', 'z', 'Q', '0', ' ', '.', '`', 'é', '日', '\u{0}', '🦀']
                .get(rng.random_range(0..11))
                .unwrap()
        })
        .collect()
}

fn timestamp(rng: &mut StdRng) -> FirestoreTimestamp {
    FirestoreTimestamp(
        sharded_runtime::firestore::jiff::Timestamp::new(
            rng.random_range(-60_000_000_000..250_000_000_000),
            rng.random_range(0..1_000_000_000),
        )
        .unwrap(),
    )
}

fn inner(rng: &mut StdRng) -> Inner {
    Inner {
        currency: word(rng),
        amount_micros: rng.random(),
        note: rng.random_bool(0.5).then(|| word(rng)),
        tags: (0..rng.random_range(0..3)).map(|_| word(rng)).collect(),
    }
}

fn kind(rng: &mut StdRng) -> Kind {
    match rng.random_range(0..4) {
        0 => Kind::Unit,
        1 => Kind::Newtype(rng.random()),
        2 => Kind::Tuple(rng.random(), word(rng)),
        _ => Kind::Struct {
            a: rng.random(),
            b: rng
                .random_bool(0.5)
                .then(|| rng.random_range(-1e300..1e300)),
        },
    }
}

fn everything(rng: &mut StdRng) -> Everything {
    Everything {
        name: word(rng),
        price: inner(rng),
        count: rng.random(),
        signed: rng.random(),
        ratio: *[0.0, -0.0, f64::INFINITY, f64::NAN, 1.5e-310, rng.random()]
            .get(rng.random_range(0..6))
            .unwrap(),
        flag: rng.random(),
        maybe: rng.random_bool(0.5).then(|| word(rng)),
        skipped_when_none: rng.random_bool(0.5).then(|| rng.random()),
        list: (0..rng.random_range(0..4)).map(|_| rng.random()).collect(),
        nested_list: (0..rng.random_range(0..3))
            .map(|_| (0..rng.random_range(0..3)).map(|_| word(rng)).collect())
            .collect(),
        map: (0..rng.random_range(0..4))
            .map(|_| (word(rng), rng.random()))
            .collect(),
        numbered: (0..rng.random_range(0..3))
            .map(|_| (rng.random(), word(rng)))
            .collect(),
        kind: kind(rng),
        kinds: (0..rng.random_range(0..3)).map(|_| kind(rng)).collect(),
        when: rng.random_bool(0.5).then(|| timestamp(rng)),
        place: FirestoreLatLng(sharded_runtime::firestore::FirestoreGeoPoint {
            latitude: rng.random_range(-90.0..90.0),
            longitude: rng.random_range(-180.0..180.0),
        }),
        unit: (),
        at: timestamp(rng),
    }
}

/// Our document equals the firestore crate's plus a shard of `T`'s, for the guarded and the
/// unguarded path alike.
fn check<T: Sharded>(document: &T, name: &str) {
    let expected = firestore_document_from_serializable(name, document).unwrap();
    for ours in [
        serialize(document, name).unwrap(),
        serialize_unguarded(document, name).unwrap(),
    ] {
        let mut fields = ours.fields.clone();
        let shard = fields.remove(T::SHARD_FIELD).expect("a shard");
        match shard.value_type {
            Some(ValueType::StringValue(shard)) => {
                assert!(T::SHARD_VALUES.contains(&shard.as_str()), "{shard}")
            }
            other => panic!("shard {other:?}"),
        }
        assert_eq!(
            canonical_fields(&fields),
            canonical_fields(&expected.fields),
            "{}",
            std::any::type_name::<T>()
        );
        assert_eq!(ours.name, expected.name);
        assert_eq!((ours.create_time, ours.update_time), (None, None));
    }
}

/// A map's fields as text, keys sorted at every depth and doubles as their bits (NaN is not
/// equal to itself).
fn canonical_fields(fields: &HashMap<String, Value>) -> String {
    let sorted: BTreeMap<&String, String> = fields
        .iter()
        .map(|(key, value)| (key, canonical(value)))
        .collect();
    format!("{sorted:?}")
}

fn canonical(value: &Value) -> String {
    match &value.value_type {
        Some(ValueType::MapValue(map)) => format!("map{}", canonical_fields(&map.fields)),
        Some(ValueType::ArrayValue(array)) => format!(
            "array{:?}",
            array.values.iter().map(canonical).collect::<Vec<_>>()
        ),
        Some(ValueType::DoubleValue(double)) => format!("double {:x}", double.to_bits()),
        other => format!("{other:?}"),
    }
}

#[test]
fn documents_come_out_as_the_firestore_crate_makes_them_plus_the_shard() {
    let mut rng = StdRng::seed_from_u64(sharded_tests::seed(
        "documents_come_out_as_the_firestore_crate_makes_them_plus_the_shard",
    ));
    for i in 0..400 {
        check(
            &everything(&mut rng),
            &format!("projects/p/databases/(default)/documents/everythings/e{i}"),
        );
        let flattened = Flattened {
            symbol: word(&mut rng),
            inner: inner(&mut rng),
            extra: (0..rng.random_range(0..4))
                .map(|_| (format!("x{}", word(&mut rng)), rng.random()))
                .collect(),
            at: timestamp(&mut rng),
        };
        check(&flattened, "");
    }
}

/// A flattened map's keys come from data: one named as the shard field is refused, whatever
/// else the map holds, by the guarded and the unguarded write path alike; nothing is written
/// over the user's value, and the user's value never becomes the shard.
#[test]
fn a_flattened_key_named_as_the_shard_field_is_refused() {
    let mut rng = StdRng::seed_from_u64(11);
    for _ in 0..50 {
        let mut extra: HashMap<String, i64> = (0..rng.random_range(0..4))
            .map(|_| (format!("x{}", word(&mut rng)), rng.random()))
            .collect();
        extra.insert(Flattened::SHARD_FIELD.to_owned(), rng.random());
        let flattened = Flattened {
            symbol: word(&mut rng),
            inner: inner(&mut rng),
            extra,
            at: timestamp(&mut rng),
        };
        for result in [
            serialize(&flattened, ""),
            serialize_unguarded(&flattened, ""),
        ] {
            match result {
                Err(Error::InvalidFieldName { field, .. }) => {
                    assert_eq!(field, Flattened::SHARD_FIELD)
                }
                other => panic!("{other:?}"),
            }
        }
    }
}

/// A value whose `Serialize` fails, at the top level or inside a struct.
#[derive(Debug, Clone, PartialEq, Deserialize)]
struct Failing;

impl Serialize for Failing {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("this value refuses to serialize"))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Holder {
    failing: Failing,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 2, order_by = "at")]
struct WithFailing {
    failing: Option<Failing>,
    holder: Option<Holder>,
    at: FirestoreTimestamp,
}

#[test]
fn a_value_that_fails_to_serialize_fails_the_write() {
    let mut rng = StdRng::seed_from_u64(7);
    let at = timestamp(&mut rng);
    let none = WithFailing {
        failing: None,
        holder: None,
        at,
    };
    check(&none, "");
    for document in [
        WithFailing {
            failing: Some(Failing),
            ..none.clone()
        },
        WithFailing {
            holder: Some(Holder { failing: Failing }),
            ..none.clone()
        },
    ] {
        assert!(firestore_document_from_serializable("d", &document).is_err());
        for result in [
            serialize(&document, "d"),
            serialize_unguarded(&document, "d"),
        ] {
            match result {
                Err(Error::Firestore(error)) => assert!(
                    error
                        .to_string()
                        .contains("this value refuses to serialize"),
                    "{error}"
                ),
                other => panic!("expected the serializer's error, got {other:?}"),
            }
        }
    }
}

/// Types whose hand-written `Serialize` leaves out the stored paths listed in `omit`, so that
/// the write guard can be shown each required path missing: one type whose paths are all one
/// plain segment (the derive then writes no segments), one with a quoted and a nested path.
mod omitting {
    use serde::ser::SerializeStruct;
    use serde::{Deserialize, Serialize, Serializer};
    use sharded_runtime::{Sharded, StoredNames};

    #[derive(Debug, Clone, Default, Serialize, Deserialize, StoredNames)]
    pub struct Price {
        pub currency: String,
    }

    #[derive(Debug, Clone, Default, Deserialize, Sharded)]
    #[serde(rename_all = "camelCase")]
    #[sharded(shards = 2, order_by = "at")]
    pub struct Plain {
        #[sharded(index)]
        pub venue: String,
        #[sharded(index)]
        pub instrument_type: String,
        pub at: i64,
        #[serde(skip)]
        pub omit: Vec<&'static str>,
    }

    #[derive(Debug, Clone, Default, Deserialize, Sharded)]
    #[sharded(shards = 2, order_by = "at")]
    pub struct Spelled {
        #[serde(rename = "venue-code")]
        #[sharded(index)]
        pub venue: String,
        #[sharded(index(currency: String))]
        pub price: Price,
        #[sharded(index)]
        pub plain: String,
        pub at: i64,
        #[serde(skip)]
        pub omit: Vec<&'static str>,
    }

    /// A struct with no fields: where `price` is written without its `currency`.
    #[derive(Serialize)]
    struct Empty {}

    impl Serialize for Plain {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let omitted = |path: &str| self.omit.contains(&path);
            let mut s = serializer.serialize_struct("Plain", 3)?;
            if !omitted("venue") {
                s.serialize_field("venue", &self.venue)?;
            }
            if !omitted("instrumentType") {
                s.serialize_field("instrumentType", &self.instrument_type)?;
            }
            if !omitted("at") {
                s.serialize_field("at", &self.at)?;
            }
            s.end()
        }
    }

    impl Serialize for Spelled {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let omitted = |path: &str| self.omit.contains(&path);
            let mut s = serializer.serialize_struct("Spelled", 4)?;
            if !omitted("`venue-code`") {
                s.serialize_field("venue-code", &self.venue)?;
            }
            if omitted("price.currency") {
                s.serialize_field("price", &Empty {})?;
            } else {
                s.serialize_field("price", &self.price)?;
            }
            if !omitted("plain") {
                s.serialize_field("plain", &self.plain)?;
            }
            if !omitted("at") {
                s.serialize_field("at", &self.at)?;
            }
            s.end()
        }
    }

    pub trait Omitting: Sharded + Default {
        fn omitting(paths: Vec<&'static str>) -> Self;
    }

    impl Omitting for Plain {
        fn omitting(omit: Vec<&'static str>) -> Self {
            Plain {
                omit,
                ..Plain::default()
            }
        }
    }

    impl Omitting for Spelled {
        fn omitting(omit: Vec<&'static str>) -> Self {
            Spelled {
                omit,
                ..Spelled::default()
            }
        }
    }
}

/// Every subset of `T`'s required paths left out: the write is refused on the first missing
/// path in `REQUIRED_FIELDS` order, and a complete document passes.
fn guard_finds_every_missing_path<T: omitting::Omitting>() {
    let required = T::REQUIRED_FIELDS;
    for subset in 0u32..1 << required.len() {
        let omitted: Vec<&'static str> = (0..required.len())
            .filter(|i| subset & (1 << i) != 0)
            .map(|i| required[i])
            .collect();
        let result = serialize(&T::omitting(omitted.clone()), "d");
        match (omitted.first(), result) {
            (None, Ok(_)) => {}
            (Some(first), Err(Error::FieldNotWritten { path })) => assert_eq!(path, *first),
            (expected, result) => panic!(
                "{}: omitting {omitted:?}, expected {expected:?} missing, got {result:?}",
                std::any::type_name::<T>()
            ),
        }
    }
}

#[test]
fn the_write_guard_finds_each_missing_path_plain_quoted_or_nested() {
    use omitting::{Plain, Spelled};
    assert_eq!(Plain::REQUIRED_FIELDS, ["at", "venue", "instrumentType"]);
    assert_eq!(
        Spelled::REQUIRED_FIELDS,
        ["at", "`venue-code`", "price.currency", "plain"]
    );
    // Plain paths are their own one segment: the derive writes no segments for them.
    assert!(Plain::TABLES.required_segments.is_empty());
    assert_eq!(
        Spelled::TABLES.required_segments,
        [
            &["at"][..],
            &["venue-code"],
            &["price", "currency"],
            &["plain"]
        ]
    );
    guard_finds_every_missing_path::<Plain>();
    guard_finds_every_missing_path::<Spelled>();
}
