//! The TypeScript module `sharded-build` writes beside the index file (`firestore.sharded.ts`),
//! for types of every shape the derive takes (counters, vectors, ranges and range sets, sums
//! for some queries, a quoted field name, maps, options, parents and collection groups, a
//! server time, an expiry, integers of narrower types), type-checked by tsc against the client with code
//! that uses each: the module compiles, its interfaces hold the stored fields with their
//! types, and a misspelt field, counter or filter does not compile.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use serde::{Deserialize, Serialize};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::{FirestoreTimestamp, FirestoreVector};

use crate::security_rules::temp_dir;
use crate::typescript_client::client;

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 4,
    order_by = "at",
    reversible,
    collection = "ts_every",
    ranges(level, weight),
    expire_at = "expires"
)]
struct Everything {
    #[sharded(index)]
    device: String,
    #[sharded(range)]
    level: i32,
    #[sharded(range)]
    weight: f64,
    #[sharded(aggregate(all, device))]
    amount: i64,
    #[sharded(contains)]
    tags: Vec<String>,
    #[sharded(vector(dimension = 3))]
    embedding: FirestoreVector,
    #[sharded(counter(shards = 2))]
    visits: u32,
    #[serde(rename = "taken at")]
    taken: Option<bool>,
    meta: HashMap<String, String>,
    at: FirestoreTimestamp,
    expires: FirestoreTimestamp,
}

#[derive(Serialize, Deserialize, Sharded)]
#[sharded(
    shards = 3,
    order_by = "sent",
    server_timestamp,
    parent = "rooms",
    collection_group,
    collection = "ts_chat"
)]
struct Chat {
    #[sharded(index)]
    author: String,
    text: Option<String>,
    sent: FirestoreTimestamp,
}

/// What code written against the module may and may not do: each `@ts-expect-error` line
/// must fail to compile.
const USES: &str = r#"import { ShardedCollection, shardedCollectionGroup } from "CLIENT/src/index.ts";
import { Chat, Everything } from "./firestore.sharded.ts";

declare const db: ConstructorParameters<typeof ShardedCollection>[0];
const every = new ShardedCollection(db, Everything);
every.query().where("device", "==", "d").where("level", ">", 3);
every.query().where("weight", "<", 1).where("tags", "array-contains", "x");
every.query().where("device", "==", "d").unexpired(new Date());
// @ts-expect-error: `unexpired` takes a time
every.query().unexpired("soon");
// @ts-expect-error: no query on `amount`
every.query().where("amount", "==", 1);
void every.increment("e1", "visits", 1);
// @ts-expect-error: `amount` is no counter
void every.increment("e1", "amount", 1);
const doc = (await every.query().get()).docs[0]!.data();
const level: number = doc.level;
const taken: boolean | null | undefined = doc["taken at"];
const meta: { [key: string]: unknown } = doc.meta;
const tags: unknown[] = doc.tags;
const at: Date = doc.at.toDate();
// @ts-expect-error: a field the struct does not have
void doc.takenAt;
const chats = new ShardedCollection(db, Chat, "rooms/r1");
shardedCollectionGroup(db, Chat).where("author", "==", "ann");
// @ts-expect-error: no query on `text`
chats.query().where("text", "==", "hi");
const text: string | null | undefined = (await chats.query().get()).docs[0]!.data().text;
void [level, taken, meta, tags, at, text];
"#;

#[test]
fn the_models_module_type_checks_for_types_of_every_shape() {
    let client = client();
    let dir = temp_dir("ts-models");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    sharded_build::Indexes::from_env()
        .sources(dir.join("src"))
        .output(dir.join("firestore.indexes.json"))
        .without_rules()
        .crate_name("ts-models")
        .include("Everything", &Everything::DESCRIPTION)
        .include("Chat", &Chat::DESCRIPTION)
        .run()
        .unwrap();
    let module = std::fs::read_to_string(dir.join("firestore.sharded.ts")).unwrap();
    for declared in [
        "export interface Everything {",
        "  level: number;",
        "  \"taken at\"?: boolean | null;",
        "  meta: { [key: string]: unknown };",
        "  at: ShardedTimestamp;",
        "export const Everything: TypedDescription<Everything, \"visits\", \"at\" | \"device\" | \"level\" | \"weight\" | \"expires\" | \"tags\">",
        "  expires: ShardedTimestamp;",
        "  \"expiryField\": \"expires\"",
        "export const Chat: TypedDescription<Chat, never, \"sent\" | \"author\">",
        "  text?: string | null;",
    ] {
        assert!(module.contains(declared), "{declared:?} in:\n{module}");
    }
    let client_path = client.display().to_string();
    std::fs::write(dir.join("uses.ts"), USES.replace("CLIENT", &client_path)).unwrap();
    std::fs::write(
        dir.join("tsconfig.json"),
        serde_json::json!({
            "compilerOptions": {
                "target": "ES2022", "module": "ESNext", "moduleResolution": "Bundler",
                "lib": ["ES2022", "DOM"], "strict": true, "noEmit": true, "skipLibCheck": true,
                "allowImportingTsExtensions": true,
                "paths": {"@sharded/firestore/core": [format!("{client_path}/src/core.ts")]},
            },
            "include": ["firestore.sharded.ts", "uses.ts"],
        })
        .to_string(),
    )
    .unwrap();
    let checked = tsc(&client, &dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(
        checked.status.success(),
        "tsc: {}",
        String::from_utf8_lossy(&checked.stdout)
    );
}

/// The client's pinned tsc on the project in `dir`.
fn tsc(client: &Path, dir: &Path) -> std::process::Output {
    Command::new(client.join("node_modules/.bin/tsc"))
        .args(["-p", &dir.display().to_string()])
        .output()
        .expect("tsc runs")
}
