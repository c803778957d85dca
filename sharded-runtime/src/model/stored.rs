use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{Document, value::ValueType};

use crate::error::{Error, Result};
use crate::model::document_path::DocumentPath;
use crate::model::sharded::Sharded;

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
        Self::read_as::<T>(document)
    }

    /// The document read as `T`, or why it does not read as one.
    pub(crate) fn decode(document: &Document) -> Decoded<T> {
        Self::from_document(document).map_err(|error| {
            let path = DocumentPath::parse(&document.name);
            Undecodable {
                id: path.id().to_owned(),
                parent: path.parent().map(str::to_owned),
                name: document.name.clone(),
                reason: error.to_string(),
            }
        })
    }
}

/// A document a query matched that does not read as the query's type: another client wrote
/// it differently (a double where the struct has an integer, a missing field, a number where a
/// timestamp is expected). The `*_with_errors` reads report it in its place, beside the
/// documents that do read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Undecodable {
    /// The document id.
    pub id: String,
    /// The parent document's path below the database root, for a subcollection's document.
    pub parent: Option<String>,
    /// The document's full name.
    pub name: String,
    /// Why it does not read: the decoding error.
    pub reason: String,
}

impl std::fmt::Display for Undecodable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} does not read: {}", self.name, self.reason)
    }
}

/// A matched document, read, or why it does not read.
pub type Decoded<T> = std::result::Result<Stored<T>, Undecodable>;

impl<T: serde::de::DeserializeOwned> Stored<T> {
    /// A document of `S`'s collection read as `T` (all of `S`, or a projection of it).
    pub(crate) fn read_as<S: Sharded>(document: &Document) -> Result<Self> {
        let path = DocumentPath::parse(&document.name);
        let shard = shard_value::<S>(document)
            .ok_or_else(|| Error::MissingField {
                document: document.name.clone(),
                field: S::SHARD_FIELD.to_owned(),
            })?
            .to_owned();
        Ok(Stored {
            id: path.id().to_owned(),
            parent: path.parent().map(str::to_owned),
            shard,
            document: FirestoreDb::deserialize_doc_to(document)?,
        })
    }
}

/// The shard value `document` stores, when it stores a string there.
pub(crate) fn shard_value<T: Sharded>(document: &Document) -> Option<&str> {
    match document.fields.get(T::SHARD_FIELD)?.value_type.as_ref()? {
        ValueType::StringValue(shard) => Some(shard),
        _ => None,
    }
}
