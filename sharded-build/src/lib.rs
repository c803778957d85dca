//! Writes `firestore.indexes.json` for the sharded collections of a crate, from `build.rs`:
//!
//! ```no_run
//! // build.rs, whose `fn main` is this one line:
//! sharded_build::write_indexes();
//! ```
//!
//! Every `#[derive(Sharded)]` struct of the crate (read from its roots along its module tree,
//! `#[cfg(test)]` modules left out) is read by the same front end as the derive and planned by
//! the same function as `Sharded::indexes()`: one composite index per
//! indexed field (shard, field, order field) and single-field indexes disabled on the order and
//! shard fields (the recipe's steps 4 and 5).
//!
//! The file is merged, not overwritten: indexes and overrides of other collections and fields
//! stay as they are, where they are. In a sharded collection, a composite index that has the
//! order field but not the shard field is removed with a `cargo:warning` (it would keep the
//! 500 writes/s cap). A top-level `shardedManaged` key, which the Firebase CLI ignores,
//! records what the tool manages, so the entries of a deleted type or index attribute
//! disappear on the next build. The bytes are deterministic and written (atomically) only
//! when they change.
//!
//! Beside it the build keeps `firestore.rules`: one function per sharded type that holds a
//! client's write to the shard contract (the shard one of the values writers may draw now,
//! the order field present with its type, a `server_timestamp` field the server's time),
//! in a fenced block of the user's own file, for their `allow create, update` conditions to
//! call. Server SDKs (admin credentials) bypass rules; `verify()` covers what they write.
//!
//! And `firestore.sharded.ts`, for web apps on the TypeScript client: per sharded type of the
//! file, an interface of its stored fields and its description typed with them, so that a
//! misspelt field does not compile ([`Indexes::typescript`], [`Indexes::without_typescript`]).
//!
//! For a database in Firestore's Datastore mode, `sharded_build::write_datastore_indexes()`
//! writes `index.yaml` instead: the same plan, each index a kind's, in a fenced block of the
//! user's own file (no rules: Datastore mode has none).
//!
//! With `SHARDED_INDEXES_CHECK=1` in the environment the build writes nothing and fails, with
//! a diff, when any of the files is not what it would write: the drift check for CI.

mod dependencies;
mod diff;
mod drift;
mod fence;
mod index_yaml;
mod merge;
mod rules;
mod scan;
mod typescript;

/// The TypeScript module's name beside the index file.
pub const TYPESCRIPT_FILE: &str = "firestore.sharded.ts";

use std::fmt;
use std::path::{Path, PathBuf};

pub use drift::{Drift, deployed_drift};
pub use index_yaml::read_index_yaml;
pub use merge::{COMPOSITE_INDEX_QUOTA, MANIFEST_KEY, MAX_INDEX_FIELDS};
pub use scan::ShardedType;

/// The environment variable that turns the build into a drift check.
pub const CHECK_ENV: &str = "SHARDED_INDEXES_CHECK";

/// Writes `firestore.indexes.json` beside `Cargo.toml` from the sharded types in `src/`;
/// on failure, fails the build with the reason. The one line a `build.rs` needs.
pub fn write_indexes() {
    Indexes::from_env().write();
}

/// Writes `index.yaml` beside `Cargo.toml` from the sharded types in `src/`, for a database in
/// Firestore's Datastore mode: the same indexes as [`write_indexes`], each a kind's, in the
/// fenced block of the build in the user's own file. The one line a `build.rs` needs; deploy
/// with `gcloud datastore indexes create index.yaml`.
pub fn write_datastore_indexes() {
    Indexes::from_env().datastore().write();
}

/// Where the sources are read and the file is written; see [`write_indexes`].
#[derive(Debug, Clone)]
pub struct Indexes {
    sources: PathBuf,
    output: PathBuf,
    check: bool,
    crate_name: String,
    quota: usize,
    /// Sharded types of other crates, planned into this file too.
    included: Vec<ShardedType>,
    /// The package cargo builds, whose fetched models crates are checked for types left out
    /// of `included`; none outside a build script.
    package: Option<dependencies::Package>,
    /// Where the security rules go: `firestore.rules` beside the index file unless set.
    rules: Place,
    /// Where the TypeScript module goes: `firestore.sharded.ts` beside the index file unless
    /// set.
    typescript: Place,
    /// Which file format: `firestore.indexes.json`, or Datastore mode's `index.yaml`.
    datastore: bool,
}

/// Where [`Indexes`] writes a file besides the index file (the security rules, the
/// TypeScript module).
#[derive(Debug, Clone)]
enum Place {
    /// In the index file's folder, under its usual name.
    Beside,
    At(PathBuf),
    Off,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The sharded types found, in file and declaration order.
    pub types: Vec<ShardedType>,
    /// Whether the index file was (re)written.
    pub written: bool,
    /// Whether the rules file was (re)written.
    pub rules_written: bool,
    /// What the user should know: removed indexes, replaced overrides, quota.
    pub warnings: Vec<String>,
}

/// Why the file could not be written, or (in check mode) why it is stale.
#[derive(Debug)]
pub enum Error {
    /// Reading sources or reading/writing the file failed.
    Io(PathBuf, std::io::Error),
    /// A source file is not valid Rust (the compiler will say more).
    Parse(PathBuf, syn::Error),
    /// The existing file is not JSON this tool can merge into.
    File(PathBuf, String),
    /// The result would be rejected by Firestore or the Firebase CLI, or the types conflict.
    Invalid(String),
    /// Check mode: the file on disk is not what would be written.
    Stale { path: PathBuf, diff: String },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(path, err) => write!(f, "{}: {err}", path.display()),
            Error::Parse(path, err) => write!(f, "{}: {err}", path.display()),
            Error::File(path, why) => write!(f, "{}: {why}", path.display()),
            Error::Invalid(why) => write!(f, "{why}"),
            Error::Stale { path, diff } => write!(
                f,
                "{} is out of date ({CHECK_ENV} is set); build without it to update the file. Changes:\n{diff}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for Error {}

impl Indexes {
    /// `src/` and `firestore.indexes.json` of the crate being built; check mode from
    /// `SHARDED_INDEXES_CHECK`.
    pub fn from_env() -> Indexes {
        let root =
            PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| ".".into()));
        let output = output_for(
            &root,
            fetched_by_cargo(&root, cargo_home().as_deref()),
            std::env::var_os("OUT_DIR").map(PathBuf::from).as_deref(),
        );
        Indexes {
            sources: root.join("src"),
            output,
            check: std::env::var_os(CHECK_ENV).is_some_and(|v| !v.is_empty() && v != "0"),
            crate_name: std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "crate".into()),
            quota: std::env::var(merge::QUOTA_ENV)
                .ok()
                .and_then(|quota| quota.trim().parse().ok())
                .unwrap_or(merge::COMPOSITE_INDEX_QUOTA),
            included: Vec::new(),
            package: match (
                std::env::var("CARGO_PKG_NAME"),
                std::env::var("CARGO_PKG_VERSION"),
            ) {
                (Ok(name), Ok(version)) => Some(dependencies::Package {
                    name,
                    version,
                    dir: root.clone(),
                    cargo_home: cargo_home(),
                }),
                _ => None,
            },
            rules: Place::Beside,
            typescript: Place::Beside,
            datastore: false,
        }
    }

    /// Writes Datastore mode's `index.yaml` instead of `firestore.indexes.json` (in its place
    /// unless [`output`](Self::output) names another file), and no security rules, which
    /// Datastore mode has none of.
    pub fn datastore(mut self) -> Self {
        if self.output.file_name() == Some(std::ffi::OsStr::new("firestore.indexes.json")) {
            self.output.set_file_name("index.yaml");
        }
        self.rules = Place::Off;
        self.typescript = Place::Off;
        self.datastore = true;
        self
    }

    /// Plans the sharded type `name` of another crate (a models crate the app depends on)
    /// into this file too, from its `Sharded::DESCRIPTION`: the app's `build.rs`, with the
    /// models crate as a build-dependency, includes each type it uses, so that the one file
    /// the app deploys holds every index its queries need. A crate cargo fetched writes
    /// nothing into its own sources ([`from_env`](Self::from_env)), so this is how its
    /// indexes reach the app.
    ///
    /// ```ignore
    /// // build.rs of the app; `models` and `sharded-runtime` are [build-dependencies] too.
    /// use sharded_runtime::Sharded as _;
    ///
    /// fn main() {
    ///     sharded_build::Indexes::from_env()
    ///         .include("models::Reading", &models::Reading::DESCRIPTION)
    ///         .write();
    /// }
    /// ```
    pub fn include(
        mut self,
        name: &str,
        description: &sharded_indexes::CollectionDescription<'_>,
    ) -> Self {
        self.included.push(ShardedType {
            name: name.to_owned(),
            module: Vec::new(),
            file: PathBuf::from("(another crate)"),
            description: description.into(),
        });
        self
    }

    /// Fails the build past `quota` composite indexes in the file instead of Firestore's
    /// 200 per database without billing: for a project whose limit is higher. Also
    /// `SHARDED_COMPOSITE_INDEX_QUOTA=n`.
    pub fn composite_index_quota(mut self, quota: usize) -> Self {
        self.quota = quota;
        self
    }

    /// Records this crate's entries under `name` instead of the package name: the file can
    /// be shared by several crates, each owning its own entries.
    pub fn crate_name(mut self, name: impl Into<String>) -> Self {
        self.crate_name = name.into();
        self
    }

    /// Reads sharded types from `dir` instead of `src/`.
    pub fn sources(mut self, dir: impl Into<PathBuf>) -> Self {
        self.sources = dir.into();
        self
    }

    /// Writes to `path` instead of `firestore.indexes.json` (relative paths are relative to
    /// the crate, as in `build.rs`).
    pub fn output(mut self, path: impl Into<PathBuf>) -> Self {
        self.output = path.into();
        self
    }

    /// Keeps the security rules in `path` instead of `firestore.rules` beside the index file
    /// (relative paths are relative to the crate): where `firebase.json`'s
    /// `firestore.rules` points.
    pub fn rules(mut self, path: impl Into<PathBuf>) -> Self {
        self.rules = Place::At(path.into());
        self
    }

    /// Writes no security rules: for a project whose clients never write the collections
    /// (only servers, whose SDKs bypass rules, do).
    pub fn without_rules(mut self) -> Self {
        self.rules = Place::Off;
        self
    }

    /// Writes the TypeScript module of the file's types to `path` instead of
    /// `firestore.sharded.ts` beside the index file (relative paths are relative to the
    /// crate): where the web app's sources can import it.
    pub fn typescript(mut self, path: impl Into<PathBuf>) -> Self {
        self.typescript = Place::At(path.into());
        self
    }

    /// Writes no TypeScript module: for a project without a TypeScript client.
    pub fn without_typescript(mut self) -> Self {
        self.typescript = Place::Off;
        self
    }

    /// Where the TypeScript module is, if the build writes one.
    fn typescript_path(&self) -> Option<PathBuf> {
        match &self.typescript {
            Place::Beside => Some(self.output.with_file_name(TYPESCRIPT_FILE)),
            Place::At(path) => Some(path.clone()),
            Place::Off => None,
        }
    }

    /// Where the rules file is, if the build keeps one.
    fn rules_path(&self) -> Option<PathBuf> {
        match &self.rules {
            Place::Beside => Some(self.output.with_file_name("firestore.rules")),
            Place::At(path) => Some(path.clone()),
            Place::Off => None,
        }
    }

    /// Only compares: fails with a diff when the file would change.
    pub fn check(mut self, check: bool) -> Self {
        self.check = check;
        self
    }

    /// Runs from `build.rs`: tells cargo when to rerun, prints warnings, and fails the build on
    /// error.
    pub fn write(self) {
        println!("cargo:rerun-if-changed={}", self.sources.display());
        // Only the drift check reads the file to decide; a writing build that listed its own
        // output would run once more after every change it writes.
        if self.check {
            println!("cargo:rerun-if-changed={}", self.output.display());
            if let Some(rules) = self.rules_path() {
                println!("cargo:rerun-if-changed={}", rules.display());
            }
            if let Some(module) = self.typescript_path() {
                println!("cargo:rerun-if-changed={}", module.display());
            }
        }
        // A new dependency may bring sharded types this file should include.
        if let Some(lock) = self
            .package
            .as_ref()
            .and_then(|package| dependencies::lock_file(&package.dir))
        {
            println!("cargo:rerun-if-changed={}", lock.display());
        }
        println!("cargo:rerun-if-env-changed={CHECK_ENV}");
        println!("cargo:rerun-if-env-changed={}", merge::QUOTA_ENV);
        match self.run() {
            Ok(outcome) => {
                for warning in outcome.warnings {
                    println!("cargo:warning={warning}");
                }
            }
            Err(error) => {
                eprintln!("sharded-build: {error}");
                panic!("sharded-build: {}", first_line(&error.to_string()));
            }
        }
    }

    /// Plans, merges and writes (or checks) the file.
    pub fn run(&self) -> Result<Outcome, Error> {
        let sources = scan::Sources::read_crate(&self.sources).map_err(|error| match error {
            scan::ReadError::Io(path, e) => Error::Io(path, e),
            scan::ReadError::Parse(path, e) => Error::Parse(path, e),
        })?;
        let mut types = sources.sharded_types().map_err(Error::Invalid)?;
        types.extend(self.included.iter().cloned());
        let on_disk = read_existing(&self.output)?;
        if self.datastore {
            let merged = index_yaml::merge(on_disk.as_deref(), &types, &self.crate_name)
                .map_err(|why| Error::File(self.output.clone(), why))?;
            let written = self.keep(&self.output, on_disk.as_deref(), &merged.text)?;
            let mut warnings = sources.warnings;
            warnings.extend(merged.warnings);
            // `index.yaml` has no TTL policy: the command that sets one, when the file changed.
            if written {
                warnings.extend(types.iter().filter_map(ttl_command));
            }
            return Ok(Outcome {
                types,
                written,
                rules_written: false,
                warnings,
            });
        }
        let existing = on_disk
            .as_deref()
            .map(|text| {
                serde_json::from_str(text).map_err(|e| {
                    Error::File(
                        self.output.clone(),
                        format!("not JSON this tool can merge into ({e}); comments are not kept"),
                    )
                })
            })
            .transpose()?;
        let merged = merge::merge(existing, &types, &self.crate_name).map_err(Error::Invalid)?;
        merge::check_quota(&merged.document, self.quota).map_err(Error::Invalid)?;
        let written = self.keep(&self.output, on_disk.as_deref(), &render(&merged.document))?;
        if let Some(path) = self.typescript_path() {
            let on_disk = read_existing(&path)?;
            self.keep(
                &path,
                on_disk.as_deref(),
                &typescript::module(&merged.document),
            )?;
        }
        let mut warnings = sources.warnings;
        warnings.extend(merged.warnings);
        let rules_written = match self.rules_path() {
            Some(path) => self.keep_rules(&path, &types, &mut warnings)?,
            None => false,
        };
        if let Some(package) = &self.package {
            warnings.extend(dependencies::forgotten_includes(package, &self.included));
        }
        Ok(Outcome {
            types,
            written,
            rules_written,
            warnings,
        })
    }

    /// Writes `text` to `path` unless it is what `on_disk` holds; in check mode, fails with
    /// the diff instead. Whether it wrote.
    fn keep(&self, path: &Path, on_disk: Option<&str>, text: &str) -> Result<bool, Error> {
        if on_disk == Some(text) {
            return Ok(false);
        }
        if self.check {
            return Err(Error::Stale {
                path: path.to_path_buf(),
                diff: diff::line_diff(on_disk.unwrap_or(""), text),
            });
        }
        write_atomically(path, text)?;
        Ok(true)
    }

    /// Merges the rules of `types` into the file at `path` (or checks it); whether it wrote.
    fn keep_rules(
        &self,
        path: &Path,
        types: &[ShardedType],
        warnings: &mut Vec<String>,
    ) -> Result<bool, Error> {
        let on_disk = read_existing(path)?;
        let merged = rules::merge(on_disk.as_deref(), types, &self.crate_name)
            .map_err(|why| Error::File(path.to_path_buf(), why))?;
        warnings.extend(merged.warnings);
        match merged.text {
            Some(text) => self.keep(path, on_disk.as_deref(), &text),
            None => Ok(false),
        }
    }
}

/// The text of the file at `path`, `None` when there is none.
fn read_existing(path: &Path) -> Result<Option<String>, Error> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(Error::Io(path.to_path_buf(), err)),
    }
}

/// Two-space pretty JSON with a final newline, as `firebase firestore:indexes` writes it.
fn render(document: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(document).expect("JSON values serialize");
    text.push('\n');
    text
}

/// Writes `text` to `path` through a temporary file and a rename, so no reader sees half a
/// file; a symlinked file stays a symlink, and its target is what gets written.
fn write_atomically(path: &Path, text: &str) -> Result<(), Error> {
    let resolved;
    let path = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            resolved = std::fs::canonicalize(path).map_err(|e| Error::Io(path.to_path_buf(), e))?;
            resolved.as_path()
        }
        _ => path,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temp, text).map_err(|e| Error::Io(temp.clone(), e))?;
    std::fs::rename(&temp, path).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        Error::Io(path.to_path_buf(), e)
    })
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or(text)
}

/// Where the build of the crate at `root` writes its file: beside its `Cargo.toml`, unless
/// cargo fetched the crate ([`fetched_by_cargo`]): that crate is someone else's, and its build
/// writes only into `out_dir`, as cargo's rule is; the app that deploys the indexes includes
/// its types ([`Indexes::include`]).
fn output_for(root: &Path, fetched: bool, out_dir: Option<&Path>) -> PathBuf {
    match (fetched, out_dir) {
        (true, Some(out_dir)) => out_dir.join("firestore.indexes.json"),
        _ => root.join("firestore.indexes.json"),
    }
}

/// Whether the crate at `root` is one cargo fetched rather than the user's own source: it lies
/// in cargo's home (a registry's sources, a git checkout), or holds the marker cargo leaves
/// where it unpacks a crate (`.cargo-ok`, wherever the home was when it did), or is vendored
/// (`cargo vendor`'s `.cargo-checksum.json`, whose crates cargo checks against their sums).
fn fetched_by_cargo(root: &Path, cargo_home: Option<&Path>) -> bool {
    cargo_home.is_some_and(|home| root.starts_with(home))
        || root.join(".cargo-ok").exists()
        || root.join(".cargo-checksum.json").exists()
}

/// Where cargo keeps what it fetches: `CARGO_HOME`, else `~/.cargo`.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")))
}

/// For a type with an expiry field, the `gcloud` command that sets its kind's TTL policy in
/// Datastore mode, which `index.yaml` cannot say.
fn ttl_command(t: &ShardedType) -> Option<String> {
    let field = t.description.expiry_field.as_deref()?;
    let property = sharded_indexes::datastore::property_path(field)?;
    Some(format!(
        "`{}` expires by `{property}`: set its kind's TTL policy once with `gcloud firestore fields ttls update {property} --collection-group={} --enable-ttl --database=<database>` (index.yaml has no TTL)",
        t.name, t.description.collection
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fetched_crate_writes_into_out_dir_and_a_local_one_beside_its_manifest() {
        let out = Path::new("/w/app/target/debug/build/models-1/out");
        let root = Path::new("/w/app/models");
        assert_eq!(
            output_for(root, true, Some(out)),
            out.join("firestore.indexes.json")
        );
        assert_eq!(
            output_for(root, false, Some(out)),
            root.join("firestore.indexes.json")
        );
        // Without an OUT_DIR (not run by cargo) there is nowhere else.
        assert_eq!(
            output_for(root, true, None),
            root.join("firestore.indexes.json")
        );
    }

    #[test]
    fn a_crate_in_cargos_home_or_unpacked_or_vendored_by_cargo_is_fetched() {
        let home = Path::new("/home/u/.cargo");
        for fetched in [
            "/home/u/.cargo/registry/src/index.crates.io-1/models-0.1.0",
            "/home/u/.cargo/git/checkouts/models-2/abc123",
        ] {
            assert!(fetched_by_cargo(Path::new(fetched), Some(home)));
        }
        let dir =
            std::env::temp_dir().join(format!("sharded-build-fetched-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(!fetched_by_cargo(&dir, Some(home)));
        assert!(!fetched_by_cargo(&dir, None));
        for marker in [".cargo-ok", ".cargo-checksum.json"] {
            std::fs::write(dir.join(marker), "{}").unwrap();
            assert!(fetched_by_cargo(&dir, None), "{marker}");
            std::fs::remove_file(dir.join(marker)).unwrap();
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_drift_check_covers_the_rules_block_and_leaves_the_owners_lines_to_them() {
        let dir = std::env::temp_dir().join(format!("sharded-build-rules-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("src/lib.rs"),
            "#[derive(Sharded)]\n#[sharded(shards = 3, order_by = \"at\")]\npub struct Reading { pub at: i64 }\n",
        )
        .unwrap();
        let indexes = || {
            Indexes::from_env()
                .sources(dir.join("src"))
                .output(dir.join("firestore.indexes.json"))
                .crate_name("app")
        };
        let outcome = indexes().run().unwrap();
        assert!(outcome.written && outcome.rules_written);
        let rules = dir.join("firestore.rules");
        let written = std::fs::read_to_string(&rules).unwrap();
        assert!(written.contains("data.get('at', null) is int"), "{written}");
        assert!(indexes().check(true).run().is_ok());
        // The owner's conditions are theirs: a changed `false` is no drift.
        let owned = written.replacen("allow read, delete: if false;", "allow read: if true;", 1);
        std::fs::write(&rules, &owned).unwrap();
        assert!(indexes().check(true).run().is_ok());
        // The block is the build's: an edited value is.
        std::fs::write(&rules, owned.replacen("'0', '1', '2'", "'0', '1'", 1)).unwrap();
        match indexes().check(true).run() {
            Err(Error::Stale { path, diff }) => {
                assert_eq!(path, rules);
                assert!(diff.contains("'0', '1', '2'"), "{diff}");
            }
            other => panic!("{other:?}"),
        }
        // A write puts the block back and keeps the owner's line.
        assert!(indexes().run().unwrap().rules_written);
        assert_eq!(std::fs::read_to_string(&rules).unwrap(), owned);
        // Without rules, none are written.
        std::fs::remove_file(&rules).unwrap();
        assert!(!indexes().without_rules().run().unwrap().rules_written);
        assert!(!rules.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
