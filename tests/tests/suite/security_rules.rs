//! The security rules the build generates, enforced by the emulator on a web client: the
//! Firebase JS SDK (`tools/rules-probe`, installed by this test with `npm ci`), signed in as
//! nobody, writes every allowed and every denied variant at the top level, under a parent and
//! in a collection group, while this crate's writes (admin credentials) bypass the rules as
//! a server SDK's do in production.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::{Parent, Sharded};
use sharded_tests::shared_emulator;

/// Current, previous and retired values, one with a quote in it.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(
    shard_values = ["a", "b", "it's"],
    previous(shard_values = ["a", "old"]),
    retired(shard_values = ["gone"]),
    order_by = "at",
    collection = "ruled_readings"
)]
struct Reading {
    #[sharded(index)]
    device: String,
    at: FirestoreTimestamp,
}

/// The server fills the order field.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "created",
    server_timestamp,
    parent = "rooms",
    collection = "ruled_notes"
)]
struct Note {
    text: String,
    created: FirestoreTimestamp,
    /// An integer narrower than Firestore's: the rules hold it within `u8`'s range.
    priority: Option<u8>,
}

/// Read across every parent, with a shard field whose name needs quoting and an integer
/// order field.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "seq",
    parent = "venues",
    collection_group,
    shard_field = "shard-id",
    collection = "ruled_events"
)]
struct Event {
    seq: i64,
}

/// The owner's rules: who may do what is theirs; each create and update calls the function
/// the build generates for the type.
const OWNERS_RULES: &str = "rules_version = '2';
// Rules of the test application.
service cloud.firestore {
  match /databases/{database}/documents {
    match /ruled_readings/{id} {
      allow read, delete: if true;
      allow create, update: if sharded_Reading();
    }
    match /rooms/{room}/ruled_notes/{id} {
      allow read: if true;
      allow create, update: if sharded_Note();
    }
    match /{path=**}/ruled_events/{id} {
      allow read: if true;
      allow create, update: if sharded_Event();
    }
  }
}
";

/// Runs the build for the three types in `dir`, whose `firestore.rules` is what it holds.
fn build_rules(dir: &Path) -> (String, Vec<String>) {
    build_rules_of(
        dir,
        "rules-test",
        &[
            ("Reading", &Reading::DESCRIPTION),
            ("Note", &Note::DESCRIPTION),
            ("Event", &Event::DESCRIPTION),
        ],
    )
}

/// Runs the build of the crate `crate_name` holding `types` in `dir`, whose
/// `firestore.rules` is the owner's file (none: the build writes its starting file): the
/// rules it leaves there, and its warnings.
pub(crate) fn build_rules_of(
    dir: &Path,
    crate_name: &str,
    types: &[(
        &str,
        &sharded_runtime::indexes::CollectionDescription<'static>,
    )],
) -> (String, Vec<String>) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let mut build = sharded_build::Indexes::from_env()
        .sources(dir.join("src"))
        .output(dir.join("firestore.indexes.json"))
        .crate_name(crate_name);
    for (name, description) in types {
        build = build.include(name, description);
    }
    let outcome = build.run().unwrap();
    let rules = std::fs::read_to_string(dir.join("firestore.rules")).unwrap();
    (rules, outcome.warnings)
}

pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "sharded-rules-{name}-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The file without the build's block: what the owner wrote.
fn owners_part(rules: &str) -> String {
    let mut inside = false;
    rules
        .split_inclusive('\n')
        .filter(|line| {
            let line = line.trim();
            if line.starts_with("// sharded-build: begin") {
                inside = true;
            }
            let keep = !inside;
            if line.starts_with("// sharded-build: end") {
                inside = false;
            }
            keep
        })
        .collect()
}

/// Each case's outcome as the JS SDK saw it: allowed, or the error code.
fn probe(host: &str, project: &str, cases: &[(&str, &str, Value)]) -> Vec<Result<(), String>> {
    let dir = sharded_tests::node::install("rules-probe", "node_modules/firebase/package.json");
    let cases: Vec<Value> = cases
        .iter()
        .map(|(op, path, data)| json!({"op": op, "path": path, "data": data}))
        .collect();
    let input = json!({"host": host, "project": project, "cases": cases}).to_string();
    let output = sharded_tests::node::run_script(&dir.join("probe.mjs"), &input);
    let outcomes: Vec<Value> = serde_json::from_slice(&output).unwrap();
    assert_eq!(outcomes.len(), cases.len());
    outcomes
        .into_iter()
        .map(|outcome| match outcome["allowed"].as_bool() {
            Some(true) => Ok(()),
            _ => Err(outcome["code"].as_str().unwrap_or("?").to_owned()),
        })
        .collect()
}

fn ts(millis: i64) -> Value {
    json!({"$timestamp": millis})
}

fn server_time() -> Value {
    json!({"$serverTime": true})
}

#[tokio::test]
async fn a_web_client_writes_only_what_keeps_the_shard_contract_in_every_scope() {
    let emulator = shared_emulator();
    let dir = temp_dir("enforced");
    std::fs::write(dir.join("firestore.rules"), OWNERS_RULES).unwrap();
    let (rules, warnings) = build_rules(&dir);
    assert_eq!(
        owners_part(&rules),
        OWNERS_RULES,
        "every byte of the owner's file stays"
    );
    assert!(
        warnings.iter().all(|w| !w.contains("never calls")),
        "{warnings:?}"
    );
    let project = format!("rules-{:08x}", rand::random::<u32>());
    emulator.load_rules(&project, &rules).await.unwrap();
    let db = emulator.db(&project).await.unwrap();

    // Documents a server wrote (admin credentials bypass the rules).
    let now = FirestoreTimestamp(sharded_runtime::firestore::jiff::Timestamp::now());
    Reading::collection(&db)
        .insert_with_id(
            "existing",
            &Reading {
                device: "d".into(),
                at: now,
            },
        )
        .await
        .unwrap();
    let room = Parent::<Note>::new(&["r1"]).unwrap();
    Note::collection_in(&db, &room)
        .insert_with_id(
            "existing",
            &Note {
                text: "hi".into(),
                created: now,
                priority: None,
            },
        )
        .await
        .unwrap();
    let venue = Parent::<Event>::new(&["v1"]).unwrap();
    Event::collection_in(&db, &venue)
        .insert_with_id("existing", &Event { seq: 1 })
        .await
        .unwrap();

    let reading = |shard: Value| json!({"shard": shard, "device": "d", "at": ts(1_000)});
    let allowed = true;
    let denied = false;
    let cases: Vec<(&str, &str, Value, bool, &str)> = vec![
        // Top level.
        (
            "set",
            "ruled_readings/c1",
            reading(json!("a")),
            allowed,
            "a current value",
        ),
        (
            "set",
            "ruled_readings/c2",
            reading(json!("it's")),
            allowed,
            "a value with a quote",
        ),
        (
            "set",
            "ruled_readings/c3",
            reading(json!("old")),
            allowed,
            "a previous value while resharding",
        ),
        (
            "set",
            "ruled_readings/c4",
            reading(json!("gone")),
            denied,
            "a retired value",
        ),
        (
            "set",
            "ruled_readings/c5",
            reading(json!("zzz")),
            denied,
            "a value outside the set",
        ),
        (
            "set",
            "ruled_readings/c6",
            json!({"device": "d", "at": ts(1)}),
            denied,
            "no shard",
        ),
        (
            "set",
            "ruled_readings/c7",
            reading(json!(0)),
            denied,
            "a shard of the wrong type",
        ),
        (
            "set",
            "ruled_readings/c8",
            json!({"shard": "a", "device": "d", "at": "2026-01-01"}),
            denied,
            "an order field of the wrong type",
        ),
        (
            "set",
            "ruled_readings/c9",
            json!({"shard": "a", "device": "d"}),
            denied,
            "no order field",
        ),
        (
            "set",
            "ruled_readings/c10",
            json!({"shard": "a", "at": ts(1)}),
            denied,
            "without a field the struct requires, which no strict read would read back",
        ),
        (
            "set",
            "ruled_readings/c11",
            json!({"shard": "a", "device": 7, "at": ts(1)}),
            denied,
            "a required field of the wrong type",
        ),
        (
            "update",
            "ruled_readings/existing",
            json!({"device": {"$delete": true}}),
            denied,
            "an update that deletes a required field",
        ),
        (
            "add",
            "ruled_readings",
            reading(json!("b")),
            allowed,
            "add with a current value",
        ),
        (
            "add",
            "ruled_readings",
            json!({"device": "d", "at": ts(1)}),
            denied,
            "add without a shard",
        ),
        (
            "update",
            "ruled_readings/existing",
            json!({"device": "e"}),
            allowed,
            "an update that keeps the shard",
        ),
        (
            "set_merge",
            "ruled_readings/existing",
            json!({"device": "f"}),
            allowed,
            "a merge that keeps the shard",
        ),
        (
            "update",
            "ruled_readings/existing",
            json!({"shard": "gone"}),
            denied,
            "an update to a retired value",
        ),
        (
            "update",
            "ruled_readings/existing",
            json!({"shard": {"$delete": true}}),
            denied,
            "an update that deletes the shard",
        ),
        (
            "set",
            "ruled_readings/existing",
            json!({"device": "g", "at": ts(1)}),
            denied,
            "a set() that drops the shard",
        ),
        (
            "batch_set",
            "ruled_readings/c10",
            reading(json!("b")),
            allowed,
            "a batch with a current value",
        ),
        (
            "batch_set",
            "ruled_readings/c11",
            reading(json!("zzz")),
            denied,
            "a batch with a value outside the set",
        ),
        (
            "transaction_set",
            "ruled_readings/c12",
            reading(json!("a")),
            allowed,
            "a transaction with a current value",
        ),
        (
            "transaction_update",
            "ruled_readings/existing",
            json!({"shard": "zzz"}),
            denied,
            "a transaction's update outside the set",
        ),
        // Under a parent, with the server's time.
        (
            "set",
            "rooms/r1/ruled_notes/n1",
            json!({"shard": "0", "text": "x", "created": server_time()}),
            allowed,
            "the server's time",
        ),
        (
            "set",
            "rooms/r1/ruled_notes/n2",
            json!({"shard": "0", "text": "x", "created": ts(1_000)}),
            denied,
            "a client's time",
        ),
        (
            "set",
            "rooms/r1/ruled_notes/n5",
            json!({"shard": "0", "text": "x", "created": server_time(), "priority": 255}),
            allowed,
            "an integer within its Rust type's range",
        ),
        (
            "set",
            "rooms/r1/ruled_notes/n6",
            json!({"shard": "0", "text": "x", "created": server_time(), "priority": 256}),
            denied,
            "an integer past its Rust type's range (`u8`), which the Rust read refuses",
        ),
        (
            "set",
            "rooms/r1/ruled_notes/n7",
            json!({"shard": "0", "text": "x", "created": server_time(), "priority": -1}),
            denied,
            "a negative integer in an unsigned Rust type",
        ),
        (
            "set",
            "rooms/r1/ruled_notes/n3",
            json!({"shard": "5", "text": "x", "created": server_time()}),
            denied,
            "a value outside the set",
        ),
        (
            "set",
            "rooms/r1/ruled_notes/n4",
            json!({"text": "x", "created": server_time()}),
            denied,
            "no shard",
        ),
        (
            "update",
            "rooms/r1/ruled_notes/existing",
            json!({"text": "edited"}),
            allowed,
            "an edit that keeps the time",
        ),
        (
            "update",
            "rooms/r1/ruled_notes/existing",
            json!({"created": server_time()}),
            denied,
            "an edit that moves the document",
        ),
        // A collection group, at two depths.
        (
            "set",
            "venues/v1/ruled_events/e1",
            json!({"shard-id": "1", "seq": 5}),
            allowed,
            "an integer order field",
        ),
        (
            "set",
            "a/b/venues/v2/ruled_events/e2",
            json!({"shard-id": "2", "seq": 6}),
            allowed,
            "deeper in the group",
        ),
        (
            "set",
            "venues/v1/ruled_events/e3",
            json!({"shard-id": "1", "seq": 5.5}),
            denied,
            "a double for an integer",
        ),
        (
            "set",
            "venues/v1/ruled_events/e4",
            json!({"shard-id": "1", "seq": "5"}),
            denied,
            "a string for an integer",
        ),
        (
            "set",
            "venues/v1/ruled_events/e5",
            json!({"shard": "1", "seq": 5}),
            denied,
            "the shard under another name",
        ),
        (
            "update",
            "venues/v1/ruled_events/existing",
            json!({"shard-id": "9"}),
            denied,
            "an update outside the set",
        ),
    ];
    let sent: Vec<(&str, &str, Value)> = cases
        .iter()
        .map(|(op, path, data, _, _)| (*op, *path, data.clone()))
        .collect();
    let outcomes = probe(emulator.host(), &project, &sent);
    let mut wrong = Vec::new();
    for ((op, path, _, expected, what), outcome) in cases.iter().zip(&outcomes) {
        match (expected, outcome) {
            (true, Ok(())) => {}
            (false, Err(code)) if code == "permission-denied" => {}
            _ => wrong.push(format!(
                "{what} ({op} {path}): expected {}, got {outcome:?}",
                if *expected { "allowed" } else { "denied" }
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    // The server's writes are not governed by the rules: a library write still lands.
    Reading::collection(&db)
        .upsert(
            "existing",
            &Reading {
                device: "server".into(),
                at: now,
            },
        )
        .await
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn the_rules_are_per_project_and_a_project_without_them_takes_any_write() {
    let emulator = shared_emulator();
    let dir = temp_dir("projects");
    std::fs::write(dir.join("firestore.rules"), OWNERS_RULES).unwrap();
    let (rules, _) = build_rules(&dir);
    let ruled = format!("rules-{:08x}", rand::random::<u32>());
    let open = format!("open-{:08x}", rand::random::<u32>());
    emulator.load_rules(&ruled, &rules).await.unwrap();
    let case = [(
        "set",
        "ruled_readings/x",
        json!({"device": "d", "at": ts(1)}),
    )];
    assert_eq!(
        probe(emulator.host(), &ruled, &case),
        [Err("permission-denied".to_owned())]
    );
    // What the emulator does without rules, measured: it allows, so a test of rules must
    // load them.
    assert_eq!(probe(emulator.host(), &open, &case), [Ok(())]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn the_generated_files_load_unchanged_and_bad_rules_are_refused_with_the_reason() {
    let emulator = shared_emulator();
    // A crate without rules gets a file that denies every request until its owner decides.
    let dir = temp_dir("fresh");
    let (fresh, warnings) = build_rules(&dir);
    assert!(
        warnings.iter().all(|w| !w.contains("never calls")),
        "{warnings:?}"
    );
    let project = format!("fresh-{:08x}", rand::random::<u32>());
    emulator.load_rules(&project, &fresh).await.unwrap();
    let denied = probe(
        emulator.host(),
        &project,
        &[(
            "set",
            "ruled_readings/x",
            json!({"shard": "a", "device": "d", "at": ts(1)}),
        )],
    );
    assert_eq!(denied, [Err("permission-denied".to_owned())]);
    std::fs::remove_dir_all(&dir).unwrap();

    // The examples' committed file, which their build keeps.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/firestore.rules");
    let text = std::fs::read_to_string(&examples).unwrap();
    emulator.load_rules(&project, &text).await.unwrap();

    let error = emulator
        .load_rules(
            &project,
            "rules_version = '2'; service cloud.firestore { match /x { allow read: if nope( } }",
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("Error compiling rules"), "{error}");
}

/// A counter under a parent: its shard documents and markers have their own functions.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "at",
    parent = "ruled_users",
    collection = "ruled_posts"
)]
struct Liked {
    #[sharded(counter(shards = 4))]
    likes: i64,
    at: FirestoreTimestamp,
}

/// The owner's rules for `Liked`'s counter: anyone may like or unlike, one at a time (the
/// owner's own check of the amount, beside the generated function). The database's variable
/// is named `db`, not `database`: the generated functions do not depend on it.
const COUNTER_OWNERS_RULES: &str = "rules_version = '2';
service cloud.firestore {
  match /databases/{db}/documents {
    match /ruled_users/{user}/ruled_posts/{id} {
      allow read: if true;
      allow create, update: if sharded_Liked();
    }
    match /ruled_users/{user}/ruled_posts/{id}/_sharded_counter_likes/{shard} {
      allow read: if true;
      allow create, update: if sharded_Liked_counter_likes('ruled_users/' + user + '/ruled_posts/' + id, shard)
        && request.resource.data.value - (resource == null ? 0 : resource.data.get('value', 0)) in [1, -1];
    }
    match /ruled_users/{user}/ruled_posts/{id}/_sharded_increments/{increment} {
      allow read: if true;
      allow create: if sharded_Liked_increment_marker();
    }
  }
}
";

/// A web client's increments under the generated counter rules: one commit that adds to a
/// declared shard document and creates the marker it names, recording that counter, shard and
/// amount, is allowed, and counts in the library's exact value, whatever characters Firestore
/// allows the ids to hold (`+`, `%`, spaces, Unicode). Each hostile or broken write is denied:
/// the same increment again, an addition without its marker, several additions under one
/// marker (on several shards, or twice on one), a marker recording another amount, shard or
/// counter, a marker alone, a marker expiring outside its window of the request's time, a
/// shard outside the declared ones, other fields on either document, and a marker changed or
/// deleted afterwards.
#[tokio::test]
async fn a_web_client_increments_a_counter_only_with_its_marker() {
    let emulator = shared_emulator();
    let dir = temp_dir("counter");
    std::fs::write(dir.join("firestore.rules"), COUNTER_OWNERS_RULES).unwrap();
    let liked = [("Liked", &Liked::DESCRIPTION)];
    let (rules, warnings) = build_rules_of(&dir, "counter-rules-test", &liked);
    assert!(
        warnings.iter().all(|w| !w.contains("never calls")),
        "{warnings:?}"
    );
    assert_eq!(owners_part(&rules), COUNTER_OWNERS_RULES);
    let project = format!("counter-{:08x}", rand::random::<u32>());
    emulator.load_rules(&project, &rules).await.unwrap();

    let post = |id: &str| format!("ruled_users/u1/ruled_posts/{id}");
    let shard = |post_id: &str, n: &str| format!("{}/_sharded_counter_likes/{n}", post(post_id));
    let marker_of = |post_id: &str, id: &str| format!("{}/_sharded_increments/{id}", post(post_id));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let lifetime = sharded_runtime::counters::MARKER_LIFETIME.as_millis() as i64;
    let expiry = ts(now + lifetime);
    let recording = |shard_id: &str, by: i64, expire_at: Value| json!({"expire_at": expire_at, "field": "likes", "shard": shard_id, "amount": by, "commit": "c"});
    let addition = |post_id: &str, shard_id: &str, by: i64, id: &str| {
        json!({"op": "set_merge", "path": shard(post_id, shard_id),
               "data": {"value": {"$increment": by}, "increment": id}})
    };
    let marker = |post_id: &str, id: &str, data: Value| json!({"op": "set", "path": marker_of(post_id, id), "data": data});
    let increment_on = |post_id: &str, shard_id: &str, by: i64, id: &str| {
        json!([
            addition(post_id, shard_id, by, id),
            marker(post_id, id, recording(shard_id, by, expiry.clone())),
        ])
    };
    let increment = |shard_id: &str, by: i64, id: &str| increment_on("p1", shard_id, by, id);
    let (allowed, denied) = (true, false);
    let batch = |writes: Value, expected: bool, what: &'static str| {
        ("batch", String::new(), writes, expected, what)
    };
    let odd = "a+b%2Bc d é😀";
    let cases: Vec<(&str, String, Value, bool, &str)> = vec![
        batch(increment("0", 1, "i1"), allowed, "an increment"),
        batch(increment("2", 1, "i1"), denied, "the same increment again"),
        batch(increment("1", 1, "i2"), allowed, "another"),
        batch(increment("1", -1, "i3"), allowed, "a decrement"),
        batch(
            increment_on(odd, "2", 1, "r+1%20x y ü"),
            allowed,
            "ids holding +, %, spaces and Unicode",
        ),
        batch(
            increment_on(odd, "2", 1, "r+1%20x y ü"),
            denied,
            "the same odd increment again",
        ),
        batch(
            increment("4", 1, "i4"),
            denied,
            "a shard outside the declared ones",
        ),
        batch(
            increment("0", 5, "i5"),
            denied,
            "an amount the owner refuses",
        ),
        batch(
            json!([addition("p1", "0", 1, "i6")]),
            denied,
            "an addition without its marker",
        ),
        batch(
            json!([{"op": "set_merge", "path": shard("p1", "0"), "data": {"value": {"$increment": 1}}}]),
            denied,
            "an addition naming no marker",
        ),
        batch(
            json!([addition("p1", "3", 1, "i1")]),
            denied,
            "an addition naming a marker that was there before",
        ),
        batch(
            json!([
                addition("p1", "0", 1, "m4"),
                addition("p1", "1", 1, "m4"),
                addition("p1", "2", 1, "m4"),
                addition("p1", "3", 1, "m4"),
                marker("p1", "m4", recording("0", 1, expiry.clone())),
            ]),
            denied,
            "four additions under one marker",
        ),
        batch(
            json!([
                addition("p1", "0", 1, "m2"),
                addition("p1", "0", 1, "m2"),
                marker("p1", "m2", recording("0", 1, expiry.clone())),
            ]),
            denied,
            "one shard added to twice under one marker",
        ),
        batch(
            json!([
                addition("p1", "0", 1, "m5"),
                marker("p1", "m5", recording("0", -1, expiry.clone())),
            ]),
            denied,
            "a marker recording another amount",
        ),
        batch(
            json!([
                addition("p1", "0", 1, "m6"),
                marker("p1", "m6", recording("1", 1, expiry.clone())),
            ]),
            denied,
            "a marker recording another shard",
        ),
        batch(
            json!([
                addition("p1", "0", 1, "m7"),
                marker(
                    "p1",
                    "m7",
                    json!({"expire_at": expiry, "field": "views", "shard": "0", "amount": 1, "commit": "c"})
                ),
            ]),
            denied,
            "a marker recording another counter",
        ),
        batch(
            json!([marker("p1", "m8", recording("0", 1, expiry.clone()))]),
            denied,
            "a marker alone",
        ),
        batch(
            json!([marker("p1", "m9", recording("0", 0, expiry.clone()))]),
            denied,
            "a marker alone, adding nothing",
        ),
        batch(
            json!([
                addition("p1", "0", 1, "m10"),
                marker("p1", "m10", recording("0", 1, ts(now - 1000))),
            ]),
            denied,
            "a marker already expired",
        ),
        batch(
            json!([
                addition("p1", "0", 1, "m11"),
                marker("p1", "m11", recording("0", 1, ts(now + 2 * lifetime))),
            ]),
            denied,
            "a marker expiring past its lifetime",
        ),
        batch(
            json!([
                {"op": "set_merge", "path": shard("p1", "0"),
                 "data": {"value": {"$increment": 1}, "increment": "i7", "note": "x"}},
                marker("p1", "i7", recording("0", 1, expiry.clone())),
            ]),
            denied,
            "a shard document with another field",
        ),
        batch(
            json!([
                addition("p1", "0", 1, "i8"),
                marker(
                    "p1",
                    "i8",
                    json!({"expire_at": expiry, "field": "likes", "shard": "0", "amount": 1, "commit": "c", "by": 1})
                ),
            ]),
            denied,
            "a marker with another field",
        ),
        batch(
            json!([
                addition("p1", "0", 1, "i9"),
                marker(
                    "p1",
                    "i9",
                    json!({"expire_at": expiry, "field": "likes", "shard": "0", "amount": 1})
                ),
            ]),
            denied,
            "a marker without its commit",
        ),
        (
            "set",
            marker_of("p1", "i1"),
            json!({"expire_at": ts(1)}),
            denied,
            "a marker changed",
        ),
        (
            "delete",
            marker_of("p1", "i1"),
            json!({}),
            denied,
            "a marker deleted",
        ),
    ];
    let outcomes = {
        let probe_cases: Vec<(&str, &str, Value)> = cases
            .iter()
            .map(|(op, path, data, _, _)| (*op, path.as_str(), data.clone()))
            .collect();
        probe(emulator.host(), &project, &probe_cases)
    };
    let mut wrong = Vec::new();
    for ((op, _, _, expected, what), outcome) in cases.iter().zip(&outcomes) {
        match (expected, outcome) {
            (true, Ok(())) => {}
            (false, Err(code)) if code == "permission-denied" => {}
            _ => wrong.push(format!(
                "{what} ({op}): expected {}, got {outcome:?}",
                if *expected { "allowed" } else { "denied" }
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    // The library reads what the web client wrote: +1 +1 -1, and +1 on the odd document.
    let db = emulator.db(&project).await.unwrap();
    let parent = Parent::<Liked>::new(&["u1"]).unwrap();
    let posts = Liked::collection_in(&db, &parent);
    let likes = Liked::counters().likes;
    assert_eq!(posts.counter("p1", likes).await.unwrap(), 1);
    assert_eq!(posts.counter(odd, likes).await.unwrap(), 1);
    for (id, by) in [("i1", 1), ("i2", 1), ("i3", -1)] {
        let applied = sharded_runtime::counters::Increment::with_id(likes, by, id).unwrap();
        assert!(posts.was_applied("p1", &applied).await.unwrap(), "{id}");
    }
    let odd_increment =
        sharded_runtime::counters::Increment::with_id(likes, 1, "r+1%20x y ü").unwrap();
    assert!(posts.was_applied(odd, &odd_increment).await.unwrap());
    std::fs::remove_dir_all(&dir).unwrap();

    // A crate without rules gets matches for the shard documents and markers that deny
    // every request, call the functions, and load.
    let fresh = temp_dir("counter-fresh");
    let (starting, warnings) = build_rules_of(&fresh, "counter-rules-test", &liked);
    assert!(
        warnings.iter().all(|w| !w.contains("never calls")),
        "{warnings:?}"
    );
    let project = format!("counter-fresh-{:08x}", rand::random::<u32>());
    emulator.load_rules(&project, &starting).await.unwrap();
    assert_eq!(
        probe(
            emulator.host(),
            &project,
            &[("batch", "", increment_on("p1", "0", 1, "f1"))]
        ),
        [Err("permission-denied".to_owned())]
    );
    std::fs::remove_dir_all(&fresh).unwrap();
}
