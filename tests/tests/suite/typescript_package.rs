//! The TypeScript client as a web team installs it: packed as the registry would hold it
//! (`npm pack`, whose `prepare` builds `dist/`), from a git repository whose root is the
//! package, and from a folder. Each goes into a fresh project that imports it and runs a
//! query on the emulator, whose page and count equal the Rust library's:
//! - a project with both SDKs imports both entry points;
//! - a server project with `@google-cloud/firestore` alone (no `firebase`, as a Cloud
//!   Function has) imports everything it needs from `@sharded/firestore/admin`, and the web
//!   entry point is not what it needs;
//! - a git dependency and a folder dependency (`--install-links`) of a web project build on
//!   install.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreTimestamp;
use sharded_tests::git;
use sharded_tests::node::run_script;
use sharded_tests::test_db;

/// The SDK versions the client is tested with (its devDependencies), which its README names.
const FIREBASE: &str = "firebase@12.19.0";
const SERVER_SDK: &str = "@google-cloud/firestore@8.7.1";

#[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "at", collection = "packaged")]
struct Packaged {
    #[sharded(index)]
    topic: String,
    at: FirestoreTimestamp,
}

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../clients/typescript")
}

fn npm(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("npm")
        .args(args)
        .args(["--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(dir)
        .output()
        .expect("npm runs (Node.js 20 and npm are needed)");
    assert!(
        output.status.success(),
        "npm {args:?} in {}:\n{}\n{}",
        dir.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The client's tracked files (its package, without tests, probes and the example), copied
/// to `at`, as a clone of a repository holding the package at its root has them.
fn package_copy(at: &Path) {
    let listed = Command::new("git")
        .args(["ls-files", "-z", "."])
        .current_dir(client_dir())
        .output()
        .expect("git runs");
    assert!(listed.status.success());
    for file in listed.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let relative = Path::new(std::str::from_utf8(file).unwrap());
        let first = relative.components().next().unwrap().as_os_str();
        if ["test", "probe", "example"]
            .iter()
            .any(|skip| first == *skip)
        {
            continue;
        }
        let source = client_dir().join(relative);
        if source.is_file() {
            let target = at.join(relative);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(&source, &target).unwrap();
        }
    }
}

/// A fresh ESM project in `dir` with `dependencies` installed.
fn fresh_project(dir: &Path, dependencies: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("package.json"),
        r#"{ "name": "fresh", "private": true, "type": "module" }"#,
    )
    .unwrap();
    let mut args = vec!["install"];
    args.extend(dependencies);
    npm(dir, &args);
}

const READ_STDIN: &str = r#"
async function input() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}
"#;

/// A page of 10 and the count, through the web entry point.
const WEB: &str = r#"
import { initializeApp } from "firebase/app";
import { connectFirestoreEmulator, getFirestore } from "firebase/firestore";
import { descriptionsIn, ShardedCollection } from "@sharded/firestore";
const { host, project, file } = await input();
const [hostname, port] = host.split(":");
const db = getFirestore(initializeApp({ projectId: project, apiKey: "fake-api-key" }));
connectFirestoreEmulator(db, hostname, Number(port));
const packaged = new ShardedCollection(db, descriptionsIn(file)[0]);
const page = await packaged.query().where("topic", "==", "t1").limit(10).get();
const count = await packaged.query().where("topic", "==", "t1").count();
process.stdout.write(JSON.stringify({ paths: page.docs.map((d) => d.ref.path), count }));
process.exit(0);
"#;

/// The same through the server entry point alone: the description helpers come from it too.
const SERVER: &str = r#"
import { adminCollectionGroup, descriptionsIn, ShardedAdminCollection, ShardedError, withShard } from "@sharded/firestore/admin";
const { host, project, file } = await input();
process.env.FIRESTORE_EMULATOR_HOST = host;
process.env.METADATA_SERVER_DETECTION = "none";
const { Firestore } = await import("@google-cloud/firestore");
const description = descriptionsIn(file)[0];
const packaged = new ShardedAdminCollection(new Firestore({ projectId: project }), description);
const page = await packaged.query().where("topic", "==", "t1").limit(10).get();
const count = await packaged.query().where("topic", "==", "t1").count();
// withShard checks the document as a whole write first: one without the order field is refused.
let refused = false;
try { withShard(description, { topic: "t1" }); } catch (error) { refused = error instanceof ShardedError; }
if (typeof adminCollectionGroup !== "function" || !refused
  || !("shard" in withShard(description, { topic: "t1", at: new Date() }))) {
  throw new Error("the server entry point lacks what a server needs");
}
let web = "loaded";
try {
  await import("@sharded/firestore");
} catch (error) {
  web = String(error.code ?? error);
}
process.stdout.write(JSON.stringify({ paths: page.docs.map((d) => d.ref.path), count, web, error: ShardedError.name }));
process.exit(0);
"#;

/// Runs `script` (with the stdin reader) in `dir`: what it printed, as JSON.
fn run(dir: &Path, name: &str, script: &str, input: &Value) -> Value {
    let path = dir.join(name);
    std::fs::write(&path, format!("{READ_STDIN}\n{script}")).unwrap();
    serde_json::from_slice(&run_script(&path, &input.to_string())).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_installs_packed_from_git_and_from_a_folder_and_answers() {
    let test = test_db("typescript-package").await;
    let db = &test.db;
    let packaged = Packaged::collection(db);
    for n in 0..12 {
        let document = Packaged {
            topic: format!("t{}", n % 3),
            at: FirestoreTimestamp(
                sharded_runtime::firestore::jiff::Timestamp::from_second(1_700_000_000 + n)
                    .unwrap(),
            ),
        };
        packaged
            .upsert(&format!("p{n:02}"), &document)
            .await
            .unwrap();
    }
    let rust: Vec<String> = Packaged::query()
        .topic("t1")
        .page(db, 10)
        .await
        .unwrap()
        .items
        .iter()
        .map(|s| format!("packaged/{}", s.id))
        .collect();
    let count = Packaged::query().topic("t1").count(db).await.unwrap();
    let description = serde_json::to_value(
        sharded_runtime::indexes::CollectionDescriptionBuf::from(&Packaged::DESCRIPTION),
    )
    .unwrap();
    let project_id = sharded_tests::project_id(db);
    let input = json!({
        "host": test.emulator.host(), "project": project_id,
        "file": {"shardedManaged": {"crates": {"app": {"collections": [description]}}}},
    });
    let expected = |answer: &Value, how: &str| {
        assert_eq!(answer["paths"], json!(rust), "{how}: the page");
        assert_eq!(answer["count"], json!(count), "{how}: the count");
    };

    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("typescript-package");
    let _ = std::fs::remove_dir_all(&root);
    let source = root.join("package");
    package_copy(&source);

    // Packed as the registry holds it: `prepare` builds `dist/` (after installing the
    // devDependencies it needs), and the tarball holds it.
    let tarball = npm(
        &source,
        &["pack", "--pack-destination", root.to_str().unwrap()],
    );
    let tarball = root.join(tarball.lines().last().unwrap().trim());
    assert!(tarball.is_file(), "{}", tarball.display());
    let both = root.join("both");
    fresh_project(&both, &[tarball.to_str().unwrap(), FIREBASE, SERVER_SDK]);
    expected(&run(&both, "web.mjs", WEB, &input), "packed, web");
    expected(&run(&both, "server.mjs", SERVER, &input), "packed, server");

    // A Cloud Function: the server SDK alone.
    let server = root.join("server");
    fresh_project(&server, &[tarball.to_str().unwrap(), SERVER_SDK]);
    assert!(!server.join("node_modules/firebase").exists());
    let answer = run(&server, "server.mjs", SERVER, &input);
    expected(&answer, "packed, server only");
    assert_eq!(
        answer["web"], "ERR_MODULE_NOT_FOUND",
        "the web entry point needs firebase"
    );

    // From git (a repository whose root is the package) and from a folder: each built as it
    // is installed.
    let repository = root.join("repository");
    package_copy(&repository);
    git(&repository, &["init", "-q"]);
    git(&repository, &["add", "-A"]);
    git(&repository, &["commit", "-q", "-m", "the client"]);
    let from_git = root.join("from-git");
    let url = format!("git+file://{}", repository.display());
    fresh_project(&from_git, &[&url, FIREBASE]);
    expected(&run(&from_git, "web.mjs", WEB, &input), "from git");

    // A folder installed as a copy (`--install-links`): npm packs it, which builds it, and the
    // copy resolves the project's own `firebase`. (A plain `npm install <folder>` links the
    // folder, whose module resolution then finds the folder's own devDependencies: a second
    // `firebase`, which the project's instances are not.)
    let folder = root.join("folder");
    package_copy(&folder);
    let from_folder = root.join("from-folder");
    fresh_project(
        &from_folder,
        &["--install-links", folder.to_str().unwrap(), FIREBASE],
    );
    let installed = from_folder.join("node_modules/@sharded/firestore");
    assert!(!installed.is_symlink() && installed.join("dist/index.js").is_file());
    expected(&run(&from_folder, "web.mjs", WEB, &input), "from a folder");
}
