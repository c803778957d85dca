//! A migration's lanes: the old kind split into key ranges (by a sample of its own keys, or
//! by the caller's id ranges), each read by its keys in key order, and what becomes of each
//! key: copied under its own id, or left behind.

use firestore::gcloud_sdk::google::datastore::v1 as ds;
use serde::{Deserialize, Serialize};

use ds::key::path_element::IdType;

use super::{LeftBehind, LeftBehindReason, Migration, Pending, Read, SAMPLES_PER_LANE};
use crate::datastore::convert;
use crate::datastore::cursor::ChunkPosition;
use crate::datastore::kind::Kind;
use crate::error::{Error, Result};
use crate::model::partition::IdRange;
use crate::model::sharded::Sharded;

/// A key range of the old kind and how far it is copied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Lane {
    /// The first key (included); `None`: from the first.
    pub(super) start: Option<KeyPath>,
    /// The key it ends before; `None`: to the last.
    pub(super) end: Option<KeyPath>,
    /// After the last entity a commit took from it.
    pub(super) position: ChunkPosition,
}

/// A key's path, without its partition (the migration's own).
pub(super) type KeyPath = Vec<(String, KeyId)>;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub(super) enum KeyId {
    Id(i64),
    Name(String),
}

pub(super) fn key_path(key: &ds::Key) -> KeyPath {
    key.path
        .iter()
        .map(|element| {
            let id = match &element.id_type {
                Some(IdType::Id(id)) => KeyId::Id(*id),
                Some(IdType::Name(name)) => KeyId::Name(name.clone()),
                None => KeyId::Name(String::new()),
            };
            (element.kind.clone(), id)
        })
        .collect()
}

/// `key`'s path as a GQL key literal.
pub(super) fn gql_key(key: &ds::Key) -> String {
    let elements: Vec<String> = key
        .path
        .iter()
        .map(|element| {
            let id = match &element.id_type {
                Some(IdType::Id(id)) => id.to_string(),
                Some(IdType::Name(name)) => format!("'{}'", name.replace('\'', "''")),
                None => "NULL".into(),
            };
            format!("{}, {id}", element.kind)
        })
        .collect();
    format!("KEY({})", elements.join(", "))
}

fn path_elements(path: &KeyPath) -> Vec<ds::key::PathElement> {
    path.iter()
        .map(|(kind, id)| ds::key::PathElement {
            kind: kind.clone(),
            id_type: Some(match id {
                KeyId::Id(id) => IdType::Id(*id),
                KeyId::Name(name) => IdType::Name(name.clone()),
            }),
        })
        .collect()
}

impl<T: Sharded> Kind<T> {
    /// The lanes a new run reads: the options' id ranges, or the old kind split by a sample
    /// of its keys.
    pub(super) async fn lanes(&self, options: &Migration) -> Result<Vec<Lane>> {
        let source_key = |id: &str| -> Result<KeyPath> {
            let mut key = self.key(id)?;
            if let Some(last) = key.path.last_mut() {
                last.kind = options.source_kind.clone();
            }
            Ok(key_path(&key))
        };
        let bounds: Vec<(Option<KeyPath>, Option<KeyPath>)> = match options.lanes.is_empty() {
            false => options
                .lanes
                .iter()
                .map(|lane| {
                    Ok((
                        lane.start().map(source_key).transpose()?,
                        lane.end().map(source_key).transpose()?,
                    ))
                })
                .collect::<Result<_>>()?,
            true => {
                let sample =
                    crate::datastore::retried(&options.backoff, "migration key sample", || {
                        self.sample_keys(
                            &options.source_kind,
                            options.lane_count * SAMPLES_PER_LANE,
                        )
                    })
                    .await?;
                split_points(sample, options.lane_count)
                    .into_iter()
                    .map(|(start, end)| (start.map(|k| key_path(&k)), end.map(|k| key_path(&k))))
                    .collect()
            }
        };
        Ok(bounds
            .into_iter()
            .map(|(start, end)| Lane {
                start,
                end,
                position: ChunkPosition::Start,
            })
            .collect())
    }

    /// Up to `size` keys of the old kind drawn uniformly (reservoir sampling over a keys-only
    /// read of the kind, which Datastore bills as small operations), in key order.
    async fn sample_keys(&self, source_kind: &str, size: usize) -> Result<Vec<ds::Key>> {
        let mut sample: Vec<(usize, ds::Key)> = Vec::with_capacity(size);
        let mut seen = 0usize;
        let mut position = ChunkPosition::Start;
        let everything = Lane {
            start: None,
            end: None,
            position: ChunkPosition::Start,
        };
        loop {
            let query = self.lane_query(source_kind, &everything, &position, 1_000)?;
            let (keys, exhausted, _) = self.run_entities(query, Some(1_000), None).await?;
            for (entity, cursor) in keys {
                position = ChunkPosition::after(&cursor);
                let Some(key) = entity.key else { continue };
                if sample.len() < size {
                    sample.push((seen, key));
                } else {
                    // The thread's generator, never held across an await: the run stays `Send`.
                    let slot = rand::random_range(0..=seen);
                    if slot < size {
                        sample[slot] = (seen, key);
                    }
                }
                seen += 1;
            }
            if exhausted {
                break;
            }
        }
        sample.sort_by_key(|(at, _)| *at);
        Ok(sample.into_iter().map(|(_, key)| key).collect())
    }

    /// A keys-only query of the lane from `position`, in key order: the old kind in this
    /// kind's ancestor (every ancestor, at the top).
    fn lane_query(
        &self,
        source_kind: &str,
        lane: &Lane,
        position: &ChunkPosition,
        limit: usize,
    ) -> Result<ds::Query> {
        use ds::property_filter::Operator as Op;
        let key = |path: &KeyPath| ds::Key {
            partition_id: Some(self.datastore.partition.clone()),
            path: path_elements(path),
        };
        let mut filters = Vec::new();
        if let Some(start) = &lane.start {
            filters.push(key_filter(Op::GreaterThanOrEqual, key(start)));
        }
        if let Some(end) = &lane.end {
            filters.push(key_filter(Op::LessThan, key(end)));
        }
        if let Some(parent) = &self.parent {
            filters.push(key_filter(
                Op::HasAncestor,
                ds::Key {
                    partition_id: Some(self.datastore.partition.clone()),
                    path: convert::path_key(parent),
                },
            ));
        }
        let by_key = ds::PropertyReference {
            name: "__key__".into(),
        };
        Ok(ds::Query {
            projection: vec![ds::Projection {
                property: Some(by_key.clone()),
            }],
            kind: vec![ds::KindExpression {
                name: source_kind.to_owned(),
            }],
            filter: Some(crate::datastore::filter::and(filters))
                .filter(|filter| !crate::datastore::filter::is_empty(filter)),
            order: vec![ds::PropertyOrder {
                property: Some(by_key),
                direction: ds::property_order::Direction::Ascending as i32,
            }],
            start_cursor: position.start_cursor()?,
            limit: Some(crate::datastore::filter::int32_limit(limit as u32)),
            ..Default::default()
        })
    }

    /// Up to `limit` keys of the lane from `position`, in key order, each with the cursor
    /// after it and what becomes of it; and whether the lane has nothing more.
    pub(super) async fn read_lane(
        &self,
        source_kind: &str,
        lane: &Lane,
        position: &ChunkPosition,
        limit: usize,
    ) -> Result<(Vec<Pending>, bool)> {
        let query = self.lane_query(source_kind, lane, position, limit)?;
        let (read, exhausted, _) = self.run_entities(query, Some(limit as u32), None).await?;
        let parent = self
            .parent
            .as_deref()
            .map(convert::path_key)
            .unwrap_or_default();
        let mut keys = Vec::with_capacity(read.len());
        for (entity, cursor) in read {
            let source = entity
                .key
                .ok_or_else(|| Error::UnexpectedAnswer("an entity without a key".into()))?;
            let kind = match self.copy_id(&source, &parent) {
                Ok(id) => Read::Copy { source, id },
                Err(reason) => Read::LeftBehind(LeftBehind {
                    key: gql_key(&source),
                    reason,
                }),
            };
            keys.push(Pending { cursor, kind });
        }
        Ok((keys, exhausted))
    }

    /// The id the old entity at `source` is copied under: its own, where it is a direct child
    /// of `parent` (the sharded kind's ancestor) and its name is an id of the type.
    pub(super) fn copy_id(
        &self,
        source: &ds::Key,
        parent: &[ds::key::PathElement],
    ) -> std::result::Result<String, LeftBehindReason> {
        let (last, ancestors) = source
            .path
            .split_last()
            .ok_or(LeftBehindReason::NotAnId("a key without a path"))?;
        if ancestors != parent {
            return Err(LeftBehindReason::OtherAncestor);
        }
        let id = match &last.id_type {
            Some(IdType::Id(id)) => format!("__id{id}__"),
            Some(IdType::Name(name)) => name.clone(),
            None => return Err(LeftBehindReason::NotAnId("a key without an id")),
        };
        match crate::model::document_id::check_document_id(&id) {
            Ok(()) => Ok(id),
            Err(Error::InvalidDocumentId { reason, .. }) => Err(LeftBehindReason::NotAnId(reason)),
            Err(_) => Err(LeftBehindReason::NotAnId("not a document id")),
        }
    }
}

/// Lanes of about equal size from `sample` (keys in key order, drawn uniformly): up to
/// `lanes` ranges, each starting where the one before ends, the first from the first key, the
/// last to past the last.
fn split_points<K: Clone + PartialEq>(sample: Vec<K>, lanes: usize) -> Vec<(Option<K>, Option<K>)> {
    let mut bounds: Vec<K> = (1..lanes)
        .filter_map(|i| sample.get(i * sample.len() / lanes).cloned())
        .collect();
    bounds.dedup();
    let starts = std::iter::once(None).chain(bounds.iter().cloned().map(Some));
    let ends = bounds
        .iter()
        .cloned()
        .map(Some)
        .chain(std::iter::once(None));
    starts.zip(ends).collect()
}

/// Refuses lanes that do not cover every id exactly once: in order, each starting where the
/// one before ends, the first from the first id, the last to past the last.
pub(super) fn check_lanes(lanes: &[IdRange]) -> Result<()> {
    let refused = Err(Error::InvalidOptions {
        option: "lanes",
        expected: "id ranges in order, each starting where the one before ends, from the first id to past the last (as `IdRange::part(i, n)` for i in 0..n)",
    });
    let (Some(first), Some(last)) = (lanes.first(), lanes.last()) else {
        return refused;
    };
    if first.start().is_some() || last.end().is_some() {
        return refused;
    }
    match lanes
        .windows(2)
        .all(|pair| pair[0].end().is_some() && pair[0].end() == pair[1].start())
    {
        true => Ok(()),
        false => refused,
    }
}

fn key_filter(op: ds::property_filter::Operator, key: ds::Key) -> ds::Filter {
    crate::datastore::filter::property_filter(
        "__key__",
        op,
        ds::Value {
            value_type: Some(ds::value::ValueType::KeyValue(key)),
            ..Default::default()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn range(start: Option<&str>, end: Option<&str>) -> IdRange {
        IdRange::new(start, end).unwrap()
    }

    #[test]
    fn a_key_reads_as_gql() {
        let key = ds::Key {
            partition_id: None,
            path: vec![
                ds::key::PathElement {
                    kind: "Root".into(),
                    id_type: Some(IdType::Name("it's/1".into())),
                },
                ds::key::PathElement {
                    kind: "Old".into(),
                    id_type: Some(IdType::Id(-3)),
                },
            ],
        };
        assert_eq!(gql_key(&key), "KEY(Root, 'it''s/1', Old, -3)");
    }

    #[test]
    fn lanes_must_cover_every_id_once() {
        let parts: Vec<IdRange> = (0..5).map(|i| IdRange::part(i, 5).unwrap()).collect();
        assert!(check_lanes(&parts).is_ok());
        assert!(check_lanes(&[IdRange::all()]).is_ok());
        let split = [range(None, Some("m")), range(Some("m"), None)];
        assert!(check_lanes(&split).is_ok());
        for refused in [
            vec![],
            vec![range(None, Some("m"))],
            vec![range(Some("m"), None)],
            vec![split[1].clone(), split[0].clone()],
            vec![range(None, Some("m")), range(Some("n"), None)],
            vec![range(None, Some("n")), range(Some("m"), None)],
            vec![IdRange::all(), IdRange::all()],
        ] {
            assert!(check_lanes(&refused).is_err(), "{refused:?}");
        }
    }

    /// Split points from random samples cover every key once, in order, with at most the
    /// lanes asked for, and lanes of about equal shares of the sample.
    #[test]
    fn split_points_cover_every_key_once() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(61);
        for _ in 0..2_000 {
            let size = rng.random_range(0..400);
            let range = rng.random_range(1..2_000u32);
            let mut sample: Vec<u32> = (0..size).map(|_| rng.random_range(0..range)).collect();
            sample.sort();
            let lanes = rng.random_range(1..40);
            let split = split_points(sample.clone(), lanes);
            assert!(!split.is_empty() && split.len() <= lanes);
            assert_eq!(split.first().unwrap().0, None);
            assert_eq!(split.last().unwrap().1, None);
            for pair in split.windows(2) {
                assert!(pair[0].1.is_some());
                assert_eq!(pair[0].1, pair[1].0);
                assert!(pair[0].0.is_none() || pair[0].0 < pair[0].1);
            }
            let held = |start: &Option<u32>, end: &Option<u32>| {
                sample
                    .iter()
                    .filter(|key| start.is_none_or(|s| s <= **key) && end.is_none_or(|e| **key < e))
                    .count()
            };
            // Every key of the sample lies in exactly one lane.
            assert_eq!(
                split.iter().map(|(s, e)| held(s, e)).sum::<usize>(),
                sample.len()
            );
            // Distinct keys: no lane holds more than its share and one.
            let mut distinct = sample.clone();
            distinct.dedup();
            if distinct.len() == sample.len() && sample.len() >= lanes {
                for (start, end) in &split {
                    assert!(held(start, end) <= sample.len().div_ceil(lanes) + 1);
                }
            }
        }
    }
}
