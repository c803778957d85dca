//! Models crates the app forgot to include. A crate cargo fetched (from a registry or a git
//! repository) writes its indexes only into its own `OUT_DIR`; they reach Firebase through the
//! app that includes its types ([`Indexes::include`](crate::Indexes::include)). The app's build
//! sees its dependency graph in `Cargo.lock`: each fetched package it depends on (directly or
//! not) that depends on sharded is a models crate, and its sources in cargo's cache say which
//! sharded types it declares. A type the app includes none of is a warning naming the line to
//! add; where the sources cannot be found, a package none of whose types is included is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::scan::{self, ShardedType};

/// sharded's own crates: depending on them is not declaring sharded types.
const SHARDED_CRATES: [&str; 6] = [
    "sharded-runtime",
    "sharded-derive",
    "sharded-build",
    "sharded-internals",
    "sharded-indexes",
    "sharded-emulator",
];

/// The crates a models crate depends on to declare sharded types.
const DECLARING: [&str; 2] = ["sharded-runtime", "sharded-derive"];

/// The package being built, as cargo tells its build script.
#[derive(Debug, Clone)]
pub(crate) struct Package {
    pub(crate) name: String,
    pub(crate) version: String,
    /// Its directory, where the search for `Cargo.lock` starts.
    pub(crate) dir: PathBuf,
    /// Where cargo keeps what it fetched.
    pub(crate) cargo_home: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
struct Lock {
    #[serde(default)]
    package: Vec<Locked>,
}

#[derive(Debug, Clone, Deserialize)]
struct Locked {
    name: String,
    version: String,
    source: Option<String>,
    #[serde(default)]
    dependencies: Vec<String>,
}

impl Locked {
    fn id(&self) -> (String, String) {
        (self.name.clone(), self.version.clone())
    }
}

/// The lock file of the workspace holding `dir`: the nearest `Cargo.lock` above it.
pub(crate) fn lock_file(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|dir| dir.join("Cargo.lock"))
        .find(|path| path.is_file())
}

/// The warnings for `package`'s fetched models crates whose sharded types `included` leaves
/// out; none when there is no lock file to read.
pub(crate) fn forgotten_includes(package: &Package, included: &[ShardedType]) -> Vec<String> {
    let Some(lock) = lock_file(&package.dir) else {
        return Vec::new();
    };
    let Some(lock) = std::fs::read_to_string(&lock)
        .ok()
        .and_then(|text| toml::from_str::<Lock>(&text).ok())
    else {
        return Vec::new();
    };
    models_crates(&lock, package)
        .into_iter()
        .filter_map(|models| {
            let sources = sources_of(&models, package.cargo_home.as_deref());
            forgotten(&models, sources.as_deref(), included)
        })
        .collect()
}

/// The fetched packages `package` depends on, directly or not, that depend on sharded.
fn models_crates(lock: &Lock, package: &Package) -> Vec<Locked> {
    let by_id: BTreeMap<(String, String), &Locked> =
        lock.package.iter().map(|p| (p.id(), p)).collect();
    // A dependency is written `name`, `name version` or `name version (source)`.
    let resolve = |dependency: &str| -> Option<&Locked> {
        let mut words = dependency.split_whitespace();
        let name = words.next()?;
        match words.next() {
            Some(version) => by_id.get(&(name.to_owned(), version.to_owned())).copied(),
            None => lock.package.iter().find(|p| p.name == name),
        }
    };
    let Some(root) = by_id
        .get(&(package.name.clone(), package.version.clone()))
        .copied()
    else {
        return Vec::new();
    };
    let mut seen: BTreeSet<(String, String)> = BTreeSet::from([root.id()]);
    let mut pending = vec![root];
    let mut models = Vec::new();
    while let Some(next) = pending.pop() {
        for dependency in next.dependencies.iter().filter_map(|d| resolve(d)) {
            if !seen.insert(dependency.id()) || SHARDED_CRATES.contains(&dependency.name.as_str()) {
                continue;
            }
            let declares = dependency
                .dependencies
                .iter()
                .filter_map(|d| d.split_whitespace().next())
                .any(|name| DECLARING.contains(&name));
            if declares && dependency.source.is_some() {
                models.push(dependency.clone());
            }
            pending.push(dependency);
        }
    }
    models
}

/// Where cargo unpacked `package`: a registry's sources, or its git checkout (the package's
/// directory in it, for a repository of several crates).
fn sources_of(package: &Locked, cargo_home: Option<&Path>) -> Option<PathBuf> {
    let home = cargo_home?;
    let source = package.source.as_deref()?;
    let candidates: Vec<PathBuf> = if source.starts_with("git+") {
        let revision = source.rsplit_once('#')?.1;
        let short = revision.get(..7)?;
        subdirectories(&home.join("git/checkouts"))
            .into_iter()
            .map(|repository| repository.join(short))
            .filter(|checkout| checkout.is_dir())
            .flat_map(|checkout| manifests_in(&checkout))
            .collect()
    } else {
        let unpacked = format!("{}-{}", package.name, package.version);
        subdirectories(&home.join("registry/src"))
            .into_iter()
            .map(|index| index.join(&unpacked))
            .filter(|dir| dir.join("Cargo.toml").is_file())
            .collect()
    };
    candidates
        .into_iter()
        .find(|dir| package_name(&dir.join("Cargo.toml")).as_deref() == Some(&package.name))
}

fn subdirectories(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

/// The directories holding a `Cargo.toml` in `checkout`, two levels down at most (a
/// repository's root and its `crates/x`-style members).
fn manifests_in(checkout: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![checkout.to_path_buf()];
    for child in subdirectories(checkout) {
        dirs.extend(subdirectories(&child));
        dirs.push(child);
    }
    dirs.into_iter()
        .filter(|dir| dir.join("Cargo.toml").is_file())
        .collect()
}

fn package_name(manifest: &Path) -> Option<String> {
    #[derive(Deserialize)]
    struct Manifest {
        package: Option<Named>,
    }
    #[derive(Deserialize)]
    struct Named {
        name: String,
    }
    let text = std::fs::read_to_string(manifest).ok()?;
    toml::from_str::<Manifest>(&text)
        .ok()?
        .package
        .map(|p| p.name)
}

/// The warning for `models` (its sources at `sources`, if found) when `included` leaves out
/// one of its sharded types, or, with no sources to read, all of them.
fn forgotten(models: &Locked, sources: Option<&Path>, included: &[ShardedType]) -> Option<String> {
    let crate_name = models.name.replace('-', "_");
    let type_name = |name: &str| name.rsplit("::").next().unwrap_or(name).to_owned();
    let included_names: BTreeSet<String> = included.iter().map(|t| type_name(&t.name)).collect();
    let from = format!(
        "`{}` {} ({})",
        models.name,
        models.version,
        models.source.as_deref().unwrap_or_default()
    );
    let declared = sources.and_then(|dir| {
        scan::Sources::read_crate(&dir.join("src"))
            .ok()?
            .sharded_types()
            .ok()
    });
    match declared {
        Some(declared) => {
            let missing: Vec<&ShardedType> = declared
                .iter()
                .filter(|t| {
                    !included_names.contains(&t.name)
                        && !included.iter().any(|i| i.description == t.description)
                })
                .collect();
            if missing.is_empty() {
                return None;
            }
            // Each type by its path: the crate, the modules it is declared in, its name.
            let path = |t: &ShardedType| {
                std::iter::once(crate_name.as_str())
                    .chain(t.module.iter().map(String::as_str))
                    .chain(std::iter::once(t.name.as_str()))
                    .collect::<Vec<_>>()
                    .join("::")
            };
            let lines: Vec<String> = missing
                .iter()
                .map(|t| format!(".include(\"{0}\", &{0}::DESCRIPTION)", path(t)))
                .collect();
            Some(format!(
                "{from} declares sharded types this file does not include: {}. A crate cargo fetched writes its indexes only into its own OUT_DIR, so without them their queries have no index in production; add to this build.rs (with `{}` as a build-dependency): {}",
                missing
                    .iter()
                    .map(|t| format!("`{}`", path(t)))
                    .collect::<Vec<_>>()
                    .join(", "),
                models.name,
                lines.join(" ")
            ))
        }
        None => {
            let any_included = included.iter().any(|t| {
                t.name
                    .split("::")
                    .next()
                    .is_some_and(|first| first == crate_name)
            });
            (!any_included).then(|| {
                format!(
                    "{from} depends on sharded and this file includes none of its types: a crate cargo fetched writes its indexes only into its own OUT_DIR, so if it declares sharded types, include each one the app queries (`.include(\"{crate_name}::Type\", &{crate_name}::Type::DESCRIPTION)`, with `{}` as a build-dependency)",
                    models.name
                )
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = r#"
version = 4

[[package]]
name = "app"
version = "0.1.0"
dependencies = ["models", "serde", "sharded-runtime"]

[[package]]
name = "models"
version = "0.2.0"
source = "git+file:///repos/models#0123456789abcdef0123456789abcdef01234567"
dependencies = ["serde", "sharded-runtime", "units 1.0.0"]

[[package]]
name = "units"
version = "1.0.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = ["sharded-derive"]

[[package]]
name = "local-models"
version = "0.1.0"
dependencies = ["sharded-runtime"]

[[package]]
name = "unrelated"
version = "0.1.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = ["sharded-runtime"]

[[package]]
name = "sharded-runtime"
version = "0.1.0"
source = "git+file:///repos/sharded#89abcdef0123456789abcdef0123456789abcdef"
dependencies = ["sharded-derive", "serde"]

[[package]]
name = "sharded-derive"
version = "0.1.0"
source = "git+file:///repos/sharded#89abcdef0123456789abcdef0123456789abcdef"

[[package]]
name = "serde"
version = "1.0.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
"#;

    fn package(dir: &Path, home: Option<&Path>) -> Package {
        Package {
            name: "app".into(),
            version: "0.1.0".into(),
            dir: dir.to_path_buf(),
            cargo_home: home.map(Path::to_path_buf),
        }
    }

    #[test]
    fn the_fetched_crates_depending_on_sharded_in_the_apps_graph_are_models_crates() {
        let lock: Lock = toml::from_str(LOCK).unwrap();
        let names: Vec<String> = models_crates(&lock, &package(Path::new("/app"), None))
            .into_iter()
            .map(|p| p.name)
            .collect();
        // `units` is a dependency of a dependency; `local-models` is the user's own (no
        // source) and `unrelated` is not in the app's graph; sharded's crates are not models.
        assert_eq!(names, ["models", "units"]);
    }

    #[test]
    fn a_forgotten_type_is_named_with_its_include_line_and_an_unread_crate_generically() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let checkout = home.join("git/checkouts/models-1a2b3c/0123456/crates/models");
        std::fs::create_dir_all(checkout.join("src")).unwrap();
        std::fs::write(
            checkout.join("Cargo.toml"),
            "[package]\nname = \"models\"\nversion = \"0.2.0\"\n",
        )
        .unwrap();
        std::fs::write(
            checkout.join("src/lib.rs"),
            r#"
#[derive(Sharded)]
#[sharded(shards = 3, order_by = "at")]
pub struct Reading { #[sharded(index)] pub sensor: String, pub at: i64 }

#[derive(Sharded)]
#[sharded(shards = 3, order_by = "at")]
pub struct Alarm { pub at: i64 }

pub mod fleet {
    #[derive(Sharded)]
    #[sharded(shards = 3, order_by = "at")]
    pub struct Ping { pub at: i64 }
}

pub mod yard;
"#,
        )
        .unwrap();
        std::fs::write(
            checkout.join("src/yard.rs"),
            "#[derive(Sharded)]\n#[sharded(shards = 2, order_by = \"at\")]\npub struct Crane { pub at: i64 }\n",
        )
        .unwrap();
        let app = dir.path().join("app");
        std::fs::create_dir_all(&app).unwrap();
        std::fs::write(app.join("Cargo.lock"), LOCK).unwrap();
        let alarm = scan::sharded_types(
            Path::new("lib.rs"),
            &std::fs::read_to_string(checkout.join("src/lib.rs")).unwrap(),
        )
        .unwrap()
        .remove(1);
        let mut included = alarm.clone();
        included.name = "models::Alarm".into();
        let warnings =
            forgotten_includes(&package(&app, Some(&home)), std::slice::from_ref(&included));
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        // Each line names the type by its path: in a module of the crate, through it.
        for line in [
            r#".include("models::Reading", &models::Reading::DESCRIPTION)"#,
            r#".include("models::fleet::Ping", &models::fleet::Ping::DESCRIPTION)"#,
            r#".include("models::yard::Crane", &models::yard::Crane::DESCRIPTION)"#,
        ] {
            assert!(warnings[0].contains(line), "{line}: {warnings:?}");
        }
        assert!(!warnings[0].contains("models::Ping"), "{warnings:?}");
        assert!(!warnings[0].contains("Alarm"), "{warnings:?}");
        // `units` has no sources in the cache: named, as a crate none of whose types is in.
        assert!(warnings[1].starts_with("`units` 1.0.0"), "{warnings:?}");
        // Everything included: nothing to say of `models`.
        let mut reading = scan::sharded_types(
            Path::new("lib.rs"),
            &std::fs::read_to_string(checkout.join("src/lib.rs")).unwrap(),
        )
        .unwrap()
        .remove(0);
        reading.name = "models::Reading".into();
        let mut modules = scan::Sources::read_crate(&checkout.join("src"))
            .ok()
            .expect("the models' sources read")
            .sharded_types()
            .unwrap();
        modules.retain(|t| !t.module.is_empty());
        assert_eq!(modules.len(), 2);
        for t in &mut modules {
            t.name = format!("models::{}::{}", t.module.join("::"), t.name);
        }
        let mut all = vec![included, reading];
        all.extend(modules);
        let warnings = forgotten_includes(&package(&app, Some(&home)), &all);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("`units`"), "{warnings:?}");
    }
}
