//! Where a job is and what its part covers: a checkpoint's position (an id, or over a
//! collection group a path below the root), the name it stands for, and the job's id range as
//! bounds on `__name__`.

use firestore::FirestoreValue;
use firestore::gcloud_sdk::google::firestore::v1::{Value, value::ValueType};

use super::ShardJob;
use crate::model::document_path::{DocumentPath, document_name, name_at};
use crate::model::handle::Scope;
use crate::model::partition::bound_under;
use crate::model::sharded::Sharded;

impl<'db, T: Sharded> ShardJob<'db, T> {
    /// What the job's id range bounds are below: nothing (they are ids), or over a collection
    /// group the first collection of the type's path (`rooms` for `parent = "rooms"`, the
    /// collection itself for a top-level type). A group's documents sort by path, segment by
    /// segment, so its parts split the first parents' ids (`rooms/AB`), and the first and last
    /// parts also take any collection of the group that lies outside them.
    pub(super) fn bound_prefix(&self) -> Option<&'static str> {
        match self.scope {
            Scope::Group => Some(
                T::DESCRIPTION
                    .parent_collections
                    .first()
                    .copied()
                    .unwrap_or(T::COLLECTION),
            ),
            _ => None,
        }
    }

    /// The scan's bounds on `__name__`: the job's id range.
    pub(super) fn id_filter(&self) -> Option<firestore::FirestoreQueryFilter> {
        use firestore::{FirestoreQueryFilter, FirestoreQueryFilterCompare};
        let reference = |bound: &str| {
            FirestoreValue::from(Value {
                value_type: Some(ValueType::ReferenceValue(
                    self.name_at(&bound_under(self.bound_prefix(), bound)),
                )),
            })
        };
        let bounds: Vec<FirestoreQueryFilter> = [
            self.ids.start().map(|start| {
                FirestoreQueryFilterCompare::GreaterThanOrEqual("__name__".into(), reference(start))
            }),
            self.ids.end().map(|end| {
                FirestoreQueryFilterCompare::LessThan("__name__".into(), reference(end))
            }),
        ]
        .into_iter()
        .flatten()
        .map(|compare| FirestoreQueryFilter::Compare(Some(compare)))
        .collect();
        match bounds.len() {
            0 => None,
            _ => Some(FirestoreQueryFilter::Composite(
                firestore::FirestoreQueryFilterComposite::new(
                    bounds,
                    firestore::FirestoreQueryFilterCompositeOperator::And,
                ),
            )),
        }
    }

    /// Where a checkpoint says the scan is: the document's id, or over a collection group
    /// its path below the database root.
    pub(super) fn position(&self, name: &str) -> String {
        match self.scope {
            Scope::Group => DocumentPath::parse(name).relative().to_owned(),
            _ => DocumentPath::parse(name).id().to_owned(),
        }
    }

    /// The full name of the document at `position` ([`position`](Self::position)).
    pub(super) fn name_at(&self, position: &str) -> String {
        match self.scope {
            Scope::Group => name_at(self.db.get_documents_path(), position),
            _ => document_name(
                self.db.get_documents_path(),
                self.scope.parent(),
                T::COLLECTION,
                position,
            ),
        }
    }
}
