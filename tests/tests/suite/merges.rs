//! `merge_fields`, Firestore's `set(..., merge)` for a typed document: on an existing document
//! it writes what Firestore's own masked write writes (every other field kept, the shard
//! among them); on a new one it creates the whole document with a shard drawn, where
//! Firestore's masked write would store the masked fields alone (measured here), which no
//! sharded query could return.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::Value;
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::{Error, Parent, Sharded};
use sharded_tests::test_db;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 5,
    order_by = "listed_at",
    parent = "shops",
    collection = "listings"
)]
struct Listing {
    #[sharded(index)]
    seller: String,
    price: i64,
    title: String,
    listed_at: FirestoreTimestamp,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 5, order_by = "listed_at", collection = "offers")]
struct Offer {
    #[sharded(index)]
    seller: String,
    price: i64,
    title: String,
    listed_at: FirestoreTimestamp,
}

fn at(seconds: i64) -> FirestoreTimestamp {
    FirestoreTimestamp(sharded_runtime::firestore::jiff::Timestamp::from_second(seconds).unwrap())
}

fn offer(seller: &str, price: i64, title: &str, seconds: i64) -> Offer {
    Offer {
        seller: seller.into(),
        price,
        title: title.into(),
        listed_at: at(seconds),
    }
}

/// The stored fields of `collection/id`, read raw.
async fn stored(db: &FirestoreDb, collection: &str, id: &str) -> HashMap<String, Value> {
    db.fluent()
        .select()
        .by_id_in(collection)
        .one(id)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("{collection}/{id} is not stored"))
        .fields
}

/// Firestore's own masked write (`set(..., {mergeFields})`), without a precondition, to an
/// unsharded collection: the baseline.
async fn plain_merge(db: &FirestoreDb, id: &str, document: &Offer, fields: &[&str]) {
    db.fluent()
        .update()
        .fields(fields.iter().copied())
        .in_col("plain_offers")
        .document_id(id)
        .object(document)
        .execute::<()>()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_merge_writes_what_firestores_does_and_keeps_the_shard() {
    let test = test_db("merges").await;
    let db = &test.db;
    let offers = Offer::collection(db);
    let fields = Offer::fields();
    let before = offer("s1", 10, "lamp", 1_700_000_000);
    let after = offer("s2", 20, "desk", 1_700_000_100);

    // An existing document: the masked fields written, every other one kept.
    offers.upsert("a", &before).await.unwrap();
    db.fluent()
        .update()
        .in_col("plain_offers")
        .document_id("a")
        .object(&before)
        .execute::<()>()
        .await
        .unwrap();
    let shard = stored(db, "offers", "a").await["shard"].clone();
    offers
        .merge_fields("a", &after, &[fields.price, fields.title])
        .await
        .unwrap();
    plain_merge(db, "a", &after, &["price", "title"]).await;
    let mut merged = stored(db, "offers", "a").await;
    assert_eq!(
        merged.remove("shard"),
        Some(shard),
        "the stored shard stays"
    );
    assert_eq!(merged, stored(db, "plain_offers", "a").await);
    assert_eq!(
        offers.get("a").await.unwrap().unwrap(),
        offer("s1", 20, "desk", 1_700_000_000)
    );

    // A new document: Firestore's masked write stores the masked fields alone (measured);
    // the merge creates the whole document, with a shard drawn.
    plain_merge(db, "b", &after, &["price", "title"]).await;
    let mut plain: Vec<String> = stored(db, "plain_offers", "b").await.into_keys().collect();
    plain.sort();
    assert_eq!(plain, ["price", "title"]);
    offers
        .merge_fields("b", &after, &[fields.price, fields.title])
        .await
        .unwrap();
    assert_eq!(offers.get("b").await.unwrap().unwrap(), after);
    let newest = Offer::query().seller("s2").fetch(db).await.unwrap();
    assert_eq!(
        newest,
        std::slice::from_ref(&after),
        "the sharded query reads it"
    );

    // A merge names at least one field, and no field it would drop.
    assert!(matches!(
        offers.merge_fields("c", &after, &[]).await,
        Err(Error::InvalidUpdate(_))
    ));
    assert!(offers.get("c").await.unwrap().is_none(), "nothing was sent");
}

#[tokio::test]
async fn a_merge_under_a_parent_creates_then_updates() {
    let test = test_db("merges-parent").await;
    let db = &test.db;
    let shop = Parent::<Listing>::new(&["shop1"]).unwrap();
    let listings = Listing::collection_in(db, &shop);
    let fields = Listing::fields();
    let first = Listing {
        seller: "s1".into(),
        price: 5,
        title: "chair".into(),
        listed_at: at(1_700_000_000),
    };
    listings
        .merge_fields("x", &first, &[fields.price])
        .await
        .unwrap();
    let second = Listing {
        price: 7,
        ..first.clone()
    };
    listings
        .merge_fields(
            "x",
            &Listing {
                title: "ignored".into(),
                ..second.clone()
            },
            &[fields.price],
        )
        .await
        .unwrap();
    assert_eq!(listings.get("x").await.unwrap().unwrap(), second);
    let read = Listing::query()
        .all()
        .in_parent(&shop)
        .fetch(db)
        .await
        .unwrap();
    assert_eq!(read, [second]);
}
