use std::time::{Duration, SystemTime};

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{Document, value::ValueType};
use firestore::gcloud_sdk::prost_types::Timestamp;

use crate::document_path::DocumentPath;
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
        Self::read_as::<T>(document)
    }
}

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

/// A time the server stamped (an update time, a read time) as a `SystemTime`; the server's
/// times are never before the epoch.
pub(crate) fn system_time(timestamp: Timestamp) -> SystemTime {
    let since_epoch = Duration::new(
        timestamp.seconds.max(0) as u64,
        timestamp.nanos.max(0) as u32,
    );
    SystemTime::UNIX_EPOCH + since_epoch
}
