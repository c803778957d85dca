//! Finds the sharded types in a crate's sources, read by the same front end as the derive.

use std::path::{Path, PathBuf};

use sharded_internals::{Ctxt, Direction};

/// What the index plan needs of one `#[derive(Sharded)]` type, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardedType {
    /// The Rust type name, for messages.
    pub name: String,
    /// The file it is declared in.
    pub file: PathBuf,
    pub collection: String,
    /// The shard field's path (quoted where needed), as in the index file.
    pub shard_field: String,
    pub order_field: String,
    pub direction: sharded_indexes::Direction,
    pub indexed_fields: Vec<String>,
}

impl ShardedType {
    /// Plans this type's indexes with the same function as `Sharded::indexes()`.
    pub fn plan(&self) -> sharded_indexes::IndexPlan {
        crate::merge::Managed::of(self).plan()
    }
}

/// Every `.rs` file below `dir`, sorted, so the output does not depend on directory order.
pub fn rust_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The sharded types declared in `source`. Types whose attributes do not validate are left
/// out: compiling the crate reports them.
pub fn sharded_types(file: &Path, source: &str) -> Result<Vec<ShardedType>, syn::Error> {
    let parsed = syn::parse_file(source)?;
    let mut found = Vec::new();
    collect(file, &parsed.items, &mut found);
    Ok(found)
}

fn collect(file: &Path, items: &[syn::Item], found: &mut Vec<ShardedType>) {
    for item in items {
        match item {
            syn::Item::Struct(item) if derives_sharded(&item.attrs) && !test_only(&item.attrs) => {
                let input = syn::DeriveInput::from(item.clone());
                if let Some(found_type) = read(file, &input) {
                    found.push(found_type);
                }
            }
            syn::Item::Mod(module) if !test_only(&module.attrs) => {
                if let Some((_, items)) = &module.content {
                    collect(file, items, found);
                }
            }
            _ => {}
        }
    }
}

fn read(file: &Path, input: &syn::DeriveInput) -> Option<ShardedType> {
    let cx = Ctxt::new();
    let container = sharded_internals::parse(&cx, input);
    let model = sharded_internals::validate(&cx, &container);
    let valid = cx.check().is_ok();
    let model = model.filter(|_| valid)?;
    Some(ShardedType {
        name: model.ident.to_string(),
        file: file.to_path_buf(),
        collection: model.collection.clone(),
        shard_field: model.shard_path.clone(),
        order_field: model.order.path.clone(),
        direction: match model.order.direction {
            Direction::Ascending => sharded_indexes::Direction::Ascending,
            Direction::Descending => sharded_indexes::Direction::Descending,
        },
        indexed_fields: model
            .indexes
            .iter()
            .map(|index| index.path.clone())
            .collect(),
    })
}

/// `#[derive(.., Sharded, ..)]`, by any path ending in `Sharded`.
fn derives_sharded(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("derive"))
        .any(|attr| {
            let mut sharded = false;
            let _ = attr.parse_nested_meta(|meta| {
                sharded |= meta
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "Sharded");
                Ok(())
            });
            sharded
        })
}

/// `#[cfg(test)]`: not part of what the crate deploys.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg")
            && attr
                .parse_args::<syn::Ident>()
                .is_ok_and(|ident| ident == "test")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"
        use sharded_runtime::Sharded;

        #[derive(Serialize, Deserialize, Sharded)]
        #[serde(rename_all = "camelCase")]
        #[sharded(shard_values = ["x", "y", "z"], order_by = "timestamp")]
        pub struct Instrument {
            #[sharded(index(currency: String))]
            price: Price,
            #[sharded(index)]
            exchange: String,
            #[sharded(index)]
            instrument_type: String,
            timestamp: FirestoreTimestamp,
        }

        mod nested {
            #[derive(sharded_runtime::Sharded)]
            #[sharded(shards = 2, order_by = "at", direction = "asc", collection = "ticks")]
            struct Tick { #[sharded(index)] venue: String, at: i64 }
        }

        #[cfg(test)]
        mod tests {
            #[derive(Sharded)]
            #[sharded(shards = 2, order_by = "at")]
            struct OnlyInTests { at: i64 }
        }

        #[derive(Sharded)]
        #[sharded(shards = 0, order_by = "at")]
        struct Invalid { at: i64 }

        #[derive(Serialize)]
        struct NotSharded { at: i64 }
    "#;

    #[test]
    fn finds_valid_sharded_types_with_serde_names() {
        let found = sharded_types(Path::new("src/lib.rs"), SOURCE).unwrap();
        let names: Vec<&str> = found.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["Instrument", "Tick"]);
        assert_eq!(
            found[0].indexed_fields,
            ["price.currency", "exchange", "instrumentType"]
        );
        assert_eq!(found[0].collection, "instruments");
        assert_eq!(found[1].collection, "ticks");
        assert_eq!(found[1].direction, sharded_indexes::Direction::Ascending);
    }
}
