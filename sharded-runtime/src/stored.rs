use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{Document, value::ValueType};

use crate::{Error, Result, Sharded};

/// A document read back with what sharded stored beside the user's fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored<T> {
    /// The document id.
    pub id: String,
    /// The shard value the document was written with.
    pub shard: String,
    /// The user's fields.
    pub document: T,
}

impl<T: Sharded> Stored<T> {
    pub(crate) fn from_document(document: &Document) -> Result<Self> {
        let shard = match document
            .fields
            .get(T::SHARD_FIELD)
            .and_then(|v| v.value_type.as_ref())
        {
            Some(ValueType::StringValue(shard)) => shard.clone(),
            _ => {
                return Err(Error::MissingField {
                    document: document.name.clone(),
                    field: T::SHARD_FIELD.to_owned(),
                });
            }
        };
        Ok(Stored {
            id: document_id(&document.name).to_owned(),
            shard,
            document: FirestoreDb::deserialize_doc_to(document)?,
        })
    }
}

/// The last segment of a document name.
pub(crate) fn document_id(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}
