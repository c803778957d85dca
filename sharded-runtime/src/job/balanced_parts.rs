//! A collection split into parts of about equal numbers of documents, for a partitioned job:
//! by Firestore's `PartitionQuery` where the server has it (production), whose split points
//! are documents; by the id space ([`IdRange::part`]) where it answers UNIMPLEMENTED (the
//! emulator: measured in `tests/tests/suite/partitioned_jobs.rs`). Either way the parts are
//! [`IdRange`]s in the ids the job's scan takes (a group job's: its first parents' ids), and
//! together they hold every id exactly once.

use std::cmp::Ordering;

use firestore::FirestoreDb;
use firestore::gcloud_sdk::google::firestore::v1::{
    PartitionQueryRequest, StructuredQuery, partition_query_request, structured_query,
    value::ValueType,
};
use firestore::gcloud_sdk::tonic::Code;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::handle::Scope;
use crate::model::partition::{IdRange, MAX_PARTS};
use crate::model::sharded::Sharded;
use crate::model::value_order::compare_references;

/// How [`Parts`] were drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SplitBy {
    /// At documents Firestore's `PartitionQuery` chose: about equal numbers of documents in
    /// each part, whatever the ids.
    Documents,
    /// At equal shares of the id space ([`IdRange::part`]): even for Firestore's generated
    /// ids; the server had no `PartitionQuery` (the emulator).
    IdSpace,
}

/// A collection's documents split into parts for a partitioned job: run part `i` with
/// `.ids(parts.ranges[i].clone())`. Fix them when the job starts and give every task the
/// same (they serialize), since another split later draws other points.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Parts {
    /// The parts, in id order; together every id, each once. Fewer than asked for when
    /// Firestore found fewer split points (a small collection).
    pub ranges: Vec<IdRange>,
    /// How they were drawn.
    pub by: SplitBy,
}

/// `T`'s documents in `scope` split into at most `parts` parts.
pub(crate) async fn balanced_parts<T: Sharded>(
    db: &FirestoreDb,
    scope: &Scope,
    parts: u32,
) -> Result<Parts> {
    if parts == 0 || parts > MAX_PARTS {
        return Err(Error::InvalidOptions {
            option: "parts",
            expected: "1 to MAX_PARTS (3,844) parts",
        });
    }
    scope.check::<T>()?;
    if parts == 1 {
        // Nothing to split, nothing asked.
        return Ok(Parts {
            ranges: vec![IdRange::all()],
            by: SplitBy::IdSpace,
        });
    }
    match partition_points::<T>(db, scope, parts - 1).await? {
        Some(references) => {
            let root = scope.parent_path(db);
            let collection = match scope {
                Scope::Group => T::DESCRIPTION
                    .parent_collections
                    .first()
                    .copied()
                    .unwrap_or(T::COLLECTION),
                Scope::Top | Scope::Under(_) => T::COLLECTION,
            };
            let group = *scope == Scope::Group;
            let points = references
                .iter()
                .filter_map(|reference| split_id(reference, &root, collection, group))
                .collect();
            let prefix = group.then_some(collection);
            Ok(Parts {
                ranges: ranges_between(points, prefix),
                by: SplitBy::Documents,
            })
        }
        None => Ok(Parts {
            ranges: (0..parts)
                .map(|index| IdRange::part(index, parts))
                .collect::<Result<_>>()?,
            by: SplitBy::IdSpace,
        }),
    }
}

/// The names of the documents `PartitionQuery` splits `T`'s documents in `scope` at, every
/// page of them; `None` where the server does not implement it. Its query is what the server
/// takes: every collection of the id under the scope's parent (`all_descendants`), by
/// `__name__`, nothing else.
async fn partition_points<T: Sharded>(
    db: &FirestoreDb,
    scope: &Scope,
    points: u32,
) -> Result<Option<Vec<String>>> {
    let query = StructuredQuery {
        from: vec![structured_query::CollectionSelector {
            collection_id: T::COLLECTION.to_owned(),
            all_descendants: true,
        }],
        order_by: vec![structured_query::Order {
            field: Some(structured_query::FieldReference {
                field_path: "__name__".to_owned(),
            }),
            direction: structured_query::Direction::Ascending as i32,
        }],
        ..Default::default()
    };
    let mut references = Vec::new();
    let mut page_token = String::new();
    loop {
        let request = PartitionQueryRequest {
            parent: scope.parent_path(db),
            partition_count: i64::from(points),
            page_token: page_token.clone(),
            query_type: Some(partition_query_request::QueryType::StructuredQuery(
                query.clone(),
            )),
            ..Default::default()
        };
        // Asked again while it fails in a way another attempt may fix (a dropped connection).
        let answer =
            crate::wire::retry::retry_reads(&crate::wire::retry::Backoff::default(), || async {
                match db.client().get().partition_query(request.clone()).await {
                    Ok(response) => Ok(Some(response.into_inner())),
                    Err(status) if status.code() == Code::Unimplemented => Ok(None),
                    Err(status) => Err(firestore::errors::FirestoreError::from(status)),
                }
            })
            .await?;
        let Some(response) = answer else {
            return Ok(None);
        };
        references.extend(response.partitions.into_iter().filter_map(|cursor| {
            match cursor.values.into_iter().next()?.value_type? {
                ValueType::ReferenceValue(name) => Some(name),
                _ => None,
            }
        }));
        if response.next_page_token.is_empty() {
            return Ok(Some(references));
        }
        page_token = response.next_page_token;
    }
}

/// The bound a split point `reference` (a document's full name) gives the job's scan, whose
/// ids are those of the documents in `collection` directly under `root`: the document's own
/// id, or that of the document of ours a deeper one is under. Over a group (`group`),
/// `collection` is the first parents' (`rooms/{id}/...`), whose ids a group job ranges over
/// (so that a part takes whole parents); a point under another parent of the group's
/// collection id (`users/u5/messages/m1`) is its own path, since the group's scan takes
/// those documents too, in path order. `None` for a document the scan does not take (a
/// collection of the same id under another parent, outside a group).
fn split_id(reference: &str, root: &str, collection: &str, group: bool) -> Option<String> {
    let relative = reference.strip_prefix(root)?.strip_prefix('/')?;
    let mut segments = relative.split('/');
    if segments.next()? != collection {
        return (group && crate::model::document_id::check_document_path(relative).is_ok())
            .then(|| relative.to_owned());
    }
    let id = segments.next()?;
    crate::model::document_id::check_document_id(id)
        .is_ok()
        .then(|| id.to_owned())
}

/// The ranges between split `points` (in any order, repeats allowed): before the first, from
/// each to the next, from the last on; every id in exactly one. Points are ordered where they
/// lie below `prefix` (a group's first parents' collection).
pub(crate) fn ranges_between(mut points: Vec<String>, prefix: Option<&str>) -> Vec<IdRange> {
    use crate::model::partition::bound_under;
    let at = |point: &String| bound_under(prefix, point).into_owned();
    points.sort_by(|a, b| compare_references(&at(a), &at(b)));
    points.dedup_by(|a, b| compare_references(&at(a), &at(b)) == Ordering::Equal);
    let bounds: Vec<Option<&str>> = std::iter::once(None)
        .chain(points.iter().map(|point| Some(point.as_str())))
        .chain(std::iter::once(None))
        .collect();
    bounds
        .windows(2)
        .map(|pair| IdRange::new(pair[0], pair[1]).expect("sorted distinct document ids"))
        .collect()
}

#[cfg(test)]
mod tests {
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    use super::*;

    #[test]
    fn split_points_become_ranges_that_hold_every_id_once() {
        let mut rng = StdRng::seed_from_u64(11);
        for _ in 0..200 {
            let id = |rng: &mut StdRng| -> String {
                let len = rng.random_range(1..4);
                (0..len)
                    .map(|_| char::from(b"0aAzZ9_"[rng.random_range(0..7)]))
                    .collect()
            };
            let points: Vec<String> = (0..rng.random_range(0..6)).map(|_| id(&mut rng)).collect();
            let ranges = ranges_between(points.clone(), None);
            let mut distinct = points.clone();
            distinct.sort();
            distinct.dedup();
            assert_eq!(ranges.len(), distinct.len() + 1);
            for _ in 0..50 {
                let probe = id(&mut rng);
                let holding = ranges.iter().filter(|range| range.contains(&probe)).count();
                assert_eq!(holding, 1, "{probe} in {ranges:?}");
            }
            for point in &points {
                let holder = ranges
                    .iter()
                    .position(|range| range.contains(point))
                    .unwrap();
                assert_eq!(ranges[holder].start(), Some(point.as_str()));
            }
        }
        assert_eq!(ranges_between(Vec::new(), None), vec![IdRange::all()]);
    }

    #[test]
    fn a_split_point_is_the_id_the_scan_ranges_over() {
        let root = "projects/p/databases/d/documents";
        let at = |name: &str, root: &str, collection: &str| split_id(name, root, collection, false);
        assert_eq!(
            at(&format!("{root}/events/abc"), root, "events").as_deref(),
            Some("abc")
        );
        // A document under one of ours splits at ours; another parent's same-id collection
        // gives no point.
        assert_eq!(
            at(&format!("{root}/events/abc/events/x"), root, "events").as_deref(),
            Some("abc")
        );
        assert_eq!(
            at(&format!("{root}/rooms/x/events/y"), root, "events"),
            None
        );
        let room = "projects/p/databases/d/documents/rooms/lobby";
        assert_eq!(
            at(&format!("{room}/messages/m1"), room, "messages").as_deref(),
            Some("m1")
        );
        assert_eq!(
            at(&format!("{root}/rooms/other/messages/m1"), room, "messages"),
            None
        );
        // Over a group, the first parent's id; under another parent of the group's id, the
        // document's own path, which the group's scan takes too.
        let group = |name: &str| split_id(&format!("{root}/{name}"), root, "rooms", true);
        assert_eq!(group("rooms/lobby/messages/m1").as_deref(), Some("lobby"));
        assert_eq!(
            group("users/u5/messages/m1").as_deref(),
            Some("users/u5/messages/m1")
        );
        assert_eq!(group("messages/m1").as_deref(), Some("messages/m1"));
        assert_eq!(at("elsewhere/x", root, "events"), None);
    }

    /// Over a group, points under the first parents' collection and paths elsewhere make
    /// ranges in the group's path order: every document's position in exactly one, and
    /// each range holding its own point.
    #[test]
    fn a_groups_split_points_anywhere_make_ranges_that_hold_every_path_once() {
        let mut rng = StdRng::seed_from_u64(12);
        let id = |rng: &mut StdRng| -> String {
            (0..rng.random_range(1..3))
                .map(|_| char::from(b"0aAz9"[rng.random_range(0..5)]))
                .collect()
        };
        // A document's position in the group's scan: its path below the root.
        let position = |rng: &mut StdRng| -> String {
            match rng.random_range(0..4) {
                0 => format!("rooms/{}/messages/{}", id(rng), id(rng)),
                1 => format!("users/{}/messages/{}", id(rng), id(rng)),
                2 => format!("messages/{}", id(rng)),
                _ => format!("a/{}/b/{}/messages/{}", id(rng), id(rng), id(rng)),
            }
        };
        for _ in 0..200 {
            let points: Vec<String> = (0..rng.random_range(0..6))
                .map(|_| {
                    let p = position(&mut rng);
                    match p.strip_prefix("rooms/") {
                        Some(rest) => rest.split('/').next().unwrap().to_owned(),
                        None => p,
                    }
                })
                .collect();
            let ranges = ranges_between(points.clone(), Some("rooms"));
            for _ in 0..50 {
                let probe = position(&mut rng);
                let holding = ranges
                    .iter()
                    .filter(|range| range.contains_under(Some("rooms"), &probe))
                    .count();
                assert_eq!(holding, 1, "{probe} in {ranges:?}");
            }
        }
    }
}
