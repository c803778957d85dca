//! One line per public item of a crate, from rustdoc's JSON (`--output-format json`): every
//! module, type, field, variant, function, method, trait, constant and alias reachable from
//! the crate's root by public paths, and each type's trait impls (its auto traits on one line,
//! blanket impls left out). `#[doc(hidden)]` items are not in the JSON, so `__private` is not
//! in the API. Each item is rendered once, at its shortest public path; another public path
//! to it is a `pub use` line. The crate root's hidden re-exports (old paths kept so that code
//! written against them compiles) are rendered apart, from a JSON made with
//! `--document-hidden-items` ([`hidden_root_uses`]): a path users may name is in the API
//! whether or not its docs show it.

use std::collections::{BTreeSet, HashMap, VecDeque};

use serde_json::{Map, Value};

/// Marker traits that are not stable, left out of the API: auto traits a newer compiler adds
/// or renames, and the marker `derive(PartialEq)` adds beside every `PartialEq`.
const UNSTABLE_MARKERS: &[&str] = &[
    "core::marker::Freeze",
    "core::marker::UnsafeUnpin",
    "core::marker::StructuralPartialEq",
];

/// The rustdoc JSON format this renders; another is refused rather than misread.
pub const FORMAT_VERSION: u64 = 57;

pub fn render(json: &Value) -> Result<Vec<String>, String> {
    let format = json["format_version"].as_u64().unwrap_or(0);
    if format != FORMAT_VERSION {
        return Err(format!(
            "rustdoc JSON format {format}, this renders {FORMAT_VERSION}: the toolchain changed; update the renderer"
        ));
    }
    let index = json["index"].as_object().ok_or("no index")?;
    let paths = json["paths"].as_object().ok_or("no paths")?;
    let root = json["root"].as_u64().ok_or("no root")?;
    let mut api = Api {
        index,
        paths,
        public: HashMap::new(),
        lines: BTreeSet::new(),
    };
    let name = api.item(root).ok_or("no root item")?["name"]
        .as_str()
        .ok_or("unnamed root")?
        .to_owned();
    api.find_public_paths(root, &name);
    api.add(&name, 0, format!("pub mod {name}"));
    api.walk(root, &name, &mut Vec::new());
    Ok(api.lines.into_iter().map(|(_, _, line)| line).collect())
}

/// The crate root's `#[doc(hidden)]` re-exports, one line each, from rustdoc's JSON made with
/// `--document-hidden-items`: `#[doc(hidden)] pub use krate::Name = krate::module::Name`, or
/// `#[doc(hidden)] pub use krate::module::*` for a glob, which then hides what it brings in.
pub fn hidden_root_uses(json: &Value) -> Result<Vec<String>, String> {
    let format = json["format_version"].as_u64().unwrap_or(0);
    if format != FORMAT_VERSION {
        return Err(format!(
            "rustdoc JSON format {format}, this renders {FORMAT_VERSION}: the toolchain changed; update the renderer"
        ));
    }
    let index = json["index"].as_object().ok_or("no index")?;
    let root = json["root"].as_u64().ok_or("no root")?;
    let root = index.get(&root.to_string()).ok_or("no root item")?;
    let name = root["name"].as_str().ok_or("unnamed root")?;
    let hidden = |item: &Value| {
        item["attrs"].as_array().is_some_and(|attrs| {
            attrs.iter().any(|attr| {
                attr["other"]
                    .as_str()
                    .is_some_and(|a| a.contains("doc(hidden)"))
            })
        })
    };
    let mut lines = BTreeSet::new();
    for id in ids(&root["inner"]["module"]["items"]) {
        let Some(item) = index.get(&id.to_string()) else {
            continue;
        };
        let (kind, inner) = kind(item);
        if kind != "use" || !is_public(item) || !hidden(item) {
            continue;
        }
        let source = inner["source"].as_str().unwrap_or_default();
        let source = source.strip_prefix("crate::").unwrap_or(source);
        lines.insert(match inner["is_glob"].as_bool() == Some(true) {
            true => format!("#[doc(hidden)] pub use {name}::{source}::*"),
            false => format!(
                "#[doc(hidden)] pub use {name}::{} = {name}::{source}",
                inner["name"].as_str().unwrap_or_default()
            ),
        });
    }
    Ok(lines.into_iter().collect())
}

struct Api<'a> {
    index: &'a Map<String, Value>,
    paths: &'a Map<String, Value>,
    /// The shortest public path of each of the crate's reachable items.
    public: HashMap<u64, String>,
    /// Each line under the path of the item it belongs to and its rank there (the item, its
    /// fields and variants, its methods, its trait impls), so the file reads item by item.
    lines: BTreeSet<(String, u8, String)>,
}

fn kind(item: &Value) -> (&str, &Value) {
    match &item["inner"] {
        Value::Object(inner) => inner
            .iter()
            .next()
            .map(|(k, v)| (k.as_str(), v))
            .unwrap_or(("", &Value::Null)),
        Value::String(kind) => (kind.as_str(), &Value::Null),
        _ => ("", &Value::Null),
    }
}

fn is_public(item: &Value) -> bool {
    item["visibility"] == "public"
}

fn ids(value: &Value) -> impl Iterator<Item = u64> + '_ {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_u64)
}

fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

impl<'a> Api<'a> {
    fn add(&mut self, path: &str, rank: u8, line: String) {
        self.lines.insert((path.to_owned(), rank, line));
    }

    /// The full path of another crate's item.
    fn external_path(&self, id: u64) -> Option<String> {
        let summary = self.paths.get(&id.to_string())?;
        if summary["crate_id"] == 0 {
            return None;
        }
        Some(
            summary["path"]
                .as_array()?
                .iter()
                .map(str_of)
                .collect::<Vec<_>>()
                .join("::"),
        )
    }

    fn item(&self, id: u64) -> Option<&'a Value> {
        self.index.get(&id.to_string())
    }

    /// Breadth first from the root, so each item's first path is its shortest.
    fn find_public_paths(&mut self, root: u64, name: &str) {
        let mut queue = VecDeque::from([(root, name.to_owned())]);
        let mut seen_modules = BTreeSet::from([(root, name.to_owned())]);
        while let Some((module, path)) = queue.pop_front() {
            let Some(module) = self.item(module) else {
                continue;
            };
            for child in ids(&kind(module).1["items"]) {
                let Some(item) = self.item(child) else {
                    continue;
                };
                if !is_public(item) {
                    continue;
                }
                let (what, inner) = kind(item);
                let (target, at) = match what {
                    "impl" => continue,
                    "use" if inner["is_glob"] == true => {
                        if let Some(target) = inner["id"].as_u64()
                            && self.item(target).is_some_and(|t| kind(t).0 == "module")
                            && seen_modules.insert((target, path.clone()))
                        {
                            queue.push_back((target, path.clone()));
                        }
                        continue;
                    }
                    "use" => match inner["id"].as_u64() {
                        Some(target) if self.item(target).is_some() => {
                            (target, format!("{path}::{}", str_of(&inner["name"])))
                        }
                        _ => continue,
                    },
                    _ => (child, format!("{path}::{}", str_of(&item["name"]))),
                };
                self.public.entry(target).or_insert_with(|| at.clone());
                if self.item(target).is_some_and(|t| kind(t).0 == "module")
                    && seen_modules.insert((target, at.clone()))
                {
                    queue.push_back((target, at));
                }
            }
        }
    }

    fn walk(&mut self, module: u64, path: &str, walking: &mut Vec<u64>) {
        if walking.contains(&module) {
            return;
        }
        walking.push(module);
        let Some(item) = self.item(module) else {
            walking.pop();
            return;
        };
        for child in ids(&kind(item).1["items"]).collect::<Vec<_>>() {
            let Some(item) = self.item(child) else {
                continue;
            };
            if !is_public(item) {
                continue;
            }
            let (what, inner) = kind(item);
            match what {
                "impl" => {}
                "use" if inner["is_glob"] == true => match inner["id"].as_u64() {
                    Some(target) if self.item(target).is_some() => self.walk(target, path, walking),
                    _ => {
                        let source = str_of(&inner["source"]);
                        self.add(path, 0, format!("pub use {path}::* = {source}::*"));
                    }
                },
                "use" => {
                    let at = format!("{path}::{}", str_of(&inner["name"]));
                    match inner["id"].as_u64() {
                        Some(target) if self.item(target).is_some() => {
                            self.emit(target, &at, walking)
                        }
                        target => {
                            let source = target
                                .and_then(|id| self.external_path(id))
                                .unwrap_or_else(|| str_of(&inner["source"]).to_owned());
                            self.add(&at, 0, format!("pub use {at} = {source}"));
                        }
                    }
                }
                _ => {
                    let at = format!("{path}::{}", str_of(&item["name"]));
                    self.emit(child, &at, walking);
                }
            }
        }
        walking.pop();
    }

    fn emit(&mut self, id: u64, at: &str, walking: &mut Vec<u64>) {
        let canonical = self
            .public
            .get(&id)
            .cloned()
            .unwrap_or_else(|| at.to_owned());
        if canonical != at {
            self.add(at, 0, format!("pub use {at} = {canonical}"));
            return;
        }
        let Some(item) = self.item(id) else {
            return;
        };
        let (what, inner) = kind(item);
        let attrs = attributes(item);
        match what {
            "module" => {
                self.add(at, 0, format!("pub mod {at}"));
                self.walk(id, at, walking);
            }
            "struct" | "union" => {
                let generics = self.generics(&inner["generics"]);
                let where_ = self.where_clause(&inner["generics"]);
                let kind_ = &inner["kind"];
                let stripped = kind_["plain"]["has_stripped_fields"] == true
                    || kind_["tuple"]
                        .as_array()
                        .is_some_and(|f| f.iter().any(Value::is_null));
                let note = if stripped { " {private fields}" } else { "" };
                self.add(
                    at,
                    0,
                    format!("{attrs}pub {what} {at}{generics}{where_}{note}"),
                );
                let fields: Vec<(String, u64)> = if let Some(tuple) = kind_["tuple"].as_array() {
                    tuple
                        .iter()
                        .enumerate()
                        .filter_map(|(i, f)| f.as_u64().map(|f| (i.to_string(), f)))
                        .collect()
                } else {
                    ids(&kind_["plain"]["fields"])
                        .chain(ids(&inner["fields"]))
                        .filter_map(|f| {
                            self.item(f)
                                .map(|item| (str_of(&item["name"]).to_owned(), f))
                        })
                        .collect()
                };
                for (name, field) in fields {
                    if let Some(field) = self.item(field).filter(|f| is_public(f)) {
                        let ty = self.ty(kind(field).1);
                        self.add(at, 1, format!("pub {at}::{name}: {ty}"));
                    }
                }
                self.impls(&inner["impls"], at);
            }
            "enum" => {
                let generics = self.generics(&inner["generics"]);
                let where_ = self.where_clause(&inner["generics"]);
                let note = if inner["has_stripped_variants"] == true {
                    " {private variants}"
                } else {
                    ""
                };
                self.add(
                    at,
                    0,
                    format!("{attrs}pub enum {at}{generics}{where_}{note}"),
                );
                for variant in ids(&inner["variants"]).collect::<Vec<_>>() {
                    if let Some(variant) = self.item(variant) {
                        let line = self.variant(variant, at);
                        self.add(at, 1, line);
                    }
                }
                self.impls(&inner["impls"], at);
            }
            "trait" => {
                let generics = self.generics(&inner["generics"]);
                let where_ = self.where_clause(&inner["generics"]);
                let bounds = self.bounds(&inner["bounds"]);
                let bounds = if bounds.is_empty() {
                    String::new()
                } else {
                    format!(": {bounds}")
                };
                let unsafe_ = if inner["is_unsafe"] == true {
                    "unsafe "
                } else {
                    ""
                };
                self.add(
                    at,
                    0,
                    format!("{attrs}pub {unsafe_}trait {at}{generics}{bounds}{where_}"),
                );
                for member in ids(&inner["items"]).collect::<Vec<_>>() {
                    if let Some(member) = self.item(member) {
                        let line = self.member(member, &format!("{at}::"), "", true);
                        self.add(at, 2, line);
                    }
                }
                self.impls(&inner["implementations"], at);
            }
            "function" => {
                let line = self.function(inner, &format!("pub fn {at}"), "");
                self.add(at, 0, format!("{attrs}{line}"));
            }
            "constant" => {
                let ty = self.ty(&inner["type"]);
                let expr = str_of(&inner["const"]["expr"]);
                self.add(at, 0, format!("pub const {at}: {ty} = {expr}"));
            }
            "static" => {
                let ty = self.ty(&inner["type"]);
                let mut_ = if inner["is_mutable"] == true {
                    "mut "
                } else {
                    ""
                };
                self.add(at, 0, format!("pub static {mut_}{at}: {ty}"));
            }
            "type_alias" => {
                let generics = self.generics(&inner["generics"]);
                let ty = self.ty(&inner["type"]);
                self.add(at, 0, format!("pub type {at}{generics} = {ty}"));
            }
            "macro" => {
                self.add(at, 0, format!("pub macro {at}!"));
            }
            "proc_macro" => {
                let helpers: Vec<&str> = inner["helpers"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(str_of)
                    .collect();
                let line = format!(
                    "pub proc_macro {} {at} (attributes: {})",
                    str_of(&inner["kind"]),
                    helpers.join(", ")
                );
                self.add(at, 0, line);
            }
            other => {
                self.add(at, 0, format!("pub {other} {at}"));
            }
        }
    }

    fn variant(&self, variant: &Value, at: &str) -> String {
        let name = str_of(&variant["name"]);
        let inner = kind(variant).1;
        let fields = &inner["kind"];
        let shape = if let Some(tuple) = fields["tuple"].as_array() {
            let types: Vec<String> = tuple
                .iter()
                .map(|f| match f.as_u64().and_then(|f| self.item(f)) {
                    Some(field) => self.ty(kind(field).1),
                    None => "_".to_owned(),
                })
                .collect();
            format!("({})", types.join(", "))
        } else if fields["struct"].is_object() {
            let named: Vec<String> = ids(&fields["struct"]["fields"])
                .filter_map(|f| self.item(f))
                .map(|field| format!("{}: {}", str_of(&field["name"]), self.ty(kind(field).1)))
                .collect();
            let stripped = if fields["struct"]["has_stripped_fields"] == true {
                ", .."
            } else {
                ""
            };
            format!(" {{ {}{stripped} }}", named.join(", "))
        } else {
            String::new()
        };
        let discriminant = match inner["discriminant"]["expr"].as_str() {
            Some(expr) => format!(" = {expr}"),
            None => String::new(),
        };
        format!("pub {at}::{name}{shape}{discriminant}")
    }

    /// A trait's or an impl's function, constant or type, after `prefix`; `bounds` are the
    /// impl's, added to the member's where clause. A trait's function with a body is marked
    /// `{provided}`.
    fn member(&self, member: &Value, prefix: &str, bounds: &str, in_trait: bool) -> String {
        let name = str_of(&member["name"]);
        let (what, inner) = kind(member);
        match what {
            "function" => {
                let provided = if in_trait && inner["has_body"] == true {
                    " {provided}"
                } else {
                    ""
                };
                format!(
                    "{}{provided}",
                    self.function(inner, &format!("pub fn {prefix}{name}"), bounds)
                )
            }
            "assoc_const" => {
                let value = match inner["value"].as_str() {
                    Some(value) => format!(" = {value}"),
                    None => String::new(),
                };
                format!(
                    "pub const {prefix}{name}: {}{value}{}",
                    self.ty(&inner["type"]),
                    join_where("", bounds)
                )
            }
            "assoc_type" => {
                let bounds = self.bounds(&inner["bounds"]);
                let bounds = if bounds.is_empty() {
                    String::new()
                } else {
                    format!(": {bounds}")
                };
                let ty = match &inner["type"] {
                    Value::Null => String::new(),
                    ty => format!(" = {}", self.ty(ty)),
                };
                format!("pub type {prefix}{name}{bounds}{ty}")
            }
            other => format!("{other} {prefix}{name}"),
        }
    }

    fn impls(&mut self, impls: &Value, at: &str) {
        // The compiler's auto-trait impls of one type, under one set of bounds, read as one
        // line (`impl<..> Send + Sync + !UnwindSafe for T`): a change to any still shows.
        let mut auto: Vec<((String, String, String), Vec<String>)> = Vec::new();
        for id in ids(impls).collect::<Vec<_>>() {
            let Some(item) = self.item(id) else {
                continue;
            };
            let inner = kind(item).1;
            if !inner["blanket_impl"].is_null() {
                continue;
            }
            let generics = self.generics(&inner["generics"]);
            let where_ = self.where_clause(&inner["generics"]);
            let for_ = self.ty(&inner["for"]);
            let unsafe_ = if inner["is_unsafe"] == true {
                "unsafe "
            } else {
                ""
            };
            if inner["trait"].is_object() {
                let trait_ = &inner["trait"];
                // A trait of this crate that is not public (a seal) is not part of the API.
                if let Some(trait_id) = trait_["id"].as_u64()
                    && self.item(trait_id).is_some()
                    && !self.public.contains_key(&trait_id)
                {
                    continue;
                }
                let negative = if inner["is_negative"] == true {
                    "!"
                } else {
                    ""
                };
                let trait_ = self.path(trait_);
                if UNSTABLE_MARKERS.contains(&trait_.as_str()) {
                    continue;
                }
                if inner["is_synthetic"] == true {
                    let key = (generics, for_, where_);
                    let trait_ = format!("{negative}{trait_}");
                    match auto.iter_mut().find(|(k, _)| *k == key) {
                        Some((_, traits)) => traits.push(trait_),
                        None => auto.push((key, vec![trait_])),
                    }
                    continue;
                }
                let line = format!("{unsafe_}impl{generics} {negative}{trait_} for {for_}{where_}");
                self.add(at, 3, line);
            } else {
                // A method reads as `Type<Args>::method(..) where <the impl's bounds>`.
                let bounds = self.impl_bounds(&inner["generics"]);
                for member in ids(&inner["items"]).collect::<Vec<_>>() {
                    if let Some(member) = self.item(member).filter(|m| is_public(m)) {
                        let line = self.member(member, &format!("{for_}::"), &bounds, false);
                        let name = str_of(&member["name"]);
                        self.add(&format!("{at}::{name}"), 2, line);
                    }
                }
            }
        }
        for ((generics, for_, where_), mut traits) in auto {
            traits.sort();
            let traits = traits.join(" + ");
            self.add(at, 3, format!("impl{generics} {traits} for {for_}{where_}"));
        }
    }

    /// An impl's generic bounds and where clause as predicates: `T: Sharded, R: Reach`.
    fn impl_bounds(&self, generics: &Value) -> String {
        let mut predicates: Vec<String> = generics["params"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|param| {
                let bounds = self.bounds(&param["kind"]["type"]["bounds"]);
                (!bounds.is_empty()).then(|| format!("{}: {bounds}", str_of(&param["name"])))
            })
            .collect();
        let where_ = self.where_clause(generics);
        if let Some(rest) = where_.strip_prefix(" where ") {
            predicates.push(rest.to_owned());
        }
        predicates.join(", ")
    }

    fn function(&self, function: &Value, head: &str, bounds: &str) -> String {
        let header = &function["header"];
        let mut qualifiers = String::new();
        for (flag, word) in [
            ("is_const", "const "),
            ("is_async", "async "),
            ("is_unsafe", "unsafe "),
        ] {
            if header[flag] == true {
                qualifiers.push_str(word);
            }
        }
        let head = head.replacen("pub fn ", &format!("pub {qualifiers}fn "), 1);
        let generics = self.generics(&function["generics"]);
        let where_ = self.where_clause(&function["generics"]);
        let sig = &function["sig"];
        let inputs: Vec<String> = sig["inputs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|input| {
                let name = str_of(&input[0]);
                let ty = &input[1];
                if name == "self" {
                    if ty["generic"] == "Self" {
                        return "self".to_owned();
                    }
                    let reference = &ty["borrowed_ref"];
                    if reference["type"]["generic"] == "Self" {
                        let lifetime = match reference["lifetime"].as_str() {
                            Some(lifetime) => format!("{lifetime} "),
                            None => String::new(),
                        };
                        let mut_ = if reference["is_mutable"] == true {
                            "mut "
                        } else {
                            ""
                        };
                        return format!("&{lifetime}{mut_}self");
                    }
                }
                format!("{name}: {}", self.ty(ty))
            })
            .collect();
        let output = match &sig["output"] {
            Value::Null => String::new(),
            ty => format!(" -> {}", self.ty(ty)),
        };
        let where_ = join_where(&where_, bounds);
        format!("{head}{generics}({}){output}{where_}", inputs.join(", "))
    }

    fn generics(&self, generics: &Value) -> String {
        let params: Vec<String> = generics["params"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|param| param["kind"]["type"]["is_synthetic"] != true)
            .map(|param| self.param(param))
            .collect();
        if params.is_empty() {
            String::new()
        } else {
            format!("<{}>", params.join(", "))
        }
    }

    fn param(&self, param: &Value) -> String {
        let name = str_of(&param["name"]);
        let kind_ = &param["kind"];
        if let Some(lifetime) = kind_.get("lifetime") {
            let outlives: Vec<&str> = lifetime["outlives"]
                .as_array()
                .into_iter()
                .flatten()
                .map(str_of)
                .collect();
            if outlives.is_empty() {
                name.to_owned()
            } else {
                format!("{name}: {}", outlives.join(" + "))
            }
        } else if let Some(ty) = kind_.get("type") {
            let bounds = self.bounds(&ty["bounds"]);
            let bounds = if bounds.is_empty() {
                String::new()
            } else {
                format!(": {bounds}")
            };
            let default = match &ty["default"] {
                Value::Null => String::new(),
                default => format!(" = {}", self.ty(default)),
            };
            format!("{name}{bounds}{default}")
        } else if let Some(constant) = kind_.get("const") {
            let default = match constant["default"].as_str() {
                Some(default) => format!(" = {default}"),
                None => String::new(),
            };
            format!("const {name}: {}{default}", self.ty(&constant["type"]))
        } else {
            name.to_owned()
        }
    }

    fn where_clause(&self, generics: &Value) -> String {
        let predicates: Vec<String> = generics["where_predicates"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|predicate| {
                if let Some(bound) = predicate.get("bound_predicate") {
                    let for_ = self.higher_ranked(&bound["generic_params"]);
                    format!(
                        "{for_}{}: {}",
                        self.ty(&bound["type"]),
                        self.bounds(&bound["bounds"])
                    )
                } else if let Some(lifetime) = predicate.get("lifetime_predicate") {
                    let outlives: Vec<&str> = lifetime["outlives"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(str_of)
                        .collect();
                    format!(
                        "{}: {}",
                        str_of(&lifetime["lifetime"]),
                        outlives.join(" + ")
                    )
                } else if let Some(equal) = predicate.get("eq_predicate") {
                    format!("{} = {}", self.ty(&equal["lhs"]), self.term(&equal["rhs"]))
                } else {
                    predicate.to_string()
                }
            })
            .collect();
        if predicates.is_empty() {
            String::new()
        } else {
            format!(" where {}", predicates.join(", "))
        }
    }

    fn higher_ranked(&self, params: &Value) -> String {
        let params: Vec<String> = params
            .as_array()
            .into_iter()
            .flatten()
            .map(|param| self.param(param))
            .collect();
        if params.is_empty() {
            String::new()
        } else {
            format!("for<{}> ", params.join(", "))
        }
    }

    fn bounds(&self, bounds: &Value) -> String {
        let bounds: Vec<String> = bounds
            .as_array()
            .into_iter()
            .flatten()
            .map(|bound| {
                if let Some(trait_bound) = bound.get("trait_bound") {
                    let modifier = match str_of(&trait_bound["modifier"]) {
                        "maybe" => "?",
                        "maybe_const" => "~const ",
                        _ => "",
                    };
                    format!(
                        "{}{modifier}{}",
                        self.higher_ranked(&trait_bound["generic_params"]),
                        self.path(&trait_bound["trait"])
                    )
                } else if let Some(lifetime) = bound.get("outlives") {
                    str_of(lifetime).to_owned()
                } else if let Some(captured) = bound.get("use") {
                    let captured: Vec<String> = captured
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|c| match c {
                            Value::String(s) => s.clone(),
                            other => other
                                .as_object()
                                .and_then(|o| o.values().next())
                                .map(|v| str_of(v).to_owned())
                                .unwrap_or_default(),
                        })
                        .collect();
                    format!("use<{}>", captured.join(", "))
                } else {
                    bound.to_string()
                }
            })
            .collect();
        bounds.join(" + ")
    }

    fn term(&self, term: &Value) -> String {
        if let Some(ty) = term.get("type") {
            self.ty(ty)
        } else if let Some(constant) = term.get("constant") {
            str_of(&constant["expr"]).to_owned()
        } else {
            term.to_string()
        }
    }

    /// A path to an item: its public path in this crate, its full path in another, then the
    /// generic arguments.
    fn path(&self, path: &Value) -> String {
        let written = str_of(&path["path"]);
        let name = match path["id"].as_u64() {
            Some(id) => match self.public.get(&id) {
                Some(public) => public.clone(),
                None => match self.paths.get(&id.to_string()) {
                    Some(summary) if summary["crate_id"] != 0 => summary["path"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(str_of)
                        .collect::<Vec<_>>()
                        .join("::"),
                    _ => written.to_owned(),
                },
            },
            None => written.to_owned(),
        };
        format!("{name}{}", self.args(&path["args"]))
    }

    fn args(&self, args: &Value) -> String {
        if let Some(angle) = args.get("angle_bracketed") {
            let mut parts: Vec<String> = angle["args"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|arg| match arg {
                    Value::String(s) if s == "infer" => "_".to_owned(),
                    arg => {
                        if let Some(lifetime) = arg.get("lifetime") {
                            str_of(lifetime).to_owned()
                        } else if let Some(ty) = arg.get("type") {
                            self.ty(ty)
                        } else if let Some(constant) = arg.get("const") {
                            str_of(&constant["expr"]).to_owned()
                        } else {
                            arg.to_string()
                        }
                    }
                })
                .collect();
            for constraint in angle["constraints"].as_array().into_iter().flatten() {
                let name = format!(
                    "{}{}",
                    str_of(&constraint["name"]),
                    self.args(&constraint["args"])
                );
                let binding = &constraint["binding"];
                if let Some(equality) = binding.get("equality") {
                    parts.push(format!("{name} = {}", self.term(equality)));
                } else if let Some(bounds) = binding.get("constraint") {
                    parts.push(format!("{name}: {}", self.bounds(bounds)));
                }
            }
            if parts.is_empty() {
                String::new()
            } else {
                format!("<{}>", parts.join(", "))
            }
        } else if let Some(parenthesized) = args.get("parenthesized") {
            let inputs: Vec<String> = parenthesized["inputs"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|ty| self.ty(ty))
                .collect();
            let output = match &parenthesized["output"] {
                Value::Null => String::new(),
                ty => format!(" -> {}", self.ty(ty)),
            };
            format!("({}){output}", inputs.join(", "))
        } else if args.get("return_type_notation").is_some() {
            "(..)".to_owned()
        } else {
            String::new()
        }
    }

    fn ty(&self, ty: &Value) -> String {
        let Some((what, inner)) = ty.as_object().and_then(|o| o.iter().next()) else {
            return match ty {
                Value::String(s) if s == "infer" => "_".to_owned(),
                other => other.to_string(),
            };
        };
        match what.as_str() {
            "generic" | "primitive" => str_of(inner).to_owned(),
            "resolved_path" => self.path(inner),
            "dyn_trait" => {
                let traits: Vec<String> = inner["traits"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| {
                        format!(
                            "{}{}",
                            self.higher_ranked(&t["generic_params"]),
                            self.path(&t["trait"])
                        )
                    })
                    .collect();
                let lifetime = match inner["lifetime"].as_str() {
                    Some(lifetime) => format!(" + {lifetime}"),
                    None => String::new(),
                };
                format!("dyn {}{lifetime}", traits.join(" + "))
            }
            "function_pointer" => {
                let sig = &inner["sig"];
                let inputs: Vec<String> = sig["inputs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|input| self.ty(&input[1]))
                    .collect();
                let output = match &sig["output"] {
                    Value::Null => String::new(),
                    ty => format!(" -> {}", self.ty(ty)),
                };
                format!(
                    "{}fn({}){output}",
                    self.higher_ranked(&inner["generic_params"]),
                    inputs.join(", ")
                )
            }
            "tuple" => {
                let types: Vec<String> = inner
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| self.ty(t))
                    .collect();
                if types.len() == 1 {
                    format!("({},)", types[0])
                } else {
                    format!("({})", types.join(", "))
                }
            }
            "slice" => format!("[{}]", self.ty(inner)),
            "array" => format!("[{}; {}]", self.ty(&inner["type"]), str_of(&inner["len"])),
            "pat" => self.ty(&inner["type"]),
            "impl_trait" => format!("impl {}", self.bounds(inner)),
            "raw_pointer" => {
                let mut_ = if inner["is_mutable"] == true {
                    "mut"
                } else {
                    "const"
                };
                format!("*{mut_} {}", self.ty(&inner["type"]))
            }
            "borrowed_ref" => {
                let lifetime = match inner["lifetime"].as_str() {
                    Some(lifetime) => format!("{lifetime} "),
                    None => String::new(),
                };
                let mut_ = if inner["is_mutable"] == true {
                    "mut "
                } else {
                    ""
                };
                format!("&{lifetime}{mut_}{}", self.ty(&inner["type"]))
            }
            "qualified_path" => {
                let name = str_of(&inner["name"]);
                let self_type = self.ty(&inner["self_type"]);
                match &inner["trait"] {
                    Value::Null => format!("{self_type}::{name}"),
                    trait_ => format!("<{self_type} as {}>::{name}", self.path(trait_)),
                }
            }
            other => format!("{other}?"),
        }
    }
}

/// A where clause with `bounds` added.
fn join_where(where_: &str, bounds: &str) -> String {
    match (where_.is_empty(), bounds.is_empty()) {
        (_, true) => where_.to_owned(),
        (true, false) => format!(" where {bounds}"),
        (false, false) => format!("{where_}, {bounds}"),
    }
}

/// The attributes that change what users may do: `#[non_exhaustive]`, `#[must_use]`.
fn attributes(item: &Value) -> String {
    let mut shown = String::new();
    for attr in item["attrs"].as_array().into_iter().flatten() {
        let text = match attr {
            Value::String(s) => s.clone(),
            Value::Object(o) => o.keys().next().cloned().unwrap_or_default(),
            _ => continue,
        };
        if text.contains("non_exhaustive") {
            shown.push_str("#[non_exhaustive] ");
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn crate_of(items: Value, root_items: &[u64]) -> Value {
        let mut index = items.as_object().unwrap().clone();
        index.insert(
            "0".into(),
            json!({"id": 0, "name": "demo", "visibility": "public", "attrs": [],
                   "inner": {"module": {"is_crate": true, "items": root_items, "is_stripped": false}}}),
        );
        json!({"format_version": FORMAT_VERSION, "root": 0, "index": index,
               "paths": {"7": {"crate_id": 1, "path": ["core", "option", "Option"], "kind": "enum"}}})
    }

    fn generic(name: &str) -> Value {
        json!({"generic": name})
    }

    #[test]
    fn functions_render_with_their_generics_references_and_foreign_paths() {
        let function = json!({"1": {"id": 1, "name": "first", "visibility": "public", "attrs": [],
            "inner": {"function": {
                "sig": {"inputs": [
                    ["items", {"borrowed_ref": {"lifetime": "'a", "is_mutable": true,
                                                "type": {"slice": generic("T")}}}],
                    ["limit", {"impl_trait": [{"trait_bound": {"trait": {"path": "Into", "id": 99,
                        "args": {"angle_bracketed": {"args": [{"type": {"primitive": "u32"}}], "constraints": []}}},
                        "generic_params": [], "modifier": "none"}}]}],
                ], "output": {"resolved_path": {"path": "Option", "id": 7,
                    "args": {"angle_bracketed": {"args": [{"type": {"borrowed_ref": {"lifetime": "'a", "is_mutable": false, "type": generic("T")}}}], "constraints": []}}}},
                    "is_c_variadic": false},
                "generics": {"params": [
                    {"name": "'a", "kind": {"lifetime": {"outlives": []}}},
                    {"name": "T", "kind": {"type": {"bounds": [{"trait_bound": {"trait": {"path": "Clone", "id": 98, "args": null}, "generic_params": [], "modifier": "none"}}], "default": null, "is_synthetic": false}}},
                    {"name": "impl Into<u32>", "kind": {"type": {"bounds": [], "default": null, "is_synthetic": true}}}
                ], "where_predicates": [{"bound_predicate": {"type": generic("T"), "bounds": [{"outlives": "'a"}], "generic_params": []}}]},
                "header": {"is_const": false, "is_unsafe": false, "is_async": true, "abi": "Rust"},
                "has_body": true}}}});
        let lines = render(&crate_of(function, &[1])).unwrap();
        assert_eq!(
            lines,
            [
                "pub mod demo",
                "pub async fn demo::first<'a, T: Clone>(items: &'a mut [T], limit: impl Into<u32>) -> core::option::Option<&'a T> where T: 'a",
            ]
        );
    }

    #[test]
    fn a_reexport_renders_the_item_once_at_its_shortest_path() {
        let items = json!({
            "1": {"id": 1, "name": "inner", "visibility": "public", "attrs": [],
                  "inner": {"module": {"is_crate": false, "items": [2], "is_stripped": false}}},
            "2": {"id": 2, "name": "Limit", "visibility": "public", "attrs": [],
                  "inner": {"constant": {"type": {"primitive": "u32"}, "const": {"expr": "10", "value": null, "is_literal": true}}}},
            "3": {"id": 3, "name": null, "visibility": "public", "attrs": [],
                  "inner": {"use": {"source": "inner::Limit", "name": "Limit", "id": 2, "is_glob": false}}},
            "4": {"id": 4, "name": null, "visibility": "public", "attrs": [],
                  "inner": {"use": {"source": "other::Thing", "name": "Thing", "id": 7, "is_glob": false}}}
        });
        let lines = render(&crate_of(items, &[1, 3, 4])).unwrap();
        assert_eq!(
            lines,
            [
                "pub mod demo",
                "pub const demo::Limit: u32 = 10",
                "pub use demo::Thing = core::option::Option",
                "pub mod demo::inner",
                "pub use demo::inner::Limit = demo::Limit",
            ]
        );
    }

    #[test]
    fn another_format_is_refused() {
        let mut json = crate_of(json!({}), &[]);
        json["format_version"] = json!(FORMAT_VERSION + 1);
        assert!(render(&json).unwrap_err().contains("format"));
    }

    #[test]
    fn a_types_auto_traits_read_as_one_line_and_other_impls_each_as_theirs() {
        let no_generics = json!({"params": [], "where_predicates": []});
        let unit = json!({"resolved_path": {"path": "Unit", "id": 1, "args": null}});
        let impl_of = |trait_: &str, id: u64, negative: bool, synthetic: bool| {
            json!({"id": id, "name": null, "visibility": "default", "attrs": [],
                   "inner": {"impl": {"is_unsafe": false, "generics": no_generics,
                       "provided_trait_methods": [], "trait": {"path": trait_, "id": id + 10, "args": null},
                       "for": unit, "items": [], "is_negative": negative,
                       "is_synthetic": synthetic, "blanket_impl": null}}})
        };
        let items = json!({
            "1": {"id": 1, "name": "Unit", "visibility": "public", "attrs": [],
                  "inner": {"struct": {"kind": "unit", "generics": no_generics, "impls": [2, 3, 4, 5]}}},
            "2": impl_of("Send", 2, false, true),
            "3": impl_of("UnwindSafe", 3, true, true),
            "4": impl_of("Sync", 4, false, true),
            "5": impl_of("Debug", 5, false, false),
        });
        let mut json = crate_of(items, &[1]);
        for (id, path) in [
            (12, "Send"),
            (13, "UnwindSafe"),
            (14, "Sync"),
            (15, "Debug"),
        ] {
            json["paths"][id.to_string()] =
                json!({"crate_id": 1, "path": ["core", path], "kind": "trait"});
        }
        let lines = render(&json).unwrap();
        assert_eq!(
            lines,
            [
                "pub mod demo",
                "pub struct demo::Unit",
                "impl !core::UnwindSafe + core::Send + core::Sync for demo::Unit",
                "impl core::Debug for demo::Unit",
            ]
        );
    }
}
