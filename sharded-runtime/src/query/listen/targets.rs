//! The Listen protocol's state of every chunk target of one stream: the documents each holds,
//! whether it is current, and its resume token.

use std::collections::HashMap;

use firestore::gcloud_sdk::google::firestore::v1::{
    Document, ListenResponse, StructuredQuery, TargetChange, listen_response,
    target_change::TargetChangeType,
};
use firestore::gcloud_sdk::prost_types::Timestamp;
use firestore::gcloud_sdk::tonic::Code;

use crate::{Error, Result};

/// One chunk's target and what it has received.
pub(super) struct ChunkTarget {
    /// The id on the stream; a target reset after an existence-filter mismatch gets a new one.
    pub(super) id: i32,
    pub(super) query: StructuredQuery,
    documents: HashMap<String, Document>,
    current: bool,
    pub(super) resume_token: Vec<u8>,
}

/// What a response asks of the listener.
#[derive(Debug, PartialEq)]
pub(super) enum Step {
    /// Nothing to do yet.
    Nothing,
    /// Every target is current at this read time: a snapshot may be built.
    Consistent(Timestamp),
    /// The server's count of a target's documents differs from ours (it could not tell us of
    /// some removals): listen to it afresh, under its new id.
    Reset { old_id: i32, new_id: i32 },
}

pub(super) struct ChunkTargets {
    targets: Vec<ChunkTarget>,
    next_id: i32,
}

impl ChunkTargets {
    pub(super) fn new(queries: Vec<StructuredQuery>) -> ChunkTargets {
        let targets: Vec<ChunkTarget> = queries
            .into_iter()
            .zip(1..)
            .map(|(query, id)| ChunkTarget {
                id,
                query,
                documents: HashMap::new(),
                current: false,
                resume_token: Vec::new(),
            })
            .collect();
        ChunkTargets {
            next_id: targets.len() as i32 + 1,
            targets,
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &ChunkTarget> {
        self.targets.iter()
    }

    pub(super) fn find(&self, id: i32) -> Option<&ChunkTarget> {
        self.targets.iter().find(|target| target.id == id)
    }

    /// The stream is gone: no target is current. A target without a resume token will get its
    /// whole result again, so what it holds is dropped.
    pub(super) fn disconnected(&mut self) {
        for target in &mut self.targets {
            target.current = false;
            if target.resume_token.is_empty() {
                target.documents.clear();
            }
        }
    }

    fn find_mut(&mut self, id: i32) -> Option<&mut ChunkTarget> {
        self.targets.iter_mut().find(|target| target.id == id)
    }

    /// The targets a message names: all of them when it names none.
    fn named(&mut self, ids: &[i32]) -> impl Iterator<Item = &mut ChunkTarget> {
        self.targets
            .iter_mut()
            .filter(move |target| ids.is_empty() || ids.contains(&target.id))
    }

    /// Applies one response.
    pub(super) fn receive(&mut self, response: ListenResponse) -> Result<Step> {
        let Some(response) = response.response_type else {
            return Ok(Step::Nothing);
        };
        match response {
            listen_response::ResponseType::TargetChange(change) => {
                return self.target_change(change);
            }
            listen_response::ResponseType::DocumentChange(change) => {
                let Some(document) = change.document else {
                    return Ok(Step::Nothing);
                };
                for id in change.removed_target_ids {
                    if let Some(target) = self.find_mut(id) {
                        target.documents.remove(&document.name);
                    }
                }
                for id in change.target_ids {
                    if let Some(target) = self.find_mut(id) {
                        target
                            .documents
                            .insert(document.name.clone(), document.clone());
                    }
                }
            }
            listen_response::ResponseType::DocumentDelete(delete) => {
                for target in self.named(&delete.removed_target_ids) {
                    target.documents.remove(&delete.document);
                }
            }
            listen_response::ResponseType::DocumentRemove(remove) => {
                for target in self.named(&remove.removed_target_ids) {
                    target.documents.remove(&remove.document);
                }
            }
            listen_response::ResponseType::Filter(filter) => {
                let new_id = self.next_id;
                let Some(target) = self.find_mut(filter.target_id) else {
                    return Ok(Step::Nothing);
                };
                if target.documents.len() == filter.count as usize {
                    return Ok(Step::Nothing);
                }
                target.id = new_id;
                target.documents.clear();
                target.current = false;
                target.resume_token.clear();
                self.next_id += 1;
                return Ok(Step::Reset {
                    old_id: filter.target_id,
                    new_id,
                });
            }
        }
        Ok(Step::Nothing)
    }

    fn target_change(&mut self, change: TargetChange) -> Result<Step> {
        let kind = TargetChangeType::try_from(change.target_change_type)
            .unwrap_or(TargetChangeType::NoChange);
        if kind == TargetChangeType::Remove {
            return match change.cause {
                Some(cause) => Err(Error::Listen {
                    code: Code::from_i32(cause.code),
                    message: cause.message,
                }),
                // Our own removal of a reset target.
                None => Ok(Step::Nothing),
            };
        }
        for target in self.named(&change.target_ids) {
            match kind {
                TargetChangeType::Add => target.current = false,
                TargetChangeType::Reset => {
                    target.documents.clear();
                    target.current = false;
                }
                TargetChangeType::Current => target.current = true,
                TargetChangeType::NoChange | TargetChangeType::Remove => {}
            }
            if !change.resume_token.is_empty() {
                target.resume_token = change.resume_token.clone();
            }
        }
        let consistent = kind == TargetChangeType::NoChange
            && change.target_ids.is_empty()
            && self.targets.iter().all(|target| target.current);
        Ok(match change.read_time {
            Some(read_time) if consistent => Step::Consistent(read_time),
            _ => Step::Nothing,
        })
    }

    /// Every target's documents merged: one copy of a name (the newest, should two targets
    /// hold it), in `order`, the first `limit`.
    pub(super) fn merged(
        &self,
        order: fn(&Document, &Document) -> std::cmp::Ordering,
        limit: Option<usize>,
    ) -> Vec<&Document> {
        let mut merged: HashMap<&str, &Document> = HashMap::new();
        for document in self
            .targets
            .iter()
            .flat_map(|target| target.documents.values())
        {
            let newer = merged
                .get(document.name.as_str())
                .is_none_or(|kept| later(&document.update_time, &kept.update_time));
            if newer {
                merged.insert(&document.name, document);
            }
        }
        let mut documents: Vec<&Document> = merged.into_values().collect();
        documents.sort_by(|a, b| order(a, b));
        if let Some(limit) = limit {
            documents.truncate(limit);
        }
        documents
    }
}

fn later(a: &Option<Timestamp>, b: &Option<Timestamp>) -> bool {
    let key = |t: &Option<Timestamp>| t.map(|t| (t.seconds, t.nanos));
    key(a) > key(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use firestore::gcloud_sdk::google::firestore::v1::{
        DocumentChange, DocumentDelete, ExistenceFilter, listen_response::ResponseType,
    };

    fn document(name: &str, seconds: i64) -> Document {
        Document {
            name: name.to_owned(),
            update_time: Some(Timestamp { seconds, nanos: 0 }),
            ..Default::default()
        }
    }

    fn response(response: ResponseType) -> ListenResponse {
        ListenResponse {
            response_type: Some(response),
        }
    }

    fn change(kind: TargetChangeType, ids: &[i32], read_time: Option<i64>) -> ListenResponse {
        response(ResponseType::TargetChange(TargetChange {
            target_change_type: kind as i32,
            target_ids: ids.to_vec(),
            read_time: read_time.map(|seconds| Timestamp { seconds, nanos: 0 }),
            resume_token: vec![7],
            ..Default::default()
        }))
    }

    fn put(name: &str, seconds: i64, targets: &[i32], removed: &[i32]) -> ListenResponse {
        response(ResponseType::DocumentChange(DocumentChange {
            document: Some(document(name, seconds)),
            target_ids: targets.to_vec(),
            removed_target_ids: removed.to_vec(),
        }))
    }

    fn names(targets: &ChunkTargets) -> Vec<String> {
        targets
            .merged(|a, b| a.name.cmp(&b.name), None)
            .iter()
            .map(|d| d.name.clone())
            .collect()
    }

    #[test]
    fn consistent_only_once_every_target_is_current_at_a_global_read_time() {
        let mut targets = ChunkTargets::new(vec![StructuredQuery::default(); 2]);
        assert_eq!(
            targets.receive(put("a", 1, &[1], &[])).unwrap(),
            Step::Nothing
        );
        targets
            .receive(change(TargetChangeType::Current, &[1], Some(1)))
            .unwrap();
        // Target 2 is not current: a global point is no snapshot yet.
        let global = |t| change(TargetChangeType::NoChange, &[], Some(t));
        assert_eq!(targets.receive(global(1)).unwrap(), Step::Nothing);
        targets
            .receive(change(TargetChangeType::Current, &[2], Some(2)))
            .unwrap();
        // A target's own NO_CHANGE is not a global point.
        assert_eq!(
            targets
                .receive(change(TargetChangeType::NoChange, &[2], Some(2)))
                .unwrap(),
            Step::Nothing
        );
        assert!(
            matches!(targets.receive(global(2)).unwrap(), Step::Consistent(t) if t.seconds == 2)
        );
        assert!(targets.iter().all(|t| t.resume_token == [7]));
    }

    #[test]
    fn a_document_moving_between_targets_is_merged_once() {
        let mut targets = ChunkTargets::new(vec![StructuredQuery::default(); 2]);
        targets.receive(put("a", 1, &[1], &[])).unwrap();
        targets.receive(put("b", 1, &[2], &[])).unwrap();
        // Re-drawn into target 2 in one message; or, across two messages, briefly in both.
        targets.receive(put("a", 2, &[2], &[1])).unwrap();
        assert_eq!(names(&targets), ["a", "b"]);
        targets.receive(put("b", 3, &[1], &[])).unwrap();
        assert_eq!(names(&targets), ["a", "b"]);
        let merged = targets.merged(|a, b| a.name.cmp(&b.name), None);
        assert_eq!(
            merged[1].update_time.unwrap().seconds,
            3,
            "the newest copy wins"
        );
        targets
            .receive(response(ResponseType::DocumentDelete(DocumentDelete {
                document: "b".into(),
                removed_target_ids: vec![],
                ..Default::default()
            })))
            .unwrap();
        assert_eq!(names(&targets), ["a"]);
    }

    #[test]
    fn a_reset_empties_a_target_and_an_existence_filter_mismatch_resets_it_under_a_new_id() {
        let mut targets = ChunkTargets::new(vec![StructuredQuery::default(); 2]);
        targets.receive(put("a", 1, &[1], &[])).unwrap();
        targets.receive(put("b", 1, &[1], &[])).unwrap();
        targets.receive(put("c", 1, &[2], &[])).unwrap();
        let filter = |target_id, count| {
            response(ResponseType::Filter(ExistenceFilter {
                target_id,
                count,
                ..Default::default()
            }))
        };
        assert_eq!(targets.receive(filter(1, 2)).unwrap(), Step::Nothing);
        assert_eq!(
            targets.receive(filter(1, 1)).unwrap(),
            Step::Reset {
                old_id: 1,
                new_id: 3
            }
        );
        assert_eq!(names(&targets), ["c"]);
        assert!(targets.find(1).is_none() && targets.find(3).is_some());
        // Late messages for the old id change nothing.
        targets.receive(put("z", 1, &[1], &[])).unwrap();
        assert_eq!(names(&targets), ["c"]);
        targets
            .receive(change(TargetChangeType::Reset, &[2], None))
            .unwrap();
        assert!(names(&targets).is_empty());
    }

    #[test]
    fn a_removed_target_with_a_cause_is_a_typed_error() {
        let mut targets = ChunkTargets::new(vec![StructuredQuery::default()]);
        let removed = response(ResponseType::TargetChange(TargetChange {
            target_change_type: TargetChangeType::Remove as i32,
            target_ids: vec![1],
            cause: Some(firestore::gcloud_sdk::google::rpc::Status {
                code: Code::FailedPrecondition as i32,
                message: "The query requires an index.".into(),
                details: vec![],
            }),
            ..Default::default()
        }));
        assert!(matches!(
            targets.receive(removed),
            Err(Error::Listen {
                code: Code::FailedPrecondition,
                ..
            })
        ));
    }
}
