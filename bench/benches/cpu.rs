//! CPU costs of sharding, each against its baseline in the same run:
//! - serializing a document for writing with the shard injected, vs the firestore crate's
//!   plain serialization of the same struct;
//! - merging chunk results of 64 and 300 shards with a k-way merge, vs concatenating and
//!   sorting (the recipe's approach).

use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rand::SeedableRng;
use sharded_bench::{HandShardedFlat, Sharded3, chunk_results, instruments, newest_first};
use sharded_runtime::__private::{draw_shard, merge_sorted, serialize, serialize_unguarded};
use sharded_runtime::Sharded;
use sharded_runtime::firestore::firestore_document_from_serializable;

fn serialization(c: &mut Criterion) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let (_, plain) = instruments(1, &mut rng).remove(0);
    let sharded = Sharded3::from(&plain);
    let mut group = c.benchmark_group("serialize");
    group.bench_function("plain", |b| {
        b.iter(|| firestore_document_from_serializable("", black_box(&plain)).unwrap())
    });
    group.bench_function("sharded", |b| {
        b.iter(|| serialize(black_box(&sharded), "").unwrap())
    });
    group.bench_function("unguarded", |b| {
        b.iter(|| serialize_unguarded(black_box(&sharded), "").unwrap())
    });
    // The recipe's way: the caller stores a shard field of the struct itself.
    let by_hand = HandShardedFlat::from(&plain);
    group.bench_function("by_hand", |b| {
        b.iter(|| firestore_document_from_serializable("", black_box(&by_hand)).unwrap())
    });
    group.bench_function("draw_only", |b| {
        b.iter(|| draw_shard(black_box(Sharded3::SHARD_VALUES)))
    });
    group.finish();
}

fn merging(c: &mut Criterion) {
    const LIMIT: usize = 100;
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for shards in [64usize, 300] {
        let chunks = chunk_results(shards.div_ceil(30), LIMIT, &mut rng);
        let mut group = c.benchmark_group(format!("merge_{shards}"));
        group.bench_function("kway", |b| {
            b.iter_batched(
                || chunks.clone(),
                |lists| merge_sorted(lists, Some(LIMIT), newest_first),
                BatchSize::SmallInput,
            )
        });
        group.bench_function("concat_sort", |b| {
            b.iter_batched(
                || chunks.clone(),
                |lists| {
                    let mut all = lists.concat();
                    all.sort_by(newest_first);
                    all.truncate(LIMIT);
                    all
                },
                BatchSize::SmallInput,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, serialization, merging);
criterion_main!(benches);
