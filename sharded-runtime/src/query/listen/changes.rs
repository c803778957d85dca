//! The changes from one snapshot to the next, in sequence as the Firebase SDKs give
//! `docChanges()`: removals (in the old order), then additions, then modifications (in the new
//! order); each change's old index is its position once every earlier change is applied, and
//! its new index its position once it is applied too.

use std::cmp::Ordering;
use std::collections::HashMap;

use firestore::gcloud_sdk::google::firestore::v1::Document;

use super::ChangeKind;
use crate::error::Result;

/// A document of the last snapshot: as stored (what the query's order compares) and as shown.
pub(super) struct Shown<V> {
    pub(super) document: Document,
    pub(super) value: V,
}

/// One change, with the document's value: the new one, or the old one when removed.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Change<V> {
    pub(super) kind: ChangeKind,
    pub(super) value: V,
    pub(super) old_index: Option<usize>,
    pub(super) new_index: Option<usize>,
}

/// The changes between two snapshots, and the second as shown.
pub(super) type Diff<V> = (Vec<Change<V>>, Vec<Shown<V>>);

/// The changes from `previous` to `next` (both in `order`), and `next` as shown. Only
/// documents that are new or have a new update time are `read` (and kept as stored); the
/// others keep what they had.
pub(super) fn diff<V: Clone>(
    previous: Vec<Shown<V>>,
    next: &[&Document],
    order: &crate::query::DocumentOrder,
    read: impl Fn(&Document) -> Result<V>,
) -> Result<Diff<V>> {
    // Where each change stands, worked out over borrowed documents.
    let old_position: HashMap<&str, usize> = previous
        .iter()
        .enumerate()
        .map(|(i, shown)| (shown.document.name.as_str(), i))
        .collect();
    let in_next: HashMap<&str, usize> = next
        .iter()
        .enumerate()
        .map(|(i, document)| (document.name.as_str(), i))
        .collect();
    // The list as the changes pass over it: the old documents, each replaced as it changes.
    let mut tracker: Vec<&Document> = previous.iter().map(|shown| &shown.document).collect();
    let mut steps: Vec<(ChangeKind, usize, Option<usize>, Option<usize>)> = Vec::new();
    for shown in &previous {
        if !in_next.contains_key(shown.document.name.as_str()) {
            let at = position(&tracker, &shown.document.name);
            tracker.remove(at);
            let source = old_position[shown.document.name.as_str()];
            steps.push((ChangeKind::Removed, source, Some(at), None));
        }
    }
    // Per document of `next`: its change, if any, and where it was in `previous`.
    let sources: Vec<(Option<ChangeKind>, Option<usize>)> = next
        .iter()
        .map(|document| match old_position.get(document.name.as_str()) {
            None => (Some(ChangeKind::Added), None),
            Some(&i) if previous[i].document.update_time != document.update_time => {
                (Some(ChangeKind::Modified), Some(i))
            }
            Some(&i) => (None, Some(i)),
        })
        .collect();
    for wanted in [ChangeKind::Added, ChangeKind::Modified] {
        for (index, document) in next.iter().enumerate() {
            if sources[index].0 != Some(wanted) {
                continue;
            }
            let old_index = (wanted == ChangeKind::Modified).then(|| {
                let at = position(&tracker, &document.name);
                tracker.remove(at);
                at
            });
            let new_index =
                tracker.partition_point(|d| order.compare(d, document) == Ordering::Less);
            tracker.insert(new_index, document);
            steps.push((wanted, index, old_index, Some(new_index)));
        }
    }
    // Then the values: moved from the last snapshot where they did not change.
    let mut previous: Vec<Option<Shown<V>>> = previous.into_iter().map(Some).collect();
    let mut shown = Vec::with_capacity(next.len());
    for (document, source) in next.iter().zip(&sources) {
        let entry = match *source {
            (None, Some(i)) => previous[i].take().expect("each kept document once"),
            _ => Shown {
                document: (*document).clone(),
                value: read(document)?,
            },
        };
        shown.push(entry);
    }
    let changes = steps
        .into_iter()
        .map(|(kind, source, old_index, new_index)| Change {
            value: match kind {
                ChangeKind::Removed => {
                    previous[source]
                        .take()
                        .expect("each removed document once")
                        .value
                }
                _ => shown[source].value.clone(),
            },
            kind,
            old_index,
            new_index,
        })
        .collect();
    Ok((changes, shown))
}

fn position(list: &[&Document], name: &str) -> usize {
    list.iter()
        .position(|document| document.name == name)
        .expect("a document of the previous snapshot")
}

#[cfg(test)]
mod tests {
    use crate::query::DocumentOrder;
    use firestore::gcloud_sdk::prost_types::Timestamp;

    use super::*;

    /// Applies `changes` in sequence, as the SDKs document `docChanges()`: each removal at its
    /// old index, each insertion at its new index, a modification both.
    fn apply(previous: &[String], changes: &[Change<String>]) -> Vec<String> {
        let mut list = previous.to_vec();
        for change in changes {
            if let Some(old) = change.old_index {
                let gone = list.remove(old);
                if change.kind == ChangeKind::Removed {
                    assert_eq!(gone, change.value, "a removal carries the old document");
                }
            }
            if let Some(new) = change.new_index {
                list.insert(new, change.value.clone());
            }
        }
        list
    }

    fn by_key(a: &Document, b: &Document) -> Ordering {
        let key = |d: &Document| (d.create_time.map(|t| t.seconds), d.name.clone());
        key(a).cmp(&key(b))
    }

    #[test]
    fn changes_applied_in_sequence_turn_any_list_into_any_other() {
        let mut state = 0x9e37_79b9_u64;
        let mut next_random = move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        for _ in 0..2_000 {
            // Names from a small pool, each with a sort key (which a modification may move)
            // and a version; the order is by key, then name.
            let pool = 1 + next_random(12);
            let pick = |next_random: &mut dyn FnMut(u64) -> u64| -> Vec<Document> {
                let names: Vec<u64> = (0..pool).filter(|_| next_random(2) == 0).collect();
                let mut documents: Vec<Document> = names
                    .into_iter()
                    .map(|n| Document {
                        name: format!("projects/p/databases/d/documents/c/{n}"),
                        create_time: Some(Timestamp {
                            seconds: next_random(4) as i64,
                            nanos: 0,
                        }),
                        update_time: Some(Timestamp {
                            seconds: next_random(3) as i64,
                            nanos: 0,
                        }),
                        ..Default::default()
                    })
                    .collect();
                documents.sort_by(by_key);
                documents
            };
            let before = pick(&mut next_random);
            let mut after = pick(&mut next_random);
            // A document whose version is unchanged is the same document.
            for document in &mut after {
                if let Some(old) = before.iter().find(|old| old.name == document.name)
                    && old.update_time == document.update_time
                {
                    *document = old.clone();
                }
            }
            after.sort_by(by_key);
            let label = |d: &Document| format!("{}@{:?}", d.name, d.update_time.map(|t| t.seconds));
            let refs: Vec<&Document> = before.iter().collect();
            let (first, shown) = diff(Vec::new(), &refs, &DocumentOrder::by(by_key), |d| {
                Ok(label(d))
            })
            .unwrap();
            assert!(first.iter().all(|c| c.kind == ChangeKind::Added));
            let labels = |docs: &[Document]| docs.iter().map(label).collect::<Vec<_>>();
            assert_eq!(apply(&[], &first), labels(&before));
            let refs: Vec<&Document> = after.iter().collect();
            let (changes, shown) =
                diff(shown, &refs, &DocumentOrder::by(by_key), |d| Ok(label(d))).unwrap();
            assert_eq!(apply(&labels(&before), &changes), labels(&after));
            assert_eq!(
                shown.iter().map(|s| s.value.clone()).collect::<Vec<_>>(),
                labels(&after)
            );
            // Removals first, then additions, then modifications; unchanged versions unreported.
            let kinds: Vec<ChangeKind> = changes.iter().map(|c| c.kind).collect();
            let rank = |k: &ChangeKind| match k {
                ChangeKind::Removed => 0,
                ChangeKind::Added => 1,
                ChangeKind::Modified => 2,
            };
            assert!(kinds.is_sorted_by_key(rank));
            for change in changes.iter().filter(|c| c.kind == ChangeKind::Modified) {
                let name = change.value.split('@').next().unwrap();
                let old = before.iter().find(|d| d.name == name).unwrap();
                let new = after.iter().find(|d| d.name == name).unwrap();
                assert_ne!(old.update_time, new.update_time);
            }
        }
    }
}
