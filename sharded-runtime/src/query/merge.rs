//! Merging the sorted results of chunk queries (one per ≤ 30 shard values) into one order.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use futures::stream::{BoxStream, StreamExt};

/// Merges sorted `lists` into one sorted list of at most `limit` items: a k-way merge,
/// O(limit · log k), stable across lists for equal items.
pub fn merge_sorted<T>(
    lists: Vec<Vec<T>>,
    limit: Option<usize>,
    cmp: impl Fn(&T, &T) -> Ordering,
) -> Vec<T> {
    struct Head<'c, T, C> {
        item: T,
        list: usize,
        cmp: &'c C,
    }
    impl<T, C: Fn(&T, &T) -> Ordering> Ord for Head<'_, T, C> {
        fn cmp(&self, other: &Self) -> Ordering {
            // BinaryHeap is a max-heap: reverse to pop the smallest, ties by list.
            (self.cmp)(&other.item, &self.item).then_with(|| other.list.cmp(&self.list))
        }
    }
    impl<T, C: Fn(&T, &T) -> Ordering> PartialOrd for Head<'_, T, C> {
        fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
            Some(self.cmp(other))
        }
    }
    impl<T, C: Fn(&T, &T) -> Ordering> PartialEq for Head<'_, T, C> {
        fn eq(&self, other: &Self) -> bool {
            self.cmp(other) == Ordering::Equal
        }
    }
    impl<T, C: Fn(&T, &T) -> Ordering> Eq for Head<'_, T, C> {}

    let total: usize = lists.iter().map(Vec::len).sum();
    let limit = limit.unwrap_or(total).min(total);
    let mut iters: Vec<_> = lists.into_iter().map(Vec::into_iter).collect();
    let mut heap = BinaryHeap::with_capacity(iters.len());
    for (list, iter) in iters.iter_mut().enumerate() {
        if let Some(item) = iter.next() {
            heap.push(Head {
                item,
                list,
                cmp: &cmp,
            });
        }
    }
    let mut merged = Vec::with_capacity(limit);
    while merged.len() < limit {
        let Some(Head { item, list, .. }) = heap.pop() else {
            break;
        };
        if let Some(next) = iters[list].next() {
            heap.push(Head {
                item: next,
                list,
                cmp: &cmp,
            });
        }
        merged.push(item);
    }
    merged
}

/// Merges sorted fallible streams into one sorted stream. The first error from any stream is
/// yielded and ends the merge: a failing chunk fails the whole query.
pub fn merge_streams<'a, T, E>(
    streams: Vec<BoxStream<'a, Result<T, E>>>,
    cmp: impl Fn(&T, &T) -> Ordering + Send + 'a,
) -> BoxStream<'a, Result<T, E>>
where
    T: Send + 'a,
    E: Send + 'a,
{
    struct State<'a, T, E> {
        streams: Vec<BoxStream<'a, Result<T, E>>>,
        heads: Option<Vec<Option<T>>>,
        pending_error: Option<E>,
        failed: bool,
    }
    let state = State {
        streams,
        heads: None,
        pending_error: None,
        failed: false,
    };
    futures::stream::unfold((state, cmp), |(mut state, cmp)| async move {
        if state.failed {
            return None;
        }
        if let Some(error) = state.pending_error.take() {
            state.failed = true;
            return Some((Err(error), (state, cmp)));
        }
        if state.heads.is_none() {
            // Every stream's first item, fetched concurrently.
            let firsts =
                futures::future::join_all(state.streams.iter_mut().map(|s| s.next())).await;
            let mut heads = Vec::with_capacity(firsts.len());
            for first in firsts {
                match first.transpose() {
                    Ok(item) => heads.push(item),
                    Err(error) => {
                        state.failed = true;
                        return Some((Err(error), (state, cmp)));
                    }
                }
            }
            state.heads = Some(heads);
        }
        let heads = state.heads.as_mut().expect("filled above");
        let mut smallest: Option<usize> = None;
        for (i, head) in heads.iter().enumerate() {
            if let Some(item) = head {
                let better = match smallest {
                    None => true,
                    Some(s) => cmp(item, heads[s].as_ref().expect("a head")) == Ordering::Less,
                };
                if better {
                    smallest = Some(i);
                }
            }
        }
        let i = smallest?;
        let item = heads[i].take().expect("a head");
        match state.streams[i].next().await.transpose() {
            Ok(next) => state.heads.as_mut().expect("filled")[i] = next,
            // Yield the item taken, then the error.
            Err(error) => state.pending_error = Some(error),
        }
        Some((Ok(item), (state, cmp)))
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream;

    #[test]
    fn merges_sorted_lists_and_truncates() {
        let lists = vec![vec![1, 4, 7], vec![2, 5], vec![], vec![3, 6, 8, 9]];
        assert_eq!(
            merge_sorted(lists.clone(), None, |a: &i32, b| a.cmp(b)),
            (1..=9).collect::<Vec<_>>()
        );
        assert_eq!(
            merge_sorted(lists, Some(4), |a: &i32, b| a.cmp(b)),
            [1, 2, 3, 4]
        );
        assert_eq!(
            merge_sorted(vec![vec![3, 1], vec![2]], None, |a: &i32, b| b.cmp(a)),
            [3, 2, 1]
        );
    }

    #[test]
    fn equals_concatenate_and_sort_on_random_input() {
        let mut state = 0x2545_f491_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200 {
            let k = (next() % 12) as usize;
            let mut lists: Vec<Vec<(u64, u64)>> = (0..k)
                .map(|list| {
                    (0..next() % 20)
                        .map(|i| (next() % 10, list as u64 * 100 + i))
                        .collect()
                })
                .collect();
            for list in &mut lists {
                list.sort();
            }
            let mut expected: Vec<_> = lists.concat();
            expected.sort();
            let limit = (next() % 40) as usize;
            expected.truncate(limit);
            assert_eq!(merge_sorted(lists, Some(limit), |a, b| a.cmp(b)), expected);
        }
    }

    #[tokio::test]
    async fn merges_streams_and_stops_at_the_first_error() {
        let ok = |v: Vec<i32>| stream::iter(v.into_iter().map(Ok::<_, &str>)).boxed();
        let merged: Vec<_> =
            merge_streams(vec![ok(vec![1, 3]), ok(vec![2, 4]), ok(vec![])], |a, b| {
                a.cmp(b)
            })
            .collect()
            .await;
        assert_eq!(merged, [Ok(1), Ok(2), Ok(3), Ok(4)]);

        let failing = stream::iter(vec![Ok(2), Err("chunk 2 failed"), Ok(9)]).boxed();
        let merged: Vec<_> = merge_streams(vec![ok(vec![1, 3, 5]), failing], |a, b| a.cmp(b))
            .collect()
            .await;
        assert_eq!(merged, [Ok(1), Ok(2), Err("chunk 2 failed")]);
    }
}
