//! The file as `build.rs` writes it: deterministic, rewritten only on change, drift-checked.

use std::path::Path;

use sharded_build::{Error, Indexes};

const WITH_TWO_INDEXES: &str = r#"
    #[derive(Serialize, Deserialize, Sharded)]
    #[sharded(shards = 3, order_by = "timestamp")]
    pub struct Instrument {
        #[sharded(index)]
        exchange: String,
        #[sharded(index)]
        symbol: String,
        timestamp: FirestoreTimestamp,
    }
"#;

fn crate_with(source: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), source).unwrap();
    dir
}

fn indexes(dir: &Path) -> Indexes {
    Indexes::from_env()
        .sources(dir.join("src"))
        .output(dir.join("firestore.indexes.json"))
        .check(false)
}

/// The indexed field of each per-field index (shard, field, order field), after checking
/// that the whole-collection index (shard, order field) comes first.
fn index_fields(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("firestore.indexes.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let indexes = json["indexes"].as_array().unwrap();
    assert_eq!(indexes[0]["fields"].as_array().unwrap().len(), 2, "{text}");
    indexes[1..]
        .iter()
        .map(|i| i["fields"][1]["fieldPath"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn writes_once_then_leaves_the_file_alone() {
    let dir = crate_with(WITH_TWO_INDEXES);
    let first = indexes(dir.path()).run().unwrap();
    assert!(first.written);
    assert_eq!(first.types.len(), 1);
    let bytes = std::fs::read(dir.path().join("firestore.indexes.json")).unwrap();
    let modified = std::fs::metadata(dir.path().join("firestore.indexes.json"))
        .unwrap()
        .modified()
        .unwrap();

    let second = indexes(dir.path()).run().unwrap();
    assert!(
        !second.written,
        "an unchanged plan does not rewrite the file"
    );
    assert_eq!(
        std::fs::read(dir.path().join("firestore.indexes.json")).unwrap(),
        bytes
    );
    assert_eq!(
        std::fs::metadata(dir.path().join("firestore.indexes.json"))
            .unwrap()
            .modified()
            .unwrap(),
        modified
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.ends_with(".tmp").then_some(name)
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn deleting_an_index_attribute_removes_its_index() {
    let dir = crate_with(WITH_TWO_INDEXES);
    indexes(dir.path()).run().unwrap();
    assert_eq!(index_fields(dir.path()), ["exchange", "symbol"]);
    let one_less = WITH_TWO_INDEXES.replacen("#[sharded(index)]\n        symbol", "symbol", 1);
    std::fs::write(dir.path().join("src/lib.rs"), one_less).unwrap();
    assert!(indexes(dir.path()).run().unwrap().written);
    assert_eq!(index_fields(dir.path()), ["exchange"]);
}

/// Every composite index of the file, as its field paths.
fn all_index_paths(dir: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir.join("firestore.indexes.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|index| {
            index["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["fieldPath"].as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

#[test]
fn field_sets_and_aggregates_get_their_indexes_and_leave_with_their_attributes() {
    let source = r#"
        #[derive(Serialize, Deserialize, Sharded)]
        #[sharded(shards = 3, order_by = "at", index(venue, side))]
        pub struct Fill {
            venue: String,
            side: String,
            #[sharded(aggregate)]
            quantity: i64,
            at: i64,
        }
    "#;
    let dir = crate_with(source);
    indexes(dir.path()).run().unwrap();
    let paths = |v: &[&[&str]]| -> Vec<Vec<String>> {
        v.iter()
            .map(|fields| fields.iter().map(|f| f.to_string()).collect())
            .collect()
    };
    assert_eq!(
        all_index_paths(dir.path()),
        paths(&[
            &["shard", "at"],
            &["shard", "venue", "side", "at"],
            &["shard", "at", "quantity"],
            &["shard", "venue", "side", "at", "quantity"],
        ])
    );
    // Without the set and the aggregate, the next build removes their indexes.
    let plain = source
        .replace(", index(venue, side)", "")
        .replace("#[sharded(aggregate)]", "");
    std::fs::write(dir.path().join("src/lib.rs"), plain).unwrap();
    assert!(indexes(dir.path()).run().unwrap().written);
    assert_eq!(all_index_paths(dir.path()), paths(&[&["shard", "at"]]));
}

/// An aggregated field that an index holds already (the order field, an indexed field) is
/// not added to it again: every index names each field once, and no index is written twice.
#[test]
fn an_aggregate_on_the_order_field_or_an_indexed_field_names_each_field_once() {
    let source = r#"
        #[derive(Serialize, Deserialize, Sharded)]
        #[sharded(shards = 3, order_by = "at")]
        pub struct Score {
            #[sharded(index, aggregate)]
            points: i64,
            #[sharded(aggregate)]
            at: i64,
        }
    "#;
    let dir = crate_with(source);
    indexes(dir.path()).run().unwrap();
    let paths = all_index_paths(dir.path());
    for index in &paths {
        let mut fields = index.clone();
        fields.sort();
        fields.dedup();
        assert_eq!(fields.len(), index.len(), "a field twice in {index:?}");
    }
    let mut distinct = paths.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), paths.len(), "an index twice in {paths:?}");
    let expected: Vec<Vec<String>> = [
        &["shard", "at"][..],
        &["shard", "points", "at"],
        &["shard", "at", "points"],
    ]
    .iter()
    .map(|fields| fields.iter().map(|f| f.to_string()).collect())
    .collect();
    assert_eq!(paths, expected);
}

#[test]
fn check_mode_fails_on_a_stale_file_with_a_diff_and_writes_nothing() {
    let dir = crate_with(WITH_TWO_INDEXES);
    indexes(dir.path()).run().unwrap();
    assert!(
        indexes(dir.path()).check(true).run().is_ok(),
        "an up-to-date file passes"
    );

    let one_less = WITH_TWO_INDEXES.replacen("#[sharded(index)]\n        symbol", "symbol", 1);
    std::fs::write(dir.path().join("src/lib.rs"), one_less).unwrap();
    let before = std::fs::read_to_string(dir.path().join("firestore.indexes.json")).unwrap();
    match indexes(dir.path()).check(true).run() {
        Err(error @ Error::Stale { .. }) => {
            let message = error.to_string();
            assert!(message.contains("out of date"), "{message}");
            assert!(
                message.contains("-           \"fieldPath\": \"symbol\","),
                "{message}"
            );
        }
        other => panic!("expected a stale file, got {other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("firestore.indexes.json")).unwrap(),
        before
    );

    let missing = crate_with(WITH_TWO_INDEXES);
    assert!(matches!(
        indexes(missing.path()).check(true).run(),
        Err(Error::Stale { .. })
    ));
}

#[test]
fn a_file_that_is_not_json_is_an_error_not_overwritten() {
    let dir = crate_with(WITH_TWO_INDEXES);
    std::fs::write(dir.path().join("firestore.indexes.json"), "// comments\n{}").unwrap();
    assert!(matches!(indexes(dir.path()).run(), Err(Error::File(..))));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("firestore.indexes.json")).unwrap(),
        "// comments\n{}"
    );
}

#[test]
fn nested_paths_follow_the_inner_types_serde_names_across_files() {
    let dir = crate_with(
        r#"
        mod place;
        #[derive(Serialize, Deserialize, Sharded)]
        #[sharded(shards = 3, order_by = "at", shard_field = "shard-id")]
        pub struct Visit {
            #[sharded(index(region_code: String, site.id: u32))]
            place: place::Place,
            at: FirestoreTimestamp,
        }
    "#,
    );
    std::fs::write(
        dir.path().join("src/place.rs"),
        r#"
        #[derive(Serialize, Deserialize, StoredNames)]
        #[serde(rename_all = "camelCase")]
        pub struct Place { region_code: String, the_site: Site }

        #[derive(Serialize, Deserialize, sharded_runtime::StoredNames)]
        pub struct Site { #[serde(rename = "site-id")] id: u32 }
    "#,
    )
    .unwrap();
    // `site` is not a field of `Place` (it is `the_site`): an error, not a guessed path.
    let error = indexes(dir.path()).run().unwrap_err();
    assert!(error.to_string().contains("`site`"), "{error}");

    let lib = std::fs::read_to_string(dir.path().join("src/lib.rs")).unwrap();
    std::fs::write(
        dir.path().join("src/lib.rs"),
        lib.replace("site.id: u32", "the_site.id: u32"),
    )
    .unwrap();
    indexes(dir.path()).run().unwrap();
    assert_eq!(
        index_fields(dir.path()),
        ["place.regionCode", "place.theSite.`site-id`"]
    );
    let text = std::fs::read_to_string(dir.path().join("firestore.indexes.json")).unwrap();
    assert!(text.contains("\"fieldPath\": \"`shard-id`\""), "{text}");
}

#[cfg(unix)]
#[test]
fn a_symlinked_file_stays_a_symlink_and_its_target_is_written() {
    let dir = crate_with(WITH_TWO_INDEXES);
    let shared = tempfile::tempdir().unwrap();
    let target = shared.path().join("firestore.indexes.json");
    std::fs::write(&target, "{}\n").unwrap();
    let link = dir.path().join("firestore.indexes.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();

    assert!(indexes(dir.path()).run().unwrap().written);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(index_fields(shared.path()), ["exchange", "symbol"]);
    assert!(!indexes(dir.path()).run().unwrap().written);
}

fn sharded(collection: &str) -> String {
    format!(
        r#"#[derive(Sharded)]
        #[sharded(shards = 2, order_by = "at", collection = "{collection}")]
        pub struct T {{ #[sharded(index)] k: String, at: i64 }}
        "#
    )
}

#[test]
fn the_scan_follows_the_module_tree() {
    let dir = crate_with(&format!(
        r#"
        mod a;
        #[cfg(test)]
        mod tests;
        #[path = "elsewhere/c.rs"]
        mod c;
        mod inline {{ {} }}
        macro_rules! make_sharded {{
            ($name:ident) => {{ #[derive(Sharded)] pub struct $name {{ at: i64 }} }};
        }}
        make_sharded!(Generated);
        #[cfg_attr(feature = "x", derive(Sharded))]
        pub struct Conditional {{ at: i64 }}
        "#,
        sharded("inline")
    ));
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::create_dir_all(src.join("elsewhere")).unwrap();
    std::fs::write(src.join("a.rs"), format!("mod b;\n{}", sharded("a"))).unwrap();
    std::fs::write(src.join("a/b.rs"), sharded("b")).unwrap();
    std::fs::write(src.join("elsewhere/c.rs"), sharded("c")).unwrap();
    std::fs::write(src.join("tests.rs"), sharded("only_in_tests")).unwrap();
    std::fs::write(src.join("unlinked.rs"), sharded("unlinked")).unwrap();
    std::fs::create_dir_all(src.join("bin")).unwrap();
    std::fs::write(src.join("bin/tool.rs"), sharded("tool")).unwrap();

    let outcome = indexes(dir.path()).run().unwrap();
    let mut collections: Vec<&str> = outcome
        .types
        .iter()
        .map(|t| t.description.collection.as_str())
        .collect();
    collections.sort();
    assert_eq!(collections, ["a", "b", "c", "inline", "tool"]);
    let warnings = outcome.warnings.join("\n");
    assert!(
        warnings.contains("a macro mentions `Sharded`"),
        "{warnings}"
    );
    assert!(
        warnings.contains("`Conditional` derives `Sharded` behind `cfg_attr`"),
        "{warnings}"
    );
}

#[test]
fn the_drift_command_guards_what_is_deployed() {
    let dir = crate_with(WITH_TWO_INDEXES);
    indexes(dir.path()).run().unwrap();
    let file = dir.path().join("firestore.indexes.json");
    let drift = |deployed: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_sharded-indexes-drift"))
            .arg(&file)
            .arg(deployed)
            .output()
            .unwrap()
    };

    // Deployed as written, but printed as `firebase firestore:indexes` prints it: no manifest.
    let mut exported: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    exported.as_object_mut().unwrap().remove("shardedManaged");
    let deployed = dir.path().join("deployed.json");
    std::fs::write(&deployed, exported.to_string()).unwrap();
    let same = drift(&deployed);
    assert!(same.status.success(), "{same:?}");

    // One index not deployed yet: listed, and the command fails.
    exported["indexes"].as_array_mut().unwrap().pop();
    std::fs::write(&deployed, exported.to_string()).unwrap();
    let missing = drift(&deployed);
    assert_eq!(missing.status.code(), Some(1));
    let stdout = String::from_utf8(missing.stdout).unwrap();
    assert!(
        stdout.contains("missing (in the file, not deployed): composite index instruments (shard DESCENDING, symbol ASCENDING, timestamp DESCENDING)"),
        "{stdout}"
    );
    let unreadable = drift(&dir.path().join("nope.json"));
    assert_eq!(unreadable.status.code(), Some(2));
}

/// The one way to drop shard values, from the sources as a user edits them: the old set as
/// `previous(...)`, then (after the rebalance) as `retired(...)`; dropping `previous(...)`
/// outright, or `retired(...)` later, fails the build and leaves the file as it was.
#[test]
fn shard_values_leave_only_through_previous_then_retired() {
    let with = |attrs: &str| {
        WITH_TWO_INDEXES.replace(
            "#[sharded(shards = 3, order_by = \"timestamp\")]",
            &format!("#[sharded({attrs}, order_by = \"timestamp\")]"),
        )
    };
    let dir = crate_with(&with("shards = 6"));
    let file = dir.path().join("firestore.indexes.json");
    let build = |attrs: &str| {
        std::fs::write(dir.path().join("src/lib.rs"), with(attrs)).unwrap();
        indexes(dir.path()).run()
    };
    build("shards = 6").unwrap();
    assert!(build("shards = 3").is_err());
    build("shards = 3, previous(shards = 6)").unwrap();
    let recorded = std::fs::read(&file).unwrap();
    let err = build("shards = 3").unwrap_err().to_string();
    assert!(err.contains("retired(shards = 3)"), "{err}");
    assert_eq!(
        std::fs::read(&file).unwrap(),
        recorded,
        "a refused build writes nothing"
    );
    build("shards = 3, retired(shards = 6)").unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let entry = &json["shardedManaged"]["crates"];
    assert!(
        entry
            .to_string()
            .contains(r#""retiredShardValues":["3","4","5"]"#),
        "{json}"
    );
    assert!(build("shards = 3").is_err());
    assert!(build("shards = 3, retired(shards = 5)").is_err());
    build("shards = 3, retired(shards = 6)").unwrap();
}

/// An app with no sharded type of its own includes a models crate's types: its file holds
/// their indexes beside the app's, and the manifest names them, so a later build without
/// them removes them as it removes a deleted type's.
#[test]
fn an_app_includes_the_types_of_a_models_crate() {
    let app = crate_with(WITH_TWO_INDEXES);
    let reading = sharded_indexes::CollectionDescription {
        collection: "readings",
        shard_field: "shard",
        shard_values: &["0", "1", "2"],
        order_field: "at",
        indexed_fields: &["device"],
        ..sharded_indexes::CollectionDescription::EMPTY
    };
    let outcome = indexes(app.path())
        .include("models::Reading", &reading)
        .run()
        .unwrap();
    assert_eq!(outcome.types.len(), 2);
    let text = std::fs::read_to_string(app.path().join("firestore.indexes.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let groups: Vec<&str> = json["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["collectionGroup"].as_str().unwrap())
        .collect();
    let expected = reading.plan().indexes.len();
    assert_eq!(
        groups.iter().filter(|g| **g == "readings").count(),
        expected
    );
    assert_eq!(groups.iter().filter(|g| **g == "instruments").count(), 3);
    assert!(text.contains("models::Reading"), "{text}");
    // Without the include, the models' indexes go (their shard set stays recorded).
    indexes(app.path()).run().unwrap();
    let text = std::fs::read_to_string(app.path().join("firestore.indexes.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let left = json["indexes"].as_array().unwrap();
    assert!(
        left.iter().all(|i| i["collectionGroup"] == "instruments"),
        "{text}"
    );
    assert_eq!(left.len(), 3);
}

#[test]
fn an_expiry_read_from_the_sources_brings_its_ttl_policy_and_leaves_with_it() {
    let expiring = r#"
        #[derive(Serialize, Deserialize, Sharded)]
        #[serde(rename_all = "camelCase")]
        #[sharded(shards = 3, order_by = "started_at", expire_at = "expires_at")]
        pub struct Session {
            #[sharded(index)]
            user: String,
            started_at: FirestoreTimestamp,
            expires_at: FirestoreTimestamp,
        }
    "#;
    let dir = crate_with(expiring);
    let outcome = indexes(dir.path()).run().unwrap();
    assert_eq!(
        outcome.types[0].description.expiry_field.as_deref(),
        Some("expiresAt")
    );
    let read = || -> serde_json::Value {
        let text = std::fs::read_to_string(dir.path().join("firestore.indexes.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let file = read();
    let ttl: Vec<&serde_json::Value> = file["fieldOverrides"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["fieldPath"] == "expiresAt")
        .collect();
    assert_eq!(
        ttl,
        [&serde_json::json!({
            "collectionGroup": "sessions", "fieldPath": "expiresAt", "ttl": true, "indexes": []
        })]
    );
    let purge = serde_json::json!([
        { "fieldPath": "shard", "order": "DESCENDING" },
        { "fieldPath": "expiresAt", "order": "ASCENDING" }
    ]);
    assert!(
        file["indexes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|index| index["fields"] == purge),
        "{file}"
    );
    // Without the attribute, the build takes its override and indexes out again.
    std::fs::write(
        dir.path().join("src/lib.rs"),
        expiring.replace(", expire_at = \"expires_at\"", ""),
    )
    .unwrap();
    indexes(dir.path()).run().unwrap();
    let file = read();
    let planned = format!("{}{}", file["indexes"], file["fieldOverrides"]);
    assert!(!planned.contains("expiresAt"), "{file}");
}
