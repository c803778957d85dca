//! Compares the public API of published crates with the snapshot kept in the repository, so
//! that a change to it is a visible diff in review and CI fails until the snapshot is updated.
//!
//! ```text
//! sharded-public-api <rustdoc JSON dir> <snapshot dir> <crate>...
//! ```
//!
//! Each crate's API is rendered from `<rustdoc JSON dir>/<crate>.json` (made by
//! `RUSTC_BOOTSTRAP=1 cargo rustdoc -p <crate> -- -Z unstable-options --output-format json`)
//! and compared with `<snapshot dir>/<crate>.txt`; where `<crate>.hidden.json` is there (the
//! same with `--document-hidden-items`), the root's hidden re-exports are added. With
//! `SHARDED_PUBLIC_API=overwrite` the snapshots are written instead.

mod render;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [json_dir, snapshot_dir, crates @ ..] = args.as_slice() else {
        eprintln!("usage: sharded-public-api <rustdoc JSON dir> <snapshot dir> <crate>...");
        return ExitCode::from(2);
    };
    let overwrite = std::env::var("SHARDED_PUBLIC_API").is_ok_and(|v| v == "overwrite");
    let mut changed = false;
    for name in crates {
        let json_path = PathBuf::from(json_dir).join(format!("{}.json", name.replace('-', "_")));
        let text = match std::fs::read_to_string(&json_path) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("{}: {error}", json_path.display());
                return ExitCode::from(2);
            }
        };
        let json: serde_json::Value = match serde_json::from_str(&text) {
            Ok(json) => json,
            Err(error) => {
                eprintln!("{}: {error}", json_path.display());
                return ExitCode::from(2);
            }
        };
        let mut lines = match render::render(&json) {
            Ok(lines) => lines,
            Err(error) => {
                eprintln!("{}: {error}", json_path.display());
                return ExitCode::from(2);
            }
        };
        let hidden_path = json_path.with_extension("hidden.json");
        if let Ok(text) = std::fs::read_to_string(&hidden_path) {
            let hidden = serde_json::from_str(&text)
                .map_err(|error| error.to_string())
                .and_then(|json| render::hidden_root_uses(&json));
            match hidden {
                Ok(hidden) => lines.extend(hidden),
                Err(error) => {
                    eprintln!("{}: {error}", hidden_path.display());
                    return ExitCode::from(2);
                }
            }
        }
        let mut rendered = lines.join("\n");
        rendered.push('\n');
        let snapshot = PathBuf::from(snapshot_dir).join(format!("{name}.txt"));
        let kept = std::fs::read_to_string(&snapshot).unwrap_or_default();
        if kept == rendered {
            continue;
        }
        if overwrite {
            std::fs::create_dir_all(snapshot_dir).expect("the snapshot directory can be made");
            std::fs::write(&snapshot, &rendered).expect("the snapshot can be written");
            eprintln!("{} updated", snapshot.display());
            continue;
        }
        changed = true;
        eprintln!(
            "the public API of {name} differs from {} (- kept, + now):",
            snapshot.display()
        );
        let kept: std::collections::BTreeSet<&str> = kept.lines().collect();
        let now: std::collections::BTreeSet<&str> = lines.iter().map(String::as_str).collect();
        for line in kept.difference(&now) {
            eprintln!("- {line}");
        }
        for line in now.difference(&kept) {
            eprintln!("+ {line}");
        }
    }
    if changed {
        eprintln!(
            "If the change is meant, run the same with SHARDED_PUBLIC_API=overwrite and commit the snapshots (a removed or changed line is a breaking change)."
        );
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
