//! The changes from one snapshot to the next.

use std::collections::HashMap;

use firestore::gcloud_sdk::google::firestore::v1::Document;
use firestore::gcloud_sdk::prost_types::Timestamp;

use super::{ChangeKind, DocumentChange};
use crate::Result;
use crate::stored::document_id;

/// A document of the last snapshot: its name, update time and value.
pub(super) struct Shown<V> {
    pub(super) name: String,
    pub(super) update_time: Option<Timestamp>,
    pub(super) value: V,
}

/// The changes from `previous` to `next`, and `next` as shown: the removed (by old index),
/// then the added and modified (by ascending new index). Only documents that are new or have
/// a new update time are `read`; the others keep their value.
pub(super) fn diff<V>(
    previous: Vec<Shown<V>>,
    next: &[&Document],
    read: impl Fn(&Document) -> Result<V>,
) -> Result<(Vec<DocumentChange>, Vec<Shown<V>>)> {
    let in_next: HashMap<&str, ()> = next.iter().map(|d| (d.name.as_str(), ())).collect();
    let mut changes = Vec::new();
    let mut kept: HashMap<String, (usize, Shown<V>)> = HashMap::new();
    for (old_index, shown) in previous.into_iter().enumerate() {
        if in_next.contains_key(shown.name.as_str()) {
            kept.insert(shown.name.clone(), (old_index, shown));
        } else {
            changes.push(DocumentChange {
                kind: ChangeKind::Removed,
                id: document_id(&shown.name).to_owned(),
                old_index: Some(old_index),
                new_index: None,
            });
        }
    }
    let mut shown = Vec::with_capacity(next.len());
    for (new_index, document) in next.iter().enumerate() {
        let fresh = |document: &Document| -> Result<Shown<V>> {
            Ok(Shown {
                name: document.name.clone(),
                update_time: document.update_time,
                value: read(document)?,
            })
        };
        let (change, entry) = match kept.remove(document.name.as_str()) {
            Some((_, same)) if same.update_time == document.update_time => (None, same),
            Some((old_index, _)) => (
                Some((ChangeKind::Modified, Some(old_index))),
                fresh(document)?,
            ),
            None => (Some((ChangeKind::Added, None)), fresh(document)?),
        };
        if let Some((kind, old_index)) = change {
            changes.push(DocumentChange {
                kind,
                id: document_id(&document.name).to_owned(),
                old_index,
                new_index: Some(new_index),
            });
        }
        shown.push(entry);
    }
    Ok((changes, shown))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented way to apply changes: remove by old index, insert by ascending new index.
    fn apply(previous: &[String], changes: &[DocumentChange], next: &[String]) -> Vec<String> {
        let leaving: Vec<usize> = changes.iter().filter_map(|c| c.old_index).collect();
        let mut list: Vec<String> = previous
            .iter()
            .enumerate()
            .filter(|(i, _)| !leaving.contains(i))
            .map(|(_, name)| name.clone())
            .collect();
        let mut entering: Vec<usize> = changes.iter().filter_map(|c| c.new_index).collect();
        assert!(
            entering.is_sorted(),
            "insertions come in ascending new index"
        );
        entering.sort_unstable();
        for index in entering {
            list.insert(index, next[index].clone());
        }
        list
    }

    #[test]
    fn changes_turn_any_list_into_any_other() {
        let mut state = 0x9e37_79b9_u64;
        let mut next_random = move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        for _ in 0..500 {
            // Names from a small pool; an order by a random key per round; versions change.
            let pool = 1 + next_random(12);
            let pick = |next_random: &mut dyn FnMut(u64) -> u64| -> Vec<Document> {
                let mut names: Vec<u64> = (0..pool).filter(|_| next_random(2) == 0).collect();
                names.sort_by_key(|n| (n * 7919) % 13);
                names
                    .into_iter()
                    .map(|n| Document {
                        name: format!("projects/p/databases/d/documents/c/{n}"),
                        update_time: Some(Timestamp {
                            seconds: next_random(3) as i64,
                            nanos: 0,
                        }),
                        ..Default::default()
                    })
                    .collect()
            };
            let before = pick(&mut next_random);
            let after = pick(&mut next_random);
            let refs: Vec<&Document> = before.iter().collect();
            let (_, shown) = diff(Vec::new(), &refs, |d| Ok(d.name.clone())).unwrap();
            let refs: Vec<&Document> = after.iter().collect();
            let (changes, shown) = diff(shown, &refs, |d| Ok(d.name.clone())).unwrap();
            let names = |docs: &[Document]| docs.iter().map(|d| d.name.clone()).collect::<Vec<_>>();
            let next_names = names(&after);
            assert_eq!(apply(&names(&before), &changes, &next_names), next_names);
            assert_eq!(
                shown.iter().map(|s| s.value.clone()).collect::<Vec<_>>(),
                next_names
            );
            // A document whose update time did not change is not reported.
            for change in changes.iter().filter(|c| c.kind == ChangeKind::Modified) {
                let old = &before[change.old_index.unwrap()];
                let new = &after[change.new_index.unwrap()];
                assert_ne!(old.update_time, new.update_time);
            }
        }
    }
}
