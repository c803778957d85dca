//! The repository's Node.js tools (`tools/<name>`, each pinned by its `package-lock.json`),
//! installed by the tests that use them with `npm ci`, as a fresh machine needs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// `tools/<name>` of this repository.
pub fn tool(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tools")
        .join(name)
}

/// Installs `tools/<name>` from its lock file unless `installed` (a path in it) exists already;
/// once per test process, however many tests ask at once.
pub fn install(name: &str, installed: &str) -> PathBuf {
    static DONE: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    let dir = tool(name);
    let mut done = DONE.get_or_init(Default::default).lock().unwrap();
    if done.iter().any(|tool| tool == name) || dir.join(installed).exists() {
        done.push(name.to_owned());
        return dir;
    }
    let status = Command::new("npm")
        .args([
            "ci",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--loglevel=error",
        ])
        .current_dir(&dir)
        .status()
        .expect("npm runs (Node.js 20 and npm are needed)");
    assert!(status.success(), "npm ci failed in {}", dir.display());
    done.push(name.to_owned());
    dir
}
