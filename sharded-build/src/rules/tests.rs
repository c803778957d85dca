use std::path::PathBuf;

use sharded_indexes::{CollectionDescription, CollectionDescriptionBuf, Direction, StoredType};

use super::*;

fn sharded(name: &str, edit: impl FnOnce(&mut CollectionDescriptionBuf)) -> ShardedType {
    let mut description = CollectionDescriptionBuf::from(&CollectionDescription::EMPTY);
    description.collection = "readings".into();
    description.shard_field = "shard".into();
    description.order_field = "timestamp".into();
    description.direction = Direction::Descending;
    description.order_type = StoredType::Timestamp;
    description.shard_values = vec!["0".into(), "1".into(), "2".into()];
    edit(&mut description);
    ShardedType {
        name: name.into(),
        module: Vec::new(),
        file: PathBuf::from("src/lib.rs"),
        description,
    }
}

const USERS: &str = "rules_version = '2';\n// the owner's comment\nservice cloud.firestore {\n  match /databases/{database}/documents {\n    match /readings/{id} {\n      allow read: if request.auth != null;\n      allow create, update: if request.auth != null && sharded_Reading();\n    }\n  }\n}\n";

#[test]
fn the_block_goes_first_in_the_documents_match_and_every_other_byte_stays() {
    let types = [sharded("Reading", |_| {})];
    let merged = merge(Some(USERS), &types, "app").unwrap();
    let text = merged.text.unwrap();
    assert_eq!(without_block(&text, "app").unwrap(), USERS);
    let block_at = text.find("// sharded-build: begin `app`").unwrap();
    assert!(block_at > text.find("/documents {").unwrap());
    assert!(block_at < text.find("match /readings").unwrap());
    assert!(merged.warnings.is_empty(), "{:?}", merged.warnings);
    // Idempotent, and a changed set replaces the block in place.
    assert_eq!(
        merge(Some(&text), &types, "app").unwrap().text.unwrap(),
        text
    );
    let resharded = [sharded("Reading", |d| {
        d.shard_values = vec!["a".into(), "b".into()];
        d.previous_shard_values = vec!["0".into(), "1".into(), "2".into()];
    })];
    let again = merge(Some(&text), &resharded, "app").unwrap().text.unwrap();
    assert_eq!(without_block(&again, "app").unwrap(), USERS);
    assert!(again.contains("in ['a', 'b', '0', '1', '2']"), "{again}");
}

#[test]
fn the_writable_values_are_current_and_previous_never_retired() {
    let types = [sharded("Reading", |d| {
        d.shard_values = vec!["a".into(), "b".into(), "2".into()];
        d.previous_shard_values = vec!["1".into(), "2".into()];
        d.retired_shard_values = vec!["0".into()];
    })];
    let text = merge(None, &types, "app").unwrap().text.unwrap();
    assert!(
        text.contains("data.get('shard', null) in ['a', 'b', '2', '1']"),
        "{text}"
    );
}

#[test]
fn the_order_field_is_checked_by_its_stored_type_and_a_server_time_by_the_method() {
    for (order_type, check) in [
        (StoredType::Timestamp, "is timestamp"),
        (StoredType::Integer, "is int"),
        (StoredType::Number, "is number"),
        (StoredType::String, "is string"),
        (StoredType::Boolean, "is bool"),
        (StoredType::Other, "!= null"),
    ] {
        let types = [sharded("Reading", |d| {
            d.order_type = order_type;
            d.order_field = "`taken at`.utc".into();
        })];
        let text = merge(None, &types, "app").unwrap().text.unwrap();
        assert!(
            text.contains(&format!("data.get(['taken at', 'utc'], null) {check}")),
            "{order_type:?}: {text}"
        );
    }
    let types = [sharded("Message", |d| d.server_timestamp = true)];
    let text = merge(None, &types, "app").unwrap().text.unwrap();
    assert!(text.contains("(request.method == 'create' ? data.get('timestamp', null) == request.time : data.get('timestamp', null) == resource.data.get('timestamp', null))"), "{text}");
}

#[test]
fn an_integer_of_a_narrower_rust_type_is_held_within_its_range() {
    let types = [sharded("Reading", |d| {
        d.fields = vec![
            sharded_indexes::StoredFieldBuf {
                path: "stock".into(),
                stored_type: StoredType::Integer,
                required: true,
                integer_range: StoredType::integer_range_of("i32"),
            },
            sharded_indexes::StoredFieldBuf {
                path: "level".into(),
                stored_type: StoredType::Integer,
                required: false,
                integer_range: StoredType::integer_range_of("u8"),
            },
            sharded_indexes::StoredFieldBuf {
                path: "total".into(),
                stored_type: StoredType::Integer,
                required: true,
                integer_range: StoredType::integer_range_of("i64"),
            },
        ]
    })];
    let text = merge(None, &types, "app").unwrap().text.unwrap();
    let stock = "data.get('stock', null)";
    assert!(
        text.contains(&format!(
            "&& {stock} is int && {stock} >= -2147483648 && {stock} <= 2147483647\n"
        )),
        "{text}"
    );
    let level = "data.get('level', null)";
    assert!(
        text.contains(&format!(
            "&& ({level} == null || {level} is int && {level} >= 0 && {level} <= 255)"
        )),
        "{text}"
    );
    assert!(
        text.contains("&& data.get('total', null) is int;"),
        "{text}"
    );
}

#[test]
fn a_quoted_shard_field_and_odd_values_are_rules_literals() {
    let types = [sharded("Reading", |d| {
        d.shard_field = "`shard-id`".into();
        d.shard_values = vec!["it's".into(), "back\\slash".into()];
    })];
    let text = merge(None, &types, "app").unwrap().text.unwrap();
    assert!(
        text.contains(r"data.get('shard-id', null) in ['it\'s', 'back\\slash']"),
        "{text}"
    );
}

#[test]
fn a_new_file_denies_until_its_owner_decides_and_calls_each_function_in_each_place() {
    let types = [
        sharded("Reading", |_| {}),
        sharded("Message", |d| {
            d.collection = "messages".into();
            d.parent_collections = vec!["rooms".into()];
            d.collection_group = true;
        }),
    ];
    let merged = merge(None, &types, "app").unwrap();
    let text = merged.text.unwrap();
    assert!(text.starts_with("rules_version = '2';"));
    for place in [
        "match /readings/{id} {",
        "match /rooms/{rooms_id}/messages/{id} {",
        "match /{path=**}/messages/{id} {",
    ] {
        assert!(text.contains(place), "{place}: {text}");
    }
    assert!(text.contains("allow create, update: if false && sharded_Reading();"));
    assert!(text.contains("allow create, update: if false && sharded_Message();"));
    assert!(!text.contains("if true"));
    assert!(merged.warnings.is_empty(), "{:?}", merged.warnings);
}

#[test]
fn a_function_the_users_rules_never_call_is_a_warning() {
    let types = [
        sharded("Reading", |_| {}),
        sharded("Tick", |d| d.collection = "ticks".into()),
    ];
    let merged = merge(Some(USERS), &types, "app").unwrap();
    assert_eq!(merged.warnings.len(), 1, "{:?}", merged.warnings);
    assert!(merged.warnings[0].contains("`sharded_Tick()`"));
    assert!(merged.warnings[0].contains("/ticks/{id}"));
}

#[test]
fn two_types_of_one_name_get_functions_named_by_their_paths() {
    let types = [
        sharded("Message", |d| d.collection = "messages".into()),
        sharded("Message", |d| {
            d.collection = "messages".into();
            d.parent_collections = vec!["rooms".into()];
        }),
    ];
    let names: Vec<String> = contract::contracts(&types)
        .into_iter()
        .map(|contract| contract.function)
        .collect();
    assert_eq!(
        names,
        ["sharded_Message_messages", "sharded_Message_rooms_messages"]
    );
}

#[test]
fn each_crate_owns_its_own_block() {
    let first = merge(Some(USERS), &[sharded("Reading", |_| {})], "app")
        .unwrap()
        .text
        .unwrap();
    let second = merge(
        Some(&first),
        &[sharded("Tick", |d| d.collection = "ticks".into())],
        "models",
    )
    .unwrap()
    .text
    .unwrap();
    assert!(second.contains("function sharded_Reading()"));
    assert!(second.contains("function sharded_Tick()"));
    assert_eq!(without_block(&second, "models").unwrap(), first);
}

#[test]
fn a_file_it_cannot_place_the_block_in_is_an_error_that_names_the_fix() {
    let types = [sharded("Reading", |_| {})];
    let error = merge(Some("service cloud.firestore {}\n"), &types, "app").unwrap_err();
    assert!(error.contains("// sharded-build: begin `app`"), "{error}");
    let half = format!("{USERS}// sharded-build: begin `app`\n");
    assert!(merge(Some(&half), &types, "app").is_err());
    // No types and no file: nothing to write; no types and a block: the block goes.
    assert!(merge(None, &[], "app").unwrap().text.is_none());
    let with_block = merge(Some(USERS), &types, "app").unwrap().text.unwrap();
    assert_eq!(
        merge(Some(&with_block), &[], "app").unwrap().text.unwrap(),
        USERS
    );
}

#[test]
fn a_counter_gets_a_function_per_field_and_one_for_its_markers() {
    let types = [sharded("Post", |d| {
        d.collection = "posts".into();
        d.parent_collections = vec!["users".into()];
        d.counter_fields = vec![
            sharded_indexes::CounterBuf {
                field: "likes".into(),
                shards: 3,
            },
            sharded_indexes::CounterBuf {
                field: "views".into(),
                shards: 1,
            },
        ];
    })];
    let merged = merge(None, &types, "app").unwrap();
    let text = merged.text.unwrap();
    assert!(merged.warnings.is_empty(), "{:?}", merged.warnings);
    for expected in [
        "function sharded_Post_counter_likes(counted, shard) {",
        "return p[3] == 'users' && p[5] == 'posts' && p[7] == '_sharded_counter_likes'\n",
        "&& p[8] in ['0', '1', '2']\n",
        "function sharded_Post_counter_views(counted, shard) {",
        "&& p[8] in ['0']\n",
        "let marker = /databases/$(p[1])/documents/$(p[3])/$(p[4])/$(p[5])/$(p[6])/_sharded_increments/$(data.get('increment', ''));",
        "&& sharded_Post_marker_records(getAfter(marker).data, 'likes', p[8], data.get('value', 0) - before);",
        "function sharded_Post_increment_marker() {",
        "let shard = /databases/$(p[1])/documents/$(p[3])/$(p[4])/$(p[5])/$(p[6])/$('_sharded_counter_' + data.get('field', ''))/$(data.get('shard', ''));",
        "&& data.get('expire_at', null) > request.time + duration.value(601200, 's')\n",
        "&& data.get('expire_at', null) < request.time + duration.value(608400, 's')\n",
        "(data.get('field', null) == 'likes' && data.get('shard', null) in ['0', '1', '2'])\n          || (data.get('field', null) == 'views' && data.get('shard', null) in ['0'])",
        "&& getAfter(shard).data.get('increment', null) == p[8]\n",
        "match /users/{users_id}/posts/{id}/_sharded_counter_likes/{shard} {",
        "allow create, update: if false && sharded_Post_counter_likes('users/' + users_id + '/posts/' + id, shard);",
        "match /users/{users_id}/posts/{id}/_sharded_increments/{increment} {",
        "allow create: if false && sharded_Post_increment_marker();",
        "allow get: if true;\n      allow list, update, delete: if false;",
    ] {
        assert!(text.contains(expected), "{expected}\n{text}");
    }
    // One marker function per type, however many counters.
    assert_eq!(
        text.matches("function sharded_Post_increment_marker")
            .count(),
        1
    );

    // A file of the owner's that calls none of them is told which, and where.
    let merged = merge(Some(USERS), &types, "app").unwrap();
    for function in [
        "sharded_Post_counter_likes",
        "sharded_Post_counter_views",
        "sharded_Post_increment_marker",
    ] {
        assert!(
            merged
                .warnings
                .iter()
                .any(|w| w.contains(&format!("never calls `{function}()`"))),
            "{function}: {:?}",
            merged.warnings
        );
    }
    // A type without counters has neither.
    let plain = merge(None, &[sharded("Reading", |_| {})], "app").unwrap();
    assert!(!plain.text.unwrap().contains("_sharded_"));
}
