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

use crate::error::Result;
use crate::model::document_path::DocumentPath;
use crate::model::order_stamp::OrderStamp;
use crate::model::sharded::Sharded;
use crate::write::transform::{Transform, checked};

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
/// type, `stamp` decides the order field: a write that stamps it sends no value for it but
/// the `REQUEST_TIME` transform, which the server applies after the fields, atomically with
/// them; a replace that keeps it is masked to every other field.
pub(crate) fn sharded_write<T: Sharded>(
    mut document: Document,
    mask: Option<Vec<String>>,
    existing: Existing,
    stamp: OrderStamp,
) -> Result<Write> {
    let mut transforms = Vec::new();
    let mut mask = mask;
    if T::DESCRIPTION.server_timestamp && stamp != OrderStamp::FromDocument {
        let order = sharded_indexes::field_path::unquoted_segment(T::ORDER_FIELD);
        let sets_order = match (&mut mask, stamp, existing) {
            (Some(paths), _, _) => {
                let before = paths.len();
                paths.retain(|path| path != T::ORDER_FIELD);
                paths.len() < before
            }
            (None, OrderStamp::OnCreate, Existing::Present) => {
                // A replace that keeps the stored time: every field the type stores, and
                // every one this document holds, but the order field.
                let mut paths: Vec<String> = T::TABLES
                    .stored_fields
                    .iter()
                    .map(|path| (*path).to_owned())
                    .chain(
                        document
                            .fields
                            .keys()
                            .map(|key| sharded_indexes::field_path::field_path(&[key])),
                    )
                    .filter(|path| path != T::ORDER_FIELD)
                    .collect();
                paths.sort_unstable();
                paths.dedup();
                document.fields.remove(order);
                mask = Some(paths);
                false
            }
            (None, OrderStamp::OnCreate, Existing::Any) => {
                return Err(crate::error::Error::InvalidUpdate(format!(
                    "`{}` stamps `{}` on create and keeps it on replace (OrderStamp::OnCreate), and an upsert in a batch, a bulk writer or a transaction cannot tell which it is before it applies: use insert or update, or OrderStamp::Always or OrderStamp::FromDocument",
                    T::COLLECTION,
                    T::ORDER_FIELD
                )));
            }
            (None, _, _) => true,
        };
        if sets_order {
            document.fields.remove(order);
            transforms.push(FieldTransform {
                field_path: T::ORDER_FIELD.to_owned(),
                transform_type: Some(TransformType::SetToServerValue(
                    ServerValue::RequestTime as i32,
                )),
            });
        }
    }
    Ok(Write {
        operation: Some(Operation::Update(document)),
        update_mask: mask.map(|field_paths| DocumentMask { field_paths }),
        update_transforms: transforms,
        current_document: existing.precondition(),
    })
}

/// An update of the existing document `name`: `fields` of `document` (none for transforms
/// alone), then `transforms`, keeping every other stored field, the shard among them.
pub(crate) fn transformed_write<T: Sharded>(
    name: &str,
    document: &T,
    fields: &[crate::model::fields::Field<T>],
    transforms: &[Transform<T>],
    stamp: OrderStamp,
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
            let (document, mask) = crate::write::serialize::masked::<T>(name, document, fields)?;
            (document, mask.into_iter().map(str::to_owned).collect())
        }
    };
    let transforms = checked(transforms, &mask)?;
    let mut write = sharded_write::<T>(document, Some(mask), Existing::Present, stamp)?;
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
    let mut write = sharded_write::<T>(
        document,
        Some(Vec::new()),
        Existing::Present,
        OrderStamp::default(),
    )?;
    write.update_transforms.extend(transforms);
    Ok(write)
}

/// What a single write stored that its caller did not send.
#[non_exhaustive]
pub struct Written<T: Sharded> {
    /// The document's id: the one given, or the one [`insert`](crate::model::handle::ShardedCollection::insert)
    /// drew.
    pub id: String,
    /// When the write was applied: the document's update time.
    pub update_time: SystemTime,
    /// For a `server_timestamp` type, the order field's value the server stored (Firestore's
    /// request time, at millisecond precision); `None` for any other type, and for an
    /// [`update_fields`](crate::model::handle::ShardedCollection::update_fields) that left the order field
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
    match commit_one_or_status(db, write).await? {
        Ok(written) => Ok(written),
        Err(status) => Err(firestore::errors::FirestoreError::from(status).into()),
    }
}

/// Creates `document` stamped with the server's time, or, where it exists, replaces it
/// keeping its stored time: a `server_timestamp` type's `upsert` under
/// [`OrderStamp::OnCreate`]. Two requests when the document exists; a document deleted
/// between them is created after all.
pub(crate) async fn upsert_stamped_on_create<T: Sharded>(
    db: &FirestoreDb,
    document: Document,
) -> Result<Written<T>> {
    use firestore::gcloud_sdk::tonic::Code;
    let stamp = OrderStamp::OnCreate;
    let create = || sharded_write::<T>(document.clone(), None, Existing::Absent, stamp);
    let replace = || sharded_write::<T>(document.clone(), None, Existing::Present, stamp);
    one_of_two(db, (create, Code::AlreadyExists), (replace, Code::NotFound)).await
}

/// A merge: `masked` (the fields of `mask`) written to the existing document, or `whole`
/// created where there is none.
pub(crate) async fn merge<T: Sharded>(
    db: &FirestoreDb,
    masked: Document,
    mask: Vec<String>,
    whole: Document,
    stamp: OrderStamp,
) -> Result<Written<T>> {
    use firestore::gcloud_sdk::tonic::Code;
    let update =
        || sharded_write::<T>(masked.clone(), Some(mask.clone()), Existing::Present, stamp);
    let create = || sharded_write::<T>(whole.clone(), None, Existing::Absent, stamp);
    one_of_two(db, (update, Code::NotFound), (create, Code::AlreadyExists)).await
}

/// Commits the first write, or, where the server refuses it for the document's existence
/// (its code given beside it), the second; where that is refused too (the document was
/// created or deleted in between), the first again: three rounds at most.
async fn one_of_two<T: Sharded>(
    db: &FirestoreDb,
    (first, first_refused): (
        impl Fn() -> Result<Write>,
        firestore::gcloud_sdk::tonic::Code,
    ),
    (second, second_refused): (
        impl Fn() -> Result<Write>,
        firestore::gcloud_sdk::tonic::Code,
    ),
) -> Result<Written<T>> {
    let mut last = None;
    for step in 0..6 {
        let (write, refused) = match step % 2 {
            0 => (first()?, first_refused),
            _ => (second()?, second_refused),
        };
        match commit_one_or_status(db, write).await? {
            Ok(written) => return Ok(written),
            Err(status) if status.code() == refused => last = Some(status),
            Err(status) => return Err(firestore::errors::FirestoreError::from(status).into()),
        }
    }
    let status = last.expect("the loop ran");
    Err(firestore::errors::FirestoreError::from(status).into())
}

/// [`commit_one`], with the status of a commit the server refused as it is, for a caller
/// that acts on it.
async fn commit_one_or_status<T: Sharded>(
    db: &FirestoreDb,
    write: Write,
) -> Result<std::result::Result<Written<T>, firestore::gcloud_sdk::tonic::Status>> {
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
    let request = CommitRequest {
        database: db.get_database_path().clone(),
        writes: vec![write],
        ..Default::default()
    };
    let response = match db.client().get().commit(request).await {
        Ok(response) => response.into_inner(),
        Err(status) => return Ok(Err(status)),
    };
    let result: WriteResult = response
        .write_results
        .into_iter()
        .next()
        .unwrap_or_default();
    let update_time = result
        .update_time
        .or(response.commit_time)
        .map(crate::wire::server_clock::system_time)
        .unwrap_or_else(SystemTime::now);
    let server_timestamp = match result.transform_results.into_iter().next() {
        Some(value) if fills_order => Some(T::OrderValue::deserialize(FirestoreValue { value })?),
        _ => None,
    };
    Ok(Ok(Written {
        id: DocumentPath::parse(&name).id().to_owned(),
        update_time,
        server_timestamp,
        marker: PhantomData,
    }))
}
