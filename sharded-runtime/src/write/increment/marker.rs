//! An increment's marker, `<document>/_sharded_increments/<id>`: created in the same commit
//! as the increment's addition, on the precondition that it does not exist, it is what makes
//! an increment count once. It records what the increment is (its counter, its amount, the
//! shard its addition went to) and the digest of the commit it landed in, so that the same id
//! applied again is told apart: the same increment (counted once, a success), another
//! increment under the same id ([`Error::IncrementConflict`]), or a commit other than the one
//! that landed it ([`Error::IncrementAlreadyApplied`]).

use std::time::SystemTime;

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::document_transform::FieldTransform;
use firestore::gcloud_sdk::google::firestore::v1::document_transform::field_transform::TransformType;
use firestore::gcloud_sdk::google::firestore::v1::{
    BatchGetDocumentsRequest, Document, DocumentMask, Value, Write, batch_get_documents_response,
    value::ValueType, write::Operation,
};

use super::digest::CommitDigest;
use crate::error::{Error, Result};
use crate::model::counter_field::{
    INCREMENTS_COLLECTION, MARKER_AMOUNT_FIELD, MARKER_COMMIT_FIELD, MARKER_COUNTER_FIELD,
    MARKER_EXPIRY_FIELD, MARKER_SHARD_FIELD, SHARD_INCREMENT_FIELD, SHARD_VALUE_FIELD,
};
use crate::write::firestore_write::Existing;

/// An increment placed on one counted document, its shard drawn: what its two writes are.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    /// The counted document's full name.
    pub(crate) document: String,
    pub(crate) id: String,
    /// The counter's stored field path.
    pub(crate) field: &'static str,
    pub(crate) amount: i64,
    pub(crate) shard: u32,
}

impl Placed {
    /// The marker's full name.
    pub(crate) fn marker_name(&self) -> String {
        marker_name(&self.document, &self.id)
    }

    /// The full name of the shard document its addition goes to.
    pub(crate) fn shard_name(&self) -> String {
        format!(
            "{}/{}/{}",
            self.document,
            sharded_indexes::counter_collection_id(self.field),
            self.shard
        )
    }

    /// Adds it to a commit's digest.
    pub(crate) fn digest_into(&self, digest: &mut CommitDigest) {
        digest.increment(&self.document, self.field, self.amount, &self.id);
    }

    /// Its two writes, committed together: the marker's creation (on the precondition that
    /// it does not exist) recording it, the commit's digest and its expiry; and the addition
    /// to its shard document, which names the marker (what the security rules bind).
    pub(crate) fn writes(&self, commit: &str, expire_at: SystemTime) -> [Write; 2] {
        let text = |text: &str| Value {
            value_type: Some(ValueType::StringValue(text.to_owned())),
        };
        // Whole seconds: a TTL needs no finer, and Firestore refuses finer than microseconds.
        let expire_at = firestore::gcloud_sdk::prost_types::Timestamp {
            seconds: expire_at
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |since| since.as_secs() as i64),
            nanos: 0,
        };
        let fields = [
            (
                MARKER_EXPIRY_FIELD,
                Value {
                    value_type: Some(ValueType::TimestampValue(expire_at)),
                },
            ),
            (MARKER_COUNTER_FIELD, text(self.field)),
            (MARKER_SHARD_FIELD, text(&self.shard.to_string())),
            (
                MARKER_AMOUNT_FIELD,
                Value {
                    value_type: Some(ValueType::IntegerValue(self.amount)),
                },
            ),
            (MARKER_COMMIT_FIELD, text(commit)),
        ];
        let marker = Write {
            operation: Some(Operation::Update(Document {
                name: self.marker_name(),
                fields: fields
                    .into_iter()
                    .map(|(name, value)| (name.to_owned(), value))
                    .collect(),
                ..Document::default()
            })),
            current_document: Existing::Absent.precondition(),
            ..Write::default()
        };
        let addition = Write {
            operation: Some(Operation::Update(Document {
                name: self.shard_name(),
                fields: [(SHARD_INCREMENT_FIELD.to_owned(), text(&self.id))]
                    .into_iter()
                    .collect(),
                ..Document::default()
            })),
            // The mask names only the marker's id: the document is created if need be, and
            // its value changes only by the transform.
            update_mask: Some(DocumentMask {
                field_paths: vec![SHARD_INCREMENT_FIELD.to_owned()],
            }),
            update_transforms: vec![FieldTransform {
                field_path: SHARD_VALUE_FIELD.to_owned(),
                transform_type: Some(TransformType::Increment(Value {
                    value_type: Some(ValueType::IntegerValue(self.amount)),
                })),
            }],
            ..Write::default()
        };
        [marker, addition]
    }

    /// `field += amount`, as errors name an increment's payload.
    pub(crate) fn payload(&self) -> String {
        payload_text(self.field, self.amount)
    }

    /// It on the shard document its marker `recorded` says its addition went to (where the
    /// marker does not say, its own): what a check of an increment learnt to have landed
    /// reads, since the marker may be of an earlier application of the same increment, which
    /// drew its own shard.
    pub(crate) fn on_recorded_shard(&self, recorded: Option<&Recorded>) -> Placed {
        Placed {
            shard: recorded
                .and_then(|recorded| recorded.shard)
                .unwrap_or(self.shard),
            ..self.clone()
        }
    }

    /// [`Error::CounterSaturated`] for it: its shard is at the end of Firestore's integers.
    pub(crate) fn saturated(&self) -> Error {
        Error::CounterSaturated {
            document: self.document.clone(),
            increment: self.id.clone(),
            field: self.field.to_owned(),
            shard: self.shard,
        }
    }
}

/// An increment's payload as errors name it: "`likes` +5".
fn payload_text(field: &str, amount: i64) -> String {
    format!("`{field}` {amount:+}")
}

/// The marker of the increment `id` of `document` (a full name).
pub(crate) fn marker_name(document: &str, id: &str) -> String {
    format!("{document}/{INCREMENTS_COLLECTION}/{id}")
}

/// What a marker found in Firestore records.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recorded {
    /// The counter and the amount, `None` in a marker written before markers recorded them
    /// (which any payload matches).
    pub(crate) payload: Option<(String, i64)>,
    /// The digest of the commit it landed in (`None` likewise).
    pub(crate) commit: Option<String>,
    /// When it was created: when its increment landed.
    pub(crate) created: Option<SystemTime>,
    /// The shard document its increment's addition went to (`None` likewise).
    pub(crate) shard: Option<u32>,
}

impl Recorded {
    pub(crate) fn of(marker: &Document) -> Recorded {
        let value = |name| {
            marker
                .fields
                .get(name)
                .and_then(|value: &Value| value.value_type.as_ref())
        };
        let text = |name| match value(name) {
            Some(ValueType::StringValue(text)) => Some(text.clone()),
            _ => None,
        };
        let amount = match value(MARKER_AMOUNT_FIELD) {
            Some(ValueType::IntegerValue(amount)) => Some(*amount),
            _ => None,
        };
        let (field, commit) = (text(MARKER_COUNTER_FIELD), text(MARKER_COMMIT_FIELD));
        Recorded {
            payload: field.zip(amount),
            commit,
            created: marker
                .create_time
                .map(crate::wire::server_clock::system_time),
            shard: text(MARKER_SHARD_FIELD).and_then(|shard| shard.parse().ok()),
        }
    }

    /// Whether it records `placed`'s counter and amount.
    pub(crate) fn is_of(&self, placed: &Placed) -> bool {
        self.payload
            .as_ref()
            .is_none_or(|(field, amount)| field == placed.field && *amount == placed.amount)
    }

    /// [`Error::IncrementConflict`] for `placed`, whose id this marker holds for another
    /// increment.
    pub(crate) fn conflict(&self, placed: &Placed) -> Error {
        let recorded = match &self.payload {
            Some((field, amount)) => payload_text(field, *amount),
            None => "another increment".to_owned(),
        };
        Error::IncrementConflict {
            document: placed.document.clone(),
            increment: placed.id.clone(),
            recorded,
            attempted: placed.payload(),
        }
    }
}

/// The markers `names`, in their order (`None` where one does not exist), at one read time,
/// read with the reads' retries.
pub(crate) async fn read_markers(
    db: &FirestoreDb,
    names: &[String],
) -> Result<Vec<Option<Recorded>>> {
    let request = BatchGetDocumentsRequest {
        database: db.get_database_path().clone(),
        documents: names.to_vec(),
        ..Default::default()
    };
    let answers =
        crate::wire::lookup::batch_get(db, request, &crate::wire::retry::QUERY_READS).await?;
    let mut found = std::collections::HashMap::new();
    for answer in answers {
        if let Some(read_time) = answer.read_time {
            crate::wire::server_clock::observe(
                db,
                crate::wire::server_clock::system_time(read_time),
            );
        }
        match answer.result {
            Some(batch_get_documents_response::Result::Found(marker)) => {
                found.insert(marker.name.clone(), Some(Recorded::of(&marker)));
            }
            Some(batch_get_documents_response::Result::Missing(name)) => {
                found.insert(name, None);
            }
            None => {}
        }
    }
    names
        .iter()
        .map(|name| {
            found.remove(name).ok_or_else(|| {
                Error::UnexpectedAnswer(format!("a lookup answered nothing for `{name}`"))
            })
        })
        .collect()
}

/// What became of a commit holding `increments` (with the digest `digest`) that was refused
/// with ALREADY_EXISTS, from their markers `found`: landed before (the time it did) when
/// every marker holds this commit's digest, or, for a commit of one increment alone, when its
/// marker holds the same increment; otherwise nothing of it applied, and the error says why:
/// an id taken by another increment ([`Error::IncrementConflict`]), an increment applied by
/// another commit ([`Error::IncrementAlreadyApplied`]), or, with no marker there, `refusal`
/// (another write's precondition).
pub(crate) fn settle_refusal(
    increments: &[&Placed],
    found: &[Option<Recorded>],
    digest: &str,
    alone: bool,
    refusal: Error,
) -> Result<Option<SystemTime>> {
    for (placed, recorded) in increments.iter().zip(found) {
        if let Some(recorded) = recorded
            && !recorded.is_of(placed)
        {
            return Err(recorded.conflict(placed));
        }
    }
    let ours = |recorded: &Option<Recorded>| {
        recorded
            .as_ref()
            .is_some_and(|r| alone || r.commit.as_deref() == Some(digest))
    };
    if !found.is_empty() && found.iter().all(ours) {
        return Ok(found.iter().flatten().filter_map(|r| r.created).max());
    }
    match increments.iter().zip(found).find(|(_, r)| r.is_some()) {
        Some((placed, _)) => Err(Error::IncrementAlreadyApplied {
            document: placed.document.clone(),
            increment: placed.id.clone(),
        }),
        None => Err(refusal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placed(id: &str, field: &'static str, amount: i64) -> Placed {
        Placed {
            document: "projects/p/databases/(default)/documents/posts/p1".into(),
            id: id.into(),
            field,
            amount,
            shard: 3,
        }
    }

    fn recorded(field: &str, amount: i64, commit: &str) -> Option<Recorded> {
        Some(Recorded {
            payload: Some((field.into(), amount)),
            commit: Some(commit.into()),
            created: Some(SystemTime::UNIX_EPOCH),
            shard: Some(3),
        })
    }

    fn refusal() -> Error {
        Error::InvalidUpdate("another write's precondition".into())
    }

    #[test]
    fn a_commit_found_landed_is_settled_only_when_it_is_the_same_one() {
        let (old, new) = (placed("old", "likes", 5), placed("new", "likes", 100));
        // The very batch: every marker holds its digest.
        let both = [recorded("likes", 5, "d"), recorded("likes", 100, "d")];
        assert!(settle_refusal(&[&old, &new], &both, "d", false, refusal()).is_ok());
        // The old increment landed by another commit, beside a new one: nothing applied, and
        // the error names the old one, whichever comes first.
        let only_old = [recorded("likes", 5, "single"), None];
        let named = |result: Result<Option<SystemTime>>| match result {
            Err(Error::IncrementAlreadyApplied { increment, .. }) => increment,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            named(settle_refusal(
                &[&old, &new],
                &only_old,
                "d",
                false,
                refusal()
            )),
            "old"
        );
        let reversed = [None, recorded("likes", 5, "single")];
        assert_eq!(
            named(settle_refusal(
                &[&new, &old],
                &reversed,
                "d",
                false,
                refusal()
            )),
            "old"
        );
        // A commit of one increment alone: the same increment, by whatever commit, counted.
        assert!(settle_refusal(&[&old], &only_old[..1], "mine", true, refusal()).is_ok());
        // No marker there: another write's precondition refused it.
        assert!(matches!(
            settle_refusal(&[&new], &[None], "d", true, refusal()),
            Err(Error::InvalidUpdate(_))
        ));
    }

    #[test]
    fn an_id_holding_another_increment_is_a_conflict() {
        for (field, amount) in [("likes", 7), ("stock", 5)] {
            let attempted = placed("r", field, amount);
            let found = [recorded("likes", 5, "d")];
            match settle_refusal(&[&attempted], &found, "d", true, refusal()) {
                Err(Error::IncrementConflict {
                    increment,
                    recorded,
                    attempted,
                    ..
                }) => {
                    assert_eq!(increment, "r");
                    assert_eq!(recorded, "`likes` +5");
                    assert_eq!(attempted, format!("`{field}` {amount:+}"));
                }
                other => panic!("{other:?}"),
            }
        }
        // A marker written before markers recorded their increment matches any.
        let legacy = Some(Recorded {
            payload: None,
            commit: None,
            created: None,
            shard: None,
        });
        assert!(
            settle_refusal(&[&placed("r", "likes", 9)], &[legacy], "d", true, refusal()).is_ok()
        );
    }
}
