use std::time::{Duration, SystemTime};

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{Document, value::ValueType};
use firestore::gcloud_sdk::prost_types::Timestamp;

use crate::{Error, Result, Sharded};

/// A document read back with what sharded stored beside the user's fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored<T> {
    /// The document id.
    pub id: String,
    /// The path of the parent document below the database root (`rooms/lobby`) for a
    /// subcollection's document; `None` for a top-level collection's.
    pub parent: Option<String>,
    /// The shard value the document was written with.
    pub shard: String,
    /// The user's fields.
    pub document: T,
}

impl<T: Sharded> Stored<T> {
    pub(crate) fn from_document(document: &Document) -> Result<Self> {
        let shard = shard_value::<T>(document)
            .ok_or_else(|| Error::MissingField {
                document: document.name.clone(),
                field: T::SHARD_FIELD.to_owned(),
            })?
            .to_owned();
        Ok(Stored {
            id: document_id(&document.name).to_owned(),
            parent: parent_of(&document.name),
            shard,
            document: FirestoreDb::deserialize_doc_to(document)?,
        })
    }
}

/// The full name of the document `id` of `collection`, under a database's documents path:
/// the inverse of [`document_id`].
pub(crate) fn document_name(documents_path: &str, collection: &str, id: &str) -> String {
    format!("{documents_path}/{collection}/{id}")
}

/// The shard value `document` stores, when it stores a string there.
pub(crate) fn shard_value<T: Sharded>(document: &Document) -> Option<&str> {
    match document.fields.get(T::SHARD_FIELD)?.value_type.as_ref()? {
        ValueType::StringValue(shard) => Some(shard),
        _ => None,
    }
}

/// The document `name`'s path below the database root (`rooms/lobby/messages/m1`): what
/// follows `projects/{project}/databases/{database}/documents/`, counted by segments, since a
/// database (or a collection) may itself be named `documents`. A name that is not a full
/// one is its own path.
pub(crate) fn relative_path(name: &str) -> &str {
    match name.splitn(6, '/').collect::<Vec<_>>()[..] {
        ["projects", _, "databases", _, "documents", path] => path,
        _ => name,
    }
}

/// What holds the document `name`: the full name of its parent document, or the database's
/// documents root for a top-level one.
pub(crate) fn container_of(name: &str) -> &str {
    name.rsplitn(3, '/').nth(2).unwrap_or(name)
}

/// The path below the database root of the parent document of the document `name`, if it
/// has one (`.../documents/rooms/lobby/messages/m1` → `rooms/lobby`).
pub(crate) fn parent_of(name: &str) -> Option<String> {
    let relative = relative_path(name);
    let segments: Vec<&str> = relative.split('/').collect();
    (segments.len() > 2).then(|| segments[..segments.len() - 2].join("/"))
}

/// The last segment of a document name.
pub(crate) fn document_id(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// A time the server stamped (an update time, a read time) as a `SystemTime`; the server's
/// times are never before the epoch.
pub(crate) fn system_time(timestamp: Timestamp) -> SystemTime {
    let since_epoch = Duration::new(
        timestamp.seconds.max(0) as u64,
        timestamp.nanos.max(0) as u32,
    );
    SystemTime::UNIX_EPOCH + since_epoch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_into_their_parts() {
        let top = "projects/p/databases/(default)/documents/rooms/lobby";
        let nested = "projects/p/databases/(default)/documents/rooms/lobby/messages/m1";
        assert_eq!(relative_path(nested), "rooms/lobby/messages/m1");
        assert_eq!(container_of(nested), top);
        assert_eq!(
            container_of(top),
            "projects/p/databases/(default)/documents"
        );
        assert_eq!(parent_of(nested).as_deref(), Some("rooms/lobby"));
        assert_eq!(parent_of(top), None);
        assert_eq!(document_id(nested), "m1");
    }

    /// A database, a collection or a document named `documents` is no marker of the root.
    #[test]
    fn names_in_a_database_named_documents_split_into_their_parts() {
        for database in ["documents", "(default)", "d"] {
            let root = format!("projects/p/databases/{database}/documents");
            for path in [
                "rooms/lobby",
                "documents/documents",
                "rooms/documents/documents/m1",
                "documents/x/messages/documents",
            ] {
                let name = format!("{root}/{path}");
                assert_eq!(relative_path(&name), path, "{name}");
                let segments: Vec<&str> = path.split('/').collect();
                let parent = segments[..segments.len() - 2].join("/");
                assert_eq!(
                    parent_of(&name),
                    (!parent.is_empty()).then_some(parent.clone()),
                    "{name}"
                );
                let container = match parent.is_empty() {
                    true => root.clone(),
                    false => format!("{root}/{parent}"),
                };
                assert_eq!(container_of(&name), container, "{name}");
            }
        }
    }
}
