//! The Listen protocol's state of every chunk target of one stream: the documents each holds,
//! whether it is current, and its resume token.
//!
//! As the Firebase SDKs keep it: each target's documents and resume token are committed
//! together at a consistent point (a snapshot), and what arrives after is pending until the
//! next one. When the stream breaks, the pending part is dropped and the target resumes from
//! the token committed with its documents, so the server's changes since that token apply to
//! exactly the documents they follow.

use std::collections::HashMap;

use firestore::gcloud_sdk::google::firestore::v1::{
    Document, ListenResponse, StructuredQuery, TargetChange, listen_response,
    target_change::TargetChangeType,
};
use firestore::gcloud_sdk::prost_types::Timestamp;
use firestore::gcloud_sdk::tonic::Code;

use super::checkpoint::TargetCheckpoint;
use crate::error::{Error, Result};

/// One chunk's target and what it has received.
pub(super) struct ChunkTarget {
    /// The id on the stream; a target reset after an existence-filter mismatch gets a new one.
    pub(super) id: i32,
    pub(super) query: StructuredQuery,
    /// The documents as of the last consistent snapshot.
    committed: HashMap<String, Document>,
    /// The token taken at that snapshot: where a new stream resumes this target.
    pub(super) resume_token: Vec<u8>,
    /// Changes since then, by name: the document now, or `None` once removed.
    pending: HashMap<String, Option<Document>>,
    /// A RESET since then: the committed documents no longer count.
    reset: bool,
    /// The newest token received since then.
    pending_token: Vec<u8>,
    current: bool,
}

impl ChunkTarget {
    fn new(id: i32, query: StructuredQuery) -> ChunkTarget {
        ChunkTarget {
            id,
            query,
            committed: HashMap::new(),
            resume_token: Vec::new(),
            pending: HashMap::new(),
            reset: false,
            pending_token: Vec::new(),
            current: false,
        }
    }

    /// The documents the target holds now: the committed ones with the pending changes.
    fn documents(&self) -> impl Iterator<Item = &Document> {
        let committed = self
            .committed
            .values()
            .filter(|document| !self.reset && !self.pending.contains_key(&document.name));
        committed.chain(self.pending.values().flatten())
    }

    fn len(&self) -> usize {
        self.documents().count()
    }

    fn put(&mut self, document: Document) {
        self.pending.insert(document.name.clone(), Some(document));
    }

    fn remove(&mut self, name: &str) {
        self.pending.insert(name.to_owned(), None);
    }

    fn clear(&mut self) {
        self.pending.clear();
        self.reset = true;
    }

    /// A consistent point: what is pending becomes what is committed, with its token.
    fn commit(&mut self) {
        if std::mem::take(&mut self.reset) {
            self.committed.clear();
        }
        for (name, document) in self.pending.drain() {
            match document {
                Some(document) => self.committed.insert(name, document),
                None => self.committed.remove(&name),
            };
        }
        if !self.pending_token.is_empty() {
            self.resume_token = self.pending_token.clone();
        }
    }

    /// Back to the last consistent point. Without a token to resume from, the server sends
    /// the whole result again, so what was committed goes too.
    fn roll_back(&mut self) {
        self.pending.clear();
        self.reset = false;
        if self.resume_token.is_empty() {
            self.committed.clear();
        }
        self.pending_token = self.resume_token.clone();
        self.current = false;
    }
}

/// What a response asks of the listener.
#[derive(Debug, PartialEq)]
pub(super) enum Step {
    /// Nothing to do yet.
    Nothing,
    /// Every target is current at this read time: a snapshot may be built (what the targets
    /// hold is committed). `reset` names the targets the server sent afresh since the last
    /// one, which the listener checks against the query at that read time.
    Consistent {
        read_time: Timestamp,
        reset: Vec<i32>,
    },
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
            .map(|(query, id)| ChunkTarget::new(id, query))
            .collect();
        ChunkTargets {
            next_id: targets.len() as i32 + 1,
            targets,
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &ChunkTarget> {
        self.targets.iter()
    }

    /// Every target's committed documents and token: call at a consistent point.
    pub(super) fn checkpoint(&self) -> Vec<TargetCheckpoint> {
        self.targets
            .iter()
            .map(|target| TargetCheckpoint {
                id: target.id,
                resume_token: target.resume_token.clone(),
                documents: target.committed.values().cloned().collect(),
            })
            .collect()
    }

    /// The targets as a checkpoint left them (one per query, in order), to resume from its
    /// tokens; a target saved without a token starts over.
    pub(super) fn restore(&mut self, saved: Vec<TargetCheckpoint>) {
        for (target, saved) in self.targets.iter_mut().zip(saved) {
            target.id = saved.id;
            target.resume_token = saved.resume_token;
            target.committed = saved
                .documents
                .into_iter()
                .map(|document| (document.name.clone(), document))
                .collect();
            target.roll_back();
        }
        self.next_id = self
            .targets
            .iter()
            .map(|target| target.id)
            .max()
            .and_then(|id| id.checked_add(1))
            .unwrap_or(1);
    }

    /// A target id no target holds: the next one up, from 1 again after `i32::MAX` (the
    /// protocol's ids are positive `int32`s; 0 would ask the server to choose one).
    fn fresh_id(&mut self) -> i32 {
        loop {
            let id = self.next_id;
            self.next_id = id.checked_add(1).unwrap_or(1);
            if id > 0 && self.find(id).is_none() {
                return id;
            }
        }
    }

    /// How many documents target `id` committed.
    pub(super) fn committed_len(&self, id: i32) -> usize {
        self.find(id).map_or(0, |target| target.committed.len())
    }

    /// The committed documents of target `id`: their names and update times, sorted.
    #[cfg(test)]
    pub(super) fn committed_versions(&self, id: i32) -> Vec<(String, Option<(i64, i32)>)> {
        let mut versions: Vec<_> = self
            .find(id)
            .into_iter()
            .flat_map(|target| target.committed.values())
            .map(version)
            .collect();
        versions.sort();
        versions
    }

    /// Target `id` holds `documents`, read from its query at the read time of the last
    /// commit, instead of what the stream said.
    pub(super) fn correct(&mut self, id: i32, documents: Vec<Document>) {
        if let Some(target) = self.find_mut(id) {
            target.committed = documents
                .into_iter()
                .map(|document| (document.name.clone(), document))
                .collect();
        }
    }

    /// Target `id` is listened to afresh on the next stream: nothing committed is kept.
    pub(super) fn forget(&mut self, id: i32) {
        if let Some(target) = self.find_mut(id) {
            target.committed.clear();
            target.resume_token.clear();
        }
    }

    pub(super) fn find(&self, id: i32) -> Option<&ChunkTarget> {
        self.targets.iter().find(|target| target.id == id)
    }

    /// The stream is gone: every target goes back to the last consistent snapshot, to
    /// resume from the token taken there (a target that never had one gets its whole result
    /// again), and none is current.
    pub(super) fn disconnected(&mut self) {
        for target in &mut self.targets {
            target.roll_back();
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
                        target.remove(&document.name);
                    }
                }
                for id in change.target_ids {
                    if let Some(target) = self.find_mut(id) {
                        target.put(document.clone());
                    }
                }
            }
            listen_response::ResponseType::DocumentDelete(delete) => {
                for target in self.named(&delete.removed_target_ids) {
                    target.remove(&delete.document);
                }
            }
            listen_response::ResponseType::DocumentRemove(remove) => {
                for target in self.named(&remove.removed_target_ids) {
                    target.remove(&remove.document);
                }
            }
            listen_response::ResponseType::Filter(filter) => {
                match self.find(filter.target_id) {
                    Some(target) if target.len() != filter.count as usize => {}
                    _ => return Ok(Step::Nothing),
                }
                let new_id = self.fresh_id();
                let target = self
                    .find_mut(filter.target_id)
                    .expect("the target was found above");
                // Nothing it holds can be trusted, nor any token it was given; what the server
                // sends afresh is checked like a reset's.
                *target = ChunkTarget::new(new_id, std::mem::take(&mut target.query));
                target.reset = true;
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
                    code: Code::from_i32(cause.code).into(),
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
                    target.clear();
                    target.current = false;
                }
                TargetChangeType::Current => target.current = true,
                TargetChangeType::NoChange | TargetChangeType::Remove => {}
            }
            if !change.resume_token.is_empty() {
                target.pending_token = change.resume_token.clone();
            }
        }
        let consistent = kind == TargetChangeType::NoChange
            && change.target_ids.is_empty()
            && self.targets.iter().all(|target| target.current);
        Ok(match change.read_time {
            Some(read_time) if consistent => {
                let reset = self
                    .targets
                    .iter()
                    .filter(|target| target.reset)
                    .map(|target| target.id)
                    .collect();
                for target in &mut self.targets {
                    target.commit();
                }
                Step::Consistent { read_time, reset }
            }
            _ => Step::Nothing,
        })
    }

    /// Every target's documents merged: one copy of a name (the newest, should two targets
    /// hold it), in `order`, the first `limit`.
    pub(super) fn merged(
        &self,
        order: &crate::query::DocumentOrder,
        limit: Option<usize>,
    ) -> Vec<&Document> {
        let mut merged: HashMap<&str, &Document> = HashMap::new();
        for document in self.targets.iter().flat_map(ChunkTarget::documents) {
            let newer = merged
                .get(document.name.as_str())
                .is_none_or(|kept| later(&document.update_time, &kept.update_time));
            if newer {
                merged.insert(&document.name, document);
            }
        }
        let mut documents: Vec<&Document> = merged.into_values().collect();
        documents.sort_by(|a, b| order.compare(a, b));
        if let Some(limit) = limit {
            documents.truncate(limit);
        }
        documents
    }
}

/// What tells two versions of a document apart: its name and update time.
#[cfg(test)]
fn version(document: &Document) -> (String, Option<(i64, i32)>) {
    (
        document.name.clone(),
        document.update_time.map(|t| (t.seconds, t.nanos)),
    )
}

fn later(a: &Option<Timestamp>, b: &Option<Timestamp>) -> bool {
    let key = |t: &Option<Timestamp>| t.map(|t| (t.seconds, t.nanos));
    key(a) > key(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::DocumentOrder;
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

    fn filter(target_id: i32, count: i32) -> ListenResponse {
        response(ResponseType::Filter(ExistenceFilter {
            target_id,
            count,
            ..Default::default()
        }))
    }

    fn names(targets: &ChunkTargets) -> Vec<String> {
        targets
            .merged(&DocumentOrder::by(|a, b| a.name.cmp(&b.name)), None)
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
            matches!(targets.receive(global(2)).unwrap(), Step::Consistent { read_time, .. } if read_time.seconds == 2)
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
        let merged = targets.merged(&DocumentOrder::by(|a, b| a.name.cmp(&b.name)), None);
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

    /// Ids restored up to `i32::MAX` go on from 1 after a reset, skipping ids in use, instead
    /// of overflowing (a panic in a debug build) or repeating one.
    #[test]
    fn new_ids_after_the_largest_start_again_from_one_skipping_those_in_use() {
        let mut targets = ChunkTargets::new(vec![StructuredQuery::default(); 2]);
        let saved = |id| TargetCheckpoint {
            id,
            resume_token: vec![1],
            documents: vec![document("a", 1)],
        };
        targets.restore(vec![saved(1), saved(i32::MAX)]);
        let reset = |targets: &mut ChunkTargets, id| targets.receive(filter(id, 0)).unwrap();
        assert_eq!(
            reset(&mut targets, i32::MAX),
            Step::Reset {
                old_id: i32::MAX,
                new_id: 2
            }
        );
        targets.restore(vec![saved(i32::MAX - 1), saved(i32::MAX)]);
        targets.receive(put("b", 1, &[1], &[])).unwrap();
        assert_eq!(
            reset(&mut targets, i32::MAX - 1),
            Step::Reset {
                old_id: i32::MAX - 1,
                new_id: 1
            }
        );
        targets.receive(put("b", 1, &[1], &[])).unwrap();
        assert_eq!(
            reset(&mut targets, 1),
            Step::Reset {
                old_id: 1,
                new_id: 2
            }
        );
    }

    #[test]
    fn a_consistent_point_names_the_targets_reset_since_the_last() {
        let global = |t| change(TargetChangeType::NoChange, &[], Some(t));
        let mut targets = ChunkTargets::new(vec![StructuredQuery::default(); 2]);
        for id in [1, 2] {
            targets
                .receive(change(TargetChangeType::Current, &[id], None))
                .unwrap();
        }
        let step = targets.receive(global(1)).unwrap();
        assert!(
            matches!(step, Step::Consistent { ref reset, .. } if reset.is_empty()),
            "{step:?}"
        );
        targets
            .receive(change(TargetChangeType::Reset, &[2], None))
            .unwrap();
        targets.receive(put("a", 2, &[2], &[])).unwrap();
        targets
            .receive(change(TargetChangeType::Current, &[2], None))
            .unwrap();
        let step = targets.receive(global(2)).unwrap();
        assert!(
            matches!(step, Step::Consistent { ref reset, .. } if reset == &[2]),
            "{step:?}"
        );
        assert_eq!(targets.committed_len(2), 1);
        assert_eq!(
            targets.committed_versions(2),
            [("a".to_owned(), Some((2, 0)))]
        );
        let step = targets.receive(global(3)).unwrap();
        assert!(
            matches!(step, Step::Consistent { ref reset, .. } if reset.is_empty()),
            "{step:?}"
        );
        // What the query read at that time replaces what the stream said.
        targets.correct(2, vec![document("a", 2), document("b", 2)]);
        assert_eq!(names(&targets), ["a", "b"]);
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
                code: crate::wire::status::StatusCode::FailedPrecondition,
                ..
            })
        ));
    }

    fn token(
        kind: TargetChangeType,
        ids: &[i32],
        token: u8,
        read_time: Option<i64>,
    ) -> ListenResponse {
        response(ResponseType::TargetChange(TargetChange {
            target_change_type: kind as i32,
            target_ids: ids.to_vec(),
            read_time: read_time.map(|seconds| Timestamp { seconds, nanos: 0 }),
            resume_token: vec![token],
            ..Default::default()
        }))
    }

    fn consistent(targets: &mut ChunkTargets, token_byte: u8, at: i64) {
        targets
            .receive(token(TargetChangeType::Current, &[], token_byte, None))
            .unwrap();
        let step = targets
            .receive(token(TargetChangeType::NoChange, &[], token_byte, Some(at)))
            .unwrap();
        assert!(matches!(step, Step::Consistent { .. }), "{step:?}");
    }

    fn removal(name: &str, removed: &[i32]) -> ListenResponse {
        response(ResponseType::DocumentRemove(
            firestore::gcloud_sdk::google::firestore::v1::DocumentRemove {
                document: name.into(),
                removed_target_ids: removed.to_vec(),
                ..Default::default()
            },
        ))
    }

    /// The case: a limited query shows {Y, Z}; X enters and pushes Z out, with a
    /// later token, and the stream drops before the next consistent point; X is deleted
    /// meanwhile. The server, asked to resume from the committed token, owes nothing (Z is
    /// still in, X never was): the state rolled back to {Y, Z} is right. Resuming from the
    /// later token would have kept {Y, X}, and X's deletion would leave {Y}, Z lost.
    #[test]
    fn a_broken_stream_resumes_from_the_last_consistent_snapshot() {
        let mut targets = ChunkTargets::new(vec![StructuredQuery::default()]);
        targets.receive(put("y", 1, &[1], &[])).unwrap();
        targets.receive(put("z", 1, &[1], &[])).unwrap();
        consistent(&mut targets, 1, 1);
        assert_eq!(targets.find(1).unwrap().resume_token, [1]);

        targets.receive(put("x", 2, &[1], &[])).unwrap();
        targets.receive(removal("z", &[1])).unwrap();
        targets
            .receive(token(TargetChangeType::NoChange, &[1], 2, Some(2)))
            .unwrap();
        assert_eq!(
            names(&targets),
            ["x", "y"],
            "pending changes show until the drop"
        );
        targets.disconnected();
        assert_eq!(names(&targets), ["y", "z"]);
        assert_eq!(
            targets.find(1).unwrap().resume_token,
            [1],
            "the committed token"
        );

        // The resumed stream: only what changed after token 1 that matters, i.e. nothing.
        targets
            .receive(token(TargetChangeType::Add, &[1], 1, None))
            .unwrap();
        consistent(&mut targets, 3, 3);
        assert_eq!(names(&targets), ["y", "z"]);
        assert_eq!(targets.find(1).unwrap().resume_token, [3]);
    }

    /// A RESET empties a target and its resend comes with a new token; a drop before the
    /// resend is complete goes back to the documents and token of the last snapshot, never to
    /// a partial resend under the new token (how documents went missing while resharding).
    #[test]
    fn a_drop_during_a_reset_keeps_the_last_snapshot() {
        let mut targets = ChunkTargets::new(vec![StructuredQuery::default(); 2]);
        for (name, target) in [("a", 1), ("b", 1), ("c", 1), ("d", 2)] {
            targets.receive(put(name, 1, &[target], &[])).unwrap();
        }
        consistent(&mut targets, 1, 1);
        targets
            .receive(token(TargetChangeType::Reset, &[1], 9, None))
            .unwrap();
        targets.receive(put("a", 1, &[1], &[])).unwrap();
        assert_eq!(names(&targets), ["a", "d"]);
        targets.disconnected();
        assert_eq!(names(&targets), ["a", "b", "c", "d"]);
        assert!(targets.iter().all(|target| target.resume_token == [1]));
        assert!(
            !targets.iter().any(|target| target.current),
            "no snapshot until every target is current again"
        );

        // The complete resend after a RESET replaces what the target held at the next point.
        targets
            .receive(token(TargetChangeType::Reset, &[1], 9, None))
            .unwrap();
        targets.receive(put("a", 1, &[1], &[])).unwrap();
        targets.receive(put("e", 2, &[1], &[])).unwrap();
        consistent(&mut targets, 4, 4);
        assert_eq!(names(&targets), ["a", "d", "e"]);
        targets.disconnected();
        assert_eq!(
            names(&targets),
            ["a", "d", "e"],
            "committed at the last snapshot"
        );
    }

    /// Deletes, removals naming targets, and an existence filter counted against what the
    /// target holds now, pending changes included.
    #[test]
    fn removals_and_filters_apply_to_the_pending_state() {
        let mut targets = ChunkTargets::new(vec![StructuredQuery::default(); 2]);
        targets.receive(put("a", 1, &[1], &[])).unwrap();
        targets.receive(put("b", 1, &[1], &[])).unwrap();
        targets.receive(put("c", 1, &[2], &[])).unwrap();
        consistent(&mut targets, 1, 1);
        targets
            .receive(response(ResponseType::DocumentDelete(DocumentDelete {
                document: "a".into(),
                removed_target_ids: vec![1],
                ..Default::default()
            })))
            .unwrap();
        targets.receive(removal("c", &[2])).unwrap();
        assert_eq!(targets.receive(filter(1, 1)).unwrap(), Step::Nothing);
        assert_eq!(targets.receive(filter(2, 0)).unwrap(), Step::Nothing);
        assert_eq!(names(&targets), ["b"]);
        targets.disconnected();
        assert_eq!(names(&targets), ["a", "b", "c"]);
        // Counted against the rolled-back state now: 2 in target 1 is right, 1 is not.
        assert_eq!(targets.receive(filter(1, 2)).unwrap(), Step::Nothing);
        assert_eq!(
            targets.receive(filter(1, 1)).unwrap(),
            Step::Reset {
                old_id: 1,
                new_id: 3
            }
        );
        let reset = targets.find(3).unwrap();
        assert!(reset.resume_token.is_empty(), "listened to afresh");
        assert_eq!(names(&targets), ["c"]);
    }

    /// A target committed without a token is listened to afresh after a drop: the server
    /// sends its whole result, so nothing committed may linger (a document that left
    /// meanwhile would otherwise stay).
    #[test]
    fn a_target_without_a_token_starts_over_after_a_drop() {
        let mut targets = ChunkTargets::new(vec![StructuredQuery::default()]);
        targets.receive(put("a", 1, &[1], &[])).unwrap();
        targets.receive(put("b", 1, &[1], &[])).unwrap();
        let tokenless = |kind: TargetChangeType, ids: &[i32], at: Option<i64>| {
            response(ResponseType::TargetChange(TargetChange {
                target_change_type: kind as i32,
                target_ids: ids.to_vec(),
                read_time: at.map(|seconds| Timestamp { seconds, nanos: 0 }),
                ..Default::default()
            }))
        };
        targets
            .receive(tokenless(TargetChangeType::Current, &[1], None))
            .unwrap();
        let step = targets
            .receive(tokenless(TargetChangeType::NoChange, &[], Some(1)))
            .unwrap();
        assert!(matches!(step, Step::Consistent { .. }));
        assert!(targets.find(1).unwrap().resume_token.is_empty());
        targets.disconnected();
        assert!(names(&targets).is_empty(), "the whole result comes again");
        // The fresh result: `b` only.
        targets.receive(put("b", 2, &[1], &[])).unwrap();
        consistent(&mut targets, 3, 2);
        assert_eq!(names(&targets), ["b"]);
    }
}
