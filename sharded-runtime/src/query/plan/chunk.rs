//! The fan-out: which chunk queries a query is sent as. Firestore counts `shard in [..]`
//! times any other `in` as disjunctions, at most 30 per query, so the (shard value, `in`
//! value) pairs are cut into rectangles of at most 30: every pair in exactly one chunk, so
//! every matching document is read by exactly one chunk query.

use crate::query::MAX_DISJUNCTIONS;

/// One chunk query's part of the fan-out: some of the shard values read and, for an `in`
/// query, some of its values (a range of the prepared ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub(crate) shards: &'static [&'static str],
    /// `start..end` of the prepared `in` values; empty without `in`.
    pub(crate) values: (usize, usize),
}

impl Chunk {
    /// The pairs of values it covers: what its share of the results is taken in proportion
    /// to (writes draw shard values uniformly).
    pub(crate) fn weight(&self) -> usize {
        self.shards.len() * (self.values.1 - self.values.0).max(1)
    }

    /// The same chunk on `shards` alone.
    pub(crate) fn with_shards(self, shards: &'static [&'static str]) -> Chunk {
        Chunk { shards, ..self }
    }
}

/// The shard values split into the fewest chunks of at most 30, of near-equal size.
pub fn shard_chunks(values: &'static [&'static str]) -> Vec<&'static [&'static str]> {
    split_evenly(values, MAX_DISJUNCTIONS)
}

/// `items` in the fewest runs of at most `max`, of near-equal size.
fn split_evenly<T>(items: &[T], max: usize) -> Vec<&[T]> {
    if items.is_empty() {
        return Vec::new();
    }
    let runs = items.len().div_ceil(max);
    let (size, extra) = (items.len() / runs, items.len() % runs);
    let mut rest = items;
    (0..runs)
        .map(|i| {
            let (run, tail) = rest.split_at(size + usize::from(i < extra));
            rest = tail;
            run
        })
        .collect()
}

/// The chunks of `shards` × `any_of` values (0 without `in`): the fewest queries of at most
/// 30 disjunctions each, from groups of `in` values and groups of shard values of near-equal
/// sizes.
pub(super) fn fan_out(shards: &'static [&'static str], any_of: usize) -> Vec<Chunk> {
    if any_of == 0 {
        return shard_chunks(shards)
            .into_iter()
            .map(|shards| Chunk {
                shards,
                values: (0, 0),
            })
            .collect();
    }
    let queries = |per_group: usize| {
        any_of.div_ceil(per_group) * shards.len().div_ceil(MAX_DISJUNCTIONS / per_group)
    };
    let per_group = (1..=any_of.min(MAX_DISJUNCTIONS))
        .min_by_key(|&per_group| queries(per_group))
        .expect("at least one value");
    let indexes: Vec<usize> = (0..any_of).collect();
    let value_groups: Vec<(usize, usize)> = split_evenly(&indexes, per_group)
        .into_iter()
        .map(|group| (group[0], group[group.len() - 1] + 1))
        .collect();
    let shard_groups = split_evenly(shards, MAX_DISJUNCTIONS / per_group);
    value_groups
        .iter()
        .flat_map(|&values| {
            shard_groups
                .iter()
                .map(move |&shards| Chunk { shards, values })
        })
        .collect()
}

/// The chunks of `shards` for an `array-contains-any` of `values` values: every chunk asks
/// for all of them (a document may hold several, and must be read by one chunk only), over
/// groups of shard values small enough that the product stays within 30.
pub(super) fn fan_out_together(shards: &'static [&'static str], values: usize) -> Vec<Chunk> {
    let per_group = (MAX_DISJUNCTIONS / values.max(1)).max(1);
    split_evenly(shards, per_group)
        .into_iter()
        .map(|shards| Chunk {
            shards,
            values: (0, values),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_few_and_even() {
        static FORTY: [&str; 40] = [""; 40];
        let sizes = |values: &'static [&'static str]| {
            shard_chunks(values)
                .iter()
                .map(|c| c.len())
                .collect::<Vec<_>>()
        };
        assert_eq!(sizes(&FORTY), [20, 20]);
        assert_eq!(sizes(&FORTY[..3]), [3]);
        assert_eq!(sizes(&FORTY[..30]), [30]);
        assert_eq!(sizes(&FORTY[..31]), [16, 15]);
        assert_eq!(sizes(&[]), Vec::<usize>::new());
        static MANY: [&str; 301] = [""; 301];
        let chunks = sizes(&MANY);
        assert_eq!(chunks.len(), 11);
        assert!(chunks.iter().all(|&c| (27..=28).contains(&c)));
        assert_eq!(chunks.iter().sum::<usize>(), 301);
    }

    /// Every (shard value, `in` value) pair in exactly one chunk, none over 30 disjunctions,
    /// and no more chunks than the best rectangle cut.
    #[test]
    fn in_values_and_shards_cover_every_pair_once() {
        let shards = crate::model::shard::numbered_shards(301);
        for n in [1, 2, 3, 6, 29, 30, 31, 40, 61, 100, 301] {
            for k in 0..=30 {
                let chunks = fan_out(&shards[..n], k);
                let mut seen = std::collections::HashSet::new();
                for chunk in &chunks {
                    assert!(chunk.weight() <= MAX_DISJUNCTIONS, "n {n} k {k}: {chunk:?}");
                    assert!(!chunk.shards.is_empty());
                    assert!(k == 0 || chunk.values.0 < chunk.values.1);
                    for shard in chunk.shards {
                        for value in chunk.values.0..chunk.values.1.max(chunk.values.0 + 1) {
                            assert!(seen.insert((*shard, value)), "n {n} k {k}: twice");
                        }
                    }
                }
                assert_eq!(seen.len(), n * k.max(1), "n {n} k {k}: every pair");
                let best = (1..=k.max(1))
                    .map(|m| k.max(1).div_ceil(m) * n.div_ceil(MAX_DISJUNCTIONS / m))
                    .min()
                    .unwrap();
                assert_eq!(chunks.len(), best, "n {n} k {k}");
            }
        }
        assert_eq!(fan_out(&shards[..3], 10).len(), 1, "3 × 10 is one query");
        assert_eq!(fan_out(&shards[..3], 11).len(), 2);
        assert_eq!(fan_out(&shards[..40], 1).len(), 2);
    }

    /// Every chunk of an `array-contains-any` asks for all its values; every shard value is
    /// in one chunk; none over 30 disjunctions.
    #[test]
    fn contains_any_keeps_its_values_together() {
        let shards = crate::model::shard::numbered_shards(100);
        for n in [1, 3, 29, 30, 31, 40, 61, 100] {
            for k in 1..=30 {
                let chunks = fan_out_together(&shards[..n], k);
                assert!(
                    chunks
                        .iter()
                        .all(|c| c.values == (0, k) && c.weight() <= 30)
                );
                let covered: Vec<&str> = chunks.iter().flat_map(|c| c.shards).copied().collect();
                assert_eq!(covered, &shards[..n], "n {n} k {k}");
                assert_eq!(chunks.len(), n.div_ceil(30 / k), "n {n} k {k}");
            }
        }
    }
}
