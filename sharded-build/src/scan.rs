//! Finds the sharded types in a crate's sources, read by the same front end as the derive.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use quote::ToTokens as _;
use syn::ext::IdentExt as _;

use sharded_indexes::CollectionDescriptionBuf;
use sharded_internals::{Ctxt, IndexedField};

/// One `#[derive(Sharded)]` type found in the sources: its collection's description, owned,
/// and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardedType {
    /// The Rust type name, for messages.
    pub name: String,
    /// The module it is declared in, from its crate's root (`["fleet"]` for
    /// `pub mod fleet { pub struct Ping }`; empty at the root): with the crate's name, the
    /// type's path.
    pub module: Vec<String>,
    /// The file it is declared in.
    pub file: PathBuf,
    /// What the derive describes as `Sharded::DESCRIPTION`, nested paths resolved from the
    /// sources.
    pub description: CollectionDescriptionBuf,
}

impl ShardedType {
    /// Plans this type's indexes with the same function as `Sharded::indexes()`.
    pub fn plan(&self) -> sharded_indexes::IndexPlan {
        self.description.plan()
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

/// What the scan found in a crate's sources: the sharded structs, and the stored names of
/// the structs deriving `StoredNames`, which nested index paths go through.
#[derive(Default)]
pub struct Sources {
    /// Each sharded struct, with its file and module.
    sharded: Vec<(PathBuf, Module, syn::DeriveInput)>,
    /// By the struct's full path (its module, then its name): (Rust field name, stored name,
    /// the field's type as written where it is declared).
    stored_names: HashMap<Module, StoredFields>,
    /// Per module, what its `use` items bring in: name → path as written.
    uses: HashMap<Module, HashMap<String, Vec<String>>>,
    /// Module files declared and still to read: (file, the directory its submodules are in,
    /// its module path).
    pending: Vec<(PathBuf, PathBuf, Module)>,
    /// What the scan could not see.
    pub warnings: Vec<String>,
}

/// A module path from the crate root (`["model", "place"]`), or a struct's full path.
type Module = Vec<String>;

/// A `StoredNames` struct's fields: (Rust name, stored name, type as written).
type StoredFields = Vec<(String, String, Option<TypeRef>)>;

/// A type as a field names it: the path written, and the module it is written in.
#[derive(Debug, Clone)]
struct TypeRef {
    module: Module,
    path: Vec<String>,
}

/// Why the sources could not be read.
pub enum ReadError {
    Io(PathBuf, std::io::Error),
    Parse(PathBuf, syn::Error),
}

impl Sources {
    /// The crate whose sources are in `src`, read as the compiler does: from its roots
    /// (`lib.rs`, `main.rs`, `bin/*.rs`, `bin/*/main.rs`) along its `mod` declarations, `#[path]`
    /// included, leaving out `#[cfg(test)]` modules and files no module declares. A directory
    /// without a crate root is read whole, every `.rs` file in it.
    pub fn read_crate(src: &Path) -> Result<Sources, ReadError> {
        let mut sources = Sources::default();
        let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
            .iter()
            .map(|root| src.join(root))
            .filter(|root| root.is_file())
            .collect();
        if let Ok(bins) = std::fs::read_dir(src.join("bin")) {
            let mut bins: Vec<PathBuf> = bins
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter_map(|path| {
                    if path.extension().is_some_and(|ext| ext == "rs") {
                        Some(path)
                    } else {
                        Some(path.join("main.rs")).filter(|main| main.is_file())
                    }
                })
                .collect();
            bins.sort();
            roots.extend(bins);
        }
        if roots.is_empty() {
            let files = rust_files(src).map_err(|e| ReadError::Io(src.to_path_buf(), e))?;
            roots = files;
        }
        let mut seen = std::collections::HashSet::new();
        sources.pending = roots
            .into_iter()
            .rev()
            .map(|root| {
                let dir = root.parent().unwrap_or(src).to_path_buf();
                (root, dir, Module::new())
            })
            .collect();
        while let Some((file, dir, module)) = sources.pending.pop() {
            if !seen.insert(file.clone()) {
                continue;
            }
            let text =
                std::fs::read_to_string(&file).map_err(|e| ReadError::Io(file.clone(), e))?;
            let parsed = syn::parse_file(&text).map_err(|e| ReadError::Parse(file.clone(), e))?;
            let before = sources.pending.len();
            sources.collect(&file, &dir, &module, &parsed.items);
            // Declared modules are read in declaration order, before the rest of the stack.
            sources.pending[before..].reverse();
        }
        Ok(sources)
    }

    /// Adds the structs of one file, on its own (its `mod` declarations are not followed).
    #[cfg(test)]
    pub fn add(&mut self, file: &Path, source: &str) -> Result<(), syn::Error> {
        let parsed = syn::parse_file(source)?;
        let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
        self.collect(file, &dir, &[], &parsed.items);
        self.pending.clear();
        Ok(())
    }

    /// The valid sharded types, with nested index paths resolved through the stored names of
    /// the structs they go through. Types whose attributes do not validate are left out:
    /// compiling the crate reports them.
    pub fn sharded_types(&self) -> Result<Vec<ShardedType>, String> {
        self.sharded
            .iter()
            .filter_map(|(file, module, input)| self.read(file, module, input).transpose())
            .collect()
    }

    /// Collects `items` of `file`, the module `module`, whose submodules are in `dir`.
    fn collect(&mut self, file: &Path, dir: &Path, module: &[String], items: &[syn::Item]) {
        for item in items {
            match item {
                syn::Item::Use(item) => {
                    let mut found = Vec::new();
                    use_tree(&item.tree, &mut Vec::new(), &mut found);
                    self.uses.entry(module.to_vec()).or_default().extend(found);
                }
                syn::Item::Struct(item) if test_only(&item.attrs) => {}
                syn::Item::Struct(item) => {
                    if derives_behind_cfg_attr(&item.attrs) {
                        self.warnings.push(format!(
                            "{}: `{}` derives `Sharded` behind `cfg_attr`, which sharded-build cannot evaluate, so its indexes are not in firestore.indexes.json; derive it unconditionally, or check the file in a test with `{}::indexes().missing_from(..)`",
                            file.display(),
                            item.ident,
                            item.ident
                        ));
                    }
                    let input = syn::DeriveInput::from(item.clone());
                    if derives(&item.attrs, "StoredNames") {
                        let cx = Ctxt::new();
                        let names = sharded_internals::ast::stored_names(&cx, &input);
                        if cx.check().is_ok() {
                            let types = field_types(&input, module);
                            let names = names
                                .into_iter()
                                .filter_map(|(rust, stored)| {
                                    let ty = types.get(&rust).cloned().flatten();
                                    Some((rust, stored?, ty))
                                })
                                .collect();
                            let mut path = module.to_vec();
                            path.push(item.ident.unraw().to_string());
                            self.stored_names.insert(path, names);
                        }
                    }
                    if derives(&item.attrs, "Sharded") {
                        self.sharded
                            .push((file.to_path_buf(), module.to_vec(), input));
                    }
                }
                syn::Item::Mod(item) if !test_only(&item.attrs) => {
                    let name = item.ident.unraw().to_string();
                    let mut inner = module.to_vec();
                    inner.push(name.clone());
                    match (&item.content, path_attr(&item.attrs)) {
                        (Some((_, items)), _) => {
                            self.collect(file, &dir.join(&name), &inner, items)
                        }
                        // `#[path]` is relative to the declaring file's directory, and the file
                        // it names keeps its submodules beside it.
                        (None, Some(path)) => {
                            let target = file.parent().unwrap_or(dir).join(path);
                            let children = target.parent().unwrap_or(dir).to_path_buf();
                            self.pending.push((target, children, inner));
                        }
                        (None, None) => {
                            let flat = dir.join(format!("{name}.rs"));
                            let nested = dir.join(&name).join("mod.rs");
                            match [flat, nested].into_iter().find(|f| f.is_file()) {
                                Some(found) => self.pending.push((found, dir.join(&name), inner)),
                                None => self.warnings.push(format!(
                                    "{}: no file for `mod {name};` (the compiler will say more)",
                                    file.display()
                                )),
                            }
                        }
                    }
                }
                syn::Item::Macro(invocation) if mentions_sharded(&invocation.mac.tokens) => {
                    self.warnings.push(format!(
                        "{}: a macro mentions `Sharded`; types a macro generates are not read by sharded-build, so their indexes are not in firestore.indexes.json; check the file in a test with `T::indexes().missing_from(..)`",
                        file.display()
                    ));
                }
                _ => {}
            }
        }
    }

    fn read(
        &self,
        file: &Path,
        module: &[String],
        input: &syn::DeriveInput,
    ) -> Result<Option<ShardedType>, String> {
        let cx = Ctxt::new();
        let container = sharded_internals::parse(&cx, input);
        let model = sharded_internals::validate(&cx, &container);
        let valid = cx.check().is_ok();
        let Some(model) = model.filter(|_| valid) else {
            return Ok(None);
        };
        let indexed_fields = model
            .indexes
            .iter()
            .map(|index| self.stored_path(&model.ident.to_string(), module, &container, index))
            .collect::<Result<_, _>>()?;
        Ok(Some(ShardedType {
            name: model.ident.to_string(),
            module: module.to_vec(),
            file: file.to_path_buf(),
            description: model.description(indexed_fields),
        }))
    }

    /// The stored path of `index`: as the derive computes it from `StoredNames`, here from the
    /// sources of the structs the path goes through, each found by its path from the module
    /// that names it.
    fn stored_path(
        &self,
        type_name: &str,
        module: &[String],
        container: &sharded_internals::ast::Container,
        index: &IndexedField,
    ) -> Result<String, String> {
        if index.nested.is_empty() {
            return Ok(index.path.clone());
        }
        let field = container
            .fields
            .iter()
            .find(|field| field.ident == index.field)
            .expect("an indexed field is a field of its struct");
        let mut segments = vec![index.stored_field.clone()];
        let mut through = type_path(field.ty).map(|path| TypeRef {
            module: module.to_vec(),
            path,
        });
        for segment in &index.nested {
            let rust = syn::ext::IdentExt::unraw(segment).to_string();
            let shown = |through: &Option<TypeRef>| {
                through
                    .as_ref()
                    .map_or("its type".to_owned(), |ty| ty.path.join("::"))
            };
            let names = match &through {
                Some(ty) => self.struct_of(ty)?,
                None => None,
            }
            .ok_or_else(|| {
                format!(
                    "`{type_name}`: the nested index path through `{}` needs the stored names of `{}`, a struct deriving `StoredNames` in these sources (a type from another crate cannot be read here)",
                    index.field,
                    shown(&through)
                )
            })?;
            let (_, stored, next) =
                names
                    .iter()
                    .find(|(name, _, _)| *name == rust)
                    .ok_or_else(|| {
                        format!(
                            "`{type_name}`: `{rust}` is not a stored field of `{}`",
                            shown(&through)
                        )
                    })?;
            segments.push(stored.clone());
            through = next.clone();
        }
        Ok(sharded_internals::model::field_path(
            segments.iter().map(String::as_str),
        ))
    }

    /// The stored names of the struct `ty` names, as Rust resolves the path from its module:
    /// `crate::`, `self::`, `super::`, what the module's `use` items bring in, its own items
    /// and submodules, the crate root. A bare name nothing resolves is taken when one struct
    /// of these sources has it, and is an error when several do (rather than a guess).
    fn struct_of(&self, ty: &TypeRef) -> Result<Option<&StoredFields>, String> {
        for candidate in self.absolute(&ty.module, &ty.path, 0) {
            if let Some(names) = self.stored_names.get(&candidate) {
                return Ok(Some(names));
            }
        }
        let [name] = ty.path.as_slice() else {
            return Ok(None);
        };
        let same_name: Vec<&Module> = self
            .stored_names
            .keys()
            .filter(|path| path.last() == Some(name))
            .collect();
        match same_name.as_slice() {
            [] => Ok(None),
            [only] => Ok(self.stored_names.get(*only)),
            several => {
                let mut paths: Vec<String> = several.iter().map(|p| p.join("::")).collect();
                paths.sort();
                Err(format!(
                    "`{name}` (in `crate::{}`) could be any of {}: name it by its path, or `use` it",
                    ty.module.join("::"),
                    paths.join(", ")
                ))
            }
        }
    }

    /// The full paths `path`, written in `module`, may stand for, most likely first.
    fn absolute(&self, module: &[String], path: &[String], depth: usize) -> Vec<Module> {
        let Some((first, rest)) = path.split_first() else {
            return Vec::new();
        };
        let joined =
            |base: &[String], rest: &[String]| base.iter().chain(rest).cloned().collect::<Module>();
        match first.as_str() {
            "crate" => vec![rest.to_vec()],
            "self" => vec![joined(module, rest)],
            "super" => match module.split_last() {
                Some((_, parent)) => self.absolute(parent, &joined(&["self".into()], rest), depth),
                None => Vec::new(),
            },
            _ => {
                let imported = self
                    .uses
                    .get(module)
                    .and_then(|uses| uses.get(first))
                    .filter(|_| depth < 16);
                let mut candidates = match imported {
                    Some(target) => self.absolute(module, &joined(target, rest), depth + 1),
                    None => Vec::new(),
                };
                candidates.push(joined(module, path));
                candidates.push(path.to_vec());
                candidates
            }
        }
    }
}

/// What a `use` tree brings in: (the name it binds, the path it binds it to).
fn use_tree(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    match tree {
        syn::UseTree::Path(path) => {
            prefix.push(path.ident.unraw().to_string());
            use_tree(&path.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(name) => {
            let ident = name.ident.unraw().to_string();
            let mut full = prefix.clone();
            full.push(ident.clone());
            out.push((ident, full));
        }
        syn::UseTree::Rename(rename) => {
            let mut full = prefix.clone();
            full.push(rename.ident.unraw().to_string());
            out.push((rename.rename.unraw().to_string(), full));
        }
        syn::UseTree::Group(group) => {
            for tree in &group.items {
                use_tree(tree, prefix, out);
            }
        }
        syn::UseTree::Glob(_) => {}
    }
}

/// The sharded types declared in one `source`, nested paths resolved within it.
#[cfg(test)]
pub fn sharded_types(file: &Path, source: &str) -> Result<Vec<ShardedType>, String> {
    let mut sources = Sources::default();
    sources.add(file, source).map_err(|e| e.to_string())?;
    sources.sharded_types()
}

/// Each named field's type as written in `module`.
fn field_types(input: &syn::DeriveInput, module: &[String]) -> HashMap<String, Option<TypeRef>> {
    let syn::Data::Struct(data) = &input.data else {
        return HashMap::new();
    };
    data.fields
        .iter()
        .filter_map(|field| {
            let ident = field.ident.as_ref()?;
            let ty = type_path(&field.ty).map(|path| TypeRef {
                module: module.to_vec(),
                path,
            });
            Some((syn::ext::IdentExt::unraw(ident).to_string(), ty))
        })
        .collect()
}

/// The path a type is named by (`["crate", "model", "Price"]`), generics left out.
fn type_path(ty: &syn::Type) -> Option<Vec<String>> {
    match ty {
        syn::Type::Path(path) if path.qself.is_none() => Some(
            path.path
                .segments
                .iter()
                .map(|segment| segment.ident.unraw().to_string())
                .collect(),
        ),
        syn::Type::Group(group) => type_path(&group.elem),
        syn::Type::Paren(paren) => type_path(&paren.elem),
        _ => None,
    }
}

/// `#[derive(.., Sharded, ..)]` (or another derive `name`), by any path ending in it.
fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("derive"))
        .any(|attr| {
            let mut sharded = false;
            let _ = attr.parse_nested_meta(|meta| {
                sharded |= meta.path.segments.last().is_some_and(|s| s.ident == name);
                Ok(())
            });
            sharded
        })
}

/// `#[path = "..."]` on a module.
fn path_attr(attrs: &[syn::Attribute]) -> Option<String> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("path"))
        .find_map(|attr| match &attr.meta {
            syn::Meta::NameValue(syn::MetaNameValue {
                value:
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(path),
                        ..
                    }),
                ..
            }) => Some(path.value()),
            _ => None,
        })
}

/// `#[cfg_attr(.., derive(.., Sharded, ..))]`.
fn derives_behind_cfg_attr(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg_attr"))
        .any(|attr| mentions_sharded(&attr.meta.to_token_stream()))
}

fn mentions_sharded(tokens: &proc_macro2::TokenStream) -> bool {
    tokens.clone().into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => ident == "Sharded",
        proc_macro2::TokenTree::Group(group) => mentions_sharded(&group.stream()),
        _ => false,
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

        #[derive(Serialize, Deserialize, sharded_runtime::StoredNames)]
        #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
        struct Price { currency: String, #[serde(rename = "where")] venue: Venue }

        #[derive(StoredNames)]
        struct Venue { #[serde(rename = "venue-code")] code: u32 }

        #[derive(Serialize, Deserialize, Sharded)]
        #[serde(rename_all = "camelCase")]
        #[sharded(shard_values = ["x", "y", "z"], order_by = "timestamp")]
        pub struct Instrument {
            #[sharded(index(currency: String, venue.code: u32))]
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
    fn a_nested_path_through_a_type_it_cannot_see_is_an_error() {
        let source = r#"
            #[derive(Sharded)]
            #[sharded(shards = 2, order_by = "at")]
            struct Visit { #[sharded(index(region_code: String))] place: other::Place, at: i64 }
        "#;
        let error = sharded_types(Path::new("src/lib.rs"), source).unwrap_err();
        assert!(error.contains("`other::Place`"), "{error}");
        assert!(error.contains("StoredNames"), "{error}");
    }

    #[test]
    fn finds_valid_sharded_types_with_serde_names() {
        let found = sharded_types(Path::new("src/lib.rs"), SOURCE).unwrap();
        let names: Vec<&str> = found.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["Instrument", "Tick"]);
        assert_eq!(
            found[0].description.indexed_fields,
            [
                "price.CURRENCY",
                "price.where.`venue-code`",
                "exchange",
                "instrumentType"
            ]
        );
        assert_eq!(found[0].description.collection, "instruments");
        assert_eq!(found[1].description.collection, "ticks");
        assert_eq!(
            found[1].description.direction,
            sharded_indexes::Direction::Ascending
        );
    }

    #[test]
    fn reads_field_sets_and_aggregates_with_serde_names() {
        let source = r#"
            #[derive(Sharded)]
            #[serde(rename_all = "camelCase")]
            #[sharded(shards = 2, order_by = "at", index(venue, trade_side))]
            struct Fill {
                venue: String,
                #[serde(rename = "trade side")]
                trade_side: String,
                #[sharded(aggregate)]
                unit_price: f64,
                at: i64,
            }
        "#;
        let found = sharded_types(Path::new("src/lib.rs"), source).unwrap();
        assert_eq!(found[0].description.field_sets, [["venue", "`trade side`"]]);
        assert_eq!(found[0].description.aggregate_fields, ["unitPrice"]);
    }

    const TWO_PLACES: &str = r#"
        mod a {
            #[derive(StoredNames)]
            pub struct Place { #[serde(rename = "regionA")] region: String }

            pub mod inner {
                #[derive(Sharded)]
                #[sharded(shards = 2, order_by = "at", collection = "up")]
                struct Up { #[sharded(index(region: String))] place: super::Place, at: i64 }
            }
        }
        mod b {
            #[derive(StoredNames)]
            pub struct Place { #[serde(rename = "regionB")] region: String }

            #[derive(Sharded)]
            #[sharded(shards = 2, order_by = "at", collection = "here")]
            struct Here { #[sharded(index(region: String))] place: Place, at: i64 }
        }
        mod c {
            use crate::b::Place as Spot;

            #[derive(Sharded)]
            #[sharded(shards = 2, order_by = "at", collection = "imported")]
            struct Imported { #[sharded(index(region: String))] place: Spot, at: i64 }
        }
        #[derive(Sharded)]
        #[sharded(shards = 2, order_by = "at", collection = "by_path")]
        struct ByPath { #[sharded(index(region: String))] place: a::Place, at: i64 }
    "#;

    /// Two structs of one name in different modules: each nested path goes through the one
    /// its field names (by path, `super::`, `use ... as`, or its own module), never the last
    /// one read.
    #[test]
    fn nested_paths_resolve_structs_of_one_name_by_module() {
        let found = sharded_types(Path::new("src/lib.rs"), TWO_PLACES).unwrap();
        let paths: Vec<(&str, &str)> = found
            .iter()
            .map(|t| (t.name.as_str(), t.description.indexed_fields[0].as_str()))
            .collect();
        assert_eq!(
            paths,
            [
                ("Up", "place.regionA"),
                ("Here", "place.regionB"),
                ("Imported", "place.regionB"),
                ("ByPath", "place.regionA"),
            ]
        );
    }

    #[test]
    fn a_bare_name_that_could_be_several_structs_is_an_error() {
        let source = format!(
            "{TWO_PLACES}\n{}",
            r#"
            #[derive(Sharded)]
            #[sharded(shards = 2, order_by = "at", collection = "which")]
            struct Which { #[sharded(index(region: String))] place: Place, at: i64 }
            "#
        );
        let error = sharded_types(Path::new("src/lib.rs"), &source).unwrap_err();
        assert!(error.contains("a::Place, b::Place"), "{error}");
    }
}
