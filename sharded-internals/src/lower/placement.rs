//! Where the documents live: the collection id, the parent collections above it, and the
//! shard field's name.

use crate::ast::Container;
use crate::ctxt::Ctxt;
use crate::model::default_collection;
use crate::symbol::DEFAULT_SHARD_FIELD;
use sharded_indexes::RESERVED_COLLECTION_PREFIX;

/// What is wrong with `name` as a collection id, if anything.
fn collection_id_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("a collection id cannot be empty")
    } else if name.contains('/') {
        Some(
            "a collection id cannot contain `/`; for a subcollection, name the collection of its parent documents: `parent = \"rooms\"`",
        )
    } else if name == "." || name == ".." {
        Some("a collection id cannot be `.` or `..`")
    } else if name.starts_with("__") && name.ends_with("__") {
        Some("ids of the form `__name__` are reserved by Firestore")
    } else if name.starts_with(RESERVED_COLLECTION_PREFIX) {
        Some(
            "collection ids that start with `_sharded` are reserved for sharded's own state (a tracked job's, in `_sharded_jobs`)",
        )
    } else if name.len() > 1500 {
        Some("a collection id is at most 1,500 bytes")
    } else {
        None
    }
}

/// `parent = "users/sessions"`: the collection ids of the parent documents' path, outermost
/// first (empty for a top-level collection).
pub(super) fn parent(cx: &Ctxt, cont: &Container) -> Option<Vec<String>> {
    let Some(lit) = &cont.attrs.parent else {
        return Some(Vec::new());
    };
    let ids: Vec<String> = lit.value.value().split('/').map(str::to_owned).collect();
    match ids.iter().find_map(|id| collection_id_problem(id)) {
        Some(problem) => {
            cx.error_spanned_by(
                &lit.value,
                format!(
                    "{problem}; `parent` names the collections above this one, separated by `/` (`parent = \"users/sessions\"` for `users/{{uid}}/sessions/{{sid}}/...`)"
                ),
            );
            None
        }
        None => Some(ids),
    }
}

pub(super) fn collection(cx: &Ctxt, cont: &Container) -> Option<String> {
    let Some(lit) = &cont.attrs.collection else {
        return Some(default_collection(&cont.ident.to_string()));
    };
    let name = lit.value.value();
    let problem = collection_id_problem(&name);
    match problem {
        Some(problem) => {
            cx.error_spanned_by(&lit.value, problem);
            None
        }
        None => Some(name),
    }
}

pub(super) fn shard_field(cx: &Ctxt, cont: &Container) -> Option<String> {
    let Some(lit) = &cont.attrs.shard_field else {
        return Some(DEFAULT_SHARD_FIELD.to_owned());
    };
    let name = lit.value.value();
    if name.is_empty() || name.contains('.') || (name.starts_with("__") && name.ends_with("__")) {
        cx.error_spanned_by(
            &lit.value,
            "the shard field is a top-level field name: not empty, no `.`, not of the reserved form `__name__`",
        );
        return None;
    }
    if name.contains(['`', '\\']) {
        cx.error_spanned_by(
            &lit.value,
            "the shard field's name holds no `` ` `` or `\\`: Firestore would need it escaped in every query and index; choose a name without them",
        );
        return None;
    }
    Some(name)
}
