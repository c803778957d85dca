//! The repository's Node.js packages (`tools/<name>`, `clients/typescript`, each pinned by its
//! `package-lock.json`), installed by the tests that use them with `npm ci`, as a fresh machine
//! needs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// `tools/<name>` of this repository.
pub fn tool(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tools")
        .join(name)
}

/// The TypeScript client, `clients/typescript`.
pub fn typescript_client() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../clients/typescript")
}

/// Installs `tools/<name>` from its lock file unless `installed` (a path in it) exists already.
pub fn install(name: &str, installed: &str) -> PathBuf {
    install_at(&tool(name), installed)
}

/// Installs the package in `dir` from its lock file unless `installed` (a path in it) exists
/// already; once per test process, however many tests ask at once.
pub fn install_at(dir: &Path, installed: &str) -> PathBuf {
    static DONE: OnceLock<Mutex<Vec<PathBuf>>> = OnceLock::new();
    let dir = dir.to_path_buf();
    let mut done = DONE.get_or_init(Default::default).lock().unwrap();
    if done.contains(&dir) || dir.join(installed).exists() {
        done.push(dir.clone());
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
    done.push(dir.clone());
    dir
}

/// Runs `node script` with `input` on its stdin to the end; what it printed on stdout. Fails
/// the test, with what it printed on stderr, when it exits with an error.
pub fn run_script(script: &Path, input: &str) -> Vec<u8> {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = Command::new("node")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("node runs (Node.js 20 is needed)");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input.as_bytes())
        .expect("the script reads its input");
    let output = child.wait_with_output().expect("the script ends");
    assert!(
        output.status.success(),
        "{} failed: {}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}
