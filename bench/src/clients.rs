//! The TypeScript client (`clients/typescript`) against the Rust library: one page of the same
//! query over the same documents, timed by each in its own process (from the call to the page,
//! so Node's start is not counted), with what each page read.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use sharded_emulator::emulator::Emulator;
use sharded_runtime::Sharded;
use sharded_runtime::firestore::FirestoreDb;

use crate::{Sharded3, Sharded40, Sharded64, instruments, percentile};

const DOCUMENTS: usize = 2_000;
const PAGE: u32 = 20;
const RUNS: usize = 30;
const WARMUP: usize = 5;

type Failure = Box<dyn std::error::Error>;

/// One row: shard values, then each side's median and p90 and what a page read.
struct Row {
    shards: usize,
    rust: (Duration, Duration, usize, usize),
    typescript: (Duration, Duration, usize, usize),
}

fn client() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../clients/typescript")
}

/// `npm ci` when the client is not installed, then its build.
fn build_client() -> Result<PathBuf, Failure> {
    let dir = client();
    if !dir.join("node_modules/typescript/package.json").exists() {
        let status = Command::new("npm")
            .args([
                "ci",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
                "--loglevel=error",
            ])
            .current_dir(&dir)
            .status()?;
        if !status.success() {
            return Err("npm ci failed in clients/typescript".into());
        }
    }
    let status = Command::new("npm")
        .args(["run", "--silent", "build"])
        .current_dir(&dir)
        .status()?;
    if !status.success() {
        return Err("the TypeScript client does not build".into());
    }
    Ok(dir)
}

async fn measure<T>(
    db: &FirestoreDb,
    host: &str,
    project: &str,
    dir: &Path,
    data: &[(String, crate::Plain)],
) -> Result<Row, Failure>
where
    T: sharded_runtime::bounds::TopLevel + for<'p> From<&'p crate::Plain>,
    T: HasExchange,
{
    let writer = db.create_simple_batch_writer().await?;
    for chunk in data.chunks(500) {
        let mut batch = writer.new_batch();
        for (id, plain) in chunk {
            T::collection(db).upsert_in(&mut batch, id, &T::from(plain))?;
        }
        batch.write().await?;
    }
    let mut samples = Vec::new();
    let mut read = (0, 0);
    for run in 0..WARMUP + RUNS {
        let start = Instant::now();
        let page = T::by_exchange("EXCHG1").page(db, PAGE).await?;
        let elapsed = start.elapsed();
        if run >= WARMUP {
            samples.push(elapsed);
        }
        read = (page.stats.queries, page.stats.documents_read);
    }
    let rust = (
        percentile(&mut samples, 50),
        percentile(&mut samples, 90),
        read.0,
        read.1,
    );
    let description = sharded_runtime::indexes::CollectionDescriptionBuf::from(&T::DESCRIPTION);
    let input = serde_json::json!({
        "host": host, "project": project, "description": description,
        "where": [["exchange", "==", "EXCHG1"]], "limit": PAGE, "runs": RUNS, "warmup": WARMUP,
    });
    let mut child = Command::new("node")
        .arg(dir.join("probe/bench.mjs"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    {
        use std::io::Write as _;
        child
            .stdin
            .take()
            .ok_or("no stdin")?
            .write_all(input.to_string().as_bytes())?;
    }
    let output = child.wait_with_output()?;
    if !output.status.success() {
        return Err("the client's benchmark probe failed".into());
    }
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout)?;
    let mut samples: Vec<Duration> = answer["millis"]
        .as_array()
        .ok_or("no timings")?
        .iter()
        .filter_map(serde_json::Value::as_f64)
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .collect();
    let typescript = (
        percentile(&mut samples, 50),
        percentile(&mut samples, 90),
        answer["queries"].as_u64().unwrap_or(0) as usize,
        answer["documentsRead"].as_u64().unwrap_or(0) as usize,
    );
    Ok(Row {
        shards: T::SHARD_VALUES.len(),
        rust,
        typescript,
    })
}

/// The query both sides run: one exchange, newest first.
pub trait HasExchange: Sized + Sharded {
    fn by_exchange(
        exchange: &str,
    ) -> sharded_runtime::ShardedQuery<Self, { sharded_runtime::reads::query_id("exchange") }>;
}

macro_rules! has_exchange {
    ($($name:ident),*) => {$(
        impl HasExchange for $name {
            fn by_exchange(exchange: &str) -> sharded_runtime::ShardedQuery<Self, { sharded_runtime::reads::query_id("exchange") }> {
                $name::query().exchange(exchange)
            }
        }
    )*};
}

has_exchange!(Sharded3, Sharded40, Sharded64);

/// The section of BENCHMARKS.md.
pub async fn section() -> Result<String, Failure> {
    let dir = build_client()?;
    let emulator = Emulator::start().await?;
    let project = "bench-clients";
    let db = emulator.db(project).await?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let data = instruments(DOCUMENTS, &mut rng);
    let host = emulator.host().to_owned();
    let rows = [
        measure::<Sharded3>(&db, &host, project, &dir, &data).await?,
        measure::<Sharded40>(&db, &host, project, &dir, &data).await?,
        measure::<Sharded64>(&db, &host, project, &dir, &data).await?,
    ];
    let mut out = String::new();
    writeln!(out, "## The TypeScript client on the emulator\n")?;
    writeln!(
        out,
        "One page of `exchange == \"EXCHG1\"`, newest {PAGE} first, over {DOCUMENTS} documents, through the Rust library and through `clients/typescript` (Firebase JS SDK 12 in Node 20), each timing {RUNS} runs after {WARMUP} warm-up runs in its own process; the Rust runs first, then the client's. Documents read are those the server returned.\n"
    )?;
    writeln!(
        out,
        "| shards | Rust median | Rust p90 | Rust queries / documents read | client median | client p90 | client queries / documents read | client median vs Rust |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---|")?;
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    for row in &rows {
        writeln!(
            out,
            "| {} | {} | {} | {} / {} | {} | {} | {} / {} | {:.2}× |",
            row.shards,
            ms(row.rust.0),
            ms(row.rust.1),
            row.rust.2,
            row.rust.3,
            ms(row.typescript.0),
            ms(row.typescript.1),
            row.typescript.2,
            row.typescript.3,
            row.typescript.0.as_secs_f64() / row.rust.0.as_secs_f64()
        )?;
    }
    writeln!(
        out,
        "\nBoth ask each chunk for about its share of the page (and one more document, to know whether a next page exists) and go back only to chunks that may hold more, so they send the same queries and read the same documents; the difference is the SDKs' own cost per request."
    )?;
    Ok(out)
}
