//! A sharded type's document serialized for a write, in one place for every write path: with
//! a freshly drawn shard and the write guard's check that every path sharded queries need is
//! written (`serialize`), or for an update of some fields only (`masked`).

use firestore::firestore_document_from_serializable;
use firestore::gcloud_sdk::google::firestore::v1::Document;

use crate::error::{Error, Result};
use crate::model::fields::Field;
use crate::model::sharded::Sharded;
use crate::model::value_order::field_value;
use crate::write::write_guard::{MAX_TRACKED, Position, Required, length_mask};

/// `document` as a Firestore document named `name`, with a freshly drawn shard, checked to
/// hold every field sharded queries need.
pub fn serialize<T: Sharded>(document: &T, name: &str) -> Result<Document> {
    let tables = T::TABLES;
    if tables.required_fields.len() > MAX_TRACKED {
        let document = serialize_unguarded(document, name)?;
        check_written::<T>(&document, |_| true)?;
        return Ok(document);
    }
    // The guard, in the serialization pass: which required paths the serializer saw.
    let required = Required::new(
        tables.required_fields,
        tables.required_segments,
        const { length_mask(T::TABLES.required_fields, T::TABLES.required_segments) },
    );
    let document = crate::write::document::to_document(
        name,
        document,
        T::SHARD_FIELD,
        crate::model::reshard::draw::<T>(),
        Position::top(&required),
    )?;
    match required.missing() {
        Some(i) => Err(Error::FieldNotWritten {
            path: T::REQUIRED_FIELDS[i],
        }),
        None => Ok(document),
    }
}

/// [`serialize`] without the write guard: the benchmarks' baseline for the guard's cost.
pub fn serialize_unguarded<T: Sharded>(document: &T, name: &str) -> Result<Document> {
    let nothing = Required::new(&[], &[], 0);
    crate::write::document::to_document(
        name,
        document,
        T::SHARD_FIELD,
        crate::model::reshard::draw::<T>(),
        Position::top(&nothing),
    )
}

/// `document` named `name` for an update of `fields` only (and the shard), with the field
/// mask: the write guard checks the required paths the mask writes; the others stay as stored.
pub(crate) fn masked<T: Sharded>(
    name: &str,
    document: &T,
    fields: &[Field<T>],
) -> Result<(Document, Vec<&'static str>)> {
    let mut mask: Vec<&'static str> = fields.iter().map(Field::path).collect();
    mask.sort_unstable();
    mask.dedup();
    if mask.is_empty() {
        return Err(Error::InvalidUpdate(
            "no fields to update: name at least one with `T::fields()`".into(),
        ));
    }
    let document = firestore_document_from_serializable(name, document)?;
    check_written::<T>(&document, |path| {
        mask.iter().any(|field| {
            path == *field
                || path
                    .strip_prefix(field)
                    .is_some_and(|rest| rest.starts_with('.'))
        })
    })?;
    Ok((document, mask))
}

/// The write guard on a serialized document, over the required paths `checked` selects: for
/// types with more required paths than the serialization pass tracks, and for field-masked
/// updates. A document without its order field or a required indexed path would be stored and
/// then never returned by a sharded query.
fn check_written<T: Sharded>(document: &Document, checked: impl Fn(&str) -> bool) -> Result<()> {
    match T::REQUIRED_FIELDS
        .iter()
        .find(|path| checked(path) && field_value(document, path).is_none())
    {
        Some(path) => Err(Error::FieldNotWritten { path }),
        None => Ok(()),
    }
}
