//! `cargo run --release -p sharded-bench --bin benchmarks`: runs every benchmark of sharded
//! against its baseline in the same run and writes BENCHMARKS.md at the repository root.
//!
//! Pass `--skip-build-cost` to leave out the (slow) clean-build measurements, and
//! `--build-cost-only`, `--bulk-only`, `--live-only`, `--clients-only`, `--tracked-only`, `--scale-only`, `--counters-only` (and the other
//! `--…-only` below) to print that section alone.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rand::SeedableRng;
use sharded_bench::{
    PLAIN_COLLECTION, Sharded3, Sharded30, Sharded64, instruments, median, percentile,
};
use sharded_emulator::emulator::Emulator;
use sharded_runtime::firestore::{
    FirestoreConsistencySelector, FirestoreDb, FirestoreQueryDirection, FirestoreTransactionMode,
    FirestoreTransactionOptions,
};
use sharded_runtime::{Sharded, ShardedQuery, reads::QueryStats};

const DOCUMENTS: usize = 2_000;
const PAGE: u32 = 20;
const WARM_UP: usize = 5;
const RUNS: usize = 30;
const WRITE_RUNS: usize = 9;
/// Documents per write run: long enough that emulator pauses do not dominate a run.
const WRITE_DOCUMENTS: usize = 6_000;
const BATCH: usize = 500;

type Failure = Box<dyn std::error::Error>;

/// Counts heap bytes in use, for the backfill's memory figures.
#[global_allocator]
static HEAP: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

#[tokio::main]
async fn main() -> Result<(), Failure> {
    let skip_build = std::env::args().any(|arg| arg == "--skip-build-cost");
    if std::env::args().any(|arg| arg == "--serialization-only") {
        // A quick look at the interleaved serialization ratios; writes nothing.
        let (vs_plain, vs_by_hand, guard) = interleaved_serialization();
        println!("vs shard-less {vs_plain:.3}, vs recipe {vs_by_hand:.3}, guard {guard:.3}");
        return Ok(());
    }
    if std::env::args().any(|arg| arg == "--live-only") {
        // The live-query section alone, printed; writes nothing.
        print!("{}", sharded_bench::live::section().await?);
        return Ok(());
    }
    if std::env::args().any(|arg| arg == "--build-cost-only") {
        // The build-cost section alone, printed; writes nothing.
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .canonicalize()?;
        let mut report = String::new();
        build_cost(&root, &mut report)?;
        print!("{report}");
        return Ok(());
    }
    if std::env::args().any(|arg| arg == "--counters-only") {
        // The counters section alone, printed; writes nothing.
        print!("{}", sharded_bench::counters::section().await?);
        return Ok(());
    }
    if std::env::args().any(|arg| arg == "--group-only") {
        // The collection-group section alone, printed; writes nothing.
        print!("{}", sharded_bench::group::section().await?);
        return Ok(());
    }
    if std::env::args().any(|arg| arg == "--partitions-only") {
        // The partitioned backfill section alone, printed; writes nothing.
        print!("{}", sharded_bench::bulk::partitions_section().await?);
        return Ok(());
    }
    if std::env::args().any(|arg| arg == sharded_bench::tracked::TASK_ARG) {
        // One task process of the tracked job the tracked-jobs section starts.
        return sharded_bench::tracked::task().await;
    }
    if std::env::args().any(|arg| arg == "--tracked-only") {
        // The tracked jobs section alone, printed; writes nothing.
        print!("{}", sharded_bench::tracked::section().await?);
        return Ok(());
    }
    if std::env::args().any(|arg| arg == "--scale-only") {
        // The tracked jobs at scale section alone, printed; writes nothing.
        print!("{}", sharded_bench::scale::section().await?);
        return Ok(());
    }
    if std::env::args().any(|arg| arg == "--clients-only") {
        // The TypeScript client section alone, printed; writes nothing.
        print!("{}", sharded_bench::clients::section().await?);
        return Ok(());
    }
    if std::env::args().any(|arg| arg == "--reads-only") {
        // The reads-per-page section alone, printed; writes nothing.
        print!("{}", sharded_bench::reads::section().await?);
        return Ok(());
    }
    if std::env::args().any(|arg| arg == "--datastore-only") {
        // The Datastore-mode section alone, printed; writes nothing.
        print!("{}", sharded_bench::datastore::section().await?);
        return Ok(());
    }
    if std::env::args().any(|arg| arg == "--purge-only") {
        // The purge section alone, printed; writes nothing.
        print!("{}", sharded_bench::purge::section().await?);
        return Ok(());
    }
    if std::env::args().any(|arg| arg == "--bulk-only") {
        // The bulk writer and backfill section alone, printed; writes nothing.
        print!("{}", sharded_bench::bulk::section().await?);
        return Ok(());
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()?;
    let mut report = String::new();
    header(&mut report)?;

    eprintln!("[1/5] CPU benchmarks (criterion)…");
    cpu(&root, &mut report)?;
    eprintln!("[2/5] emulator benchmarks…");
    emulator(&mut report).await?;
    writeln!(report, "{}", sharded_bench::reads::section().await?)?;
    writeln!(report, "{}", sharded_bench::group::section().await?)?;
    eprintln!("[3/5] live queries…");
    writeln!(report, "{}", sharded_bench::live::section().await?)?;
    writeln!(report, "{}", sharded_bench::clients::section().await?)?;
    writeln!(report, "{}", sharded_bench::counters::section().await?)?;
    eprintln!("[4/5] bulk writes and backfill…");
    writeln!(report, "{}", sharded_bench::bulk::section().await?)?;
    writeln!(
        report,
        "{}",
        sharded_bench::bulk::partitions_section().await?
    )?;
    writeln!(report, "{}", sharded_bench::tracked::section().await?)?;
    writeln!(report, "{}", sharded_bench::scale::section().await?)?;
    writeln!(report, "{}", sharded_bench::datastore::section().await?)?;
    writeln!(report, "{}", sharded_bench::purge::section().await?)?;
    if skip_build {
        writeln!(
            report,
            "\n## Build cost\n\nNot measured in this run (`--skip-build-cost`)."
        )?;
    } else {
        eprintln!("[5/5] build cost…");
        build_cost(&root, &mut report)?;
    }
    std::fs::write(root.join("BENCHMARKS.md"), &report)?;
    eprintln!("wrote {}", root.join("BENCHMARKS.md").display());
    Ok(())
}

fn header(report: &mut String) -> Result<(), Failure> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or_else(
            || "unknown".into(),
            |kb| format!("{} GiB", kb / 1024 / 1024),
        );
    let rustc = command_output("rustc", &["--version"]);
    writeln!(
        report,
        "# Benchmarks\n\n\
         Every figure below comes from one run of\n\n\
         ```sh\ncargo run --release -p sharded-bench --bin benchmarks\n```\n\n\
         which writes this file; each cost is measured against its baseline in the same run and\n\
         reported as a ratio. Machine: {cpu}, {cores} cores, {memory} RAM; {rustc}.\n"
    )?;
    Ok(())
}

fn command_output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

// ---- CPU -------------------------------------------------------------------------------

fn cpu(root: &Path, report: &mut String) -> Result<(), Failure> {
    let status = Command::new(env!("CARGO"))
        .args(["bench", "-p", "sharded-bench", "--bench", "cpu"])
        .current_dir(root)
        .status()?;
    if !status.success() {
        return Err("cargo bench failed".into());
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let median = |group: &str, bench: &str| -> Result<f64, Failure> {
        let path = target
            .join("criterion")
            .join(group)
            .join(bench)
            .join("new/estimates.json");
        let estimates: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
        estimates["median"]["point_estimate"]
            .as_f64()
            .ok_or_else(|| format!("no median in {}", path.display()).into())
    };
    let plain = median("serialize", "plain")?;
    let sharded = median("serialize", "sharded")?;
    let by_hand = median("serialize", "by_hand")?;
    let draw = median("serialize", "draw_only")?;
    writeln!(
        report,
        "## CPU (criterion, medians)\n\n\
         | what | baseline | sharded | ratio |\n|---|---|---|---|\n\
         | serialize one instrument for writing | firestore crate, the same struct without a shard: {} | shard injected: {} | {:.3}× |\n\
         | serialize one instrument for writing | the recipe by hand, a `shard: String` field in the struct: {} | shard injected: {} | {:.3}× |\n\
         | draw a shard value | | {} | |",
        ns(plain),
        ns(sharded),
        sharded / plain,
        ns(by_hand),
        ns(sharded),
        sharded / by_hand,
        ns(draw),
    )?;
    for shards in [64usize, 300] {
        let group = format!("merge_{shards}");
        let kway = median(&group, "kway")?;
        let sort = median(&group, "concat_sort")?;
        writeln!(
            report,
            "| merge {} chunk results of {PAGE_MERGE} documents ({shards} shards) to the first {PAGE_MERGE} | concatenate and sort (the recipe): {} | k-way merge: {} | {:.3}× |",
            shards.div_ceil(30),
            ns(sort),
            ns(kway),
            kway / sort
        )?;
    }
    let (vs_plain, vs_by_hand, guard) = interleaved_serialization();
    writeln!(
        report,
        "\nCriterion runs one benchmark after another, so drift of this shared machine between\n\
         them shows up in the ratios above. Interleaved, {ROUNDS} rounds of {ITERATIONS} serializations of\n\
         each variant in turn, the median ratio of the rounds is **{vs_plain:.3}×** against the\n\
         shard-less struct and **{vs_by_hand:.3}×** against the recipe's hand-written shard field.\n\n\
         The write guard (every write checks that the serialized document holds the order field and\n\
         each required indexed path before sending) is part of the sharded figures above. Measured\n\
         alone the same way, serialization with the guard costs **{guard:.3}×** serialization without it."
    )?;
    writeln!(
        report,
        "\nThe shard costs one uniform random draw and one more field in the same pass: the\n\
         document's top level is collected by sharded's own serializer straight into the\n\
         document's map (each value through the firestore crate's serializer), with the shard\n\
         inserted directly and the required keys matched as they come. Most of the difference\n\
         from the shard-less struct is the cost of one more stored field (a `String` value and a\n\
         map entry), which the recipe's hand-written shard field pays too: compare the first two\n\
         rows. The write guard and the draw are paid back at the order field: the firestore\n\
         crate stores a `FirestoreTimestamp` by printing it to a heap string and parsing that\n\
         back with a general parser; sharded converts the instant itself with the crate's own\n\
         conversion, leaving every other value to the crate (property-tested to store the same\n\
         value). The merge pops the first `limit` documents off a heap of chunk\n\
         heads instead of sorting every document of every chunk.\n"
    )?;
    Ok(())
}

const PAGE_MERGE: usize = 100;
const ROUNDS: usize = 41;
const ITERATIONS: usize = 20_000;

/// Median over rounds of (sharded time / baseline time), each round timing every variant in
/// turn: (against the shard-less struct, against the recipe's hand-written shard field, with
/// the write guard against without it).
fn interleaved_serialization() -> (f64, f64, f64) {
    use sharded_bench::{HandShardedFlat, Plain};
    use sharded_runtime::__private::{serialize, serialize_unguarded};
    use sharded_runtime::firestore::firestore_document_from_serializable;
    use std::hint::black_box;

    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let (_, plain): (String, Plain) = instruments(1, &mut rng).remove(0);
    let sharded = Sharded3::from(&plain);
    let by_hand = HandShardedFlat::from(&plain);
    let time = |f: &dyn Fn()| {
        let started = Instant::now();
        for _ in 0..ITERATIONS {
            f();
        }
        started.elapsed().as_secs_f64()
    };
    let (mut vs_plain, mut vs_by_hand, mut guard) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let p = time(&|| {
            drop(black_box(firestore_document_from_serializable(
                "",
                black_box(&plain),
            )))
        });
        let s = time(&|| drop(black_box(serialize(black_box(&sharded), ""))));
        let h = time(&|| {
            drop(black_box(firestore_document_from_serializable(
                "",
                black_box(&by_hand),
            )))
        });
        let u = time(&|| drop(black_box(serialize_unguarded(black_box(&sharded), ""))));
        vs_plain.push(s / p);
        vs_by_hand.push(s / h);
        guard.push(s / u);
    }
    (
        median(&mut vs_plain),
        median(&mut vs_by_hand),
        median(&mut guard),
    )
}

fn ns(nanos: f64) -> String {
    if nanos >= 1_000_000.0 {
        format!("{:.2} ms", nanos / 1_000_000.0)
    } else if nanos >= 1_000.0 {
        format!("{:.2} µs", nanos / 1_000.0)
    } else {
        format!("{nanos:.0} ns")
    }
}

// ---- Emulator --------------------------------------------------------------------------

async fn emulator(report: &mut String) -> Result<(), Failure> {
    let emulator = Emulator::start_with_heap("1g").await?;
    let db = emulator.db("sharded-bench").await?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let data = instruments(DOCUMENTS, &mut rng);

    // The same documents in four collections.
    let writer = db.create_simple_batch_writer().await?;
    for chunk in data.chunks(BATCH) {
        let mut batch = writer.new_batch();
        for (id, plain) in chunk {
            batch.update_object(PLAIN_COLLECTION, id, plain, None, None, Vec::new())?;
            Sharded3::collection(&db).upsert_in(&mut batch, id, &Sharded3::from(plain))?;
        }
        batch.write().await?;
        let mut batch = writer.new_batch();
        for (id, plain) in chunk {
            Sharded30::collection(&db).upsert_in(&mut batch, id, &Sharded30::from(plain))?;
            Sharded64::collection(&db).upsert_in(&mut batch, id, &Sharded64::from(plain))?;
        }
        batch.write().await?;
    }

    // Query latency, the four variants interleaved run by run so drift hits all alike.
    let mut samples: [Vec<Duration>; 4] = Default::default();
    let mut stats = [QueryStats::default(); 4];
    for run in 0..WARM_UP + RUNS {
        let timings = [
            timed(unsharded_page(&db)).await?,
            timed(page_stats(&db, Sharded3::query().exchange("EXCHG1"))).await?,
            timed(page_stats(&db, Sharded30::query().exchange("EXCHG1"))).await?,
            timed(page_stats(&db, Sharded64::query().exchange("EXCHG1"))).await?,
        ];
        if run >= WARM_UP {
            for (i, (elapsed, stat)) in timings.into_iter().enumerate() {
                samples[i].push(elapsed);
                stats[i] = stat;
            }
        }
    }
    let baseline = percentile(&mut samples[0].clone(), 50);
    writeln!(
        report,
        "## Queries on the emulator\n\n\
         One page of `exchange == \"EXCHG1\"`, newest {PAGE} first, over {DOCUMENTS} documents stored\n\
         the same way in each collection; {RUNS} runs after {WARM_UP} warm-up runs, interleaved.\n\
         Documents read are those the server returned (Firestore bills one read each).\n\n\
         | query | queries sent | documents read | median | p90 | median vs unsharded |\n|---|---|---|---|---|---|"
    )?;
    let names = [
        "unsharded collection (baseline)",
        "sharded, n = 3",
        "sharded, n = 30",
        "sharded, n = 64",
    ];
    for (i, name) in names.iter().enumerate() {
        let median = percentile(&mut samples[i], 50);
        let p90 = percentile(&mut samples[i], 90);
        writeln!(
            report,
            "| {name} | {} | {} | {:.1} ms | {:.1} ms | {:.2}× |",
            stats[i].queries,
            stats[i].documents_read,
            millis(median),
            millis(p90),
            median.as_secs_f64() / baseline.as_secs_f64()
        )?;
    }
    writeln!(
        report,
        "\nUp to 30 shards a page is one query and reads exactly the page; past 30, each of the\n\
         ⌈n/30⌉ concurrent chunk queries is asked for about its share of the page, and asked\n\
         again only when it may hold more. The emulator evaluates `in`\n\
         with about one scan per value, so its latency grows with n in a way production Firestore's\n\
         index scans do not: read these latencies as ratios within this run, not as production\n\
         figures.\n"
    )?;

    // The one-snapshot fan-out: n = 64 pages read in a read-only transaction of their own
    // (BeginTransaction and Rollback round trips included) against the same pages through a
    // client already pinned to one transaction, which sends only the chunk queries.
    let pinned_transaction = db
        .begin_transaction_with_options(
            FirestoreTransactionOptions::new().with_mode(FirestoreTransactionMode::ReadOnly),
        )
        .await?;
    let pinned = db.clone_with_consistency_selector(FirestoreConsistencySelector::Transaction(
        pinned_transaction.transaction_id().clone(),
    ));
    let (mut own, mut shared, mut snapshot_ratios) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..WARM_UP + RUNS {
        let (with_snapshot, _) =
            timed(page_stats(&db, Sharded64::query().exchange("EXCHG1"))).await?;
        let (without, _) =
            timed(page_stats(&pinned, Sharded64::query().exchange("EXCHG1"))).await?;
        if run >= WARM_UP {
            own.push(with_snapshot);
            shared.push(without);
            snapshot_ratios.push(with_snapshot.as_secs_f64() / without.as_secs_f64());
        }
    }
    pinned_transaction.rollback().await?;
    snapshot_ratios.sort_by(f64::total_cmp);
    writeln!(
        report,
        "### One snapshot per fan-out\n\n\
         Past 30 shard values the chunk queries of one fetch read one snapshot: a read-only\n\
         transaction begun before them and rolled back after. Same page, n = 64, {RUNS} runs after\n\
         {WARM_UP} warm-up runs, alternating:\n\n\
         | fan-out | median |\n|---|---|\n\
         | chunk queries only, through a client pinned once to one transaction (baseline) | {:.1} ms |\n\
         | chunk queries in a transaction of their own (what a fetch does) | {:.1} ms |\n\n\
         Median ratio of the pairs: **{:.2}×** (pairs from {:.2}× to {:.2}×). The cost is two\n\
         round trips (BeginTransaction, Rollback) around the concurrent chunk queries; on the\n\
         emulator they are small against its slow `in` scans, so read the ratio against that\n\
         spread. Up to 30 shard values a fetch is one query and begins no transaction.\n",
        millis(percentile(&mut shared, 50)),
        millis(percentile(&mut own, 50)),
        snapshot_ratios[snapshot_ratios.len() / 2],
        snapshot_ratios[0],
        snapshot_ratios[snapshot_ratios.len() - 1],
    )?;

    // Batch writes of the same stored documents: ours injects the shard as it serializes;
    // the baseline is the crate's own batch writer given structs whose shard field the
    // caller set (the recipe by hand). Runs alternate; the ratio is the median of the pairs.
    let write_data = instruments(WRITE_DOCUMENTS, &mut rng);
    let by_hand: Vec<(String, sharded_bench::HandShardedFlat)> = write_data
        .iter()
        .map(|(id, plain)| {
            let mut document = sharded_bench::HandShardedFlat::from(plain);
            document.shard =
                sharded_runtime::__private::draw_shard(Sharded3::SHARD_VALUES).to_owned();
            (id.clone(), document)
        })
        .collect();
    let sharded_data: Vec<(String, Sharded3)> = write_data
        .iter()
        .map(|(id, plain)| (id.clone(), Sharded3::from(plain)))
        .collect();
    let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..WRITE_RUNS + 1 {
        let baseline = write_rate(&db, &by_hand, |batch, id, document| {
            batch.update_object(Sharded3::COLLECTION, id, document, None, None, Vec::new())?;
            Ok(())
        })
        .await?;
        let sharded = write_rate(&db, &sharded_data, |batch, id, document| {
            Sharded3::collection(&db).upsert_in(batch, id, document)?;
            Ok(())
        })
        .await?;
        if run > 0 {
            theirs.push(baseline);
            ours.push(sharded);
            ratios.push(sharded / baseline);
        }
    }
    let (ours, theirs, ratio) = (median(&mut ours), median(&mut theirs), median(&mut ratios));
    writeln!(
        report,
        "## Batch writes on the emulator\n\n\
         {WRITE_DOCUMENTS} documents in sequential batches of {BATCH} through the crate's simple batch\n\
         writer, {WRITE_RUNS} runs of each after one warm-up, alternating. Both sides store the same\n\
         documents (shard field included) over the same ids.\n\n\
         | writer | documents/s (median) |\n|---|---|\n\
         | the firestore crate's batch writer, shard field set by hand (baseline) | {theirs:.0} |\n\
         | sharded `upsert_in`, shard injected while serializing | {ours:.0} |\n\n\
         Median ratio of the paired runs: **{ratio:.2}×** (target ≥ 0.95×); ratio of the medians:\n\
         {:.2}×. The emulator's throughput varies from run to run (JVM pauses), so read these\n\
         against the spread of the pairs: {:.2}× to {:.2}×.\n",
        ours / theirs,
        ratios.first().copied().unwrap_or_default(),
        ratios.last().copied().unwrap_or_default(),
    )?;
    Ok(())
}

/// One page of `query`, for what it cost.
async fn page_stats<T: Sharded, const INDEX: u64>(
    db: &FirestoreDb,
    query: ShardedQuery<T, INDEX>,
) -> Result<QueryStats, Failure> {
    Ok(query.limit(PAGE).fetch_with_stats(db).await?.1)
}

async fn unsharded_page(db: &FirestoreDb) -> Result<QueryStats, Failure> {
    let documents = db
        .fluent()
        .select()
        .from(PLAIN_COLLECTION)
        .filter(|q| q.for_all([q.field("exchange").eq("EXCHG1")]))
        .order(|o| {
            o.fields([o
                .field("timestamp")
                .direction(FirestoreQueryDirection::Descending)])
        })
        .limit(PAGE)
        .query()
        .await?;
    Ok(QueryStats::of_one_query(documents.len()))
}

async fn timed(
    future: impl Future<Output = Result<QueryStats, Failure>>,
) -> Result<(Duration, QueryStats), Failure> {
    let started = Instant::now();
    let stats = future.await?;
    Ok((started.elapsed(), stats))
}

type BatchOf<'a> = sharded_runtime::firestore::FirestoreBatch<
    'a,
    sharded_runtime::firestore::FirestoreSimpleBatchWriter,
>;

async fn write_rate<T>(
    db: &FirestoreDb,
    data: &[(String, T)],
    add: impl Fn(&mut BatchOf<'_>, &str, &T) -> Result<(), Failure>,
) -> Result<f64, Failure> {
    let writer = db.create_simple_batch_writer().await?;
    let started = Instant::now();
    for chunk in data.chunks(BATCH) {
        let mut batch = writer.new_batch();
        for (id, plain) in chunk {
            add(&mut batch, id, plain)?;
        }
        batch.write().await?;
    }
    Ok(data.len() as f64 / started.elapsed().as_secs_f64())
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

// ---- Build cost ------------------------------------------------------------------------

fn build_cost(root: &Path, report: &mut String) -> Result<(), Failure> {
    let scratch = std::env::temp_dir().join(format!("sharded-build-cost-{}", std::process::id()));
    let target = scratch.join("target");
    std::fs::create_dir_all(&scratch)?;
    let cargo = |dir: &Path, args: &[&str]| -> Result<Duration, Failure> {
        let started = Instant::now();
        let output = Command::new(env!("CARGO"))
            .args(args)
            .current_dir(dir)
            .env("CARGO_TARGET_DIR", &target)
            .stdout(std::process::Stdio::null())
            .output()?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(20).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(format!(
                "cargo {args:?} failed in {} ({}):\n{}",
                dir.display(),
                output.status,
                tail.join("\n")
            )
            .into());
        }
        Ok(started.elapsed())
    };
    let clean = cargo(root, &["build", "-p", "sharded-examples"])?;
    let touched = root.join("examples/src/lib.rs");
    let mut incremental = Vec::new();
    for _ in 0..3 {
        touch(&touched)?;
        incremental.push(cargo(root, &["build", "-p", "sharded-examples"])?);
    }

    // 50 structs with serde's derives, with and without `Sharded`, in a crate of their own.
    let krate = scratch.join("derive-cost");
    std::fs::create_dir_all(krate.join("src"))?;
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"derive-cost\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n[workspace]\n\n\
             [dependencies]\nsharded-runtime = {{ path = {:?} }}\nserde = {{ version = \"1\", features = [\"derive\"] }}\n",
            root.join("sharded-runtime")
        ),
    )?;
    std::fs::copy(root.join("Cargo.lock"), krate.join("Cargo.lock"))?;
    let source = |sharded: bool| structs(50, sharded);
    std::fs::write(krate.join("src/lib.rs"), source(false))?;
    cargo(&krate, &["build"])?;
    // Seven interleaved pairs: one build varies by ±5% here, which three samples left in the
    // ratio's second digit.
    let (mut with_serde, mut with_sharded) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        std::fs::write(krate.join("src/lib.rs"), source(false))?;
        with_serde.push(cargo(&krate, &["build"])?);
        std::fs::write(krate.join("src/lib.rs"), source(true))?;
        with_sharded.push(cargo(&krate, &["build"])?);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    let (serde, sharded) = (
        percentile(&mut with_serde, 50),
        percentile(&mut with_sharded, 50),
    );
    writeln!(
        report,
        "## Build cost\n\n\
         Debug builds in a fresh target directory.\n\n\
         | what | time |\n|---|---|\n\
         | clean build of `sharded-examples` with all its dependencies | {:.1} s |\n\
         | incremental rebuild after touching `examples/src/lib.rs` (median of 3) | {:.1} s |\n\
         | crate of 50 structs deriving `Serialize, Deserialize` (median of 7) | {:.2} s |\n\
         | the same 50 structs also deriving `Sharded` with 3 indexed fields each (median of 7) | {:.2} s ({:.2}×) |\n\n\
         The difference between the last two rows is what the derive adds: expanding 50 structs and\n\
         compiling what it generates (the `Sharded` impl, the query builder, type checks of nested\n\
         paths).\n",
        clean.as_secs_f64(),
        percentile(&mut incremental, 50).as_secs_f64(),
        serde.as_secs_f64(),
        sharded.as_secs_f64(),
        sharded.as_secs_f64() / serde.as_secs_f64()
    )?;
    Ok(())
}

fn touch(path: &Path) -> std::io::Result<()> {
    let text = std::fs::read(path)?;
    std::fs::write(path, text)
}

/// `count` instrument-like structs; with `sharded`, each derives `Sharded` too.
fn structs(count: usize, sharded: bool) -> String {
    let mut source = String::from(
        "#![allow(dead_code)]\nuse serde::{Deserialize, Serialize};\nuse sharded_runtime::firestore::FirestoreTimestamp;\n",
    );
    if sharded {
        source.push_str("use sharded_runtime::Sharded;\n");
    }
    for i in 0..count {
        let (derive, container, index) = if sharded {
            (
                ", Sharded",
                "#[sharded(shards = 3, order_by = \"timestamp\")]\n",
                "    #[sharded(index)]\n",
            )
        } else {
            ("", "", "")
        };
        let _ = write!(
            source,
            "\n#[derive(Serialize, Deserialize{derive})]\n#[serde(rename_all = \"camelCase\")]\n{container}\
             pub struct Instrument{i} {{\n    pub symbol: String,\n{index}    pub exchange: String,\n\
             {index}    pub instrument_type: String,\n{index}    pub currency: String,\n    pub micros: i64,\n\
                 pub timestamp: FirestoreTimestamp,\n}}\n"
        );
    }
    source
}
