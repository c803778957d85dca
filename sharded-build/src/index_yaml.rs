//! `index.yaml` for Firestore in Datastore mode: the same plan as `firestore.indexes.json`,
//! each index a kind's (`sharded_indexes::datastore`), kept in a fenced block of the user's own
//! file so that their entries, comments and order stay as they wrote them. The block is the
//! build's: it is replaced on every build, and removed with the last sharded type.

use serde::Deserialize;
use sharded_indexes::Direction;
use sharded_indexes::datastore::{KindIndex, kind_indexes, property_path};

use crate::ShardedType;

/// What the merge made of the file: its new text, and what the user should know.
#[derive(Debug)]
pub(crate) struct Merged {
    pub(crate) text: String,
    pub(crate) warnings: Vec<String>,
}

/// `index.yaml` as the Datastore tools read it; other keys are the user's.
#[derive(Debug, Default, Deserialize)]
struct IndexFile {
    #[serde(default)]
    indexes: Option<Vec<Entry>>,
}

#[derive(Debug, Deserialize)]
struct Entry {
    kind: String,
    #[serde(default)]
    ancestor: Option<YesNo>,
    #[serde(default)]
    properties: Vec<Property>,
}

#[derive(Debug, Deserialize)]
struct Property {
    name: String,
    #[serde(default)]
    direction: Option<String>,
}

/// `ancestor:` as written: `yes`/`no`, which YAML 1.1 readers take for booleans and YAML 1.2
/// ones for strings.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum YesNo {
    Bool(bool),
    Text(String),
}

/// Every index of the `index.yaml` text `text`, as the Datastore tools read it: what a test
/// checks a query's need against ([`KindIndex::serves`]). A direction left out is ascending.
pub fn read_index_yaml(text: &str) -> Result<Vec<KindIndex>, String> {
    let file = parse(text)?;
    file.indexes
        .unwrap_or_default()
        .into_iter()
        .map(|entry| {
            let ancestor = match entry.ancestor {
                None => false,
                Some(YesNo::Bool(b)) => b,
                Some(YesNo::Text(text)) => match text.as_str() {
                    "yes" | "true" => true,
                    "no" | "false" => false,
                    other => return Err(format!("`ancestor: {other}` is neither yes nor no")),
                },
            };
            let properties = entry
                .properties
                .into_iter()
                .map(|property| {
                    let direction = match property.direction.as_deref() {
                        None | Some("asc") | Some("ascending") => Direction::Ascending,
                        Some("desc") | Some("descending") => Direction::Descending,
                        Some(other) => {
                            return Err(format!("`direction: {other}` is neither asc nor desc"));
                        }
                    };
                    Ok((property.name, direction))
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok(KindIndex {
                kind: entry.kind,
                ancestor,
                properties,
            })
        })
        .collect()
}

fn begin_marker(crate_name: &str) -> String {
    format!("# sharded-build {crate_name}: begin")
}

fn end_marker(crate_name: &str) -> String {
    format!("# sharded-build {crate_name}: end")
}

/// Merges the indexes of `types` into `on_disk` (the file's text, if it exists) as the block
/// of `crate_name`.
pub(crate) fn merge(
    on_disk: Option<&str>,
    types: &[ShardedType],
    crate_name: &str,
) -> Result<Merged, String> {
    let (begin, end) = (begin_marker(crate_name), end_marker(crate_name));
    let own = crate::fence::without_block(on_disk.unwrap_or(""), &begin, &end)?;
    let users: IndexFile = parse(&own)?;
    let users = users.indexes.unwrap_or_default();
    let mut warnings = Vec::new();
    let mut entries: Vec<KindIndex> = Vec::new();
    for ty in types {
        let indexes = ty
            .description
            .with(kind_indexes)
            .map_err(|why| format!("{} ({}): {why}", ty.name, ty.file.display()))?;
        for index in indexes {
            if !entries.contains(&index) {
                entries.push(index);
            }
        }
        ty.description.with(|spec| {
            let order = property_path(spec.order_field);
            let shard = property_path(spec.shard_field);
            for entry in users.iter().filter(|entry| entry.kind == spec.collection) {
                let holds = |path: &Option<String>| {
                    entry
                        .properties
                        .iter()
                        .any(|property| path.as_ref() == Some(&property.name))
                };
                if holds(&order) && !holds(&shard) {
                    warnings.push(format!(
                        "index.yaml: an index of kind `{}` holds `{}` without `{}`: its writes keep the hotspot sharding removes (delete the entry unless a query needs it)",
                        spec.collection, spec.order_field, spec.shard_field
                    ));
                }
            }
        });
    }
    if entries.is_empty() {
        return Ok(Merged {
            text: own,
            warnings,
        });
    }
    let indent = list_indent(&own);
    let mut text = match own.trim().is_empty() {
        true => "indexes:\n".to_owned(),
        false if users_list_is_flow(&own) => {
            return Err(
                "`indexes:` is written in flow style (`[...]`); write it as a block list (`- kind: ...`) so the build can add its entries"
                    .into(),
            );
        }
        false => {
            let mut text = own.clone();
            if !text.ends_with('\n') {
                text.push('\n');
            }
            if !text.lines().any(|line| line.trim_end() == "indexes:") {
                text.push_str("indexes:\n");
            }
            text
        }
    };
    text.push_str(&format!("{begin}\n"));
    text.push_str(&format!(
        "{indent}# The composite indexes of the sharded kinds of `{crate_name}`, from `#[derive(Sharded)]`;\n\
         {indent}# this block is rewritten on every build. Each starts with the shard property, so its\n\
         {indent}# writes spread over the shard values. Datastore mode keeps a built-in index of every\n\
         {indent}# indexed property, the order property's too: no sharded query uses it, and excluding the\n\
         {indent}# property would drop it from these indexes as well.\n"
    ));
    for entry in &entries {
        for line in entry.to_yaml().lines() {
            text.push_str(&format!("{indent}{line}\n"));
        }
    }
    text.push_str(&format!("{end}\n"));
    // What was written must read back as the user's entries and ours.
    let written: IndexFile = parse(&text)?;
    let count = written.indexes.map_or(0, |indexes| indexes.len());
    if count != users.len() + entries.len() {
        return Err(format!(
            "the merged file reads as {count} indexes, not the {} expected; write `indexes:` as the file's last key, a block list",
            users.len() + entries.len()
        ));
    }
    Ok(Merged { text, warnings })
}

fn parse(text: &str) -> Result<IndexFile, String> {
    if text.trim().is_empty() {
        return Ok(IndexFile::default());
    }
    serde_yaml_ng::from_str(text)
        .map_err(|error| format!("not an index.yaml this tool can merge into: {error}"))
}

/// The indentation of the user's list items, so ours continue their list.
fn list_indent(text: &str) -> String {
    text.lines()
        .skip_while(|line| line.trim_end() != "indexes:")
        .skip(1)
        .find(|line| line.trim_start().starts_with("- "))
        .map(|line| line[..line.len() - line.trim_start().len()].to_owned())
        .unwrap_or_default()
}

fn users_list_is_flow(text: &str) -> bool {
    text.lines().any(|line| {
        line.strip_prefix("indexes:")
            .is_some_and(|rest| rest.trim_start().starts_with('['))
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use sharded_indexes::CollectionDescription;

    use super::*;

    fn tick() -> ShardedType {
        let spec = CollectionDescription {
            collection: "Tick",
            shard_field: "shard",
            shard_values: &["0", "1", "2"],
            order_field: "at",
            direction: Direction::Descending,
            indexed_fields: &["venue"],
            ..CollectionDescription::EMPTY
        };
        ShardedType {
            name: "Tick".into(),
            module: Vec::new(),
            file: PathBuf::from("src/lib.rs"),
            description: (&spec).into(),
        }
    }

    const USERS: &str = "# my indexes\nindexes:\n\n  - kind: Task\n    ancestor: no\n    properties:\n      - name: done\n      - name: priority\n        direction: desc\n";

    #[test]
    fn a_new_file_holds_the_block_alone() {
        let merged = merge(None, &[tick()], "app").unwrap();
        assert!(
            merged
                .text
                .starts_with("indexes:\n# sharded-build app: begin\n")
        );
        assert!(merged.text.contains(
            "- kind: Tick\n  ancestor: no\n  properties:\n  - name: shard\n    direction: desc\n  - name: venue\n    direction: asc\n  - name: at\n    direction: desc\n"
        ));
        assert!(merged.text.ends_with("# sharded-build app: end\n"));
    }

    #[test]
    fn the_users_entries_and_comments_stay_and_the_block_follows_their_indentation() {
        let merged = merge(Some(USERS), &[tick()], "app").unwrap();
        assert!(merged.text.starts_with(USERS), "{}", merged.text);
        assert!(merged.text.contains("\n  - kind: Tick\n    ancestor: no\n"));
        let read = read_index_yaml(&merged.text).unwrap();
        assert_eq!(read.len(), 3);
        assert_eq!(
            read[0].properties,
            [
                ("done".to_owned(), Direction::Ascending),
                ("priority".to_owned(), Direction::Descending)
            ]
        );
        assert!(
            read[1..]
                .iter()
                .all(|index| index.kind == "Tick" && !index.ancestor)
        );
        // Merging again changes nothing; without sharded types the block goes.
        let again = merge(Some(&merged.text), &[tick()], "app").unwrap();
        assert_eq!(again.text, merged.text);
        assert_eq!(merge(Some(&merged.text), &[], "app").unwrap().text, USERS);
    }

    #[test]
    fn another_crates_block_is_left_alone() {
        let other = merge(Some(USERS), &[tick()], "other").unwrap().text;
        let mut ticks = tick();
        ticks.description.collection = "Tock".into();
        let both = merge(Some(&other), &[ticks], "app").unwrap().text;
        assert!(both.starts_with(&other));
        assert!(both.contains("- kind: Tock"));
        assert_eq!(parse(&both).unwrap().indexes.unwrap().len(), 5);
    }

    #[test]
    fn an_entry_on_the_order_property_without_the_shard_is_warned_about() {
        let file = "indexes:\n- kind: Tick\n  properties:\n  - name: venue\n  - name: at\n    direction: desc\n";
        let merged = merge(Some(file), &[tick()], "app").unwrap();
        assert_eq!(merged.warnings.len(), 1, "{:?}", merged.warnings);
        assert!(merged.warnings[0].contains("`at` without `shard`"));
    }

    #[test]
    fn a_file_it_cannot_extend_is_an_error_not_a_loss() {
        assert!(
            merge(Some("indexes: []\n"), &[tick()], "app")
                .unwrap_err()
                .contains("flow style")
        );
        assert!(
            merge(Some("indexes:\n- kind: [\n"), &[tick()], "app")
                .unwrap_err()
                .contains("not an index.yaml")
        );
        assert!(
            merge(Some("# sharded-build app: begin\n"), &[tick()], "app")
                .unwrap_err()
                .contains("without")
        );
    }

    /// Random user files: entries in any indentation the list allows, comments between
    /// them, other keys before `indexes:`, names that need quoting. For each, with random
    /// sharded types: the user's text stays as it was, the file reads as the user's entries
    /// then the plan's, merging again changes nothing, and merging without the types gives
    /// the user's text back.
    #[test]
    fn any_users_file_keeps_its_text_and_entries_and_merges_idempotently() {
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(56);
        const NAMES: [&str; 6] = ["done", "priority", "x-y", "yes", "région", "a.b"];
        for case in 0..300 {
            let indent = ["", "  ", "    "][rng.random_range(0..3)];
            let mut text = String::new();
            if rng.random_bool(0.3) {
                text.push_str("# indexes of the app\n");
            }
            text.push_str("indexes:\n");
            let mut expected: Vec<KindIndex> = Vec::new();
            for entry in 0..rng.random_range(0..5) {
                if rng.random_bool(0.3) {
                    text.push_str(&format!("{indent}# entry {entry}\n"));
                }
                let index = KindIndex {
                    kind: ["Task", "Tick", "Other kind"][rng.random_range(0..3)].into(),
                    ancestor: rng.random_bool(0.5),
                    properties: (0..rng.random_range(1..4))
                        .map(|_| {
                            let direction = match rng.random_bool(0.5) {
                                true => Direction::Ascending,
                                false => Direction::Descending,
                            };
                            (
                                NAMES[rng.random_range(0..NAMES.len())].to_owned(),
                                direction,
                            )
                        })
                        .collect(),
                };
                for line in index.to_yaml().lines() {
                    text.push_str(&format!("{indent}{line}\n"));
                }
                expected.push(index);
            }
            if rng.random_bool(0.3) {
                text.push_str("# the end\n");
            }
            let mut types = vec![tick()];
            if rng.random_bool(0.5) {
                let mut tock = tick();
                tock.description.collection = "Tock".into();
                tock.description.parent_collections = vec!["Room".into()];
                tock.description.collection_group = rng.random_bool(0.5);
                types.push(tock);
            }
            let what = format!("case {case}:\n{text}");
            let merged = merge(Some(&text), &types, "app").unwrap_or_else(|e| panic!("{what}{e}"));
            assert!(merged.text.starts_with(&text), "{what}");
            let read = read_index_yaml(&merged.text).unwrap();
            let planned: Vec<KindIndex> = types
                .iter()
                .flat_map(|ty| ty.description.with(kind_indexes).unwrap())
                .collect();
            assert_eq!(read[..expected.len()], expected[..], "{what}");
            assert_eq!(read[expected.len()..], planned[..], "{what}");
            let again = merge(Some(&merged.text), &types, "app").unwrap();
            assert_eq!(again.text, merged.text, "{what}");
            assert_eq!(
                merge(Some(&merged.text), &[], "app").unwrap().text,
                text,
                "{what}"
            );
        }
    }
}
