//! Generated index files pass the Firebase CLI's own validation (`upgradeOldSpec` +
//! `validateSpec` of the pinned firebase-tools), which `cargo test` installs with `npm ci`.

use std::path::{Path, PathBuf};
use std::process::Command;

use sharded_runtime::Sharded;
use sharded_tests::models::{Instrument, Tick};

fn tools() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/firebase-validate")
}

/// Installs the pinned firebase-tools on first use, from the committed lock file.
fn install() {
    if tools()
        .join("node_modules/firebase-tools/lib/firestore/api.js")
        .is_file()
    {
        return;
    }
    let status = Command::new("npm")
        .args([
            "ci",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--loglevel=error",
        ])
        .current_dir(tools())
        .status()
        .expect("npm runs (Node.js and npm are needed to validate index files)");
    assert!(status.success(), "npm ci failed in {}", tools().display());
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
    let (ok, report) = validate(&[committed, instruments, ticks]);
    assert!(ok, "{report}");
    assert_eq!(
        report
            .lines()
            .filter(|line| line.starts_with("valid: "))
            .count(),
        3,
        "{report}"
    );
    assert!(
        report.contains("instruments.json (3 indexes, 2 field overrides)"),
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
