//! Google's own Python Datastore client (`tests/python/requirements.txt`, from the registry),
//! installed by the tests that use it into a virtual environment under the target directory,
//! as a fresh machine needs: what another client sees of what this library writes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// `tests/python/<name>`.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("python")
        .join(name)
}

/// The virtual environment's `python`, with the requirements installed; once per test
/// process, however many tests ask at once.
pub fn python() -> &'static Path {
    static PYTHON: OnceLock<PathBuf> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let requirements = script("requirements.txt");
        let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/python-datastore");
        let python = venv.join("bin/python");
        let installed = venv.join("installed-requirements.txt");
        let wanted = std::fs::read_to_string(&requirements).expect("the requirements file");
        if std::fs::read_to_string(&installed).ok().as_deref() == Some(wanted.as_str()) {
            return python;
        }
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 runs (Python 3.11 is needed)");
        assert!(status.success(), "python3 -m venv failed");
        let status = Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&requirements)
            .status()
            .expect("pip runs");
        assert!(
            status.success(),
            "pip install -r {} failed",
            requirements.display()
        );
        std::fs::write(&installed, wanted).expect("the venv is writable");
        python
    })
}

/// Runs `tests/python/<name>` with `env`; what it printed on stdout. Fails the test, with
/// what it printed on stderr, when it exits with an error.
pub fn run(name: &str, env: &[(&str, &str)]) -> Vec<u8> {
    let output = Command::new(python())
        .arg(script(name))
        .envs(env.iter().copied())
        .output()
        .expect("the script runs");
    assert!(
        output.status.success(),
        "{name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}
