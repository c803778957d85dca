//! Shared pieces of the test suite: one emulator per test binary, a project per test, and the
//! recipe's data model.

use sharded_emulator::emulator::Emulator;
use sharded_runtime::firestore::FirestoreDb;

pub mod equivalence;
pub mod live;
pub mod logs;
pub mod migration;
pub mod models;
pub mod node;
pub mod python;

/// A client of a project no other test uses, on the emulator this test binary shares.
pub struct TestDb {
    pub db: FirestoreDb,
    pub emulator: &'static Emulator,
}

/// The emulator of this test binary, started on first use (or the one
/// `FIRESTORE_EMULATOR_HOST` names): the emulator kit's shared one.
pub fn shared_emulator() -> &'static Emulator {
    Emulator::shared().unwrap_or_else(|err| panic!("{err}"))
}

/// A fresh project on the shared emulator.
pub async fn test_db(name: &str) -> TestDb {
    let emulator = shared_emulator();
    let db = emulator
        .project(name)
        .await
        .expect("connect to the emulator");
    TestDb { db, emulator }
}

/// A document id as Firestore generates one: 20 letters and digits, uniformly random.
pub fn generated_id(rng: &mut impl rand::Rng) -> String {
    const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    (0..20)
        .map(|_| ALPHABET[rng.random_range(0..62)] as char)
        .collect()
}

/// An emulator of this test's own, for a test that stops it; and a client of it.
pub async fn own_emulator(name: &str) -> (Emulator, FirestoreDb) {
    let emulator = Emulator::start()
        .await
        .unwrap_or_else(|err| panic!("{err}"));
    let db = emulator
        .db(&format!("{name}-{}", rand::random::<u32>()))
        .await
        .expect("connect to the emulator");
    (emulator, db)
}

/// Every document of `collection`, read without any sharded query: what a test compares
/// sharded results and jobs' outcomes with.
pub async fn all_documents(
    db: &FirestoreDb,
    collection: &str,
) -> Vec<sharded_runtime::firestore::FirestoreDocument> {
    db.fluent()
        .select()
        .from(collection)
        .query()
        .await
        .expect("read the whole collection")
}

/// The id of a document, from its full name.
pub fn id_of(document: &sharded_runtime::firestore::FirestoreDocument) -> &str {
    document.name.rsplit('/').next().unwrap_or_default()
}

/// The string value of a document's top-level `field`, if it has one.
pub fn string_field<'d>(
    document: &'d sharded_runtime::firestore::FirestoreDocument,
    field: &str,
) -> Option<&'d str> {
    use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::value::ValueType;
    match document.fields.get(field)?.value_type.as_ref()? {
        ValueType::StringValue(value) => Some(value),
        _ => None,
    }
}

/// The id of `db`'s project: what the JS SDKs and the rules engine are given.
pub fn project_id(db: &FirestoreDb) -> String {
    db.get_database_path()
        .split('/')
        .nth(1)
        .expect("projects/<id>/databases/<db>")
        .to_owned()
}

/// A client of the same project as `db`, through `host` (a fault proxy).
pub async fn same_project_via(db: &FirestoreDb, host: &str) -> FirestoreDb {
    let project = project_id(db);
    sharded_emulator::emulator::connect(host, &project)
        .await
        .expect("connect through the proxy")
}

/// A proxy to the emulator at `host` that drops 2 % of the chunks it forwards and loses 10 % of
/// the answers after the server applied the request (seeded): what the jobs' tests through
/// dropped connections run through.
pub async fn lossy_proxy(host: &str) -> sharded_emulator::fault_proxy::FaultProxy {
    use sharded_emulator::fault_proxy::{FaultProxy, Faults};
    FaultProxy::start(
        host,
        Faults {
            seed: 64,
            drop_chance: 0.02,
            lost_answer_chance: 0.1,
            ..Faults::NONE
        },
    )
    .await
    .expect("the fault proxy starts")
}

/// Retries for a job run through [`lossy_proxy`]: soon (10 ms at first), and up to 30
/// attempts.
pub fn retries_through_faults() -> sharded_runtime::bulk::Backoff {
    sharded_runtime::bulk::Backoff {
        initial: std::time::Duration::from_millis(10),
        max_attempts: 30,
        ..sharded_runtime::bulk::Backoff::default()
    }
}

/// The seed of a randomized test: `SHARDED_TEST_SEED` when set (to replay a failure), else a
/// fresh one; printed either way, so a failing run's output says how to replay it.
pub fn seed(what: &str) -> u64 {
    let seed = match std::env::var("SHARDED_TEST_SEED") {
        Ok(seed) => seed
            .parse()
            .unwrap_or_else(|_| panic!("SHARDED_TEST_SEED={seed:?} is not a u64")),
        Err(_) => rand::random(),
    };
    println!("{what}: seed {seed} (replay with SHARDED_TEST_SEED={seed})");
    seed
}

/// Runs `git args` in `dir` with a test identity, `main` as the first branch and no signing,
/// whatever the machine's configuration; panics with git's output when it fails.
pub fn git(dir: &std::path::Path, args: &[&str]) {
    let output = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=sharded tests",
            "-c",
            "user.email=tests@sharded.invalid",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
}
