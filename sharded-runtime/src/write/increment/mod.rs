//! Increments that count once: an addition to one shard document of a counter, drawn at
//! random, committed with a marker document keyed by the increment's id.
//!
//! An increment counts exactly once. Each carries an id ([`Increment`]), and its commit
//! creates `d/_sharded_increments/<id>` beside the shard's addition, atomically, on the
//! precondition that it does not exist yet. An attempt whose answer was lost is sent again:
//! if the first had landed, the second is refused whole (`ALREADY_EXISTS`) and nothing is
//! added twice; if it had not, the second adds. Cost per increment: one commit of two writes,
//! and one small document kept for [`MARKER_LIFETIME`] (then deleted by the TTL policy the
//! index plan declares). An addition past the counter's integer type is undone
//! (`saturation`).

mod apply;
mod digest;
mod marker;
mod saturation;

use firestore::gcloud_sdk::google::firestore::v1::document_transform::FieldTransform;
use firestore::gcloud_sdk::google::firestore::v1::document_transform::field_transform::TransformType;
use firestore::gcloud_sdk::google::firestore::v1::{
    Document, DocumentMask, Value, Write, value::ValueType, write::Operation,
};
use rand::Rng;

use crate::error::Result;
use crate::model::counter_field::{CounterField, SHARD_VALUE_FIELD};

pub use apply::MARKER_LIFETIME;
pub(crate) use apply::{IncrementCommit, commit_exactly_once, marker_expiry};
pub(crate) use digest::CommitDigest;
pub(crate) use marker::{Placed, Recorded};
pub(crate) use saturation::{check as check_saturation, check_landed};

/// One addition to a counter, with the id that makes it count once: applying the same
/// `Increment` again (after an [`Error::IncrementUnsettled`](crate::error::Error::IncrementUnsettled),
/// or in a batch sent again) adds nothing more once it has been added.
///
/// An increment is its id and its payload (the counter and the amount): its marker records
/// both, so the same id applied again with the same payload is a success that adds nothing,
/// and with another counter or amount
/// [`Error::IncrementConflict`](crate::error::Error::IncrementConflict), with nothing written, as an
/// idempotency key is bound to its request. An amount of 0 is an increment like any other:
/// it adds nothing, and takes its id.
///
/// [`new`](Self::new) draws a random id; [`with_id`](Self::with_id) takes the caller's (a
/// request id the caller's own retries share, so that a request retried from outside counts
/// once too).
pub struct Increment<T> {
    field: CounterField<T>,
    by: i64,
    id: String,
}

impl<T> Increment<T> {
    /// Adds `by` (negative to subtract) to `field`, under a new random id. An amount the
    /// counter's Rust type cannot take as a change (more than its largest value either way:
    /// `i32::MAX + 1` on an `i32` counter; a `u32` counter takes `-5`, a decrement) is refused
    /// wherever the increment is applied, before anything is sent
    /// ([`Error::InvalidUpdate`](crate::error::Error::InvalidUpdate)); [`with_id`](Self::with_id)
    /// refuses it at once.
    pub fn new(field: CounterField<T>, by: i64) -> Self {
        Increment {
            field,
            by,
            id: crate::model::document_id::generate_document_id(),
        }
    }

    /// Adds `by` to `field` under the id `id`, checked as a document id
    /// ([`Error::InvalidDocumentId`](crate::error::Error::InvalidDocumentId) otherwise) and `by` as
    /// [`new`](Self::new) checks it. An id names one increment of a counted document: the same
    /// id on two documents is two increments, and on one document with another counter or
    /// amount a conflict.
    pub fn with_id(field: CounterField<T>, by: i64, id: &str) -> Result<Self> {
        crate::model::document_id::check_document_id(id)?;
        check_amount(field, by)?;
        Ok(Increment {
            field,
            by,
            id: id.to_owned(),
        })
    }

    /// Its id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// What it adds.
    pub fn by(&self) -> i64 {
        self.by
    }

    /// The counter it adds to.
    pub fn field(&self) -> CounterField<T> {
        self.field
    }

    /// It, placed on the counted document `document` (a full name), its shard drawn at
    /// random; [`Error::InvalidUpdate`](crate::error::Error::InvalidUpdate) for an amount the
    /// counter's type cannot take, before anything is sent.
    pub(crate) fn placed(&self, document: String) -> Result<marker::Placed> {
        check_amount(self.field, self.by)?;
        Ok(marker::Placed {
            document,
            id: self.id.clone(),
            field: self.field.path,
            amount: self.by,
            shard: rand::rng().random_range(0..self.field.shards),
        })
    }
}

/// Adds `by` to the shard document `name` (a full name), creating it where it does not
/// exist: an empty mask writes no field, and only the transform changes it.
pub(crate) fn shard_addition(name: String, by: i64) -> Write {
    Write {
        operation: Some(Operation::Update(Document {
            name,
            ..Document::default()
        })),
        update_mask: Some(DocumentMask::default()),
        update_transforms: vec![FieldTransform {
            field_path: SHARD_VALUE_FIELD.to_owned(),
            transform_type: Some(TransformType::Increment(Value {
                value_type: Some(ValueType::IntegerValue(by)),
            })),
        }],
        ..Write::default()
    }
}

/// Refuses an amount the counter's Rust type cannot hold as a change: one past its largest
/// value, either way.
fn check_amount<T>(field: CounterField<T>, by: i64) -> Result<()> {
    let holds = field.holds;
    match by.unsigned_abs() <= holds.max.unsigned_abs() {
        true => Ok(()),
        false => Err(crate::error::Error::InvalidUpdate(format!(
            "an increment of {by} to the counter `{}` cannot fit its type `{}`: an amount is at most {} either way",
            field.path, holds.name, holds.max
        ))),
    }
}

impl<T> Clone for Increment<T> {
    fn clone(&self) -> Self {
        Increment {
            field: self.field,
            by: self.by,
            id: self.id.clone(),
        }
    }
}

impl<T> std::fmt::Debug for Increment<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Increment")
            .field("field", &self.field)
            .field("by", &self.by)
            .field("id", &self.id)
            .finish()
    }
}
