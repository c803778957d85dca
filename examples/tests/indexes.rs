//! The committed `firestore.indexes.json` is the recipe's, plus the whole-collection feed's
//! (shard, timestamp) and the compound query's (shard, exchange, instrumentType, timestamp),
//! and serves every query the app runs.

use sharded_examples::Instrument;
use sharded_runtime::Sharded;

const FILE: &str = include_str!("../firestore.indexes.json");

#[test]
fn the_committed_file_covers_the_instruments() {
    assert_eq!(
        Instrument::indexes().missing_from(FILE).unwrap(),
        Vec::<String>::new()
    );
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
    let mut indexes = file["indexes"].as_array().unwrap().clone();
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
    assert_eq!(
        file["fieldOverrides"],
        serde_json::json!([
            { "collectionGroup": "instruments", "fieldPath": "timestamp", "indexes": [] },
            { "collectionGroup": "instruments", "fieldPath": "shard", "indexes": [] }
        ])
    );
}
