//! A serialized sharded document as the `Write` every write path sends (single writes, batch
//! and bulk writers, atomic batches, transactions), and a single write's commit: the one place
//! a `server_timestamp` type's order field becomes Firestore's `REQUEST_TIME` transform.

use std::marker::PhantomData;
use std::time::SystemTime;

use firestore::gcloud_sdk::google::firestore::v1::document_transform::FieldTransform;
use firestore::gcloud_sdk::google::firestore::v1::document_transform::field_transform::{
    ServerValue, TransformType,
};
use firestore::gcloud_sdk::google::firestore::v1::{
    CommitRequest, CommitResponse, Document, DocumentMask, Precondition, Write, WriteResult,
    precondition, write::Operation,
};
use firestore::{FirestoreDb, FirestoreValue};
use serde::Deserialize as _;

use crate::document_path::DocumentPath;
use crate::transform::{Transform, checked};
use crate::{Result, Sharded};

/// A type whose values can be the order field of a `server_timestamp` type: what the server
/// stores there is a timestamp, read back as this type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a server timestamp",
    label = "the order field of a `server_timestamp` type is filled with the server's time",
    note = "declare the order field as `FirestoreTimestamp` or `SystemTime`, or remove `server_timestamp`"
)]
pub trait ServerTimestamp {}

impl ServerTimestamp for firestore::FirestoreTimestamp {}
impl ServerTimestamp for SystemTime {}

/// How a write treats the document already there.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Existing {
    /// Replaced, or created (upsert).
    Any,
    /// Must not exist (insert).
    Absent,
    /// Must exist (update).
    Present,
}

impl Existing {
    pub(crate) fn precondition(self) -> Option<Precondition> {
        let exists = match self {
            Existing::Any => return None,
            Existing::Absent => false,
            Existing::Present => true,
        };
        Some(Precondition {
            condition_type: Some(precondition::ConditionType::Exists(exists)),
        })
    }
}

/// `document` (serialized and checked, its shard drawn) as the `Write` that stores it: the
/// whole document, or only the `mask`ed paths (and the shard). For a `server_timestamp`
/// type, a write that sets the order field sends no value for it but the `REQUEST_TIME`
/// transform, which the server applies after the fields, atomically with them.
pub(crate) fn sharded_write<T: Sharded>(
    mut document: Document,
    mask: Option<Vec<String>>,
    existing: Existing,
) -> Write {
    let mut transforms = Vec::new();
    let mut mask = mask;
    if T::DESCRIPTION.server_timestamp {
        let sets_order = match &mut mask {
            None => true,
            Some(paths) => {
                let before = paths.len();
                paths.retain(|path| path != T::ORDER_FIELD);
                paths.len() < before
            }
        };
        if sets_order {
            document
                .fields
                .remove(sharded_indexes::field_path::unquoted_segment(
                    T::ORDER_FIELD,
                ));
            transforms.push(FieldTransform {
                field_path: T::ORDER_FIELD.to_owned(),
                transform_type: Some(TransformType::SetToServerValue(
                    ServerValue::RequestTime as i32,
                )),
            });
        }
    }
    Write {
        operation: Some(Operation::Update(document)),
        update_mask: mask.map(|field_paths| DocumentMask { field_paths }),
        update_transforms: transforms,
        current_document: existing.precondition(),
    }
}

/// An update of the existing document `name`: `fields` of `document` (none for transforms
/// alone), then `transforms`, keeping every other stored field, the shard among them.
pub(crate) fn transformed_write<T: Sharded>(
    name: &str,
    document: &T,
    fields: &[crate::Field<T>],
    transforms: &[Transform<T>],
) -> Result<Write> {
    let (document, mask) = match fields.is_empty() {
        true => (
            Document {
                name: name.to_owned(),
                ..Document::default()
            },
            Vec::new(),
        ),
        false => {
            let (document, mask) = crate::guarded::masked::<T>(name, document, fields)?;
            (document, mask.into_iter().map(str::to_owned).collect())
        }
    };
    let transforms = checked(transforms, &mask)?;
    let mut write = sharded_write::<T>(document, Some(mask), Existing::Present);
    write.update_transforms.extend(transforms);
    Ok(write)
}

/// A transforms-only update of the document `name`.
pub(crate) fn transform_only<T: Sharded>(name: &str, transforms: &[Transform<T>]) -> Result<Write> {
    let transforms = checked(transforms, &[])?;
    let document = Document {
        name: name.to_owned(),
        ..Document::default()
    };
    let mut write = sharded_write::<T>(document, Some(Vec::new()), Existing::Present);
    write.update_transforms.extend(transforms);
    Ok(write)
}

/// What a single write stored that its caller did not send.
#[non_exhaustive]
pub struct Written<T: Sharded> {
    /// The document's id: the one given, or the one [`insert`](crate::ShardedCollection::insert)
    /// drew.
    pub id: String,
    /// When the write was applied: the document's update time.
    pub update_time: SystemTime,
    /// For a `server_timestamp` type, the order field's value the server stored (Firestore's
    /// request time, at millisecond precision); `None` for any other type, and for an
    /// [`update_fields`](crate::ShardedCollection::update_fields) that left the order field
    /// as it was.
    pub server_timestamp: Option<T::OrderValue>,
    marker: PhantomData<fn() -> T>,
}

impl<T: Sharded> Clone for Written<T> {
    fn clone(&self) -> Self {
        Written {
            id: self.id.clone(),
            update_time: self.update_time,
            server_timestamp: self.server_timestamp.clone(),
            marker: PhantomData,
        }
    }
}

impl<T: Sharded> std::fmt::Debug for Written<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Written")
            .field("id", &self.id)
            .field("update_time", &self.update_time)
            .field("server_timestamp", &self.server_timestamp)
            .finish()
    }
}

/// Commits `writes` together, as one `Commit` (outside a transaction): all apply or none.
pub(crate) async fn commit(db: &FirestoreDb, writes: Vec<Write>) -> Result<CommitResponse> {
    let request = CommitRequest {
        database: db.get_database_path().clone(),
        writes,
        ..Default::default()
    };
    Ok(db
        .client()
        .get()
        .commit(request)
        .await
        .map_err(firestore::errors::FirestoreError::from)?
        .into_inner())
}

/// Commits `write` alone, as `Commit` (the one RPC that applies transforms and answers with
/// their results).
pub(crate) async fn commit_one<T: Sharded>(db: &FirestoreDb, write: Write) -> Result<Written<T>> {
    let name = match &write.operation {
        Some(Operation::Update(document)) => document.name.clone(),
        _ => unreachable!("a sharded single write is an update"),
    };
    // `sharded_write` puts the order field's request time first, before any other transform.
    let fills_order = T::DESCRIPTION.server_timestamp
        && write.update_transforms.first().is_some_and(|transform| {
            transform.field_path == T::ORDER_FIELD
                && matches!(
                    transform.transform_type,
                    Some(TransformType::SetToServerValue(_))
                )
        });
    let response = commit(db, vec![write]).await?;
    let result: WriteResult = response
        .write_results
        .into_iter()
        .next()
        .unwrap_or_default();
    let update_time = result
        .update_time
        .or(response.commit_time)
        .map(crate::stored::system_time)
        .unwrap_or_else(SystemTime::now);
    let server_timestamp = match result.transform_results.into_iter().next() {
        Some(value) if fills_order => Some(T::OrderValue::deserialize(FirestoreValue { value })?),
        _ => None,
    };
    Ok(Written {
        id: DocumentPath::parse(&name).id().to_owned(),
        update_time,
        server_timestamp,
        marker: PhantomData,
    })
}
