//! Generated index files pass the Firebase CLI's own validation (`upgradeOldSpec` +
//! `validateSpec` of the pinned firebase-tools), which `cargo test` installs with `npm ci`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_tests::models::{Instrument, Tick};

/// Field sets, aggregates, an array field, a vector field, a counter and a field whose stored
/// name needs quoting, for their indexes.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(shards = 40, order_by = "at", direction = "asc", index(venue, side))]
struct Fill {
    #[sharded(index)]
    venue: String,
    #[serde(rename = "trade side")]
    side: String,
    #[sharded(aggregate)]
    quantity: i64,
    #[sharded(aggregate)]
    price: f64,
    #[sharded(contains)]
    tags: Vec<String>,
    #[sharded(vector(dimension = 4))]
    embedding: sharded_runtime::firestore::FirestoreVector,
    #[sharded(counter(shards = 10))]
    fills_seen: i64,
    at: i64,
}

/// An expiry (`expire_at`), with a range field and a group: its TTL override, the purge's
/// index, and the expiry's indexes after the order field.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "at",
    parent = "users",
    collection_group,
    expire_at = "expires_at"
)]
struct Visit {
    #[sharded(index)]
    page: String,
    #[sharded(range)]
    seconds: i64,
    at: i64,
    expires_at: sharded_runtime::firestore::FirestoreTimestamp,
}

fn tools() -> PathBuf {
    sharded_tests::node::tool("firebase-validate")
}

/// Installs the pinned firebase-tools on first use, from the committed lock file.
fn install() {
    sharded_tests::node::install(
        "firebase-validate",
        "node_modules/firebase-tools/lib/firestore/api.js",
    );
}

/// Runs the validator; its exit status and what it printed.
fn validate(files: &[PathBuf]) -> (bool, String) {
    let output = Command::new("node")
        .arg(tools().join("validate.js"))
        .args(files)
        .output()
        .expect("node runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn generated_files_pass_the_firebase_cli_validation() {
    install();
    let dir = std::env::temp_dir().join(format!("sharded-firebase-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let committed =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/firestore.indexes.json");
    let instruments = write(&dir, "instruments.json", &Instrument::indexes().to_json());
    let ticks = write(&dir, "ticks.json", &Tick::indexes().to_json());
    let fills = write(&dir, "fills.json", &Fill::indexes().to_json());
    // A set of range fields filtered together: its indexes end with the order field, then
    // each of the set's fields.
    let lots = write(&dir, "lots.json", &super::query_range_sets::indexes_json());
    let visits = write(&dir, "visits.json", &Visit::indexes().to_json());
    let (ok, report) = validate(&[committed, instruments, ticks, fills, lots, visits]);
    assert!(ok, "{report}");
    assert_eq!(
        report
            .lines()
            .filter(|line| line.starts_with("valid: "))
            .count(),
        6,
        "{report}"
    );
    // In each scope: (shard, at) and (shard, page, at); each with `seconds` and with
    // `expiresAt` after the order field, and with both (the set the expiry makes with each
    // range field); and the purge's (shard, expiresAt): 9, twice. The expiry's TTL policy is
    // the third override, after the order and shard fields'.
    assert!(
        report.contains("visits.json (18 indexes, 3 field overrides)"),
        "{report}"
    );
    // (shard, time), venue, the set, the array's elements; each of those four with each of
    // the two summed fields; and a vector index (`vectorConfig`) for the whole collection,
    // venue and the set, which the CLI takes. The counter's markers' TTL is the third
    // override (`"ttl": true`).
    assert!(
        report.contains("fills.json (15 indexes, 3 field overrides)"),
        "{report}"
    );
    assert!(
        report.contains("instruments.json (5 indexes, 2 field overrides)"),
        "{report}"
    );

    // A managed override that keeps the user's TTL and array index, as the merge leaves it.
    let ttl = write(
        &dir,
        "ttl.json",
        r#"{"indexes":[],"fieldOverrides":[{"collectionGroup":"instruments","fieldPath":"timestamp","ttl":true,"indexes":[{"arrayConfig":"CONTAINS","queryScope":"COLLECTION"}]}],"shardedManaged":{"collections":[]}}"#,
    );
    let (ok, report) = validate(&[ttl]);
    assert!(ok, "{report}");

    // The validator is live: it rejects what the API would.
    let bad = write(
        &dir,
        "bad.json",
        r#"{"indexes":[{"collectionGroup":"c","queryScope":"COLLECTION","fields":[{"fieldPath":"a","order":"DOWN"}]}]}"#,
    );
    let (ok, report) = validate(&[bad]);
    assert!(!ok, "{report}");
    assert!(
        report.contains(r#"Field "order" must be one of ASCENDING, DESCENDING"#),
        "{report}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The collection group of each composite index, in file order.
fn index_groups(file: &serde_json::Value) -> Vec<&str> {
    file["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["collectionGroup"].as_str().unwrap())
        .collect()
}

/// A Firebase project's one `firestore.indexes.json`, shared by two crates of a workspace,
/// over the user's own entries: another collection's index and a TTL on a sharded order field.
#[test]
fn two_crates_share_one_file_in_any_order() {
    install();
    let workspace = std::env::temp_dir().join(format!("sharded-workspace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&workspace);
    let crate_src = |name: &str, source: &str| {
        let src = workspace.join(name).join("src");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("lib.rs"), source).unwrap();
        src
    };
    let a_src = crate_src(
        "orders",
        r#"
        #[derive(Sharded)]
        #[sharded(shards = 3, order_by = "created_at")]
        pub struct Order { #[sharded(index)] customer: String, created_at: i64 }
        #[derive(Sharded)]
        #[sharded(shards = 3, order_by = "at")]
        pub struct Refund { #[sharded(index)] reason: String, at: i64 }
        "#,
    );
    let b_src = crate_src(
        "ticks",
        r#"
        #[derive(Sharded)]
        #[sharded(writes_per_second = 20000, order_by = "at", collection = "ticks")]
        pub struct Tick { #[sharded(index)] venue: String, at: i64 }
        "#,
    );
    let file = workspace.join("firestore.indexes.json");
    let users = r#"{
      "indexes": [
        { "collectionGroup": "customers", "queryScope": "COLLECTION",
          "fields": [{ "fieldPath": "country", "order": "ASCENDING" }, { "fieldPath": "name", "order": "ASCENDING" }] }
      ],
      "fieldOverrides": [
        { "collectionGroup": "orders", "fieldPath": "created_at", "ttl": true, "indexes": [] }
      ]
    }"#;
    let build = |name: &str, src: &Path| {
        sharded_build::Indexes::from_env()
            .sources(src)
            .output(&file)
            .crate_name(name)
            .check(false)
            .run()
    };
    let read = || std::fs::read_to_string(&file).unwrap();

    std::fs::write(&file, users).unwrap();
    build("orders", &a_src).unwrap();
    build("ticks", &b_src).unwrap();
    let a_then_b = read();
    std::fs::write(&file, users).unwrap();
    build("ticks", &b_src).unwrap();
    build("orders", &a_src).unwrap();
    assert_eq!(read(), a_then_b, "either order writes the same bytes");
    build("ticks", &b_src).unwrap();
    build("orders", &a_src).unwrap();
    assert_eq!(read(), a_then_b, "rebuilding changes no byte");

    let json: serde_json::Value = serde_json::from_str(&a_then_b).unwrap();
    // Each sharded collection: its whole-collection index and one per indexed field.
    assert_eq!(
        index_groups(&json),
        [
            "customers",
            "orders",
            "orders",
            "refunds",
            "refunds",
            "ticks",
            "ticks"
        ]
    );
    let ttl = json["fieldOverrides"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["collectionGroup"] == "orders" && o["fieldPath"] == "created_at")
        .unwrap();
    assert_eq!(
        ttl["ttl"],
        serde_json::json!(true),
        "the user's TTL is kept"
    );
    let both = write(&workspace, "both.json", &a_then_b);

    // Removing a type from one crate removes only that type's entries.
    std::fs::write(
        a_src.join("lib.rs"),
        r#"
        #[derive(Sharded)]
        #[sharded(shards = 3, order_by = "created_at")]
        pub struct Order { #[sharded(index)] customer: String, created_at: i64 }
        "#,
    )
    .unwrap();
    build("orders", &a_src).unwrap();
    let fewer = read();
    let json: serde_json::Value = serde_json::from_str(&fewer).unwrap();
    assert_eq!(
        index_groups(&json),
        ["customers", "orders", "orders", "ticks", "ticks"]
    );
    let fewer = write(&workspace, "fewer.json", &fewer);

    // A conflicting shard set across the crates fails the build and names both types.
    std::fs::write(
        a_src.join("lib.rs"),
        r#"
        #[derive(Sharded)]
        #[sharded(shards = 3, order_by = "at", collection = "ticks")]
        pub struct TickCopy { #[sharded(index)] venue: String, at: i64 }
        "#,
    )
    .unwrap();
    let conflict = build("orders", &a_src).unwrap_err().to_string();
    assert!(
        conflict.contains("`TickCopy` in crate `orders`"),
        "{conflict}"
    );
    assert!(conflict.contains("`Tick` in crate `ticks`"), "{conflict}");

    let (ok, report) = validate(&[both, fewer]);
    assert!(ok, "{report}");
    std::fs::remove_dir_all(&workspace).unwrap();
}
