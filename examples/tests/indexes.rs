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
    // Every message, by author, by mention (`CONTAINS`): each both ways (`reversible`).
    assert_eq!(messages("COLLECTION").len(), 6);
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

/// Every query the example types can send (each typed query, its `in` form, a range, per room
/// and across rooms) is served by an index of the committed file, found by Firestore's rules
/// ([`IndexNeed`]); and the plan's own index is what serves it.
#[test]
fn the_committed_file_serves_every_query_of_the_examples() {
    use sharded_runtime::{
        Parent,
        indexes::{IndexNeed, QueryScope},
    };
    let served = |need: IndexNeed, what: &str| {
        assert!(need.is_served_by_file(FILE).unwrap(), "{what}: {need:?}");
        assert!(
            Instrument::indexes().serving(&need).is_some()
                || Message::indexes().serving(&need).is_some(),
            "{what}: {need:?}"
        );
        need
    };
    let since = sharded_examples::at("2019-01-01T00:00:00Z");
    let queries = [
        ("all", Instrument::query().all().index_need()),
        (
            "all, a range",
            Instrument::query().all().range(since..).index_need(),
        ),
        ("exchange", Instrument::query().exchange("X").index_need()),
        (
            "exchange in",
            Instrument::query()
                .exchange_in(["X", "Y"])
                .range(..since)
                .index_need(),
        ),
        (
            "instrument type",
            Instrument::query().instrument_type("etf").index_need(),
        ),
        (
            "instrument type in",
            Instrument::query()
                .instrument_type_in(["etf", "commonstock"])
                .index_need(),
        ),
        (
            "currency",
            Instrument::query().price_currency("USD").index_need(),
        ),
        (
            "currency in",
            Instrument::query()
                .price_currency_in(["USD", "JPY"])
                .index_need(),
        ),
        (
            "exchange and type",
            Instrument::query()
                .exchange_and_instrument_type("X", "etf")
                .index_need(),
        ),
    ];
    for (what, need) in queries {
        let need = served(need.unwrap(), what);
        assert_eq!(need.query_scope, QueryScope::Collection);
        assert_eq!(need.equalities[0], "shard");
    }
    let lobby = Parent::<Message>::new(&["lobby"]).unwrap();
    let messages = [
        (
            "room",
            Message::query().all().in_parent(&lobby).index_need(),
        ),
        (
            "room, author",
            Message::query()
                .author("ann")
                .in_parent(&lobby)
                .index_need(),
        ),
        (
            "room, authors",
            Message::query()
                .author_in(["ann", "bob"])
                .in_parent(&lobby)
                .index_need(),
        ),
        (
            "room, oldest first",
            Message::query()
                .all()
                .in_parent(&lobby)
                .reversed()
                .index_need(),
        ),
        (
            "room, mentions",
            Message::query()
                .mentions_contains("ann")
                .in_parent(&lobby)
                .index_need(),
        ),
    ];
    for (what, need) in messages {
        served(need.unwrap(), what);
    }
    for (what, need) in [
        ("group", Message::query().all().in_group().index_need()),
        (
            "group, author",
            Message::query().author("ann").in_group().index_need(),
        ),
        (
            "group, authors",
            Message::query()
                .author_in(["ann", "bob"])
                .in_group()
                .index_need(),
        ),
        (
            "group, mentions",
            Message::query()
                .mentions_contains_any(["ann", "bob"])
                .in_group()
                .index_need(),
        ),
        (
            "group, mentions, oldest first",
            Message::query()
                .mentions_contains("ann")
                .in_group()
                .reversed()
                .index_need(),
        ),
    ] {
        let need = served(need.unwrap(), what);
        assert_eq!(need.query_scope, QueryScope::CollectionGroup);
    }
    // A query the file lacks an index for is told apart: the same need in the other direction.
    let mut reversed = Instrument::query().exchange("X").index_need().unwrap();
    reversed.orders[0].1 = match reversed.orders[0].1 {
        sharded_runtime::indexes::Direction::Ascending => {
            sharded_runtime::indexes::Direction::Descending
        }
        sharded_runtime::indexes::Direction::Descending => {
            sharded_runtime::indexes::Direction::Ascending
        }
    };
    assert!(!reversed.is_served_by_file(FILE).unwrap());
    assert!(Instrument::indexes().serving(&reversed).is_none());
}

/// The drift check: the build, run as `build.rs` runs it with `SHARDED_INDEXES_CHECK=1`, writes
/// nothing and finds the committed `firestore.indexes.json` and `firestore.rules` exactly
/// what it would write from the sources (a test rather than a build of its own in CI, whose
/// features would differ from the workspace's and build every dependency twice).
#[test]
fn the_committed_files_are_what_the_build_writes() {
    let outcome = sharded_build::Indexes::from_env().check(true).run();
    if let Err(error) = outcome {
        panic!("{error}");
    }
}
