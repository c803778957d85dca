//! The TypeScript client (`clients/typescript`): its type check and unit tests (`npm test`),
//! and its answers against the Rust library's on the same data. Half the documents are written
//! through Rust, half through the client (each drawing its own shard); then both read every
//! page, at 3, 40 and 61 shard values, at the top level, under a parent and over the group:
//! the same documents in the same order, the same counts, sums and averages, which are also
//! the unsharded query's (computed here from the documents written; documents another client
//! wrote without the order field are in no page, count, sum or average). The queries cover
//! equality, `in`, array-contains, a range of the order field, range, `!=` and `not-in`
//! filters on a `#[sharded(range)]` field, and an OR.

use std::process::{Command, Stdio};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_runtime::{Parent, Sharded, ShardedQuery};
use sharded_tests::equivalence::pages_forward;
use sharded_tests::node::{install_at, run_script, typescript_client};
use sharded_tests::{generated_id, test_db};

const DOCUMENTS: usize = 64;
const PAGE: u32 = 9;
const DEVICES: [&str; 4] = ["d0", "d1", "d2", "d3"];
const TAGS: [&str; 3] = ["t0", "t1", "t2"];
/// A range of the order field, in whole seconds: `[low, high)`.
const RANGE: (i64, i64) = (1_700_000_005, 1_700_000_017);

fn timestamp(seconds: i64) -> FirestoreTimestamp {
    FirestoreTimestamp(sharded_runtime::firestore::jiff::Timestamp::from_second(seconds).unwrap())
}

pub(crate) fn client() -> std::path::PathBuf {
    install_at(&typescript_client(), "node_modules/typescript/package.json")
}

/// `npm run build` (the type check) once per test process, before the probes import `dist/`.
/// Nothing else writes `dist/`: `npm test` compiles into `test-dist/`, and the example page
/// bundles the sources, so no probe imports a file being rewritten.
pub(crate) fn built_client() -> std::path::PathBuf {
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    let dir = client();
    BUILT.get_or_init(|| {
        let status = Command::new("npm")
            .args(["run", "--silent", "build"])
            .current_dir(&dir)
            .status()
            .expect("npm runs");
        assert!(
            status.success(),
            "the TypeScript client does not type-check"
        );
    });
    dir
}

#[test]
fn the_clients_type_check_and_unit_tests_pass() {
    let dir = client();
    let output = Command::new("npm")
        .args(["test"])
        .current_dir(&dir)
        .output()
        .expect("npm runs");
    assert!(
        output.status.success(),
        "npm test failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// One document as both sides write it.
#[derive(Clone, Debug)]
pub(crate) struct Doc {
    pub(crate) parent: Option<String>,
    pub(crate) id: String,
    pub(crate) device: &'static str,
    pub(crate) tags: Vec<String>,
    pub(crate) seconds: i64,
    pub(crate) micros: i32,
    /// A `#[sharded(range, aggregate)]` field: filtered, ordered by after `at`, summed.
    pub(crate) level: i64,
    /// A `#[sharded(range)]` field filtered together with `level` (`ranges(level, weight)`).
    pub(crate) weight: i64,
}

impl Doc {
    fn path(&self, collection: &str) -> String {
        match &self.parent {
            Some(parent) => format!("{parent}/{collection}/{}", self.id),
            None => format!("{collection}/{}", self.id),
        }
    }

    pub(crate) fn at(&self) -> FirestoreTimestamp {
        let at =
            sharded_runtime::firestore::jiff::Timestamp::new(self.seconds, self.micros * 1_000)
                .unwrap();
        FirestoreTimestamp(at)
    }

    fn json(&self) -> Value {
        json!({
            "device": self.device,
            "tags": self.tags,
            "at": {"$timestamp": [self.seconds, self.micros * 1_000]},
            "level": self.level,
            "weight": self.weight,
        })
    }
}

/// Documents with many ties on `at` (whole seconds in a small range, a few microseconds).
pub(crate) fn dataset(seed: u64, parents: &[&str]) -> Vec<Doc> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..DOCUMENTS)
        .map(|_| Doc {
            parent: (!parents.is_empty())
                .then(|| parents[rng.random_range(0..parents.len())].to_owned()),
            id: generated_id(&mut rng),
            device: DEVICES[rng.random_range(0..DEVICES.len())],
            tags: TAGS
                .iter()
                .filter(|_| rng.random_bool(0.4))
                .map(|t| t.to_string())
                .collect(),
            seconds: 1_700_000_000 + rng.random_range(0..25),
            micros: [0, 0, 0, 1, 999_999][rng.random_range(0..5)],
            level: rng.random_range(-3..7),
            weight: rng.random_range(0..4),
        })
        .collect()
}

/// The unsharded query's answer: the matching documents by `at` descending, then by name
/// descending (segment by segment).
pub(crate) fn truth(docs: &[Doc], collection: &str, keep: impl Fn(&Doc) -> bool) -> Vec<String> {
    truth_by(docs, collection, 0, keep)
}

/// The unsharded answer of a query with a range filter on `level`: by `at`, then `level`,
/// then name, descending (Firestore orders by the filtered field after the explicit order).
pub(crate) fn truth_ranged(
    docs: &[Doc],
    collection: &str,
    keep: impl Fn(&Doc) -> bool,
) -> Vec<String> {
    truth_by(docs, collection, 1, keep)
}

/// The unsharded answer of a query with range filters on `level` and `weight`: by `at`,
/// then `level`, then `weight` (the fields by name), then name, descending.
fn truth_two_ranged(docs: &[Doc], collection: &str, keep: impl Fn(&Doc) -> bool) -> Vec<String> {
    truth_by(docs, collection, 2, keep)
}

/// `ranged` is how many of (`level`, `weight`) the query orders by after `at`.
fn truth_by(
    docs: &[Doc],
    collection: &str,
    ranged: usize,
    keep: impl Fn(&Doc) -> bool,
) -> Vec<String> {
    let mut matching: Vec<&Doc> = docs.iter().filter(|d| keep(d)).collect();
    matching.sort_by(|a, b| {
        let level = |d: &Doc| if ranged >= 1 { d.level } else { 0 };
        let weight = |d: &Doc| if ranged >= 2 { d.weight } else { 0 };
        let by_at = (a.seconds, a.micros, level(a), weight(a)).cmp(&(
            b.seconds,
            b.micros,
            level(b),
            weight(b),
        ));
        let path_a = a.path(collection);
        let path_b = b.path(collection);
        let by_name = path_a.split('/').cmp(path_b.split('/'));
        by_at.then(by_name).reverse()
    });
    matching.iter().map(|d| d.path(collection)).collect()
}

/// Three documents another client wrote without the order field (`at`) but matching the
/// queries' other filters, under `parent` (a path) or at the top level: no query ordered by
/// `at` returns them, so no count, sum or average may count them either.
async fn write_without_order_field(
    db: &sharded_runtime::firestore::FirestoreDb,
    collection: &str,
    parent: Option<&str>,
) {
    for (n, device) in ["d0", "d1", "d2"].into_iter().enumerate() {
        let data = json!({
            "shard": "0", "device": device, "tags": ["t0", "t1", "t2"],
            "level": n, "weight": 1,
        });
        let write = db
            .fluent()
            .update()
            .in_col(collection)
            .document_id(format!("no-at-{n}"));
        let write = match parent {
            Some(parent) => {
                let (c, id) = parent.split_once('/').unwrap();
                write.parent(db.parent_path(c, id).unwrap())
            }
            None => write.parent(db.get_documents_path().clone()),
        };
        write.object(&data).execute::<Value>().await.unwrap();
    }
}

/// Runs the client's probe: its writes, then its queries; what it read.
fn probe(
    sdk: &str,
    host: &str,
    project: &str,
    description: Value,
    writes: Vec<Value>,
    queries: Vec<Value>,
) -> Vec<Answer> {
    let dir = built_client();
    let input = json!({
        "host": host, "project": project, "description": description, "sdk": sdk,
        "writes": writes, "queries": queries,
    })
    .to_string();
    let output = run_script(&dir.join("probe/equivalence.mjs"), &input);
    let answer: Value = serde_json::from_slice(&output).unwrap();
    answer["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            let pages: Vec<Vec<String>> = serde_json::from_value(q["pages"].clone()).unwrap();
            let back: Vec<Vec<String>> = serde_json::from_value(q["backPages"].clone()).unwrap();
            // Paging back from the last page gives every page before it, in its order.
            let mut expected_back = pages[..pages.len() - 1].to_vec();
            expected_back.reverse();
            assert_eq!(back, expected_back, "the client's pages back");
            Answer {
                pages,
                count: q["count"].as_u64().unwrap(),
                // As text: serde_json's default float parsing may be off in the last bit.
                total: q.get("sum").map(|sum| {
                    let number = |v: &Value| v.as_str().map(|s| s.parse::<f64>().unwrap());
                    (number(sum).unwrap(), number(&q["average"]))
                }),
            }
        })
        .collect()
}

/// A sum and an average (none without a number).
type Total = (f64, Option<f64>);

/// What a side read of one query: its pages, its count, and the sum and average of `level`
/// where the query asked for them.
#[derive(Debug, PartialEq)]
struct Answer {
    pages: Vec<Vec<String>>,
    count: u64,
    total: Option<Total>,
}

/// The unsharded sum and average of `level` over the documents `keep` keeps.
fn total_of(docs: &[Doc], keep: impl Fn(&Doc) -> bool) -> Total {
    let levels: Vec<i64> = docs.iter().filter(|d| keep(d)).map(|d| d.level).collect();
    let sum = levels.iter().sum::<i64>() as f64;
    (sum, (!levels.is_empty()).then(|| sum / levels.len() as f64))
}

/// The pages of a Rust query as paths (a last page left empty by a full one dropped).
async fn rust_pages<
    T: Sharded,
    const Q: u64,
    R: sharded_runtime::bounds::Reach,
    W: sharded_runtime::bounds::Window,
>(
    db: &sharded_runtime::firestore::FirestoreDb,
    query: &ShardedQuery<T, Q, R, W>,
) -> Vec<Vec<String>> {
    let mut pages: Vec<Vec<String>> = pages_forward(db, query, PAGE)
        .await
        .into_iter()
        .map(|page| {
            page.items
                .iter()
                .map(|s| match &s.parent {
                    Some(parent) => format!("{parent}/{}/{}", T::COLLECTION, s.id),
                    None => format!("{}/{}", T::COLLECTION, s.id),
                })
                .collect()
        })
        .collect();
    if pages.len() > 1 && pages.last().is_some_and(Vec::is_empty) {
        pages.pop();
    }
    pages
}

pub(crate) fn description_json<T: Sharded>() -> Value {
    let owned = sharded_runtime::indexes::CollectionDescriptionBuf::from(&T::DESCRIPTION);
    serde_json::to_value(owned).unwrap()
}

/// Both sides' pages, counts, sums and averages equal each other and the truth, query by
/// query (`truths`: the paths in order, and the total where the query sums).
fn assert_same(
    label: &str,
    rust: &[Answer],
    typescript: &[Answer],
    truths: &[(Vec<String>, Option<Total>)],
) {
    for (i, ((answer, rust), (truth, total))) in typescript.iter().zip(rust).zip(truths).enumerate()
    {
        assert!(
            !truth.is_empty(),
            "{label} query {i}: the data should match something"
        );
        assert_eq!(
            answer, rust,
            "{label} query {i}: the client's pages, count and totals are the Rust library's"
        );
        assert_eq!(
            &answer.pages.concat(),
            truth,
            "{label} query {i}: the unsharded order"
        );
        assert!(answer.pages.iter().all(|p| p.len() <= PAGE as usize));
        assert_eq!(
            answer.count as usize,
            truth.len(),
            "{label} query {i}: the count is the truth's"
        );
        assert_eq!(answer.total.is_some(), total.is_some(), "{label} query {i}");
        if let (Some((sum, avg)), Some((true_sum, true_avg))) = (answer.total, total) {
            assert_eq!(sum, *true_sum, "{label} query {i}: the sum is the truth's");
            let (avg, true_avg) = (avg.unwrap(), true_avg.unwrap());
            assert!(
                (avg - true_avg).abs() <= true_avg.abs() * 1e-12,
                "{label} query {i}: the average {avg} is the truth's {true_avg}"
            );
        }
    }
}

/// A Rust query's answer: its pages and count, and, for `$total`, its sum and average of
/// `level`.
macro_rules! rust_answer {
    ($db:expr, $query:expr) => {
        Answer {
            pages: rust_pages($db, &$query).await,
            count: $query.count($db).await.unwrap(),
            total: None,
        }
    };
    ($db:expr, $query:expr, $field:expr) => {{
        let (sum, avg) = $query.sum_and_avg($db, $field).await.unwrap();
        Answer {
            total: Some((sum.as_f64(), avg)),
            ..rust_answer!($db, $query)
        }
    }};
}

macro_rules! top_level_case {
    ($test:ident, $name:ident, $shards:literal, $collection:literal, $sdks:expr) => {
        #[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", collection = $collection, reversible, ranges(level, weight))]
        struct $name {
            #[sharded(index)]
            device: String,
            #[sharded(contains)]
            tags: Vec<String>,
            at: FirestoreTimestamp,
            #[sharded(range, aggregate)]
            level: i64,
            #[sharded(range)]
            weight: i64,
        }

        impl $name {
            fn of(doc: &Doc) -> Self {
                $name { device: doc.device.into(), tags: doc.tags.clone(), at: doc.at(), level: doc.level, weight: doc.weight }
            }
        }

        #[tokio::test]
        async fn $test() {
            let test = test_db("typescript").await;
            let db = &test.db;
            let project = sharded_tests::project_id(db);
            let docs = dataset($shards, &[]);
            let mut writes = Vec::new();
            for (i, doc) in docs.iter().enumerate() {
                if i % 2 == 0 {
                    $name::collection(db).upsert(&doc.id, &$name::of(doc)).await.unwrap();
                } else {
                    writes.push(json!({"parent": null, "id": doc.id, "data": doc.json()}));
                }
            }
            let host = test.emulator.host();
            probe("web", host, &project, description_json::<$name>(), writes, Vec::new());
            write_without_order_field(db, $collection, None).await;

            let (low, high) = (RANGE.0, RANGE.1);
            let level = $name::ranges().level;
            let summed = $name::aggregates().level;
            let rust = vec![
                rust_answer!(db, $name::query().all(), summed),
                rust_answer!(db, $name::query().device("d1"), summed),
                rust_answer!(db, $name::query().device_in(["d0", "d2"])),
                rust_answer!(db, $name::query().tags_contains("t1".to_owned()), summed),
                rust_answer!(db, $name::query().device("d2").range(timestamp(low)..timestamp(high)), summed),
                rust_answer!(db, $name::query().all().filter(level.at_least(2))),
                rust_answer!(db, $name::query().device("d1").filter(level.not_equal(0))),
                rust_answer!(db, $name::query().all().filter(level.not_in([0, 1]))),
                rust_answer!(db, $name::query().device("d1").filter(level.at_least(0)).filter($name::ranges().weight.less_than(3))),
                rust_answer!(db, $name::query().device("d1").or($name::query().tags_contains("t1".to_owned())), summed),
            ];
            let top = json!({"parent": null});
            let queries = vec![
                json!({"scope": top, "where": [], "pageSize": PAGE, "aggregate": "level"}),
                json!({"scope": top, "where": [["device", "==", "d1"]], "pageSize": PAGE, "aggregate": "level"}),
                json!({"scope": top, "where": [["device", "in", ["d0", "d2"]]], "pageSize": PAGE}),
                json!({"scope": top, "where": [["tags", "array-contains", "t1"]], "pageSize": PAGE, "aggregate": "level"}),
                json!({"scope": top, "where": [
                    ["device", "==", "d2"],
                    ["at", ">=", {"$timestamp": [low, 0]}],
                    ["at", "<", {"$timestamp": [high, 0]}],
                ], "pageSize": PAGE, "aggregate": "level"}),
                json!({"scope": top, "where": [["level", ">=", 2]], "pageSize": PAGE}),
                json!({"scope": top, "where": [["device", "==", "d1"], ["level", "!=", 0]], "pageSize": PAGE}),
                json!({"scope": top, "where": [["level", "not-in", [0, 1]]], "pageSize": PAGE}),
                json!({"scope": top, "where": [["device", "==", "d1"], ["weight", "<", 3], ["level", ">=", 0]], "pageSize": PAGE}),
                json!({"scope": top, "where": [["device", "==", "d1"]], "or": [[["tags", "array-contains", "t1"]]], "pageSize": PAGE, "aggregate": "level"}),
            ];
            let c = $collection;
            let ranged = |d: &Doc| d.device == "d2" && (low..high).contains(&d.seconds);
            let t1 = |d: &Doc| d.tags.iter().any(|t| t == "t1");
            let truths = vec![
                (truth(&docs, c, |_| true), Some(total_of(&docs, |_| true))),
                (truth(&docs, c, |d| d.device == "d1"), Some(total_of(&docs, |d| d.device == "d1"))),
                (truth(&docs, c, |d| d.device == "d0" || d.device == "d2"), None),
                (truth(&docs, c, t1), Some(total_of(&docs, t1))),
                (truth(&docs, c, ranged), Some(total_of(&docs, ranged))),
                (truth_ranged(&docs, c, |d| d.level >= 2), None),
                (truth_ranged(&docs, c, |d| d.device == "d1" && d.level != 0), None),
                (truth_ranged(&docs, c, |d| d.level != 0 && d.level != 1), None),
                (truth_two_ranged(&docs, c, |d| d.device == "d1" && d.level >= 0 && d.weight < 3), None),
                (truth(&docs, c, |d| d.device == "d1" || t1(d)), Some(total_of(&docs, |d| d.device == "d1" || t1(d)))),
            ];
            for sdk in $sdks {
                let typescript = probe(sdk, host, &project, description_json::<$name>(), Vec::new(), queries.clone());
                let label = format!("{} through the {sdk} SDK", stringify!($name));
                assert_same(&label, &rust, &typescript, &truths);
            }
        }
    };
}

macro_rules! placed_case {
    ($test:ident, $name:ident, $shards:literal, $collection:literal, $sdks:expr) => {
        #[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", parent = "sites", collection = $collection, collection_group, reversible)]
        struct $name {
            #[sharded(index)]
            device: String,
            #[sharded(contains)]
            tags: Vec<String>,
            at: FirestoreTimestamp,
            #[sharded(range, aggregate)]
            level: i64,
        }

        impl $name {
            fn of(doc: &Doc) -> Self {
                $name { device: doc.device.into(), tags: doc.tags.clone(), at: doc.at(), level: doc.level }
            }
        }

        #[tokio::test]
        async fn $test() {
            let test = test_db("typescript").await;
            let db = &test.db;
            let project = sharded_tests::project_id(db);
            let docs = dataset($shards + 1000, &["sites/s0", "sites/s1"]);
            let mut writes = Vec::new();
            for (i, doc) in docs.iter().enumerate() {
                let parent = doc.parent.as_deref().unwrap();
                if i % 2 == 0 {
                    let site = Parent::<$name>::new(&[parent.trim_start_matches("sites/")]).unwrap();
                    $name::collection_in(db, &site).upsert(&doc.id, &$name::of(doc)).await.unwrap();
                } else {
                    writes.push(json!({"parent": parent, "id": doc.id, "data": doc.json()}));
                }
            }
            let host = test.emulator.host();
            probe("web", host, &project, description_json::<$name>(), writes, Vec::new());
            write_without_order_field(db, $collection, Some("sites/s0")).await;

            let site = Parent::<$name>::new(&["s0"]).unwrap();
            let level = $name::ranges().level;
            let summed = $name::aggregates().level;
            let rust = vec![
                rust_answer!(db, $name::query().all().in_parent(&site), summed),
                rust_answer!(db, $name::query().device("d1").in_parent(&site)),
                rust_answer!(db, $name::query().tags_contains("t2".to_owned()).in_parent(&site)),
                rust_answer!(db, $name::query().all().in_group(), summed),
                rust_answer!(db, $name::query().device_in(["d1", "d3"]).in_group(), summed),
                rust_answer!(db, $name::query().all().filter(level.less_than(3)).in_group()),
                rust_answer!(db, $name::query().device_in(["d0", "d2"]).or($name::query().tags_contains("t0".to_owned())).in_group(), summed),
            ];
            let s0 = json!({"parent": "sites/s0"});
            let everywhere = json!({"group": true});
            let queries = vec![
                json!({"scope": s0, "where": [], "pageSize": PAGE, "aggregate": "level"}),
                json!({"scope": s0, "where": [["device", "==", "d1"]], "pageSize": PAGE}),
                json!({"scope": s0, "where": [["tags", "array-contains", "t2"]], "pageSize": PAGE}),
                json!({"scope": everywhere, "where": [], "pageSize": PAGE, "aggregate": "level"}),
                json!({"scope": everywhere, "where": [["device", "in", ["d1", "d3"]]], "pageSize": PAGE, "aggregate": "level"}),
                json!({"scope": everywhere, "where": [["level", "<", 3]], "pageSize": PAGE}),
                json!({"scope": everywhere, "where": [["device", "in", ["d0", "d2"]]], "or": [[["tags", "array-contains", "t0"]]], "pageSize": PAGE, "aggregate": "level"}),
            ];
            let c = $collection;
            let in_s0 = |d: &Doc| d.parent.as_deref() == Some("sites/s0");
            let some = |d: &Doc| d.device == "d1" || d.device == "d3";
            let either = |d: &Doc| d.device == "d0" || d.device == "d2" || d.tags.iter().any(|t| t == "t0");
            let truths = vec![
                (truth(&docs, c, in_s0), Some(total_of(&docs, in_s0))),
                (truth(&docs, c, |d| in_s0(d) && d.device == "d1"), None),
                (truth(&docs, c, |d| in_s0(d) && d.tags.iter().any(|t| t == "t2")), None),
                (truth(&docs, c, |_| true), Some(total_of(&docs, |_| true))),
                (truth(&docs, c, some), Some(total_of(&docs, some))),
                (truth_ranged(&docs, c, |d| d.level < 3), None),
                (truth(&docs, c, either), Some(total_of(&docs, either))),
            ];
            for sdk in $sdks {
                let typescript = probe(sdk, host, &project, description_json::<$name>(), Vec::new(), queries.clone());
                let label = format!("{} through the {sdk} SDK", stringify!($name));
                assert_same(&label, &rust, &typescript, &truths);
            }
        }
    };
}

// The JS SDK at every shard count; the Node server SDK, whose client shares all but the
// requests, at 40 (two chunks) to keep the suite's time.
top_level_case!(top_level_at_3_shards, Reading3, 3, "ts_readings_3", ["web"]);
top_level_case!(
    top_level_at_40_shards,
    Reading40,
    40,
    "ts_readings_40",
    ["web", "admin"]
);
top_level_case!(
    top_level_at_61_shards,
    Reading61,
    61,
    "ts_readings_61",
    ["web"]
);
placed_case!(
    parent_and_group_at_3_shards,
    Event3,
    3,
    "ts_events_3",
    ["web"]
);
placed_case!(
    parent_and_group_at_40_shards,
    Event40,
    40,
    "ts_events_40",
    ["web", "admin"]
);
placed_case!(
    parent_and_group_at_61_shards,
    Event61,
    61,
    "ts_events_61",
    ["web"]
);

#[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
#[sharded(shards = 40, order_by = "at", collection = "ts_live")]
struct LiveReading {
    #[sharded(index)]
    device: String,
    #[sharded(contains)]
    tags: Vec<String>,
    at: FirestoreTimestamp,
}

/// A live query through the client, limited to 10 of 40 shard values' documents (two chunk
/// listeners): its first snapshot is the truth, and after each change made through Rust
/// (a new newest document, the newest deleted, one moved from the middle to the top) it
/// shows the new truth; every snapshot's `docChanges()` turn the last one into it.
#[tokio::test]
async fn a_live_query_through_the_client_follows_every_change() {
    live_query_follows_every_change("web").await;
}

/// The same through the Node server SDK, whose chunk listeners have a stream each.
#[tokio::test]
async fn a_live_query_through_the_server_sdk_follows_every_change() {
    live_query_follows_every_change("admin").await;
}

async fn live_query_follows_every_change(sdk: &str) {
    let test = test_db("typescript-live").await;
    let db = &test.db;
    let project = sharded_tests::project_id(db);
    let collection = LiveReading::collection(db);
    let mut docs = dataset(7, &[]);
    docs.truncate(60);
    let value = |doc: &Doc| LiveReading {
        device: doc.device.into(),
        tags: doc.tags.clone(),
        at: doc.at(),
    };
    for doc in &docs {
        collection.upsert(&doc.id, &value(doc)).await.unwrap();
    }
    let mut probe = NodeProbe::start(&built_client().join("probe/listen.mjs"), None);
    probe.send(&json!({
        "host": test.emulator.host(), "project": project, "sdk": sdk,
        "description": description_json::<LiveReading>(),
        "scope": {"parent": null}, "where": [], "limit": 10,
    }));
    let top = |docs: &[Doc]| -> Vec<String> {
        let mut all = truth(docs, "ts_live", |_| true);
        all.truncate(10);
        all
    };
    let mut seen = 0;
    let mut metadata = Vec::new();
    let mut await_truth = |expected: Vec<String>, step: &str| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let (paths, snapshot) =
                next_live_snapshot(&probe, deadline, &format!("{step}: {expected:?}"));
            seen += 1;
            metadata.push((
                paths.clone(),
                snapshot["metadata"]["fromCache"] == true,
                snapshot["metadata"]["hasPendingWrites"] == true,
            ));
            if paths == expected {
                return;
            }
        }
    };
    await_truth(top(&docs), "the first snapshot");

    let mut newest = docs[0].clone();
    newest.id = "newest".into();
    newest.seconds += 1_000;
    collection
        .upsert(&newest.id, &value(&newest))
        .await
        .unwrap();
    docs.push(newest.clone());
    await_truth(top(&docs), "a new newest document");

    collection.delete(&newest.id).await.unwrap();
    docs.retain(|d| d.id != newest.id);
    await_truth(top(&docs), "the newest deleted");

    let middle = truth(&docs, "ts_live", |_| true)[30].clone();
    let moved = docs.iter_mut().find(|d| middle.ends_with(&d.id)).unwrap();
    moved.seconds += 2_000;
    let moved = moved.clone();
    collection.upsert(&moved.id, &value(&moved)).await.unwrap();
    await_truth(top(&docs), "a document moved to the top");

    // No snapshot so far held a local write of the client's. (Some came from the cache: the
    // SDK says `fromCache` while it asks the server for what follows a limited query's removed
    // document, as measured here after the deletion.)
    assert!(
        metadata.iter().all(|(_, _, pending)| !pending),
        "{metadata:?}"
    );
    if sdk == "web" {
        // A write through the client shows first as a pending local write, then saved: the
        // SDK's `hasPendingWrites`, merged over the chunks (measured on firebase 12).
        let mut local = docs[1].clone();
        local.id = "local".into();
        local.seconds = docs.iter().map(|d| d.seconds).max().unwrap() + 10_000;
        probe.send(&json!({"set": {
            "id": local.id, "device": local.device, "tags": local.tags, "seconds": local.seconds,
        }}));
        docs.push(local.clone());
        let top_path = format!("ts_live/{}", local.id);
        let mut pending = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let (paths, snapshot) =
                next_live_snapshot(&probe, deadline, "the local write, then saved");
            assert_eq!(paths[0], top_path, "{snapshot}");
            pending.push(snapshot["metadata"]["hasPendingWrites"] == true);
            if !pending.last().unwrap() {
                break;
            }
        }
        // Pending first (the SDK shows a local write at once), saved last; the SDK may show
        // the pending write more than once meanwhile.
        assert!(
            pending.len() >= 2 && pending[0] && pending[1..pending.len() - 1].iter().all(|p| *p),
            "pending, then saved: {pending:?}"
        );
    }
    probe.finish();
    assert!(seen >= 4);
}

/// The listen probe's next snapshot before `deadline` (a panic naming `awaited` past it):
/// its paths and the whole line, once checked to hold no error, to be what its `docChanges()`
/// make of the last one, and to hold at most the query's limit of 10.
fn next_live_snapshot(
    probe: &NodeProbe,
    deadline: std::time::Instant,
    awaited: &str,
) -> (Vec<String>, Value) {
    let left = deadline.saturating_duration_since(std::time::Instant::now());
    let snapshot = probe
        .answers()
        .recv_timeout(left)
        .unwrap_or_else(|_| panic!("no snapshot showed {awaited}"));
    assert!(snapshot["error"].is_null(), "{awaited}: {snapshot}");
    assert_eq!(snapshot["consistent"], true, "{awaited}: {snapshot}");
    let paths: Vec<String> = serde_json::from_value(snapshot["paths"].clone()).unwrap();
    assert!(paths.len() <= 10, "{awaited}: {paths:?}");
    (paths, snapshot)
}

/// Debian's Chromium, installed with apt as a fresh machine needs it (the tests run as root in
/// CI); nothing downloads a browser build.
pub(crate) fn chromium() -> std::path::PathBuf {
    static INSTALLED: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    let path = std::path::PathBuf::from(
        std::env::var_os("CHROMIUM").unwrap_or_else(|| "/usr/bin/chromium".into()),
    );
    INSTALLED.get_or_init(|| {
        if path.exists() {
            return;
        }
        let apt = |args: &[&str]| {
            Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .is_ok_and(|status| status.success())
        };
        let install = ["install", "-y", "--no-install-recommends", "chromium"];
        // A fresh machine's package lists may be empty or stale: read them once, then retry.
        let installed = apt(&install) || (apt(&["update"]) && apt(&install));
        assert!(
            installed && path.exists(),
            "Chromium is needed for the browser test: `apt-get install chromium` (or set CHROMIUM to its path)"
        );
    });
    path
}

/// The example pages (`example/main.js`, `example/pulse.js`) bundled with esbuild into
/// `example/dist/`; the client's folder.
pub(crate) fn bundled_example_pages() -> std::path::PathBuf {
    let dir = client();
    let status = Command::new("npm")
        .args(["run", "--silent", "build:example"])
        .current_dir(&dir)
        .status()
        .expect("npm runs");
    assert!(status.success(), "the example pages do not bundle");
    dir
}

/// One of the client's probes (`probe/<name>.mjs`) running under node: it reads one JSON
/// line at a time on stdin and writes one JSON line at a time on stdout, read here as they
/// come. Closing its stdin stops it.
pub(crate) struct NodeProbe {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    answers: std::sync::mpsc::Receiver<Value>,
}

impl NodeProbe {
    /// Starts `script`, with `CHROMIUM` set for a probe that drives the browser.
    pub(crate) fn start(script: &std::path::Path, chromium: Option<&std::path::Path>) -> Self {
        use std::io::BufRead as _;
        let mut command = Command::new("node");
        command
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some(chromium) = chromium {
            command.env("CHROMIUM", chromium);
        }
        let mut child = command.spawn().expect("node runs");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (lines, answers) = std::sync::mpsc::channel::<Value>();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let answer = serde_json::from_str(&line)
                    .unwrap_or_else(|err| panic!("the probe printed {line:?}: {err}"));
                if lines.send(answer).is_err() {
                    break;
                }
            }
        });
        NodeProbe {
            child,
            stdin,
            answers,
        }
    }

    /// Writes `line` to its stdin.
    pub(crate) fn send(&mut self, line: &Value) {
        use std::io::Write as _;
        let stdin = self.stdin.as_mut().expect("the probe's stdin is open");
        writeln!(stdin, "{line}").expect("the probe reads its input");
    }

    /// Sends `command` and waits for its answer.
    pub(crate) fn ask(&mut self, command: Value) -> Value {
        self.send(&command);
        self.answers.recv().expect("the probe answers")
    }

    /// What it printed, as it comes.
    pub(crate) fn answers(&self) -> &std::sync::mpsc::Receiver<Value> {
        &self.answers
    }

    /// Closes its stdin and waits for it (it must exit cleanly); what it printed that was
    /// not yet taken.
    pub(crate) fn finish(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        assert!(self.child.wait().unwrap().success(), "the probe failed");
        self.answers.try_iter().collect()
    }
}

/// The example page, bundled with esbuild, in headless Chromium against the emulator: the
/// newest documents appear in the merged order, and a document Rust writes shows up at the top
/// while the page is open.
#[tokio::test]
async fn the_example_page_shows_the_newest_items_live_in_chromium() {
    let browser = chromium();
    let dir = bundled_example_pages();
    let test = test_db("typescript-page").await;
    let db = &test.db;
    let project = sharded_tests::project_id(db);
    let collection = LiveReading::collection(db);
    let mut docs = dataset(11, &[]);
    docs.truncate(40);
    let value = |doc: &Doc| LiveReading {
        device: doc.device.into(),
        tags: doc.tags.clone(),
        at: doc.at(),
    };
    for doc in &docs {
        collection.upsert(&doc.id, &value(doc)).await.unwrap();
    }
    let mut probe = NodeProbe::start(&dir.join("probe/browser.mjs"), Some(&browser));
    let mut ask = |command: Value| probe.ask(command);
    let first = json!({
        "host": test.emulator.host(), "project": project,
        "description": description_json::<LiveReading>(), "limit": 8,
    });
    assert_eq!(ask(first), json!({"opened": true}));
    let top = |docs: &[Doc]| -> Vec<String> {
        let mut all = truth(docs, "ts_live", |_| true);
        all.truncate(8);
        all
    };
    let shown = ask(json!({"waitFor": top(&docs)}));
    assert_eq!(shown["ok"], true, "the page's first list: {shown}");

    let mut newest = docs[3].clone();
    newest.id = "from-rust".into();
    newest.seconds += 1_000;
    collection
        .upsert(&newest.id, &value(&newest))
        .await
        .unwrap();
    docs.push(newest);
    let shown = ask(json!({"waitFor": top(&docs)}));
    assert_eq!(shown["ok"], true, "a write from Rust shows up: {shown}");
    assert_eq!(top(&docs)[0], "ts_live/from-rust");

    probe.finish();
}

/// The recipe's own Node.js code (`clients/typescript/probe/recipe.mjs`: its `shardChunks`
/// and `createQuery`, as the solution page has them, on the Node server SDK) reads the
/// examples' `instruments` collection, written half by the Rust library and half by the
/// TypeScript client from the description in the examples' own `firestore.indexes.json`: its
/// three queries return the documents the Rust library's do. Timestamps are distinct here: the
/// recipe's merge sorts by timestamp alone.
#[tokio::test]
async fn the_recipes_own_node_code_reads_what_rust_and_the_client_wrote() {
    use sharded_examples::{Instrument, Price};
    let test = test_db("typescript-recipe").await;
    let db = &test.db;
    let project = sharded_tests::project_id(db);
    let file = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/firestore.indexes.json"),
    )
    .unwrap();
    let file: Value = serde_json::from_str(&file).unwrap();
    let description = file["shardedManaged"]["crates"]["sharded-examples"]["collections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["collectionGroup"] == "instruments")
        .unwrap()
        .clone();
    let mut rng = StdRng::seed_from_u64(5);
    let mut writes = Vec::new();
    for i in 0..120_i64 {
        let (seconds, millis) = (1_546_300_800 + i * 3, (i * 37) % 1000);
        let instrument = Instrument {
            symbol: format!("S{i}"),
            price: Price {
                currency: ["USD", "JPY", "EUR"][rng.random_range(0..3)].into(),
                micros: rng.random_range(1..1_000_000),
            },
            exchange: ["EXCHG1", "EXCHG2"][rng.random_range(0..2)].into(),
            instrument_type: ["commonstock", "etf"][rng.random_range(0..2)].into(),
            timestamp: FirestoreTimestamp(
                sharded_runtime::firestore::jiff::Timestamp::new(
                    seconds,
                    (millis * 1_000_000) as i32,
                )
                .unwrap(),
            ),
        };
        let id = format!("inst-{i:03}");
        if i % 2 == 0 {
            Instrument::collection(db)
                .upsert(&id, &instrument)
                .await
                .unwrap();
        } else {
            let data = json!({
                "symbol": instrument.symbol,
                "price": {"currency": instrument.price.currency, "micros": instrument.price.micros},
                "exchange": instrument.exchange,
                "instrumentType": instrument.instrument_type,
                "timestamp": {"$timestamp": [seconds, millis * 1_000_000]},
            });
            writes.push(json!({"parent": null, "id": id, "data": data}));
        }
    }
    let host = test.emulator.host();
    probe(
        "web",
        host,
        &project,
        description.clone(),
        writes,
        Vec::new(),
    );

    let ids = |stored: Vec<sharded_runtime::Stored<Instrument>>| -> Vec<String> {
        stored.into_iter().map(|s| s.id).collect()
    };
    for limit in [5_u32, 20] {
        let rust = json!({
            "commonStock": ids(Instrument::query().instrument_type("commonstock").limit(limit).fetch_stored(db).await.unwrap()),
            "exchange1": ids(Instrument::query().exchange("EXCHG1").limit(limit).fetch_stored(db).await.unwrap()),
            "usd": ids(Instrument::query().price_currency("USD").limit(limit).fetch_stored(db).await.unwrap()),
        });
        let dir = built_client();
        let input = json!({"host": host, "project": project, "shards": description["shardValues"], "limit": limit});
        let output = run_script(&dir.join("probe/recipe.mjs"), &input.to_string());
        let recipe: Value = serde_json::from_slice(&output).unwrap();
        assert_eq!(recipe, rust, "limit {limit}");
        assert_eq!(rust["exchange1"].as_array().unwrap().len(), limit as usize);
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
#[sharded(shards = 40, order_by = "at", collection = "ts_merges")]
struct Merged {
    #[sharded(index)]
    device: String,
    at: FirestoreTimestamp,
    level: i64,
}

/// A merge through the client (`set(id, data, {merge: true})` or `{mergeFields}`), on each
/// SDK: a document's stored shard stays, and a new document, or one stored without a shard,
/// gets one drawn, so that every merged document is one the sharded queries read. (A merge
/// that wrote what it was given would store a new document without a shard: no query would
/// return it, and only `verify()` would tell.)
#[tokio::test]
async fn merges_keep_a_stored_shard_and_draw_one_where_there_is_none() {
    use sharded_tests::{all_documents, id_of, string_field};
    let test = test_db("typescript-merge").await;
    let db = &test.db;
    let project = sharded_tests::project_id(db);
    let host = test.emulator.host();
    let at = json!({"$timestamp": [1_700_000_000, 0]});
    for sdk in ["web", "admin"] {
        let id = |name: &str| format!("{sdk}-{name}");
        let stored = Merged {
            device: "d0".into(),
            at: timestamp(1_700_000_000),
            level: 1,
        };
        Merged::collection(db)
            .upsert(&id("kept"), &stored)
            .await
            .unwrap();
        // A legacy document, written without the library: no shard.
        db.fluent()
            .update()
            .in_col("ts_merges")
            .document_id(id("legacy"))
            .object(&json!({"device": "d3", "at": timestamp(1_700_000_000), "level": 4}))
            .execute::<()>()
            .await
            .unwrap();
        let shard_of = |docs: &[sharded_runtime::firestore::FirestoreDocument], name: &str| {
            let doc = docs.iter().find(|d| id_of(d) == id(name)).unwrap();
            string_field(doc, "shard").map(str::to_owned)
        };
        let before = shard_of(&all_documents(db, "ts_merges").await, "kept").unwrap();
        let merge = json!({"merge": true});
        let writes = vec![
            json!({"parent": null, "id": id("kept"), "data": {"level": 5}, "options": merge}),
            json!({"parent": null, "id": id("legacy"), "data": {"level": 6}, "options": merge}),
            json!({"parent": null, "id": id("new"), "data": {"device": "d1", "at": at, "level": 2}, "options": merge}),
            json!({"parent": null, "id": id("fields"), "data": {"device": "d2", "at": at, "level": 3, "note": "left out"},
                   "options": {"mergeFields": ["device", "at", "level"]}}),
        ];
        probe(
            sdk,
            host,
            &project,
            description_json::<Merged>(),
            writes,
            Vec::new(),
        );

        let docs = all_documents(db, "ts_merges").await;
        assert_eq!(
            shard_of(&docs, "kept"),
            Some(before),
            "{sdk}: the stored shard stays"
        );
        let values = Merged::DESCRIPTION.shard_values;
        for name in ["legacy", "new", "fields"] {
            let shard =
                shard_of(&docs, name).unwrap_or_else(|| panic!("{sdk}: `{name}` has no shard"));
            assert!(
                values.contains(&shard.as_str()),
                "{sdk}: `{name}` has `{shard}`"
            );
        }
        let kept = Merged::collection(db)
            .get(&id("kept"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (kept.device.as_str(), kept.level),
            ("d0", 5),
            "{sdk}: the merge wrote its field alone"
        );
        let fields = docs.iter().find(|d| id_of(d) == id("fields")).unwrap();
        assert!(
            !fields.fields.contains_key("note"),
            "{sdk}: `mergeFields` wrote its fields alone"
        );
    }
    // Every document is one the sharded queries read.
    let read = Merged::query().all().count(db).await.unwrap();
    assert_eq!(read as usize, all_documents(db, "ts_merges").await.len());
    assert_eq!(read, 8);
}

/// Two counters under a parent, incremented by both the client and the Rust library.
#[derive(Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "at",
    parent = "ts_users",
    collection = "ts_counted"
)]
struct Counted {
    #[sharded(counter(shards = 5))]
    likes: i64,
    #[sharded(counter(shards = 1))]
    views: i64,
    at: FirestoreTimestamp,
}

/// What the web client may do with `Counted`'s counters: increment, and read the markers (to
/// tell an increment that landed from a denied one). The database's variable is not named
/// `database`: the generated functions read the path from the request.
const COUNTED_RULES: &str = "rules_version = '2';
service cloud.firestore {
  match /databases/{db}/documents {
    match /ts_users/{user}/ts_counted/{id}/_sharded_counter_likes/{shard} {
      allow read, delete: if true;
      allow create, update: if sharded_Counted_counter_likes('ts_users/' + user + '/ts_counted/' + id, shard);
    }
    match /ts_users/{user}/ts_counted/{id}/_sharded_counter_views/{shard} {
      allow read, delete: if true;
      allow create, update: if sharded_Counted_counter_views('ts_users/' + user + '/ts_counted/' + id, shard);
    }
    match /ts_users/{user}/ts_counted/{id}/_sharded_increments/{increment} {
      allow read: if true;
      allow create: if sharded_Counted_increment_marker();
    }
    match /ts_users/{user}/ts_counted/{id} {
      allow read, write: if true;
    }
  }
}
";

/// The client's increments and the Rust library's add to the same counters and count once
/// across both: through the JS SDK under the generated rules (a resent increment is denied
/// there, and the client reads its marker to know it landed) and through the server SDK. The
/// client applies each of its increments twice and some of Rust's again, Rust applies some
/// of the client's again; every counter, read by each, is the sum of the distinct increments.
/// An id applied again with another amount or counter is a conflict in either language, and
/// adds nothing.
#[tokio::test]
async fn the_clients_increments_count_once_beside_the_rust_librarys() {
    use sharded_runtime::counters::{CounterField, Increment};
    for sdk in ["web", "admin"] {
        let test = test_db("typescript-counters").await;
        let db = &test.db;
        let project = sharded_tests::project_id(db);
        if sdk == "web" {
            use crate::security_rules::{build_rules_of, temp_dir};
            let dir = temp_dir("ts-counters");
            std::fs::write(dir.join("firestore.rules"), COUNTED_RULES).unwrap();
            let counted = [("Counted", &Counted::DESCRIPTION)];
            let (rules, _) = build_rules_of(&dir, "ts-counters", &counted);
            test.emulator.load_rules(&project, &rules).await.unwrap();
            std::fs::remove_dir_all(&dir).unwrap();
        }
        let field = |name: &str| -> CounterField<Counted> {
            match name {
                "likes" => Counted::counters().likes,
                _ => Counted::counters().views,
            }
        };
        let mut rng = StdRng::seed_from_u64(sharded_tests::seed("typescript-counters"));
        let draw = |rng: &mut StdRng, side: &str, n: usize| {
            let doc = format!("c{}", rng.random_range(0..3));
            let name = if rng.random_bool(0.7) {
                "likes"
            } else {
                "views"
            };
            (
                doc,
                name,
                rng.random_range(-20i64..50),
                format!("{side}{n}"),
            )
        };
        let rust: Vec<_> = (0..12).map(|n| draw(&mut rng, "r", n)).collect();
        let client: Vec<_> = (0..12).map(|n| draw(&mut rng, "t", n)).collect();
        let mut expected = std::collections::BTreeMap::<(String, &str), i64>::new();
        for (doc, name, by, _) in rust.iter().chain(&client) {
            *expected.entry((doc.clone(), *name)).or_default() += by;
        }

        let parent = Parent::<Counted>::new(&["u1"]).unwrap();
        let counted = Counted::collection_in(db, &parent);
        for (doc, name, by, id) in &rust {
            let increment = Increment::with_id(field(name), *by, id).unwrap();
            counted.apply(doc, &increment).await.unwrap();
        }
        let as_json = |(doc, name, by, id): &(String, &str, i64, String)| json!({"id": doc, "field": name, "by": by, "incrementId": id});
        let increments: Vec<Value> = client.iter().chain(&rust[..4]).map(as_json).collect();
        let reads: Vec<Value> = expected
            .keys()
            .map(|(doc, name)| json!({"id": doc, "field": name}))
            .collect();
        let mut applied: Vec<Value> = rust
            .iter()
            .chain(&client)
            .map(|(doc, _, _, id)| json!({"id": doc, "incrementId": id}))
            .collect();
        applied.push(json!({"id": "c0", "incrementId": "never"}));
        // Rust's first increment with another amount, the client's first on the other counter.
        let other_field = |name: &str| if name == "likes" { "views" } else { "likes" };
        let (doc, name, by, id) = &rust[0];
        let mut conflicts =
            vec![json!({"id": doc, "field": name, "by": by + 1, "incrementId": id})];
        let (doc, name, by, id) = &client[0];
        conflicts.push(json!({"id": doc, "field": other_field(name), "by": by, "incrementId": id}));
        // The rest of Rust's reach: many counters, a live one, and deletes with and without
        // the counters, on documents of their own (c7, c8, c9), each counted first by Rust.
        for (doc, by) in [("c7", 3), ("c8", 4), ("c9", 6)] {
            counted
                .increment(doc, Counted::counters().likes, by)
                .await
                .unwrap();
        }
        let reach = json!({"ids": ["c7", "c8", "c9"], "field": "likes", "live": "c7", "keep": "c8", "drop": "c9"});
        let input = json!({
            "host": test.emulator.host(), "project": project,
            "description": description_json::<Counted>(), "sdk": sdk, "parent": "ts_users/u1",
            "increments": increments, "reads": reads, "applied": applied, "conflicts": conflicts,
            "reach": reach,
        });
        let output = run_script(
            &built_client().join("probe/counters.mjs"),
            &input.to_string(),
        );
        let answer: Value = serde_json::from_slice(&output).unwrap();

        assert_eq!(
            answer["conflicts"],
            json!(["IncrementConflict", "IncrementConflict"]),
            "{sdk}"
        );
        // The client's markers record their increment and expire a lifetime after their
        // creation (the server SDK by the server's clock).
        let (doc, name, by, id) = &client[2];
        let parent_doc = format!("{}/ts_users/u1/ts_counted/{doc}", db.get_documents_path());
        let marker: sharded_runtime::firestore::FirestoreDocument = db
            .fluent()
            .select()
            .by_id_in("_sharded_increments")
            .parent(parent_doc.as_str())
            .one(id.as_str())
            .await
            .unwrap()
            .expect("the client's marker");
        use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::value::ValueType;
        let recorded = |key: &str| marker.fields[key].value_type.clone();
        assert_eq!(
            recorded("field"),
            Some(ValueType::StringValue((*name).into())),
            "{sdk}"
        );
        assert_eq!(
            recorded("amount"),
            Some(ValueType::IntegerValue(*by)),
            "{sdk}"
        );
        let Some(ValueType::TimestampValue(expire_at)) = recorded("expire_at") else {
            panic!("{sdk}: {marker:?}")
        };
        let lifetime = expire_at.seconds - marker.create_time.unwrap().seconds;
        let wanted = sharded_runtime::counters::MARKER_LIFETIME.as_secs() as i64;
        assert!(
            (lifetime - wanted).abs() < 60,
            "{sdk}: expires {lifetime} s after its creation"
        );
        let reach = &answer["reach"];
        assert_eq!(reach["many"], json!([3, 4, 6]), "{sdk}: counters()");
        let live: Vec<i64> = serde_json::from_value(reach["live"].clone()).unwrap();
        assert_eq!(
            live.first(),
            Some(&3),
            "{sdk}: onCounter's first value: {live:?}"
        );
        assert_eq!(
            live.last(),
            Some(&13),
            "{sdk}: onCounter's last value: {live:?}"
        );
        assert!(live.windows(2).all(|w| w[0] < w[1]), "{sdk}: {live:?}");
        assert_eq!(
            reach["kept"], 4,
            "{sdk}: a deleted document's counter is kept"
        );
        assert_eq!(reach["dropped"], 0, "{sdk}: deleted with its counters");
        assert_eq!(
            counted
                .counter("c9", Counted::counters().likes)
                .await
                .unwrap(),
            0,
            "{sdk}: Rust reads the counter gone"
        );
        for (doc, name, by, id) in &client[..4] {
            let increment = Increment::with_id(field(name), *by, id).unwrap();
            counted.apply(doc, &increment).await.unwrap();
        }
        let (doc, name, by, id) = &client[1];
        let other = Increment::with_id(field(name), by + 1, id).unwrap();
        assert!(
            matches!(
                counted.apply(doc, &other).await,
                Err(sharded_runtime::Error::IncrementConflict { .. })
            ),
            "{sdk}: Rust, on the client's id"
        );
        let expected_values: Vec<i64> = expected.values().copied().collect();
        let client_values: Vec<i64> = serde_json::from_value(answer["values"].clone()).unwrap();
        assert_eq!(client_values, expected_values, "{sdk}: the client's reads");
        let mut rust_values = Vec::new();
        for (doc, name) in expected.keys() {
            rust_values.push(counted.counter(doc, field(name)).await.unwrap());
        }
        assert_eq!(rust_values, expected_values, "{sdk}: Rust's reads");
        let mut applied = vec![true; rust.len() + client.len()];
        applied.push(false);
        assert_eq!(
            answer["applied"],
            json!(applied),
            "{sdk}: the client's wasApplied"
        );
    }
}
