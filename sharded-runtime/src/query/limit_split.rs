//! How much a limited query asks of each chunk past 30 shard values.
//!
//! Writes draw shard values uniformly, so a chunk of `c` of the `n` values holds about `c/n`
//! of the first `L` matches. The first round asks each chunk for ⌈1.3·L·c/n⌉ of them instead of
//! `L` (for n = 64 and L = 20: 13 + 13 + 2 = 28 reads, not 60). The merge is then exact for
//! every chunk that ran out, and for every chunk whose last document falls at or after the
//! `L`-th of the merge: what it holds beyond comes later still. A chunk whose last document
//! falls before it may hold more of the first `L`; the next round asks it, just after that
//! document, for about its share of what could still be among them, and so on until every
//! chunk is settled (documents a round adds only move the `L`-th earlier, so a settled chunk
//! stays settled). The fourth round asks for all that could still be among them, so there is
//! no fifth.

use std::cmp::Ordering;

/// The first round's ask of each chunk, by the number of shard values in each.
pub(crate) fn first_round(limit: usize, chunk_values: &[usize]) -> Vec<usize> {
    let values: usize = chunk_values.iter().sum::<usize>().max(1);
    chunk_values
        .iter()
        .map(|&c| {
            let share = (1.3 * limit as f64 * c as f64 / values as f64).ceil() as usize;
            share.clamp(1, limit)
        })
        .collect()
}

/// The next round: (chunk, how many more documents) for each chunk that may hold more of
/// the first `limit`, given what each returned so far (in query order), whether its last
/// request returned all it asked (`ran_out` when fewer), and its number of shard values. Empty
/// when the merge of what was fetched is exact. From the fourth round on, a chunk is asked for
/// all that could still be among the first `limit` (documents need not be spread uniformly,
/// while a collection moves to a new shard set), so a query takes at most four rounds.
pub(crate) fn next_round<D>(
    limit: usize,
    rounds_done: usize,
    fetched: &[Vec<D>],
    ran_out: &[bool],
    chunk_values: &[usize],
    cmp: impl Fn(&D, &D) -> Ordering,
) -> Vec<(usize, usize)> {
    let values: usize = chunk_values.iter().sum::<usize>().max(1);
    let mut merged: Vec<&D> = fetched.iter().flatten().collect();
    merged.sort_by(|a, b| cmp(a, b));
    let threshold = merged.get(limit.saturating_sub(1)).copied();
    let mut more = Vec::new();
    for (chunk, documents) in fetched.iter().enumerate() {
        let Some(last) = documents.last() else {
            continue;
        };
        let settled = threshold.is_some_and(|threshold| cmp(last, threshold) != Ordering::Less);
        if ran_out[chunk] || documents.len() >= limit || settled {
            continue;
        }
        // Documents at or before `last`: the chunk's next ones come after them, so at most
        // `bound` of them can be among the first `limit`; about its share of those are.
        let before = merged.partition_point(|d| cmp(d, last) != Ordering::Greater);
        let bound = limit - before;
        let share = (1.3 * bound as f64 * chunk_values[chunk] as f64 / values as f64).ceil();
        let ask = if rounds_done >= 3 {
            bound
        } else {
            (share as usize).clamp(1, bound)
        };
        more.push((chunk, ask));
    }
    more
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    thread_local!(static ROUNDS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });

    /// Chunks of the values `0..n`, 30 each, the last one smaller.
    fn chunks(n: usize) -> Vec<usize> {
        (0..n.div_ceil(30)).map(|i| (n - 30 * i).min(30)).collect()
    }

    /// Runs both rounds over documents `0..total` spread uniformly over `n` values; the merged
    /// first `limit` and the documents read.
    fn simulate(rng: &mut StdRng, n: usize, total: usize, limit: usize) -> (Vec<usize>, usize) {
        let sizes = chunks(n);
        let mut per_chunk: Vec<Vec<usize>> = vec![Vec::new(); sizes.len()];
        for document in 0..total {
            let value = rng.random_range(0..n);
            per_chunk[value / 30].push(document);
        }
        let asked = first_round(limit, &sizes);
        let mut fetched: Vec<Vec<usize>> = per_chunk
            .iter()
            .zip(&asked)
            .map(|(documents, &asked)| documents.iter().copied().take(asked).collect())
            .collect();
        let mut ran_out: Vec<bool> = fetched
            .iter()
            .zip(&asked)
            .map(|(f, &a)| f.len() < a)
            .collect();
        let mut read: usize = fetched.iter().map(Vec::len).sum();
        let mut rounds = 1;
        loop {
            let next = next_round(limit, rounds, &fetched, &ran_out, &sizes, |a, b| a.cmp(b));
            if next.is_empty() {
                break;
            }
            rounds += 1;
            for (chunk, more) in next {
                let have = fetched[chunk].len();
                let extra: Vec<usize> = per_chunk[chunk]
                    .iter()
                    .copied()
                    .skip(have)
                    .take(more)
                    .collect();
                read += extra.len();
                ran_out[chunk] = extra.len() < more;
                fetched[chunk].extend(extra);
            }
        }
        assert!(rounds <= 4, "{rounds} rounds");
        ROUNDS.with(|r| r.set(r.get() + rounds));
        let mut merged: Vec<usize> = fetched.into_iter().flatten().collect();
        merged.sort_unstable();
        merged.truncate(limit);
        (merged, read)
    }

    #[test]
    fn two_rounds_return_exactly_the_first_limit() {
        let mut rng = StdRng::seed_from_u64(7);
        for _ in 0..20_000 {
            let n = rng.random_range(31..400);
            let total = rng.random_range(0..300);
            let limit = rng.random_range(1..60);
            let (merged, _) = simulate(&mut rng, n, total, limit);
            let expected: Vec<usize> = (0..total.min(limit)).collect();
            assert_eq!(merged, expected, "n {n} total {total} limit {limit}");
        }
    }

    /// The budget, ⌈1.3·L⌉ + k reads on average, for a page of 20 (21 with the
    /// look-ahead) over a large collection.
    #[test]
    fn reads_stay_within_the_budget_on_average() {
        let mut rng = StdRng::seed_from_u64(8);
        for n in [40, 64, 300] {
            let limit = 21;
            let k = chunks(n).len();
            let trials = 2_000;
            ROUNDS.with(|r| r.set(0));
            let read: usize = (0..trials)
                .map(|_| simulate(&mut rng, n, 5_000, limit).1)
                .sum();
            let average = read as f64 / trials as f64;
            let budget = (1.3 * limit as f64).ceil() + k as f64;
            let rounds = ROUNDS.with(|r| r.get()) as f64 / trials as f64;
            eprintln!("n {n}: {average} reads, budget {budget}, {rounds} rounds");
            assert!(average <= budget, "n {n}: {average} reads, budget {budget}");
        }
    }
}
