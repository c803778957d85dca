//! What a job changes in each document it scans: the shard (backfill and rebalance), or a
//! stored field's name (the rename job). Each says which fields the scan reads, whether a
//! document needs the change, and the field-masked write that makes it, with the scanned
//! update time as its precondition so a concurrent change is never overwritten.

use firestore::gcloud_sdk::google::firestore::v1::{
    Document, DocumentMask, Precondition, Value, Write, precondition, value::ValueType,
    write::Operation,
};

use crate::error::{Error, Result};
use crate::model::sharded::Sharded;
use crate::model::stored::shard_value;

/// The change a [`ShardJob`](super::ShardJob) makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Change {
    /// A current shard value where a document has none, or one the current set dropped.
    Shard,
    /// The top-level field stored as `from` stored as `to` instead (both stored names, as
    /// they are keys of the document's fields); a document holding both with different
    /// values is decided by `both`.
    Rename {
        from: String,
        to: String,
        both: BothNames,
    },
}

/// What the rename job does with a document that holds both names with different values:
/// a process on the old version wrote the old name after the new version wrote the new one
/// (or the reverse), and the document alone cannot tell which value is the fresher (Firestore
/// keeps one update time per document, not per field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum BothNames {
    /// Left as it is, counted and listed by id ([`Progress::both_names`](crate::job::shard_job::Progress)):
    /// for you to decide. The job's closing step counts it as still under the old name.
    #[default]
    Leave,
    /// The new name's value stays; the old name goes.
    KeepNew,
    /// The old name's value replaces the new one's; the old name goes.
    KeepOld,
}

/// What a scanned document needs of a job.
pub(crate) enum Needs {
    /// Nothing: the change is made.
    Nothing,
    /// This write.
    Write(Write),
    /// A decision the job does not make ([`BothNames::Leave`]).
    Decision,
}

impl Change {
    /// A rename of the top-level field stored as `from` to the type's field whose path is
    /// `to` (`T::fields().venue.path()`), checked.
    pub(crate) fn rename<T: Sharded>(from: &str, to: &'static str) -> Result<Change> {
        // `to` is a field path: one segment, bare or quoted.
        let to = match to.contains('.') && !(to.starts_with('`') && to.ends_with('`')) {
            true => "",
            false => sharded_indexes::field_path::unquoted_segment(to),
        };
        let reserved = |name: &str| name.starts_with("__") && name.ends_with("__");
        let top_level =
            |name: &str| !(name.is_empty() || name.contains(['`', '\\']) || reserved(name));
        if !top_level(from) || !top_level(to) {
            return Err(Error::InvalidOptions {
                option: "rename_field",
                expected: "top-level stored field names (no backquotes or backslashes, not `__name__`-like)",
            });
        }
        if from == to || from == T::SHARD_FIELD || to == T::SHARD_FIELD {
            return Err(Error::InvalidOptions {
                option: "rename_field",
                expected: "two different fields, neither the shard field",
            });
        }
        Ok(Change::Rename {
            from: from.to_owned(),
            to: to.to_owned(),
            both: BothNames::Leave,
        })
    }

    /// The change in words, as a tracked job stores it: `shard`, or `rename {from} to {to}`
    /// (and how it decides a document holding both, where not left).
    pub(crate) fn describe(&self) -> String {
        match self {
            Change::Shard => "shard".to_owned(),
            Change::Rename { from, to, both } => match both {
                BothNames::Leave => format!("rename {from} to {to}"),
                BothNames::KeepNew => format!("rename {from} to {to}, keeping {to} where both are"),
                BothNames::KeepOld => {
                    format!("rename {from} to {to}, keeping {from} where both are")
                }
            },
        }
    }

    /// The stored name a rename moves documents from.
    pub(crate) fn renamed_from(&self) -> Option<String> {
        match self {
            Change::Shard => None,
            Change::Rename { from, .. } => Some(from.clone()),
        }
    }

    /// What `document` (as the scan read it) needs: nothing, a write, or a decision.
    pub(crate) fn needs<T: Sharded>(&self, document: &Document) -> Needs {
        if !self.needed::<T>(document) {
            return Needs::Nothing;
        }
        if let Change::Rename { from, to, both } = self
            && let (Some(old), Some(new)) = (document.fields.get(from), document.fields.get(to))
            && !crate::write::bulk::same_value(old, new)
            && *both == BothNames::Leave
        {
            return Needs::Decision;
        }
        Needs::Write(self.write::<T>(document))
    }

    /// The fields the scan reads of each document, as field paths.
    pub(crate) fn projection<T: Sharded>(&self) -> Vec<String> {
        match self {
            Change::Shard => vec![T::SHARD_FIELD_PATH.to_owned()],
            Change::Rename { from, to, .. } => vec![path(from), path(to)],
        }
    }

    /// Whether `document` (as the scan read it) still needs the change.
    pub(crate) fn needed<T: Sharded>(&self, document: &Document) -> bool {
        match self {
            Change::Shard => {
                !shard_value::<T>(document).is_some_and(|shard| T::SHARD_VALUES.contains(&shard))
            }
            Change::Rename { from, .. } => document.fields.contains_key(from),
        }
    }

    /// The write that makes the change to `document`, if it has not changed since it was read.
    pub(crate) fn write<T: Sharded>(&self, document: &Document) -> Write {
        let (fields, mask) = match self {
            Change::Shard => {
                let shard = Value {
                    value_type: Some(ValueType::StringValue(
                        crate::model::reshard::draw::<T>().to_owned(),
                    )),
                };
                (
                    [(T::SHARD_FIELD.to_owned(), shard)].into_iter().collect(),
                    vec![T::SHARD_FIELD_PATH.to_owned()],
                )
            }
            // The value under its new name and the old name gone, in one write; where the
            // new name holds the same value already, or holds another and the new one is
            // kept, only the old name goes.
            Change::Rename { from, to, both } => match document.fields.get(to) {
                Some(_) if *both != BothNames::KeepOld => (Default::default(), vec![path(from)]),
                _ => (
                    document
                        .fields
                        .get(from)
                        .map(|value| (to.clone(), value.clone()))
                        .into_iter()
                        .collect(),
                    vec![path(from), path(to)],
                ),
            },
        };
        Write {
            operation: Some(Operation::Update(Document {
                name: document.name.clone(),
                fields,
                ..Document::default()
            })),
            update_mask: Some(DocumentMask { field_paths: mask }),
            current_document: Some(Precondition {
                condition_type: document
                    .update_time
                    .map(precondition::ConditionType::UpdateTime)
                    .or(Some(precondition::ConditionType::Exists(true))),
            }),
            ..Write::default()
        }
    }
}

/// The field path of the top-level field stored as `name`.
fn path(name: &str) -> String {
    sharded_indexes::field_path::field_path(&[name])
}
