//! The bulk writer and the backfill on the emulator, and the ramp in virtual time: the
//! "Bulk writes and backfill" section of BENCHMARKS.md.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use sharded_emulator::emulator::Emulator;
use sharded_runtime::bulk::{BulkWriter, BulkWriterOptions, RateLimiter, Throttling};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{Sharded, ShardedCollection};

use crate::{Plain, Sharded3, instruments, median};

type Failure = Box<dyn std::error::Error>;

/// Documents per throughput run.
const WRITE_DOCUMENTS: usize = 20_000;
const WRITE_RUNS: usize = 7;
/// The crate's batch writer's usual use: sequential commits of 500.
const BASELINE_BATCH: usize = 500;
const BACKFILL_DOCUMENTS: usize = 20_000;
const MEMORY_SIZES: [usize; 2] = [10_000, 100_000];

/// Runs every measurement of the section and returns it as markdown.
pub async fn section() -> Result<String, Failure> {
    let mut report = String::new();
    let emulator = Emulator::start_with_heap("3g").await?;
    throughput(&emulator, &mut report).await?;
    backfill_rate(&emulator, &mut report).await?;
    backfill_memory(&emulator, &mut report).await?;
    ramp(&mut report)?;
    Ok(report)
}

/// The bulk writer with throttling off against the firestore crate's batch writer, the same
/// documents over the same ids, runs alternating: with Google's requests of 20, and with
/// `BulkWriterOptions::unthrottled()`'s requests of 500.
async fn throughput(emulator: &Emulator, report: &mut String) -> Result<(), Failure> {
    let db = emulator.db("bulk-throughput").await?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let documents: Vec<(String, Sharded3)> = instruments(WRITE_DOCUMENTS, &mut rng)
        .iter()
        .map(|(id, plain)| (id.clone(), Sharded3::from(plain)))
        .collect();
    let bulk_rate = |options: BulkWriterOptions| {
        let (db, documents) = (&db, &documents);
        async move {
            let writer = BulkWriter::new(db, options)?;
            let started = Instant::now();
            for (id, document) in documents {
                drop(writer.upsert(id, document).await?);
            }
            writer.close().await?;
            Ok::<f64, Failure>(documents.len() as f64 / started.elapsed().as_secs_f64())
        }
    };
    let mut rates: [Vec<f64>; 3] = Default::default();
    let mut ratios: [Vec<f64>; 2] = Default::default();
    for run in 0..=WRITE_RUNS {
        let baseline = {
            let writer = db.create_simple_batch_writer().await?;
            let started = Instant::now();
            for chunk in documents.chunks(BASELINE_BATCH) {
                let mut batch = writer.new_batch();
                for (id, document) in chunk {
                    Sharded3::collection(&db).upsert_in(&mut batch, id, document)?;
                }
                batch.write().await?;
            }
            documents.len() as f64 / started.elapsed().as_secs_f64()
        };
        let small =
            bulk_rate(BulkWriterOptions::default().with_throttling(Throttling::Off)).await?;
        let large = bulk_rate(BulkWriterOptions::unthrottled()).await?;
        if run > 0 {
            for (rates, rate) in rates.iter_mut().zip([baseline, small, large]) {
                rates.push(rate);
            }
            ratios[0].push(small / baseline);
            ratios[1].push(large / baseline);
        }
    }
    let [baseline, small, large] = rates.map(|mut rates| median(&mut rates));
    let [small_ratios, large_ratios] = ratios.map(|mut ratios| {
        let median = median(&mut ratios);
        (median, ratios[0], ratios[ratios.len() - 1])
    });
    writeln!(
        report,
        "## Bulk writes and backfill on the emulator\n\n\
         ### Bulk writer throughput\n\n\
         {WRITE_DOCUMENTS} sharded documents, {WRITE_RUNS} runs of each writer after one warm-up, in turn,\n\
         over the same ids. The baseline is the firestore crate's simple batch writer in sequential\n\
         commits of {BASELINE_BATCH} (its usual use; it neither throttles nor retries single writes). The bulk\n\
         writer runs with throttling off and every other guarantee (per-write retries, outcomes,\n\
         at most 500 writes in flight): once with Google's requests of 20 writes, once with\n\
         `BulkWriterOptions::unthrottled()`, requests of up to 500.\n\n\
         | writer | documents/s (median) | median ratio of the pairs | range of the pairs |\n|---|---|---|---|\n\
         | firestore crate's batch writer (baseline) | {baseline:.0} | | |\n\
         | `BulkWriter`, throttling off, requests of 20 | {small:.0} | {:.2}× | {:.2}× to {:.2}× |\n\
         | `BulkWriter`, `unthrottled()`, requests of 500 | {large:.0} | **{:.2}×** | {:.2}× to {:.2}× |\n\n\
         The target is ≥ 0.95×. The emulator spends about as much per request as per write, so\n\
         requests of 20 pay for 25 times the requests of the baseline's; `unthrottled()` sends as\n\
         few as the baseline. Each run takes about a second, so the emulator's pauses spread the\n\
         pairs widely.\n",
        small_ratios.0,
        small_ratios.1,
        small_ratios.2,
        large_ratios.0,
        large_ratios.1,
        large_ratios.2,
    )?;
    Ok(())
}

/// Writes `count` documents without a shard field into `Sharded3`'s collection.
async fn unsharded_collection(db: &FirestoreDb, count: usize) -> Result<(), Failure> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(count as u64);
    write_unsharded(db, instruments(count, &mut rng)).await
}

/// `documents` written without a shard into the sharded type's collection.
async fn write_unsharded(
    db: &FirestoreDb,
    documents: impl IntoIterator<Item = (String, Plain)>,
) -> Result<(), Failure> {
    let writer = BulkWriter::new(db, BulkWriterOptions::unthrottled())?;
    for (id, plain) in documents {
        drop(
            writer
                .set::<Plain>(Sharded3::COLLECTION, &id, &plain)
                .await?,
        );
    }
    writer.close().await?;
    Ok(())
}

fn unthrottled<'db, T: Sharded>(
    collection: &ShardedCollection<'db, T>,
) -> sharded_runtime::jobs::ShardJob<'db, T> {
    collection
        .backfill()
        .writer(BulkWriterOptions::default().with_throttling(Throttling::Off))
}

/// Backfill against a scan of the same documents (`verify`: the same reads, no writes).
async fn backfill_rate(emulator: &Emulator, report: &mut String) -> Result<(), Failure> {
    let db = emulator.db("bulk-backfill").await?;
    unsharded_collection(&db, BACKFILL_DOCUMENTS).await?;
    let collection = Sharded3::collection(&db);
    let started = Instant::now();
    let census = collection.verify().await?;
    let scan = census.scanned as f64 / started.elapsed().as_secs_f64();
    let progress = unthrottled(&collection).run(|_| {}).await?;
    let backfill = progress.updated as f64 / progress.elapsed.as_secs_f64();
    let outstanding = collection.verify().await?.outstanding();
    writeln!(
        report,
        "### Backfill\n\n\
         {BACKFILL_DOCUMENTS} documents written without a shard, then backfilled with throttling off\n\
         (pages of 500, shard field only, each write with an update-time precondition).\n\n\
         | job | documents/s |\n|---|---|\n\
         | `verify`: the same scan, no writes (baseline) | {scan:.0} |\n\
         | backfill: scan and write | {backfill:.0} |\n\n\
         Backfill vs scan alone: **{:.2}×** the rate. Documents left without a shard afterwards:\n\
         {outstanding}. With the default ramp the writes, not the scan, set the pace: 500/s for the\n\
         first 5 minutes.\n",
        backfill / scan,
    )?;
    Ok(())
}

/// The memory a backfill of 10,000 and of 100,000 documents takes: the peak of heap bytes
/// in use (counted by the benchmarks binary's global allocator) over what was in use when
/// the job started, and the peak resident size.
async fn backfill_memory(emulator: &Emulator, report: &mut String) -> Result<(), Failure> {
    let heap = peak_alloc::PeakAlloc;
    let mut rows = String::new();
    let mut growths = Vec::new();
    for (i, size) in MEMORY_SIZES.into_iter().enumerate() {
        let db = emulator.db(&format!("bulk-memory-{i}")).await?;
        unsharded_collection(&db, size).await?;
        let collection = Sharded3::collection(&db);
        let rss_before = reset_peak_rss()?;
        heap.reset_peak_usage();
        let heap_before = heap.current_usage() as u64;
        let progress = unthrottled(&collection).run(|_| {}).await?;
        let heap_growth = (heap.peak_usage() as u64).saturating_sub(heap_before);
        let rss_growth = peak_rss()?.saturating_sub(rss_before);
        growths.push(heap_growth);
        writeln!(
            rows,
            "| {size} | {} | {:.2} MiB | {:.1} MiB |",
            progress.updated,
            mib(heap_growth),
            mib(rss_growth)
        )?;
    }
    if growths[0] == 0 {
        return Err("no heap growth measured: is `peak_alloc` the global allocator?".into());
    }
    writeln!(
        report,
        "### Backfill memory\n\n\
         What a backfill of a collection adds to this process's memory at its peak: heap bytes\n\
         in use (counted by a global allocator) and resident size (VmHWM, reset before each\n\
         job), over what was in use when the job started. The emulator runs in its own process.\n\n\
         | documents | updated | peak heap growth | peak resident growth |\n|---|---|---|---|\n\
         {rows}\n\
         Ten times the documents: **{:.2}×** the peak heap growth. The job holds about two pages\n\
         (500 documents of the shard field alone) and the writer's 500 writes in flight, whatever\n\
         the collection's size; resident growth stays near zero because the allocator reuses\n\
         memory the seeding freed.\n",
        growths[1] as f64 / growths[0] as f64,
    )?;
    Ok(())
}

/// Writes issued per ramp interval by `writers` (each a throttling and its start time), all
/// kept busy with requests of 20 writes, as the writer asks its limiter, over `windows`
/// intervals in virtual time.
pub(crate) fn issued_per_window(
    writers: &[(Throttling, Duration)],
    interval: Duration,
    windows: usize,
) -> Vec<u64> {
    const REQUEST: usize = 20;
    let limiters: Vec<RateLimiter> = writers
        .iter()
        .map(|&(throttling, start)| RateLimiter::new(throttling, start, REQUEST))
        .collect();
    let end = interval * windows as u32;
    let mut issued = vec![0u64; windows];
    // Virtual time: each writer's next moment it may write; time moves to the earliest.
    let mut next: Vec<Duration> = writers.iter().map(|&(_, start)| start).collect();
    loop {
        let (writer, &at) = next
            .iter()
            .enumerate()
            .min_by_key(|(_, at)| **at)
            .expect("at least one writer");
        if at >= end {
            return issued;
        }
        match limiters[writer].try_acquire(REQUEST, at) {
            Ok(()) => {
                issued[(at.as_nanos() / interval.as_nanos()) as usize] += REQUEST as u64;
            }
            Err(wait) => next[writer] = at + wait.max(Duration::from_nanos(1)),
        }
    }
}

/// How long the default ramp takes to reach 500·n writes/s, from the limiter run in virtual
/// time as the writer runs it.
fn ramp(report: &mut String) -> Result<(), Failure> {
    let mut rows = String::new();
    for shards in [3u32, 30] {
        let ceiling = 500.0 * f64::from(shards);
        let throttling = Throttling::ramp().with_maximum(ceiling);
        let window = Duration::from_secs(300);
        // A few windows past the schedule's, to see whether the writer keeps to it.
        let windows = (throttling.time_to_reach(ceiling).as_secs() / 300) as usize + 4;
        let issued = issued_per_window(&[(throttling, Duration::ZERO)], window, windows);
        let full = issued
            .iter()
            .position(|&writes| writes as f64 >= 0.95 * ceiling * 300.0)
            .ok_or_else(|| format!("{shards} shard values: no full window in {windows}"))?;
        let reached = window * full as u32;
        writeln!(
            rows,
            "| {shards} | {ceiling:.0} | {} min | {} min |",
            reached.as_secs() / 60,
            throttling.time_to_reach(ceiling).as_secs() / 60
        )?;
    }
    writeln!(
        report,
        "### Ramp-up\n\n\
         `BulkWriterOptions::for_type` starts at 500 writes/s and multiplies by 1.5 every 5\n\
         minutes up to 500 per shard value. The first 5-minute window in which the writer,\n\
         driven by a virtual clock with work always queued, issues at least 95 % of 500·n·300\n\
         writes:\n\n\
         | shard values n | 500·n writes/s | first full window starts at | schedule says |\n|---|---|---|---|\n\
         {rows}"
    )?;
    Ok(())
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1024.0 / 1024.0
}

/// Resets the kernel's peak-RSS mark and returns the current RSS, in bytes.
fn reset_peak_rss() -> std::io::Result<u64> {
    std::fs::write("/proc/self/clear_refs", "5")?;
    status_kib("VmRSS").map(|kib| kib * 1024)
}

fn peak_rss() -> std::io::Result<u64> {
    status_kib("VmHWM").map(|kib| kib * 1024)
}

fn status_kib(key: &str) -> std::io::Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("no {key} in /proc/self/status")))
}

/// `count` instruments written without a shard into the sharded type's collection, under
/// generated-style ids (20 random letters and digits, as Firestore's), seeded by `seed`.
pub(crate) async fn legacy_instruments(
    db: &FirestoreDb,
    count: usize,
    seed: u64,
) -> Result<(), Failure> {
    use rand::Rng;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let alphabet = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let documents: Vec<(String, Plain)> = instruments(count, &mut rng.clone())
        .into_iter()
        .map(|(_, plain)| {
            let id = (0..20)
                .map(|_| alphabet[rng.random_range(0..62)] as char)
                .collect();
            (id, plain)
        })
        .collect();
    write_unsharded(db, documents).await
}

/// A backfill split into 1, 2 and 4 parts of the id space, each part a job of its own with
/// its own writer, run concurrently in this process: the whole backfill's rate against one
/// job's, same documents (generated-style ids) in a fresh database each time.
pub async fn partitions_section() -> Result<String, Failure> {
    const DOCUMENTS: usize = 20_000;
    let emulator = Emulator::start_with_heap("3g").await?;
    let mut rates = Vec::new();
    for parts in [1u32, 2, 4] {
        let db = emulator.db(&format!("bulk-parts-{parts}")).await?;
        legacy_instruments(&db, DOCUMENTS, 5).await?;
        let started = Instant::now();
        let jobs = (0..parts).map(|index| {
            let db = db.clone();
            async move {
                Sharded3::collection(&db)
                    .backfill()
                    .ids(sharded_runtime::jobs::IdRange::part(index, parts)?)
                    .writer(BulkWriterOptions::unthrottled().share_of(parts)?)
                    .run(|_| {})
                    .await
            }
        });
        let done = futures::future::try_join_all(jobs).await?;
        let updated: u64 = done.iter().map(|progress| progress.updated).sum();
        let rate = updated as f64 / started.elapsed().as_secs_f64();
        let outstanding = Sharded3::collection(&db).verify().await?.outstanding();
        rates.push((parts, rate, updated, outstanding));
    }
    let baseline = rates[0].1;
    let mut report = String::new();
    writeln!(
        report,
        "### Partitioned backfill\n\n\
         {DOCUMENTS} documents with generated-style ids written without a shard, then backfilled\n\
         by 1, 2 and 4 jobs over parts of the id space (`IdRange::part`), each with its own\n\
         writer (`unthrottled().share_of(parts)`), run concurrently in one process, a fresh\n\
         database each time.\n\n\
         | parts | documents/s | vs one job | documents updated | left without a shard |\n\
         |---|---|---|---|---|"
    )?;
    for (parts, rate, updated, outstanding) in rates {
        writeln!(
            report,
            "| {parts} | {rate:.0} | {:.2}× | {updated} | {outstanding} |",
            rate / baseline
        )?;
    }
    writeln!(
        report,
        "\nThe emulator runs on the same 2 cores as the jobs, so parts here share one CPU budget;\n\
         on Firestore each part's scan and writes go to other servers, and the parts' writers\n\
         together stay within one job's ramp.",
    )?;
    Ok(report)
}
