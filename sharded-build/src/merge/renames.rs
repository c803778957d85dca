//! Stored names that changed since the last build: a serde rename of an indexed field (or of
//! the order field) compiles, plans the new name's index, and silently leaves every document
//! written before under the old name, outside the new name's queries. The build says so.

use super::manifest::Managed;

/// A warning for each collection whose indexed paths or order field changed between the
/// last recorded build (`previous`) and this one (`current`), naming old and new.
pub(crate) fn renamed_fields(previous: &[Managed], current: &[Managed]) -> Vec<String> {
    let mut warnings = Vec::new();
    for now in current {
        // The same type's entry before, else the one of the same collection at the same
        // place (a type renamed in Rust): another type of the id is not a rename.
        let same_place = |m: &&Managed| {
            m.description.collection == now.description.collection
                && m.description.parent_collections == now.description.parent_collections
        };
        let Some(before) = previous
            .iter()
            .filter(same_place)
            .find(|m| m.types.iter().any(|t| now.types.contains(t)))
            .or_else(|| previous.iter().find(same_place))
        else {
            continue;
        };
        let (before, types) = (&before.description, now.types.join("`, `"));
        let description = &now.description;
        let collection = &description.collection;
        if before.order_field != description.order_field && !before.order_field.is_empty() {
            warnings.push(format!(
                "`{collection}` (`{types}`): the order field was stored as `{}` and is now `{}`: documents written before hold the old name and drop out of every sharded query until they are rewritten; rename the stored field first (see the README's \"Renaming a stored field\")",
                before.order_field, description.order_field
            ));
        }
        let gone: Vec<&String> = before
            .indexed_fields
            .iter()
            .filter(|path| !description.indexed_fields.contains(path))
            .collect();
        let new: Vec<&String> = description
            .indexed_fields
            .iter()
            .filter(|path| !before.indexed_fields.contains(path))
            .collect();
        // A path dropped alone is a query removed on purpose; one dropped while another
        // appears is what a rename looks like.
        if !gone.is_empty() && !new.is_empty() {
            let list = |paths: &[&String]| {
                paths
                    .iter()
                    .map(|path| format!("`{path}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            warnings.push(format!(
                "`{collection}` (`{types}`): indexed as {} before and as {} now: if a serde rename changed a stored name, documents written before keep the old one and drop out of the new name's queries until they are rewritten; rename the stored field first (see the README's \"Renaming a stored field\")",
                list(&gone),
                list(&new)
            ));
        }
    }
    warnings
}
