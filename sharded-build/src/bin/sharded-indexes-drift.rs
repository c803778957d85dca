//! Compares the repository's `firestore.indexes.json` with what is deployed:
//!
//! ```sh
//! firebase firestore:indexes --project my-project > deployed.json
//! cargo run -p sharded-build --bin sharded-indexes-drift -- firestore.indexes.json deployed.json
//! ```
//!
//! Prints every index or field override that is missing from the deployment, extra in it, or
//! different, and exits with 1 when there is any (2 when a file cannot be read), so CI can
//! guard production as well as the repository.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, deployed] = args.as_slice() else {
        eprintln!("usage: sharded-indexes-drift <firestore.indexes.json> <deployed.json>");
        return ExitCode::from(2);
    };
    let read = |path: &String| std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"));
    let drift = read(file)
        .and_then(|file_text| Ok((file_text, read(deployed)?)))
        .and_then(|(file_text, deployed_text)| {
            sharded_build::deployed_drift(&file_text, &deployed_text)
        });
    match drift {
        Err(error) => {
            eprintln!("sharded-indexes-drift: {error}");
            ExitCode::from(2)
        }
        Ok(drift) if drift.is_empty() => {
            println!("no drift: {deployed} has every index and field override of {file}");
            ExitCode::SUCCESS
        }
        Ok(drift) => {
            for line in &drift {
                println!("{line}");
            }
            println!(
                "{} difference(s) between {file} and {deployed}",
                drift.len()
            );
            ExitCode::from(1)
        }
    }
}
