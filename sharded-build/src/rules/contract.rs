//! What a sharded type's rules are called and where its documents are: the function each
//! type gets (`sharded_<Type>`), its documents' match paths, and the rules language's
//! literals and identifiers, which the type's functions and its counters' are written with.

use sharded_indexes::CollectionDescriptionBuf;

use crate::scan::ShardedType;

/// A sharded type's rules function, named once for the block and the warnings.
pub(crate) struct Contract<'a> {
    pub(crate) function: String,
    pub(crate) ty: &'a ShardedType,
}

/// The functions of `types`, named `sharded_<Type>` (with the collection's path after it
/// when two types share a name).
pub(crate) fn contracts(types: &[ShardedType]) -> Vec<Contract<'_>> {
    let base = |ty: &ShardedType| format!("sharded_{}", identifier(&ty.name));
    types
        .iter()
        .map(|ty| {
            let shared = types.iter().filter(|other| base(other) == base(ty)).count() > 1;
            let function = if shared {
                let mut path = ty.description.parent_collections.clone();
                path.push(ty.description.collection.clone());
                format!("{}_{}", base(ty), identifier(&path.join("_")))
            } else {
                base(ty)
            };
            Contract { function, ty }
        })
        .collect()
}

/// The match paths of the type's documents: `/rooms/{rooms_id}/messages/{id}` under its
/// parents, `/readings/{id}` at the top level, and `/{path=**}/messages/{id}` for a group.
pub(crate) fn places(d: &CollectionDescriptionBuf) -> Vec<String> {
    let mut path = String::new();
    for parent in &d.parent_collections {
        path.push_str(&format!("/{parent}/{{{}_id}}", identifier(parent)));
    }
    let mut places = vec![format!("{path}/{}/{{id}}", d.collection)];
    if d.collection_group {
        places.push(format!("/{{path=**}}/{}/{{id}}", d.collection));
    }
    places
}

/// A rules string literal.
pub(crate) fn literal(value: &str) -> String {
    let mut out = String::from("'");
    for ch in value.chars() {
        match ch {
            '\\' | '\'' => {
                out.push('\\');
                out.push(ch);
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ch if (ch as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", ch as u32)),
            ch => out.push(ch),
        }
    }
    out.push('\'');
    out
}

/// A name usable in a rules identifier: letters, digits and `_`.
pub(crate) fn identifier(name: &str) -> String {
    name.replace("::", "_")
        .chars()
        .map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '_' })
        .collect()
}
