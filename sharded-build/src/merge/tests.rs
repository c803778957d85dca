//! The merge as a whole: recipe entries, the user's entries kept, crates sharing a file.

use super::*;
use sharded_indexes::CollectionDescriptionBuf;
use std::path::PathBuf;

fn instrument(indexed: &[&str]) -> ShardedType {
    ShardedType {
        name: "Instrument".into(),
        module: Vec::new(),
        file: PathBuf::from("src/lib.rs"),
        description: CollectionDescriptionBuf {
            collection: "instruments".into(),
            shard_field: "shard".into(),
            order_field: "timestamp".into(),
            direction: sharded_indexes::Direction::Descending,
            order_type: sharded_indexes::StoredType::Timestamp,
            reversible: false,
            server_timestamp: false,
            indexed_fields: indexed.iter().map(|f| f.to_string()).collect(),
            field_sets: Vec::new(),
            aggregate_fields: Vec::new(),
            aggregations: Vec::new(),
            range_fields: Vec::new(),
            ranges: Vec::new(),
            range_sets: Vec::new(),
            array_fields: Vec::new(),
            vector_fields: Vec::new(),
            counter_fields: Vec::new(),
            fields: Vec::new(),
            shard_values: vec!["x".into(), "y".into(), "z".into()],
            previous_shard_values: Vec::new(),
            retired_shard_values: Vec::new(),
            reshard_since: None,
            parent_collections: Vec::new(),
            collection_group: false,
            expiry_field: None,
        },
    }
}

const RECIPE_FIELDS: [&str; 3] = ["exchange", "instrumentType", "price.currency"];

/// The index of `T::query().all()`: (shard, order field).
fn whole_collection_index() -> Value {
    json!({
        "collectionGroup": "instruments",
        "queryScope": "COLLECTION",
        "fields": [
            { "fieldPath": "shard", "order": "DESCENDING" },
            { "fieldPath": "timestamp", "order": "DESCENDING" }
        ]
    })
}

/// The whole-collection index, then one per field.
fn recipe_indexes(fields: &[&str]) -> Value {
    let mut indexes = vec![whole_collection_index()];
    indexes.extend(fields.iter().map(|field| recipe_index(field)));
    Value::Array(indexes)
}

fn recipe_index(field: &str) -> Value {
    json!({
        "collectionGroup": "instruments",
        "queryScope": "COLLECTION",
        "fields": [
            { "fieldPath": "shard", "order": "DESCENDING" },
            { "fieldPath": field, "order": "ASCENDING" },
            { "fieldPath": "timestamp", "order": "DESCENDING" }
        ]
    })
}

fn overrides() -> Value {
    json!([
        { "collectionGroup": "instruments", "fieldPath": "timestamp", "indexes": [] },
        { "collectionGroup": "instruments", "fieldPath": "shard", "indexes": [] }
    ])
}

#[test]
fn a_new_file_holds_the_recipes_indexes_and_overrides() {
    let merged = merge(None, &[instrument(&RECIPE_FIELDS)], "crate").unwrap();
    assert_eq!(merged.document["indexes"], recipe_indexes(&RECIPE_FIELDS));
    assert_eq!(merged.document["fieldOverrides"], overrides());
    assert_eq!(
        merged.document[MANIFEST_KEY]["crates"]["crate"]["collections"][0]["indexedFields"],
        json!(RECIPE_FIELDS)
    );
    assert!(merged.warnings.is_empty());
    // And it agrees with the plan `Sharded::indexes()` returns.
    let plan: Value = serde_json::from_str(&instrument(&RECIPE_FIELDS).plan().to_json()).unwrap();
    assert_eq!(plan["indexes"], merged.document["indexes"]);
    assert_eq!(plan["fieldOverrides"], merged.document["fieldOverrides"]);
}

#[test]
fn other_entries_stay_in_place_and_merging_twice_changes_nothing() {
    let users = json!({
        "indexes": [
            { "collectionGroup": "users", "queryScope": "COLLECTION", "density": "SPARSE_ALL",
              "fields": [{ "fieldPath": "a", "order": "ASCENDING" }, { "fieldPath": "b", "order": "DESCENDING" }] },
            { "collectionGroup": "instruments", "queryScope": "COLLECTION",
              "fields": [{ "fieldPath": "symbol", "order": "ASCENDING" }, { "fieldPath": "exchange", "order": "ASCENDING" }] }
        ],
        "fieldOverrides": [
            { "collectionGroup": "users", "fieldPath": "bio", "indexes": [] }
        ]
    });
    let once = merge(Some(users.clone()), &[instrument(&RECIPE_FIELDS)], "crate").unwrap();
    assert_eq!(once.document["indexes"][0], users["indexes"][0]);
    assert_eq!(once.document["indexes"][1], users["indexes"][1]);
    assert_eq!(once.document["indexes"].as_array().unwrap().len(), 6);
    assert_eq!(
        once.document["fieldOverrides"][0],
        users["fieldOverrides"][0]
    );
    let twice = merge(
        Some(once.document.clone()),
        &[instrument(&RECIPE_FIELDS)],
        "crate",
    )
    .unwrap();
    assert_eq!(twice.document, once.document);
    assert!(twice.warnings.is_empty());
}

#[test]
fn unsharded_timestamp_indexes_are_removed_with_a_warning() {
    let old = json!({
        "indexes": [{ "collectionGroup": "instruments", "queryScope": "COLLECTION",
            "fields": [{ "fieldPath": "exchange", "order": "ASCENDING" }, { "fieldPath": "timestamp", "order": "DESCENDING" }] }],
        "fieldOverrides": [{ "collectionGroup": "instruments", "fieldPath": "timestamp",
            "indexes": [{ "order": "ASCENDING", "queryScope": "COLLECTION" }] }]
    });
    let merged = merge(Some(old), &[instrument(&["exchange"])], "crate").unwrap();
    assert_eq!(merged.document["indexes"], recipe_indexes(&["exchange"]));
    assert_eq!(merged.document["fieldOverrides"], overrides());
    assert_eq!(merged.warnings.len(), 2, "{:?}", merged.warnings);
    assert!(merged.warnings[0].contains(
        "removed the composite index instruments (exchange ASCENDING, timestamp DESCENDING)"
    ));
    assert!(
        merged.warnings[1].contains(
            "removed 1 single-field index setting(s) from the field override of `timestamp`"
        ),
        "{:?}",
        merged.warnings
    );
}

#[test]
fn a_removed_index_is_recorded_and_can_be_kept_on_purpose() {
    let unsharded = json!({ "collectionGroup": "instruments", "queryScope": "COLLECTION",
        "fields": [{ "fieldPath": "exchange", "order": "ASCENDING" }, { "fieldPath": "timestamp", "order": "DESCENDING" }] });
    let old = json!({ "indexes": [unsharded.clone()], "fieldOverrides": [] });
    let merged = merge(Some(old), &[instrument(&["exchange"])], "crate").unwrap();
    assert_eq!(merged.document["indexes"], recipe_indexes(&["exchange"]));
    // Not only a warning: the file records what was removed.
    assert_eq!(merged.document[MANIFEST_KEY]["removed"], json!([unsharded]));

    // Moved to `keep`, it comes back, stays, and is no longer recorded as removed.
    let mut file = merged.document;
    let removed = file[MANIFEST_KEY]["removed"].take();
    file[MANIFEST_KEY]
        .as_object_mut()
        .unwrap()
        .remove("removed");
    file[MANIFEST_KEY]["keep"] = removed;
    let kept = merge(Some(file), &[instrument(&["exchange"])], "crate").unwrap();
    assert!(kept.warnings.is_empty(), "{:?}", kept.warnings);
    // The user's own entries first, then the managed ones.
    assert_eq!(
        kept.document["indexes"],
        json!([
            unsharded,
            whole_collection_index(),
            recipe_index("exchange")
        ])
    );
    assert!(kept.document[MANIFEST_KEY].get("removed").is_none());
    let again = merge(
        Some(kept.document.clone()),
        &[instrument(&["exchange"])],
        "crate",
    )
    .unwrap();
    assert_eq!(again.document, kept.document);
}

#[test]
fn deleted_attributes_and_types_take_their_entries_with_them() {
    let all = merge(None, &[instrument(&RECIPE_FIELDS)], "crate")
        .unwrap()
        .document;
    let fewer = merge(Some(all.clone()), &[instrument(&["exchange"])], "crate")
        .unwrap()
        .document;
    assert_eq!(fewer["indexes"], recipe_indexes(&["exchange"]));
    let none = merge(Some(fewer), &[], "crate").unwrap().document;
    assert_eq!(none["indexes"], json!([]));
    assert_eq!(none["fieldOverrides"], json!([]));
    // What stays is the record of the collection's shard set, and nothing else.
    assert_eq!(
        none[MANIFEST_KEY]["shardSets"],
        json!({ "instruments": ["x", "y", "z"] })
    );
    assert_eq!(none[MANIFEST_KEY]["crates"], json!({}));
}

#[test]
fn a_hand_written_copy_of_a_managed_index_is_not_duplicated() {
    let hand = json!({ "indexes": recipe_indexes(&["exchange"]), "fieldOverrides": [] });
    let merged = merge(Some(hand), &[instrument(&["exchange"])], "crate").unwrap();
    assert_eq!(merged.document["indexes"], recipe_indexes(&["exchange"]));
}

#[test]
fn what_firestore_rejects_is_an_error() {
    let empty = json!({ "indexes": [{ "collectionGroup": "c", "queryScope": "COLLECTION", "fields": [] }] });
    assert!(
        merge(Some(empty), &[], "crate")
            .unwrap_err()
            .contains("has no fields")
    );
    let fields: Vec<Value> = (0..101)
        .map(|i| json!({ "fieldPath": format!("f{i}"), "order": "ASCENDING" }))
        .collect();
    let wide = json!({ "indexes": [{ "collectionGroup": "c", "queryScope": "COLLECTION", "fields": fields }] });
    assert!(
        merge(Some(wide), &[], "crate")
            .unwrap_err()
            .contains("has 101 fields")
    );
    let twice = json!({ "indexes": [recipe_index("x"), recipe_index("x")] });
    assert!(
        merge(Some(twice), &[], "crate")
            .unwrap_err()
            .contains("listed twice")
    );
}

#[test]
fn past_the_quota_is_an_error_that_says_where_the_indexes_are() {
    let many: Vec<String> = (0..200).map(|i| format!("f{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let merged = merge(None, &[instrument(&many)], "crate").unwrap();
    let err = super::check_quota(&merged.document, super::COMPOSITE_INDEX_QUOTA).unwrap_err();
    assert!(err.contains("201 composite indexes"), "{err}");
    assert!(err.contains("(instruments: 201)"), "{err}");
    assert!(err.contains("aggregate(all, exchange)"), "{err}");
    assert_eq!(super::check_quota(&merged.document, 1000), Ok(201));
    let few = merge(None, &[instrument(&many[..199])], "crate").unwrap();
    assert_eq!(
        super::check_quota(&few.document, super::COMPOSITE_INDEX_QUOTA),
        Ok(200)
    );
}

#[test]
fn types_sharing_a_collection_must_agree() {
    let mut other = instrument(&["symbol"]);
    other.name = "InstrumentView".into();
    let merged = merge(None, &[instrument(&["exchange"]), other.clone()], "crate").unwrap();
    assert_eq!(merged.document["indexes"].as_array().unwrap().len(), 3);
    other.description.order_field = "updatedAt".into();
    let err = merge(None, &[instrument(&["exchange"]), other], "crate").unwrap_err();
    assert!(
        err.contains("both use the collection `instruments`"),
        "{err}"
    );
}

#[test]
fn managed_overrides_keep_the_users_ttl_and_array_indexes() {
    let file = json!({
        "indexes": [],
        "fieldOverrides": [{
            "collectionGroup": "instruments",
            "fieldPath": "timestamp",
            "ttl": true,
            "indexes": [
                { "order": "ASCENDING", "queryScope": "COLLECTION" },
                { "arrayConfig": "CONTAINS", "queryScope": "COLLECTION" }
            ]
        }]
    });
    let merged = merge(Some(file), &[instrument(&["exchange"])], "crate").unwrap();
    let overrides = merged.document["fieldOverrides"].as_array().unwrap();
    let timestamp = overrides
        .iter()
        .find(|o| o["fieldPath"] == "timestamp")
        .unwrap();
    assert_eq!(timestamp["ttl"], json!(true));
    assert_eq!(
        timestamp["indexes"],
        json!([{ "arrayConfig": "CONTAINS", "queryScope": "COLLECTION" }])
    );
    assert_eq!(merged.warnings.len(), 1, "{:?}", merged.warnings);
    assert!(merged.warnings[0].contains("kept"), "{:?}", merged.warnings);
    // Merging again changes nothing and warns no more.
    let again = merge(
        Some(merged.document.clone()),
        &[instrument(&["exchange"])],
        "crate",
    )
    .unwrap();
    assert_eq!(again.document, merged.document);
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
}

#[test]
fn crates_sharing_a_file_keep_each_others_entries_in_any_order() {
    let a = instrument(&["exchange"]);
    let mut b = instrument(&["venue"]);
    b.name = "Tick".into();
    b.description.collection = "ticks".into();
    let users = json!({ "indexes": [{ "collectionGroup": "other", "queryScope": "COLLECTION",
        "fields": [{ "fieldPath": "x", "order": "ASCENDING" }, { "fieldPath": "y", "order": "ASCENDING" }] }] });
    let a_then_b = merge(Some(users.clone()), std::slice::from_ref(&a), "a")
        .unwrap()
        .document;
    let a_then_b = merge(Some(a_then_b), std::slice::from_ref(&b), "b")
        .unwrap()
        .document;
    let b_then_a = merge(Some(users.clone()), std::slice::from_ref(&b), "b")
        .unwrap()
        .document;
    let b_then_a = merge(Some(b_then_a), std::slice::from_ref(&a), "a")
        .unwrap()
        .document;
    assert_eq!(
        a_then_b.to_string(),
        b_then_a.to_string(),
        "any order, same bytes"
    );
    assert_eq!(a_then_b["indexes"].as_array().unwrap().len(), 5);
    assert_eq!(a_then_b["indexes"][0], users["indexes"][0]);
    // Rebuilding either crate changes nothing.
    let again = merge(Some(a_then_b.clone()), std::slice::from_ref(&b), "b").unwrap();
    assert_eq!(again.document, a_then_b);

    // Removing a type from one crate removes its entries only.
    let without_a = merge(Some(a_then_b.clone()), &[], "a").unwrap().document;
    let collections: Vec<&str> = without_a["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["collectionGroup"].as_str().unwrap())
        .collect();
    assert_eq!(collections, ["other", "ticks", "ticks"]);
    assert!(without_a[MANIFEST_KEY]["crates"].get("a").is_none());

    // A collection two crates shard differently fails the build, naming both.
    let mut other_a = instrument(&["symbol"]);
    other_a.name = "TickView".into();
    other_a.description.collection = "ticks".into();
    other_a.description.shard_values.pop();
    let err = merge(Some(a_then_b), &[other_a], "a").unwrap_err();
    assert!(err.contains("`TickView` in crate `a`"), "{err}");
    assert!(err.contains("`Tick` in crate `b`"), "{err}");
}

#[test]
fn types_sharing_a_collection_must_agree_on_shard_values() {
    let mut other = instrument(&["symbol"]);
    other.name = "InstrumentView".into();
    other.description.shard_values.pop();
    let err = merge(None, &[instrument(&["exchange"]), other], "crate").unwrap_err();
    assert!(
        err.contains("`Instrument`") && err.contains("`InstrumentView`"),
        "{err}"
    );
    assert!(err.contains("different shard values"), "{err}");
}

#[test]
fn a_shard_set_may_grow_but_not_lose_values() {
    let numbered = |n: usize| {
        let mut t = instrument(&["exchange"]);
        t.description.shard_values = (0..n).map(|i| i.to_string()).collect();
        t
    };
    let three = merge(None, &[numbered(3)], "crate").unwrap().document;
    assert_eq!(
        three[MANIFEST_KEY]["crates"]["crate"]["collections"][0]["shardValues"],
        json!(["0", "1", "2"])
    );
    // 3 → 6 keeps "0" to "2".
    let six = merge(Some(three.clone()), &[numbered(6)], "crate")
        .unwrap()
        .document;
    // 6 → 3 loses "3" to "5".
    let err = merge(Some(six.clone()), &[numbered(3)], "crate").unwrap_err();
    assert!(err.contains(r#"["3", "4", "5"]"#), "{err}");
    assert!(err.contains("keep every old value"), "{err}");
    assert!(err.contains("previous(shards = 3)"), "{err}");
    // Changed values, same count.
    let mut renamed = numbered(6);
    renamed.description.shard_values[5] = "five".into();
    assert!(merge(Some(six.clone()), &[renamed], "crate").is_err());
    // The path that drops values: declare the old set as previous, rebalance, then
    // declare it retired.
    let mut moving = numbered(3);
    moving.description.previous_shard_values = (0..6).map(|i| i.to_string()).collect();
    let recorded = merge(Some(six.clone()), &[moving], "crate")
        .unwrap()
        .document;
    assert_eq!(
        recorded[MANIFEST_KEY]["crates"]["crate"]["collections"][0]["previousShardValues"],
        json!(["0", "1", "2", "3", "4", "5"])
    );
    // Dropping `previous(...)` alone would read the new set unchecked: refused, with
    // the way on.
    let err = merge(Some(recorded.clone()), &[numbered(3)], "crate").unwrap_err();
    assert!(err.contains(r#"["3", "4", "5"]"#), "{err}");
    assert!(err.contains("retired(shards = 3)"), "{err}");
    assert!(err.contains("read them as `previous(...)`"), "{err}");
    let retired = |values: &[&str]| {
        let mut t = numbered(3);
        t.description.retired_shard_values = values.iter().map(|v| v.to_string()).collect();
        t
    };
    let done = merge(
        Some(recorded.clone()),
        &[retired(&["3", "4", "5"])],
        "crate",
    )
    .unwrap()
    .document;
    let entry = &done[MANIFEST_KEY]["crates"]["crate"]["collections"][0];
    assert!(entry.get("previousShardValues").is_none());
    assert_eq!(entry["retiredShardValues"], json!(["3", "4", "5"]));
    assert_eq!(
        done[MANIFEST_KEY]["shardSets"]["instruments"],
        json!(["0", "1", "2", "3", "4", "5"])
    );
    // A retired set that leaves out a value, and dropping it later, are refused too.
    assert!(merge(Some(recorded.clone()), &[retired(&["3", "4"])], "crate").is_err());
    let err = merge(Some(done.clone()), &[numbered(3)], "crate").unwrap_err();
    assert!(err.contains(r#"["3", "4", "5"]"#), "{err}");
    assert!(merge(Some(done.clone()), &[retired(&["3", "4", "5"])], "crate").is_ok());
    // Without the type for a build, the retired values stay recorded.
    let gone = merge(Some(done), &[], "crate").unwrap().document;
    assert!(merge(Some(gone.clone()), &[numbered(3)], "crate").is_err());
    assert!(merge(Some(gone), &[retired(&["3", "4", "5"])], "crate").is_ok());
    // A previous set that leaves out a recorded value is no path.
    let mut partial = numbered(3);
    partial.description.previous_shard_values = (0..5).map(|i| i.to_string()).collect();
    let err = merge(Some(six.clone()), &[partial], "crate").unwrap_err();
    assert!(err.contains(r#"["5"]"#), "{err}");
    // Dropping `previous` before a build recorded it is refused.
    assert!(merge(Some(six.clone()), &[numbered(3)], "crate").is_err());
    // Removing the type is not a loss, but the set stays recorded: bringing the type back
    // with fewer values, one build later, is refused all the same.
    let without = merge(Some(six.clone()), &[], "crate").unwrap().document;
    assert_eq!(
        without[MANIFEST_KEY]["shardSets"]["instruments"],
        json!(["0", "1", "2", "3", "4", "5"])
    );
    let err = merge(Some(without.clone()), &[numbered(3)], "crate").unwrap_err();
    assert!(err.contains(r#"["3", "4", "5"]"#), "{err}");
    assert!(err.contains("shardSets"), "{err}");
    assert!(merge(Some(without), &[numbered(6)], "crate").is_ok());
    // Deleting the recorded set (the collection was emptied) accepts the new one.
    let mut accepted = six;
    accepted[MANIFEST_KEY]["crates"]["crate"]["collections"][0]
        .as_object_mut()
        .unwrap()
        .remove("shardValues");
    accepted[MANIFEST_KEY]
        .as_object_mut()
        .unwrap()
        .remove("shardSets");
    assert!(merge(Some(accepted), &[numbered(3)], "crate").is_ok());
}

#[test]
fn a_renamed_indexed_field_or_order_field_is_a_warning_naming_both_names() {
    let first = merge(
        None,
        &[instrument(&["exchange", "instrumentType"])],
        "crate",
    )
    .unwrap();
    assert!(first.warnings.is_empty(), "{:?}", first.warnings);
    let renamed = instrument(&["exchange", "instrument_type"]);
    let again = merge(Some(first.document.clone()), &[renamed], "crate").unwrap();
    let warning = again
        .warnings
        .iter()
        .find(|w| w.contains("Renaming a stored field"))
        .expect("a warning");
    assert!(
        warning.contains("`instrumentType`") && warning.contains("`instrument_type`"),
        "{warning}"
    );
    assert!(warning.contains("`Instrument`"), "{warning}");
    // A query dropped on purpose is no rename.
    let dropped = merge(
        Some(first.document.clone()),
        &[instrument(&["exchange"])],
        "crate",
    )
    .unwrap();
    assert!(
        !dropped.warnings.iter().any(|w| w.contains("Renaming")),
        "{:?}",
        dropped.warnings
    );
    let mut moved = instrument(&["exchange", "instrumentType"]);
    moved.description.order_field = "createdAt".into();
    let order = merge(Some(first.document), &[moved], "crate").unwrap();
    assert!(
        order
            .warnings
            .iter()
            .any(|w| w.contains("order field was stored as `timestamp` and is now `createdAt`")),
        "{:?}",
        order.warnings
    );
}

/// Types of one collection id: a top-level `Order` (reversible, with a range field), a view
/// of it, and a `CustomerOrder` under `customers` queried as a group (with an array field
/// and sums). Each is planned from its own description.
fn orders() -> Vec<ShardedType> {
    let of = |name: &str, indexed: &[&str]| {
        let mut t = instrument(indexed);
        t.name = name.into();
        t.description.collection = "orders".into();
        t.description.order_field = "placedAt".into();
        t
    };
    let mut order = of("Order", &["status"]);
    order.description.reversible = true;
    order.description.range_fields = vec!["total".into()];
    let view = of("OrderView", &["region"]);
    let mut customer = of("CustomerOrder", &["sku"]);
    customer.description.parent_collections = vec!["customers".into()];
    customer.description.collection_group = true;
    customer.description.array_fields = vec!["tags".into()];
    customer.description.aggregate_fields = vec!["total".into()];
    vec![order, view, customer]
}

/// The file's indexes, as a set of their JSON texts.
fn index_set(document: &Value) -> std::collections::BTreeSet<String> {
    document["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .map(Value::to_string)
        .collect()
}

/// Every index each type plans, and nothing else: what the file must hold.
fn planned(types: &[ShardedType]) -> std::collections::BTreeSet<String> {
    types
        .iter()
        .flat_map(|t| t.plan().indexes)
        .map(|index| to_json(&index).to_string())
        .collect()
}

#[test]
fn types_sharing_a_collection_id_each_keep_their_indexes_in_any_order() {
    let types = orders();
    let expected = planned(&types);
    let permutations = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut files = Vec::new();
    for order in permutations {
        let declared: Vec<ShardedType> = order.iter().map(|&i| types[i].clone()).collect();
        let merged = merge(None, &declared, "shop").unwrap();
        let text = merged.document.to_string();
        for t in &types {
            let missing = t.plan().missing_from(&text).unwrap();
            assert!(
                missing.is_empty(),
                "{order:?}: {} lacks {missing:?}",
                t.name
            );
        }
        assert_eq!(index_set(&merged.document), expected, "{order:?}");
        // Only the group type has group indexes: none of `Order`'s fields in that scope.
        for index in merged.document["indexes"].as_array().unwrap() {
            if index["queryScope"] == "COLLECTION_GROUP" {
                let fields = index["fields"].to_string();
                assert!(
                    !fields.contains("status") && !fields.contains("region"),
                    "{index}"
                );
            }
        }
        // Building again from the file changes nothing.
        let again = merge(Some(merged.document.clone()), &declared, "shop").unwrap();
        assert_eq!(index_set(&again.document), expected, "{order:?}: again");
        files.push(merged);
    }
    // The group type's group reads the top-level orders too: said, naming both.
    let warning = files[0]
        .warnings
        .iter()
        .find(|w| w.contains("collection group `orders`"))
        .expect("a warning on the shared id");
    assert!(warning.contains("`CustomerOrder`"), "{warning}");
    assert!(
        warning.contains("`Order`, `OrderView`") || warning.contains("`Order`"),
        "{warning}"
    );
    assert!(warning.contains("the top-level `orders`"), "{warning}");

    // Across crates, in either build order: the same bytes, every type's indexes.
    let (a, b) = (&types[..1], &types[1..]);
    let a_then_b = merge(None, a, "a").unwrap().document;
    let a_then_b = merge(Some(a_then_b), b, "b").unwrap().document;
    let b_then_a = merge(None, b, "b").unwrap().document;
    let b_then_a = merge(Some(b_then_a), a, "a").unwrap().document;
    assert_eq!(a_then_b.to_string(), b_then_a.to_string());
    assert_eq!(index_set(&a_then_b), expected);
}

#[test]
fn a_missing_index_is_named_with_its_scope() {
    let customer = orders().remove(2);
    let merged = merge(None, std::slice::from_ref(&customer), "shop").unwrap();
    let mut document = merged.document;
    document["indexes"]
        .as_array_mut()
        .unwrap()
        .retain(|index| index["queryScope"] != "COLLECTION_GROUP");
    let missing = customer.plan().missing_from(&document.to_string()).unwrap();
    assert!(!missing.is_empty());
    assert!(
        missing
            .iter()
            .all(|m| m.contains("in COLLECTION_GROUP scope")),
        "{missing:?}"
    );
}
