//! The code the derive generates for a few models, pretty-printed and pinned in
//! `snapshots/*.rs`, so that a change to generated code is a visible diff in review. After an
//! intended change: `SHARDED_SNAPSHOTS=overwrite cargo test -p sharded-derive`.

use std::path::PathBuf;

/// The models, each a struct as a user writes it (its `Sharded` derive implied).
const MODELS: &[(&str, &str)] = &[
    (
        "instrument",
        r#"
        #[serde(rename_all = "camelCase")]
        #[sharded(shard_values = ["x", "y", "z"], order_by = "timestamp")]
        #[sharded(index(exchange, instrument_type))]
        pub struct Instrument {
            symbol: String,
            #[sharded(index(currency: String))]
            price: Price,
            #[sharded(index)]
            exchange: String,
            #[sharded(index)]
            instrument_type: String,
            timestamp: FirestoreTimestamp,
        }
        "#,
    ),
    (
        "message",
        r#"
        #[serde(rename_all = "camelCase")]
        #[sharded(
            shards = 3,
            order_by = "sent_at",
            parent = "rooms",
            collection = "messages",
            collection_group,
            server_timestamp,
            reversible
        )]
        pub struct Message {
            #[sharded(index)]
            pub author: String,
            pub text: String,
            #[sharded(contains)]
            pub mentions: Vec<String>,
            pub sent_at: FirestoreTimestamp,
        }
        "#,
    ),
    (
        "sale",
        r#"
        #[sharded(writes_per_second = 1500, order_by = "at", direction = "asc")]
        struct Sale {
            #[sharded(index)]
            region: String,
            #[sharded(index)]
            channel: String,
            #[sharded(aggregate(all, region))]
            amount: i64,
            #[sharded(aggregate)]
            qty: u32,
            #[sharded(range(all, channel))]
            discount: f64,
            #[sharded(range)]
            rating: Option<i32>,
            at: i64,
        }
        "#,
    ),
    (
        "reading",
        r#"
        #[sharded(
            shard_values = ["c", "d"],
            previous(shard_values = ["a", "b", "c"], since = "2026-11-22T19:00:00Z"),
            order_by = "at",
            collection = "moving"
        )]
        pub(crate) struct Reading {
            #[sharded(index)]
            pub venue: String,
            pub at: FirestoreTimestamp,
            pub seq: i64,
        }
        "#,
    ),
];

fn snapshot(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(format!("{name}.rs"))
}

/// The derive's output for `source`, as pretty-printed Rust.
fn expanded(source: &str) -> String {
    let input: syn::DeriveInput = syn::parse_str(source).expect("a model parses");
    let tokens = crate::expand::derive(&input);
    let file: syn::File = syn::parse2(tokens).expect("the derive generates items");
    prettyplease::unparse(&file)
}

#[test]
fn generated_code_is_what_the_snapshots_pin() {
    let overwrite = std::env::var("SHARDED_SNAPSHOTS").is_ok_and(|v| v == "overwrite");
    let mut stale = Vec::new();
    for (name, source) in MODELS {
        let generated = expanded(source);
        let path = snapshot(name);
        if overwrite {
            std::fs::write(&path, &generated).unwrap();
            continue;
        }
        let pinned = std::fs::read_to_string(&path).unwrap_or_default();
        if pinned != generated {
            stale.push(format!(
                "{}: the derive's output changed; review it and run with SHARDED_SNAPSHOTS=overwrite",
                path.display()
            ));
        }
    }
    assert!(stale.is_empty(), "{}", stale.join("\n"));
}

/// Every model in the list has a snapshot, and every snapshot a model.
#[test]
fn every_snapshot_is_of_a_listed_model() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut names: Vec<String> = MODELS
        .iter()
        .map(|(name, _)| format!("{name}.rs"))
        .collect();
    names.sort();
    assert_eq!(files, names);
}
