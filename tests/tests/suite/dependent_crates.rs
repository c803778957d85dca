//! The crates used as another repository uses them: a models crate in its own git repository
//! depends on sharded by git, and an app depends on the models crate by git and, in a second
//! app, by path. Each is a workspace of its own outside this one, built by a real `cargo`
//! with a `CARGO_HOME` of its own (the registry shared, read only from the copied lock file).
//!
//! What it proves: a fetched crate's build writes nothing into cargo's cache (only into its
//! `OUT_DIR`); the app's `firestore.indexes.json` holds the models' indexes and its own; a
//! change to the models reaches the app's file on the next build; the drift check passes.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use sharded_tests::git;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_path_buf()
}

fn commit_all(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// This repository's tracked files as they are in the work tree (edits included), committed
/// to a fresh git repository: what a user's `git = "..."` dependency fetches.
fn sharded_repository(at: &Path) {
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(workspace())
        .output()
        .expect("git runs");
    assert!(listed.status.success(), "git ls-files in the workspace");
    for file in listed.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let relative = Path::new(std::str::from_utf8(file).unwrap());
        let source = workspace().join(relative);
        // A file deleted in the work tree and not yet committed is not part of it.
        if source.is_file() {
            let target = at.join(relative);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(&source, &target).unwrap();
        }
    }
    git(at, &["init", "-q"]);
    commit_all(at, "sharded");
}

/// The profile of this workspace, so the fixture's dependencies build as small as ours.
const PROFILE: &str = r#"
[profile.dev]
debug = "line-tables-only"

[profile.dev.package."*"]
debug = false
"#;

/// What the models crate holds before and after its change: a type in a module of the crate.
macro_rules! models_head {
    () => {
        r#"
use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

pub mod fleet {
    use serde::{Deserialize, Serialize};
    use sharded_runtime::Sharded;

    /// A vehicle's ping, in a module of the crate.
    #[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
    #[sharded(shards = 4, order_by = "sent_at", collection = "pings")]
    pub struct Ping {
        #[sharded(index)]
        pub vehicle: String,
        pub sent_at: i64,
    }
}
"#
    };
}

const MODELS_LIB: &str = concat!(
    models_head!(),
    r#"
/// A sensor reading, sharded over 5 values.
#[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
#[sharded(shards = 5, order_by = "taken_at", collection = "readings")]
pub struct Reading {
    #[sharded(index)]
    pub sensor: String,
    pub value: f64,
    pub taken_at: i64,
}
"#
);

/// The models crate after a change: a second indexed field.
const MODELS_LIB_CHANGED: &str = concat!(
    models_head!(),
    r#"
/// A sensor reading, sharded over 5 values.
#[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
#[sharded(shards = 5, order_by = "taken_at", collection = "readings")]
pub struct Reading {
    #[sharded(index)]
    pub sensor: String,
    #[sharded(index)]
    pub site: String,
    pub value: f64,
    pub taken_at: i64,
}
"#
);

fn models_crate(at: &Path, sharded: &str) {
    write(
        &at.join("Cargo.toml"),
        &format!(
            r#"[package]
name = "models"
version = "0.1.0"
edition = "2024"

[dependencies]
sharded-runtime = {sharded}
serde = {{ version = "1", features = ["derive"] }}

[build-dependencies]
sharded-build = {sharded}

[workspace]
{PROFILE}"#
        ),
    );
    write(
        &at.join("build.rs"),
        "fn main() {\n    sharded_build::write_indexes();\n}\n",
    );
    write(&at.join("src/lib.rs"), MODELS_LIB);
    write(&at.join(".gitignore"), "/target\n");
}

/// An app with a sharded type of its own that deploys the models' indexes too.
fn app_crate(at: &Path, sharded: &str, models: &str) {
    write(
        &at.join("Cargo.toml"),
        &format!(
            r#"[package]
name = "app"
version = "0.1.0"
edition = "2024"

[dependencies]
models = {models}
sharded-runtime = {sharded}
serde = {{ version = "1", features = ["derive"] }}

[build-dependencies]
models = {models}
sharded-runtime = {sharded}
sharded-build = {sharded}

[workspace]
{PROFILE}"#
        ),
    );
    write(
        &at.join("build.rs"),
        r#"use sharded_runtime::Sharded as _;

fn main() {
    sharded_build::Indexes::from_env()
        .include("models::Reading", &models::Reading::DESCRIPTION)
        .include("models::fleet::Ping", &models::fleet::Ping::DESCRIPTION)
        .write();
}
"#,
    );
    write(
        &at.join("src/main.rs"),
        r#"use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;

/// An alert raised on a reading.
#[derive(Debug, Clone, Serialize, Deserialize, Sharded)]
#[sharded(shards = 3, order_by = "raised_at", collection = "alerts")]
pub struct Alert {
    #[sharded(index)]
    pub level: String,
    pub raised_at: i64,
}

fn main() {
    let _readings = models::Reading::query().sensor("s-1").limit(10);
    let _alerts = Alert::query().level("high").limit(10);
}
"#,
    );
    // The workspace's lock: every registry package resolves from what is already downloaded.
    std::fs::copy(workspace().join("Cargo.lock"), at.join("Cargo.lock")).unwrap();
}

/// Where cargo keeps the registry this machine has already downloaded.
fn cargo_home() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo"))
}

struct Build<'a> {
    home: &'a Path,
    target: &'a Path,
}

impl Build<'_> {
    fn cargo(&self, dir: &Path, args: &[&str], check: bool) -> String {
        let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        command
            .args(args)
            .current_dir(dir)
            .env("CARGO_HOME", self.home)
            .env("CARGO_TARGET_DIR", self.target)
            .env_remove("SHARDED_INDEXES_CHECK")
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS");
        if check {
            command.env("SHARDED_INDEXES_CHECK", "1");
        }
        let output = command.output().expect("cargo runs");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            output.status.success(),
            "cargo {args:?} in {} failed:\n{stderr}",
            dir.display()
        );
        stderr
    }
}

/// Every file named `name` under `dir`.
fn files_named(dir: &Path, name: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                pending.push(path);
            } else if entry.file_name() == name {
                found.push(path);
            }
        }
    }
    found
}

/// What differs from its commit in each git checkout cargo made (`git status`), but for the
/// `.cargo-ok` marker cargo itself leaves: anything a build wrote into cargo's cache.
fn written_into_checkouts(home: &Path) -> Vec<String> {
    let mut written = Vec::new();
    let mut checkouts = 0;
    for repository in std::fs::read_dir(home.join("git/checkouts")).unwrap() {
        for checkout in std::fs::read_dir(repository.unwrap().path()).unwrap() {
            let checkout = checkout.unwrap().path();
            checkouts += 1;
            let status = Command::new("git")
                .args([
                    "status",
                    "--porcelain",
                    "--untracked-files=all",
                    "--ignored",
                ])
                .current_dir(&checkout)
                .output()
                .expect("git runs");
            assert!(status.status.success());
            written.extend(
                String::from_utf8_lossy(&status.stdout)
                    .lines()
                    .filter(|line| !line.ends_with(".cargo-ok"))
                    .map(|line| format!("{}: {line}", checkout.display())),
            );
        }
    }
    assert!(checkouts >= 2, "cargo checked out sharded and the models");
    written
}

/// The composite indexes of `collection` in an index file, each as its field paths.
fn composite_indexes(file: &Path, collection: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{} is readable: {e}", file.display()));
    let document: Value = serde_json::from_str(&text).unwrap();
    document["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|index| index["collectionGroup"] == collection)
        .map(|index| {
            index["fields"]
                .as_array()
                .unwrap()
                .iter()
                .map(|field| field["fieldPath"].as_str().unwrap().to_owned())
                .collect()
        })
        .collect()
}

/// The `.include(...)` lines a build warning suggests, each as written.
fn suggested_includes(stderr: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut rest = stderr;
    while let Some(at) = rest.find(".include(\"") {
        let line = &rest[at..];
        let end = line.find("::DESCRIPTION)").expect("a whole line") + "::DESCRIPTION)".len();
        if !found.iter().any(|known| known == &line[..end]) {
            found.push(line[..end].to_owned());
        }
        rest = &line[end..];
    }
    found
}

fn has_index(file: &Path, collection: &str, fields: &[&str]) -> bool {
    composite_indexes(file, collection)
        .iter()
        .any(|index| index == fields)
}

#[test]
fn a_models_crate_from_git_or_a_path_gives_its_indexes_to_the_app_and_writes_nothing_into_cargos_cache()
 {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dependent-crates");
    // Kept between runs: the fixture's dependencies (the firestore client's) build once.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dependent-crates-target");
    let _ = std::fs::remove_dir_all(&root);
    let home = root.join("cargo-home");
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(cargo_home().join("registry"), home.join("registry")).unwrap();
    let build = Build {
        home: &home,
        target: &target,
    };

    let sharded = root.join("sharded");
    sharded_repository(&sharded);
    let sharded_dep = format!("{{ git = \"file://{}\" }}", sharded.display());

    let models = root.join("models");
    models_crate(&models, &sharded_dep);
    git(&models, &["init", "-q"]);
    commit_all(&models, "models");

    // The app takes the models by git.
    let app = root.join("app-git");
    app_crate(
        &app,
        &sharded_dep,
        &format!("{{ git = \"file://{}\" }}", models.display()),
    );
    build.cargo(&app, &["build", "--quiet"], false);
    let app_file = app.join("firestore.indexes.json");
    assert!(has_index(
        &app_file,
        "readings",
        &["shard", "sensor", "taken_at"]
    ));
    assert!(has_index(
        &app_file,
        "alerts",
        &["shard", "level", "raised_at"]
    ));
    // Fetched crates (sharded's and the models') wrote nothing where cargo keeps them; the
    // models' build wrote its file into its OUT_DIR.
    assert_eq!(written_into_checkouts(&home), Vec::<String>::new());
    let out_dirs = files_named(&target.join("debug/build"), "firestore.indexes.json");
    assert!(
        out_dirs
            .iter()
            .any(|file| has_index(file, "readings", &["shard", "sensor", "taken_at"])),
        "the models' build wrote into its OUT_DIR: {out_dirs:?}"
    );
    // The file is what the build writes: the drift check passes.
    build.cargo(&app, &["build", "--quiet"], true);

    // A change to the models reaches the app's file.
    write(&models.join("src/lib.rs"), MODELS_LIB_CHANGED);
    commit_all(&models, "an index on site");
    build.cargo(&app, &["update", "--quiet", "-p", "models"], false);
    build.cargo(&app, &["build", "--quiet"], false);
    assert!(has_index(
        &app_file,
        "readings",
        &["shard", "site", "taken_at"]
    ));
    assert!(has_index(
        &app_file,
        "readings",
        &["shard", "sensor", "taken_at"]
    ));
    assert_eq!(written_into_checkouts(&home), Vec::<String>::new());

    // An app that forgot to include the models' type: its build says which, with the line
    // to add (the models' file is in their OUT_DIR only, so the app's lacks its indexes).
    let forgot = root.join("app-forgot");
    app_crate(
        &forgot,
        &sharded_dep,
        &format!("{{ git = \"file://{}\" }}", models.display()),
    );
    write(
        &forgot.join("build.rs"),
        "fn main() {\n    sharded_build::write_indexes();\n}\n",
    );
    // A package of its own name: the shared target directory keeps its build script's
    // output apart from the other app's.
    let manifest = std::fs::read_to_string(forgot.join("Cargo.toml")).unwrap();
    write(
        &forgot.join("Cargo.toml"),
        &manifest.replace("name = \"app\"", "name = \"app-forgot\""),
    );
    let stderr = build.cargo(&forgot, &["build"], false);
    assert!(
        stderr.contains(r#".include("models::Reading", &models::Reading::DESCRIPTION)"#),
        "{stderr}"
    );
    assert!(
        stderr.contains(r#".include("models::fleet::Ping", &models::fleet::Ping::DESCRIPTION)"#),
        "the type in a module is named by its path: {stderr}"
    );
    assert!(!has_index(
        &forgot.join("firestore.indexes.json"),
        "readings",
        &["shard", "sensor", "taken_at"]
    ));
    // The lines the warning suggests, pasted into the build script as they are, build, and
    // the file then holds the models' indexes.
    let suggested = suggested_includes(&stderr);
    assert_eq!(suggested.len(), 2, "{suggested:?}");
    write(
        &forgot.join("build.rs"),
        &format!(
            "use sharded_runtime::Sharded as _;\n\nfn main() {{\n    sharded_build::Indexes::from_env()\n        {}\n        .write();\n}}\n",
            suggested.join("\n        ")
        ),
    );
    let stderr = build.cargo(&forgot, &["build"], false);
    assert!(!stderr.contains("does not include"), "{stderr}");
    let forgot_file = forgot.join("firestore.indexes.json");
    assert!(has_index(
        &forgot_file,
        "readings",
        &["shard", "sensor", "taken_at"]
    ));
    assert!(has_index(
        &forgot_file,
        "pings",
        &["shard", "vehicle", "sent_at"]
    ));
    // The app that includes it hears nothing of the kind (its build script run again).
    write(
        &app.join("build.rs"),
        &std::fs::read_to_string(app.join("build.rs")).unwrap(),
    );
    let stderr = build.cargo(&app, &["build"], false);
    assert!(!stderr.contains("does not include"), "{stderr}");

    // The app takes the models by path: the models crate is the user's own, so its build
    // keeps its own file beside its manifest, and the app's file holds its indexes too.
    let app = root.join("app-path");
    app_crate(&app, &sharded_dep, "{ path = \"../models\" }");
    build.cargo(&app, &["build", "--quiet"], false);
    let app_file = app.join("firestore.indexes.json");
    assert!(has_index(
        &app_file,
        "readings",
        &["shard", "site", "taken_at"]
    ));
    assert!(has_index(
        &app_file,
        "alerts",
        &["shard", "level", "raised_at"]
    ));
    assert!(has_index(
        &models.join("firestore.indexes.json"),
        "readings",
        &["shard", "site", "taken_at"]
    ));
    assert_eq!(written_into_checkouts(&home), Vec::<String>::new());
}
