//! The ids a job covers, so that a backfill, a rebalance or a verification can be split
//! across workers (Cloud Run jobs, Kubernetes jobs, several shells): each runs the same job
//! over one [`IdRange`], with its own checkpoint.
//!
//! Firestore's `PartitionQuery` splits a collection by its documents
//! ([`ShardedCollection::parts`](crate::model::handle::ShardedCollection::parts) asks it), but the emulator
//! does not implement it (measured: UNIMPLEMENTED, in `tests/tests/suite/partitioned_jobs.rs`).
//! [`IdRange::part`] splits the id space instead:
//! Firestore's generated ids are 20 characters drawn uniformly from `[0-9A-Za-z]`, so equal
//! ranges of their first two characters hold about equal shares of them. Ids of your own
//! may be spread otherwise; the parts still cover every id exactly once, only less evenly,
//! and [`IdRange::new`] takes boundaries of your choice.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::value_order::compare_references;

/// Firestore's generated-id alphabet, in the order ids sort (UTF-8 bytes).
const ALPHABET: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The most parts [`IdRange::part`] splits into: one per two-character prefix.
pub const MAX_PARTS: u32 = 62 * 62;

/// Document ids from `start` (included; `None`: the first) to `end` (excluded; `None`: past
/// the last), in Firestore's order of ids (legacy numeric ids first, then strings by UTF-8
/// bytes).
///
/// It serializes as its two bounds, and deserializing checks them as [`IdRange::new`] does:
/// a range read from a file or an environment variable is refused as
/// [`Error::InvalidOptions`] when it is empty or a bound is not a document id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "UncheckedIdRange")]
pub struct IdRange {
    start: Option<String>,
    end: Option<String>,
}

/// An [`IdRange`]'s fields as they are read, before [`IdRange::new`] checks them.
#[derive(Deserialize)]
struct UncheckedIdRange {
    start: Option<String>,
    end: Option<String>,
}

impl TryFrom<UncheckedIdRange> for IdRange {
    type Error = Error;

    fn try_from(range: UncheckedIdRange) -> Result<IdRange> {
        IdRange::new(range.start.as_deref(), range.end.as_deref())
    }
}

impl IdRange {
    /// Every id.
    pub fn all() -> IdRange {
        IdRange::default()
    }

    /// The ids from `start` up to, not including, `end`; [`Error::InvalidOptions`] when the
    /// range is empty or a bound is not a document id.
    ///
    /// For a collection group's job, a bound may also be a document's path below the
    /// database root (`users/u5/messages/m1`): the group's documents sort by path, and a
    /// split among documents under other parents than the type's own (what
    /// [`parts`](crate::model::handle::ShardedCollectionGroup::parts) finds there) is such a path. A job
    /// over one collection refuses it.
    pub fn new(start: Option<&str>, end: Option<&str>) -> Result<IdRange> {
        for bound in [start, end].into_iter().flatten() {
            let checked = match bound.contains('/') {
                true => crate::model::document_id::check_document_path(bound),
                false => crate::model::document_id::check_document_id(bound),
            };
            checked.map_err(|_| Error::InvalidOptions {
                option: "IdRange",
                expected: "bounds that are document ids, or (over a collection group) document paths",
            })?;
        }
        // An id and a path compare where the id lies under a group's first parents, which a
        // group's job checks ([`IdRange::is_empty_under`]).
        if let (Some(start), Some(end)) = (start, end)
            && start.contains('/') == end.contains('/')
            && compare_references(start, end) != Ordering::Less
        {
            return Err(Error::InvalidOptions {
                option: "IdRange",
                expected: "a start before the end",
            });
        }
        Ok(IdRange {
            start: start.map(str::to_owned),
            end: end.map(str::to_owned),
        })
    }

    /// Part `index` (from 0) of `parts` equal parts of the id space (see the module's
    /// documentation); every id is in exactly one of them. [`Error::InvalidOptions`] unless
    /// `index < parts <=` [`MAX_PARTS`].
    pub fn part(index: u32, parts: u32) -> Result<IdRange> {
        if parts == 0 || parts > MAX_PARTS || index >= parts {
            return Err(Error::InvalidOptions {
                option: "IdRange::part",
                expected: "index < parts <= MAX_PARTS (3,844)",
            });
        }
        let boundary = |k: u32| -> Option<String> {
            if k == 0 || k == parts {
                return None;
            }
            let prefix = (u64::from(k) * u64::from(MAX_PARTS) / u64::from(parts)) as usize;
            let (first, second) = (prefix / 62, prefix % 62);
            Some(String::from_utf8(vec![ALPHABET[first], ALPHABET[second]]).expect("ASCII"))
        };
        Ok(IdRange {
            start: boundary(index),
            end: boundary(index + 1),
        })
    }

    /// The first id of the range, if bounded below.
    pub fn start(&self) -> Option<&str> {
        self.start.as_deref()
    }

    /// The first id past the range, if bounded above.
    pub fn end(&self) -> Option<&str> {
        self.end.as_deref()
    }

    /// Whether no position lies between the bounds where they lie below `prefix`.
    pub(crate) fn is_empty_under(&self, prefix: Option<&str>) -> bool {
        match (&self.start, &self.end) {
            (Some(start), Some(end)) => {
                compare_references(&bound_under(prefix, start), &bound_under(prefix, end))
                    != Ordering::Less
            }
            _ => false,
        }
    }

    /// Whether a bound is a document's path, which only a collection group's job takes.
    pub(crate) fn has_path_bound(&self) -> bool {
        [&self.start, &self.end]
            .into_iter()
            .flatten()
            .any(|bound| bound.contains('/'))
    }

    /// Whether `id` is in the range.
    pub fn contains(&self, id: &str) -> bool {
        self.contains_under(None, id)
    }

    /// Whether `position` is in the range, each bound taken as [`bound_under`]`(prefix, ..)`:
    /// the id itself, or a path below `prefix` (a collection group's parts split the first
    /// parents' ids, `rooms/{id}`).
    pub(crate) fn contains_under(&self, prefix: Option<&str>, position: &str) -> bool {
        let bound = |bound: &str| compare_references(&bound_under(prefix, bound), position);
        self.start
            .as_deref()
            .is_none_or(|start| bound(start) != Ordering::Greater)
            && self
                .end
                .as_deref()
                .is_none_or(|end| bound(end) == Ordering::Greater)
    }
}

/// Where a range's bound lies below `prefix`: `{prefix}/{bound}`, or the bound itself (an id
/// without a prefix, or a document's path below the root, which a group's bound may be).
pub(crate) fn bound_under<'a>(prefix: Option<&str>, bound: &'a str) -> Cow<'a, str> {
    match prefix {
        Some(prefix) if !bound.contains('/') => Cow::Owned(format!("{prefix}/{bound}")),
        _ => Cow::Borrowed(bound),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    fn random_id(rng: &mut StdRng) -> String {
        (0..20)
            .map(|_| ALPHABET[rng.random_range(0..62)] as char)
            .collect()
    }

    #[test]
    fn parts_cover_every_id_once_and_generated_ids_evenly() {
        let mut rng = StdRng::seed_from_u64(3);
        let odd = [
            "__id7__",
            "__id-3__",
            "_x",
            "~",
            "é",
            "0",
            "zzzzzzzzzzzzzzzzzzzzzzz",
            "Zz",
            "a",
        ];
        for parts in [1, 2, 3, 4, 7, 61, 62, 63, 1000, MAX_PARTS] {
            let ranges: Vec<IdRange> = (0..parts)
                .map(|i| IdRange::part(i, parts).unwrap())
                .collect();
            let mut counts = vec![0usize; parts as usize];
            let count = if parts <= 63 { 4_000 } else { 300 };
            let ids: Vec<String> = (0..count)
                .map(|_| random_id(&mut rng))
                .chain(odd.iter().map(|id| id.to_string()))
                .collect();
            for id in &ids {
                let owners: Vec<usize> = (0..ranges.len())
                    .filter(|&i| ranges[i].contains(id))
                    .collect();
                assert_eq!(owners.len(), 1, "{id} in parts {owners:?} of {parts}");
                counts[owners[0]] += 1;
            }
            if parts == 4 {
                for count in counts {
                    assert!(
                        (850..1_150).contains(&count),
                        "{count} of 4,000 in a quarter"
                    );
                }
            }
        }
    }

    #[test]
    fn bad_parts_and_ranges_are_typed_errors() {
        assert!(IdRange::part(0, 0).is_err());
        assert!(IdRange::part(4, 4).is_err());
        assert!(IdRange::part(0, MAX_PARTS + 1).is_err());
        assert!(IdRange::new(Some("b"), Some("a")).is_err());
        assert!(IdRange::new(Some("a"), Some("a")).is_err());
        // A path bound (a group job's) is a document's: pairs of segments, each an id.
        assert!(IdRange::new(Some("a/b/c"), None).is_err());
        assert!(IdRange::new(Some("a/__x__"), None).is_err());
        assert!(IdRange::new(Some("a/b"), None).unwrap().has_path_bound());
        // An id and a path are ordered where the id lies in a group: checked there.
        let mixed = IdRange::new(Some("zz"), Some("rooms2/x")).unwrap();
        assert!(!mixed.is_empty_under(Some("rooms")));
        assert!(mixed.is_empty_under(Some("zzz")));
        assert!(IdRange::new(Some("a"), Some("b")).unwrap().contains("a"));
        assert!(!IdRange::new(Some("a"), Some("b")).unwrap().contains("b"));
    }

    /// Deserializing goes through `IdRange::new`'s checks; a valid range round-trips.
    #[test]
    fn deserialized_ranges_are_checked() {
        let read = |json: &str| serde_json::from_str::<IdRange>(json);
        for bad in [
            r#"{"start":"b","end":"a"}"#,
            r#"{"start":"a","end":"a"}"#,
            r#"{"start":"a/b/c","end":null}"#,
            r#"{"start":null,"end":"__x__"}"#,
            r#"{"start":"","end":null}"#,
        ] {
            let error = read(bad).unwrap_err().to_string();
            assert!(error.contains("IdRange"), "{bad}: {error}");
        }
        for range in [
            IdRange::all(),
            IdRange::part(3, 7).unwrap(),
            IdRange::new(Some("a"), None).unwrap(),
        ] {
            let json = serde_json::to_string(&range).unwrap();
            assert_eq!(read(&json).unwrap(), range);
        }
    }
}
