//! The committed `firestore.indexes.json` is the recipe's, plus the whole-collection feed's
//! (shard, timestamp) and the compound query's (shard, exchange, instrumentType, timestamp),
//! and the chat's messages in both scopes, and serves every query the apps run.

use sharded_examples::{Instrument, Message};
use sharded_runtime::Sharded;

const FILE: &str = include_str!("../firestore.indexes.json");

#[test]
fn the_committed_file_covers_the_instruments_and_the_messages() {
    assert_eq!(
        Instrument::indexes().missing_from(FILE).unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        Message::indexes().missing_from(FILE).unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn the_messages_have_each_index_per_room_and_across_rooms() {
    let file: serde_json::Value = serde_json::from_str(FILE).unwrap();
    let messages = |scope: &str| {
        let mut fields: Vec<String> = file["indexes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["collectionGroup"] == "messages" && i["queryScope"] == scope)
            .map(|i| i["fields"].to_string())
            .collect();
        fields.sort();
        fields
    };
    assert_eq!(messages("COLLECTION").len(), 2);
    assert_eq!(messages("COLLECTION"), messages("COLLECTION_GROUP"));
}

#[test]
fn the_file_is_the_recipes_for_instruments() {
    let file: serde_json::Value = serde_json::from_str(FILE).unwrap();
    let index = |field: &str| {
        serde_json::json!({
            "collectionGroup": "instruments",
            "queryScope": "COLLECTION",
            "fields": [
                { "fieldPath": "shard", "order": "DESCENDING" },
                { "fieldPath": field, "order": "ASCENDING" },
                { "fieldPath": "timestamp", "order": "DESCENDING" }
            ]
        })
    };
    let mut indexes: Vec<serde_json::Value> = file["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["collectionGroup"] == "instruments")
        .cloned()
        .collect();
    indexes.sort_by_key(|i| i["fields"].to_string());
    let compound = serde_json::json!({
        "collectionGroup": "instruments",
        "queryScope": "COLLECTION",
        "fields": [
            { "fieldPath": "shard", "order": "DESCENDING" },
            { "fieldPath": "exchange", "order": "ASCENDING" },
            { "fieldPath": "instrumentType", "order": "ASCENDING" },
            { "fieldPath": "timestamp", "order": "DESCENDING" }
        ]
    });
    let whole_collection = serde_json::json!({
        "collectionGroup": "instruments",
        "queryScope": "COLLECTION",
        "fields": [
            { "fieldPath": "shard", "order": "DESCENDING" },
            { "fieldPath": "timestamp", "order": "DESCENDING" }
        ]
    });
    let mut expected = vec![
        index("exchange"),
        index("instrumentType"),
        index("price.currency"),
        whole_collection,
        compound,
    ];
    expected.sort_by_key(|i| i["fields"].to_string());
    assert_eq!(indexes, expected);
    let overrides: Vec<&serde_json::Value> = file["fieldOverrides"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["collectionGroup"] == "instruments")
        .collect();
    assert_eq!(
        overrides,
        [
            &serde_json::json!({ "collectionGroup": "instruments", "fieldPath": "timestamp", "indexes": [] }),
            &serde_json::json!({ "collectionGroup": "instruments", "fieldPath": "shard", "indexes": [] })
        ]
    );
}
