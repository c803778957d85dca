//! Every write path stores the user's fields plus a shard, read back raw from the emulator.

use std::collections::HashMap;

use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    Document, Value, value::ValueType,
};
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::{Error, Sharded, Stored};
use sharded_tests::models::{Instrument, Price};
use sharded_tests::test_db;

fn instrument(symbol: &str, seconds: i64) -> Instrument {
    Instrument {
        symbol: symbol.into(),
        price: Price {
            currency: "USD".into(),
            micros: 34_790_000,
        },
        exchange: "EXCHG1".into(),
        instrument_type: "commonstock".into(),
        timestamp: FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(seconds).unwrap(),
        ),
    }
}

async fn raw(db: &FirestoreDb, id: &str) -> Document {
    db.fluent()
        .select()
        .by_id_in(Instrument::COLLECTION)
        .one(id)
        .await
        .expect("read")
        .unwrap_or_else(|| panic!("document {id} was not written"))
}

fn string(fields: &HashMap<String, Value>, name: &str) -> String {
    match fields.get(name).and_then(|v| v.value_type.clone()) {
        Some(ValueType::StringValue(s)) => s,
        other => panic!("`{name}` is not a string: {other:?}"),
    }
}

/// The raw document holds the user's fields under serde's names, the timestamp as a Firestore
/// timestamp, and a shard out of the declared values; and nothing else.
fn assert_stored(document: &Document, expected: &Instrument) -> String {
    let fields = &document.fields;
    let mut names: Vec<&str> = fields.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "exchange",
            "instrumentType",
            "price",
            "shard",
            "symbol",
            "timestamp"
        ]
    );
    assert_eq!(string(fields, "symbol"), expected.symbol);
    assert_eq!(string(fields, "instrumentType"), expected.instrument_type);
    assert!(matches!(
        fields["timestamp"].value_type,
        Some(ValueType::TimestampValue(ref ts)) if ts.seconds == expected.timestamp.0.as_second()
    ));
    let Some(ValueType::MapValue(price)) = &fields["price"].value_type else {
        panic!("price is not a map");
    };
    assert_eq!(string(&price.fields, "currency"), "USD");
    let shard = string(fields, "shard");
    assert!(
        Instrument::SHARD_VALUES.contains(&shard.as_str()),
        "shard {shard}"
    );
    shard
}

#[tokio::test]
async fn every_write_path_stores_a_shard() {
    let test = test_db("writes").await;
    let db = &test.db;
    let instruments = Instrument::collection(db);

    let generated = instruments
        .insert(&instrument("AAA", 100))
        .await
        .unwrap()
        .id;
    assert_stored(&raw(db, &generated).await, &instrument("AAA", 100));

    instruments
        .insert_with_id("bbb", &instrument("BBB", 101))
        .await
        .unwrap();
    assert_stored(&raw(db, "bbb").await, &instrument("BBB", 101));

    instruments
        .upsert("ccc", &instrument("CCC", 102))
        .await
        .unwrap();
    assert_stored(&raw(db, "ccc").await, &instrument("CCC", 102));

    instruments
        .update("ccc", &instrument("CCC2", 103))
        .await
        .unwrap();
    assert_stored(&raw(db, "ccc").await, &instrument("CCC2", 103));

    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    for i in 0..30 {
        instruments
            .upsert_in(
                &mut batch,
                &format!("batch-{i}"),
                &instrument(&format!("B{i}"), 200 + i),
            )
            .unwrap();
    }
    batch.write().await.unwrap();
    let mut shards = std::collections::HashSet::new();
    for i in 0..30 {
        shards.insert(assert_stored(
            &raw(db, &format!("batch-{i}")).await,
            &instrument(&format!("B{i}"), 200 + i),
        ));
    }
    // 30 uniform draws out of 3 miss a value with probability 3·(2/3)^30 ≈ 1.6e-5.
    assert_eq!(shards.len(), 3, "batch writes spread over every shard");
}

#[tokio::test]
async fn reads_return_the_users_type_and_shard() {
    let test = test_db("reads").await;
    let instruments = Instrument::collection(&test.db);
    let written = instrument("AAA", 100);
    instruments.upsert("aaa", &written).await.unwrap();

    assert_eq!(instruments.get("aaa").await.unwrap(), Some(written.clone()));
    let stored: Stored<Instrument> = instruments.get_stored("aaa").await.unwrap().unwrap();
    assert_eq!(stored.id, "aaa");
    assert_eq!(stored.document, written);
    let raw_shard = string(&raw(&test.db, "aaa").await.fields, "shard");
    assert_eq!(stored.shard, raw_shard);

    assert_eq!(instruments.get("missing").await.unwrap(), None);
    instruments.delete("aaa").await.unwrap();
    assert_eq!(instruments.get("aaa").await.unwrap(), None);
}

#[tokio::test]
async fn writes_that_firestore_refuses_are_errors() {
    let test = test_db("refusals").await;
    let instruments = Instrument::collection(&test.db);
    let missing = instruments.update("nobody", &instrument("X", 1)).await;
    assert!(matches!(missing, Err(Error::Firestore(_))), "{missing:?}");
    assert_eq!(
        instruments.get("nobody").await.unwrap(),
        None,
        "a failed update writes nothing"
    );

    instruments
        .insert_with_id("once", &instrument("X", 1))
        .await
        .unwrap();
    let twice = instruments
        .insert_with_id("once", &instrument("Y", 2))
        .await;
    assert!(matches!(twice, Err(Error::Firestore(_))), "{twice:?}");
    assert_eq!(instruments.get("once").await.unwrap().unwrap().symbol, "X");
}

#[tokio::test]
async fn a_field_masked_update_keeps_the_shard_and_every_other_field() {
    let test = test_db("update-fields").await;
    let db = &test.db;
    let instruments = Instrument::collection(db);
    instruments
        .upsert("aaa", &instrument("AAA", 100))
        .await
        .unwrap();
    let shard = assert_stored(&raw(db, "aaa").await, &instrument("AAA", 100));

    // Many updates: with a re-drawn shard, 20 updates would keep it with probability (1/3)^20.
    let fields = Instrument::fields();
    for round in 0..20 {
        let mut changed = instrument("IGNORED", 200 + round);
        changed.exchange = format!("EXCHG{round}");
        changed.price.micros = round;
        instruments
            .update_fields("aaa", &changed, &[fields.exchange, fields.timestamp])
            .await
            .unwrap();
        let stored = instruments.get_stored("aaa").await.unwrap().unwrap();
        assert_eq!(stored.shard, shard, "round {round}: the shard is kept");
        assert_eq!(stored.document.exchange, format!("EXCHG{round}"));
        assert_eq!(stored.document.timestamp, changed.timestamp);
        // Unmasked fields are as they were.
        assert_eq!(stored.document.symbol, "AAA");
        assert_eq!(stored.document.price.micros, 34_790_000);
    }
    // The document is still found by sharded queries, under its new values.
    let found = Instrument::query()
        .exchange("EXCHG19")
        .fetch(db)
        .await
        .unwrap();
    assert_eq!(found.len(), 1);

    // A missing document is an error, not a document stored without a shard.
    let missing = instruments
        .update_fields("nobody", &instrument("X", 1), &[fields.exchange])
        .await;
    assert!(matches!(missing, Err(Error::Firestore(_))), "{missing:?}");
    assert_eq!(instruments.get("nobody").await.unwrap(), None);

    // Nothing to update is refused before sending.
    let nothing = instruments
        .update_fields("aaa", &instrument("X", 1), &[])
        .await;
    assert!(
        matches!(nothing, Err(Error::InvalidUpdate(_))),
        "{nothing:?}"
    );
    assert_eq!(
        Instrument::fields().instrument_type.path(),
        "instrumentType"
    );
    assert_eq!(Instrument::fields().price.path(), "price");
}

#[tokio::test]
async fn invalid_ids_are_refused_on_every_path_before_sending() {
    let test = test_db("ids").await;
    let db = &test.db;
    let instruments = Instrument::collection(db);
    let document = instrument("AAA", 1);
    let long = "x".repeat(1501);
    for id in ["", "a/sub/b", ".", "..", "__reserved__", long.as_str()] {
        let invalid = |result: Result<(), Error>| {
            assert!(
                matches!(result, Err(Error::InvalidDocumentId { .. })),
                "{id:?}: {result:?}"
            );
        };
        invalid(instruments.upsert(id, &document).await.map(drop));
        invalid(instruments.update(id, &document).await.map(drop));
        invalid(instruments.insert_with_id(id, &document).await.map(drop));
        invalid(instruments.delete(id).await);
        invalid(instruments.get(id).await.map(drop));
        invalid(instruments.get_stored(id).await.map(drop));
        invalid(
            instruments
                .update_fields(id, &document, &[Instrument::fields().symbol])
                .await
                .map(drop),
        );
        let writer = db.create_simple_batch_writer().await.unwrap();
        let mut batch = writer.new_batch();
        invalid(instruments.upsert_in(&mut batch, id, &document));
    }
    // Nothing was written anywhere, subcollections included.
    let all: Vec<Document> = db
        .fluent()
        .select()
        .from(Instrument::COLLECTION)
        .all_descendants()
        .query()
        .await
        .unwrap();
    assert!(all.is_empty(), "{all:?}");
}

/// A hand-written `Serialize` that stores the order field under another name: the derive reads
/// `at`, the document would hold `when`, and no sharded query would ever return it.
mod hand_written {
    use serde::ser::SerializeStruct;
    use serde::{Deserialize, Serialize, Serializer};
    use sharded_runtime::Sharded;
    use sharded_runtime::firestore::FirestoreTimestamp;

    #[derive(Deserialize, Sharded)]
    #[sharded(shards = 3, order_by = "at")]
    pub struct Renamed {
        #[sharded(index)]
        pub venue: String,
        pub at: FirestoreTimestamp,
    }

    impl Serialize for Renamed {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut s = serializer.serialize_struct("Renamed", 2)?;
            s.serialize_field("venue", &self.venue)?;
            s.serialize_field("when", &self.at)?;
            s.end()
        }
    }
}

#[tokio::test]
async fn the_write_guard_refuses_documents_without_their_query_fields() {
    use hand_written::Renamed;
    let test = test_db("guard").await;
    let db = &test.db;
    let renamed = Renamed {
        venue: "X".into(),
        at: FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(1).unwrap(),
        ),
    };
    let collection = Renamed::collection(db);
    let not_written = |result: Result<(), Error>| {
        assert!(
            matches!(result, Err(Error::FieldNotWritten { path: "at" })),
            "{result:?}"
        );
    };
    not_written(collection.upsert("a", &renamed).await.map(drop));
    not_written(collection.update("a", &renamed).await.map(drop));
    not_written(collection.insert_with_id("a", &renamed).await.map(drop));
    assert!(matches!(
        collection.insert(&renamed).await,
        Err(Error::FieldNotWritten { path: "at" })
    ));
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut batch = writer.new_batch();
    not_written(collection.upsert_in(&mut batch, "a", &renamed));
    not_written(
        collection
            .update_fields("a", &renamed, &[Renamed::fields().at])
            .await
            .map(drop),
    );
    // Masking only `venue` leaves `at` as stored: allowed (it fails here only because the
    // document does not exist).
    let venue_only = collection
        .update_fields("a", &renamed, &[Renamed::fields().venue])
        .await;
    assert!(
        matches!(venue_only, Err(Error::Firestore(_))),
        "{venue_only:?}"
    );
    let all: Vec<Document> = db
        .fluent()
        .select()
        .from(Renamed::COLLECTION)
        .query()
        .await
        .unwrap();
    assert!(all.is_empty(), "nothing was written: {all:?}");
}
