//! Firestore document names, parsed in one place and built in one place:
//! `projects/{project}/databases/{database}/documents/{parent path/}{collection}/{id}`.
//!
//! A name is split by segment count, never by searching for `/documents/`: a database, a
//! collection and a document may each be named `documents`.

/// A document's full name, parsed: the database's documents root and the path below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DocumentPath<'a> {
    /// `projects/{project}/databases/{database}/documents`; empty when the name parsed was
    /// not a full one (then it is taken as a path below the root).
    root: &'a str,
    /// The path below the root: `rooms/lobby/messages/m1`.
    relative: &'a str,
}

impl<'a> DocumentPath<'a> {
    /// The parts of the document name `name`.
    pub(crate) fn parse(name: &'a str) -> Self {
        let mut segments = name.splitn(6, '/');
        let head: Vec<&str> = segments.by_ref().take(5).collect();
        match (&head[..], segments.next()) {
            (["projects", _, "databases", _, "documents"], Some(relative)) => DocumentPath {
                root: &name[..name.len() - relative.len() - 1],
                relative,
            },
            _ => DocumentPath {
                root: "",
                relative: name,
            },
        }
    }

    #[cfg_attr(not(feature = "jobs"), allow(dead_code))]
    /// The path below the database root: `rooms/lobby/messages/m1`.
    pub(crate) fn relative(&self) -> &'a str {
        self.relative
    }

    /// The document id: the last segment.
    pub(crate) fn id(&self) -> &'a str {
        self.relative.rsplit('/').next().unwrap_or(self.relative)
    }

    /// The path below the root of the parent document (`rooms/lobby`), for a document of a
    /// subcollection.
    pub(crate) fn parent(&self) -> Option<&'a str> {
        let mut split = self.relative.rsplitn(3, '/');
        let (_id, _collection) = (split.next(), split.next());
        split.next()
    }

    #[cfg_attr(not(feature = "jobs"), allow(dead_code))]
    /// What holds the document: the full name of its parent document, or the documents root
    /// for a top-level one.
    pub(crate) fn container(&self) -> String {
        container_name(self.root, self.parent())
    }
}

/// The full name of what holds a collection: the documents root `root`, or the parent
/// document at `parent` below it.
pub(crate) fn container_name(root: &str, parent: Option<&str>) -> String {
    match parent {
        Some(parent) => format!("{root}/{parent}"),
        None => root.to_owned(),
    }
}

/// The full name of the document `id` of `collection`, under `parent` (a path below the
/// root) or at the top: the inverse of [`DocumentPath::parse`].
pub(crate) fn document_name(
    root: &str,
    parent: Option<&str>,
    collection: &str,
    id: &str,
) -> String {
    format!("{}/{collection}/{id}", container_name(root, parent))
}

#[cfg_attr(not(feature = "jobs"), allow(dead_code))]
/// The full name of the document at `relative`, a path below the root.
pub(crate) fn name_at(root: &str, relative: &str) -> String {
    format!("{root}/{relative}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_their_parts() {
        let root = "projects/p/databases/(default)/documents";
        let top = DocumentPath::parse("projects/p/databases/(default)/documents/rooms/lobby");
        let nested =
            DocumentPath::parse("projects/p/databases/(default)/documents/rooms/lobby/messages/m1");
        assert_eq!(nested.relative(), "rooms/lobby/messages/m1");
        assert_eq!(nested.container(), format!("{root}/rooms/lobby"));
        assert_eq!(top.container(), root);
        assert_eq!(nested.parent(), Some("rooms/lobby"));
        assert_eq!(top.parent(), None);
        assert_eq!(nested.id(), "m1");
        assert_eq!(top.id(), "lobby");
        let relative = DocumentPath::parse("rooms/lobby/messages/m1");
        assert_eq!(relative.relative(), "rooms/lobby/messages/m1");
        assert_eq!(relative.parent(), Some("rooms/lobby"));
    }

    /// A database, a collection or a document named `documents` is no marker of the root;
    /// every name built parses back into the parts it was built from.
    #[test]
    fn names_in_a_database_named_documents_round_trip() {
        for database in ["documents", "(default)", "d"] {
            let root = format!("projects/p/databases/{database}/documents");
            for (parent, collection, id) in [
                (None, "rooms", "lobby"),
                (None, "documents", "documents"),
                (Some("rooms/documents"), "documents", "m1"),
                (Some("documents/x"), "messages", "documents"),
                (Some("a/b/documents/documents"), "c", "d"),
            ] {
                let name = document_name(&root, parent, collection, id);
                let path = DocumentPath::parse(&name);
                assert_eq!(path.parent(), parent, "{name}");
                assert_eq!(path.id(), id, "{name}");
                assert_eq!(path.container(), container_name(&root, parent), "{name}");
                assert_eq!(name_at(&root, path.relative()), name);
                let relative = match parent {
                    Some(parent) => format!("{parent}/{collection}/{id}"),
                    None => format!("{collection}/{id}"),
                };
                assert_eq!(path.relative(), relative, "{name}");
            }
        }
    }
}
