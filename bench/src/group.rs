//! A collection-group page on the emulator: the newest messages across every room, sharded
//! (3 and 40 shard values) against the same query on an unsharded collection group, runs
//! interleaved: the "Collection-group queries" section of BENCHMARKS.md.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_emulator::emulator::Emulator;
use sharded_runtime::firestore::{FirestoreDb, FirestoreQueryDirection, FirestoreQueryOrder};
use sharded_runtime::{Parent, Sharded};

use crate::percentile;

type Failure = Box<dyn std::error::Error>;

const ROOMS: usize = 50;
const PER_ROOM: usize = 40;
const PAGE: u32 = 20;
const WARM_UP: usize = 5;
const RUNS: usize = 30;
const PLAIN: &str = "bench_plain_messages";

// rustfmt re-indents the attribute below on every run (not idempotent inside macro_rules).
#[rustfmt::skip]
macro_rules! message {
    ($name:ident, $shards:literal, $collection:literal) => {
        /// A chat message under its room, sharded.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(
            shards = $shards,
            order_by = "at",
            parent = "rooms",
            collection = $collection,
            collection_group
        )]
        pub struct $name {
            pub text: String,
            pub at: i64,
        }
    };
}

message!(Message3, 3, "bench_messages3");
message!(Message40, 40, "bench_messages40");

async fn plain_page(db: &FirestoreDb) -> Result<usize, Failure> {
    let documents = db
        .fluent()
        .select()
        .from(PLAIN)
        .all_descendants()
        .order(|_| {
            vec![
                FirestoreQueryOrder::new("at".into(), FirestoreQueryDirection::Descending),
                FirestoreQueryOrder::new("__name__".into(), FirestoreQueryDirection::Descending),
            ]
        })
        .limit(PAGE)
        .query()
        .await?;
    Ok(documents.len())
}

/// The newest page of `all` across every room; the documents it read.
async fn group_page<T: sharded_runtime::bounds::CollectionGroup>(
    db: &FirestoreDb,
    all: sharded_runtime::WholeCollection<T>,
) -> Result<usize, Failure> {
    let (_, stats) = all.in_group().limit(PAGE).fetch_with_stats(db).await?;
    Ok(stats.documents_read)
}

async fn timed<F: std::future::Future<Output = Result<usize, Failure>>>(
    run: F,
) -> Result<(Duration, usize), Failure> {
    let started = Instant::now();
    let read = run.await?;
    Ok((started.elapsed(), read))
}

/// The section, as Markdown.
pub async fn section() -> Result<String, Failure> {
    let emulator = Emulator::start_with_heap("1g").await?;
    let db = emulator.db("sharded-bench-group").await?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let writer = db.create_simple_batch_writer().await?;
    for room in 0..ROOMS {
        let id = format!("room{room:03}");
        let mut batch = writer.new_batch();
        for m in 0..PER_ROOM {
            let at = rng.random_range(0..1_000_000i64);
            let text = format!("message {m}");
            let message_id = format!("m{m:03}");
            Message3::collection_in(&db, &Parent::new(&[&id])?).upsert_in(
                &mut batch,
                &message_id,
                &Message3 {
                    text: text.clone(),
                    at,
                },
            )?;
            Message40::collection_in(&db, &Parent::new(&[&id])?).upsert_in(
                &mut batch,
                &message_id,
                &Message40 {
                    text: text.clone(),
                    at,
                },
            )?;
            db.fluent()
                .update()
                .in_col(PLAIN)
                .document_id(&message_id)
                .parent(db.parent_path("rooms", &id)?)
                .object(&Message3 { text, at })
                .add_to_batch(&mut batch)?;
        }
        batch.write().await?;
    }

    let mut samples: [Vec<Duration>; 3] = Default::default();
    let mut reads = [0usize; 3];
    for run in 0..WARM_UP + RUNS {
        let timings = [
            timed(plain_page(&db)).await?,
            timed(group_page(&db, Message3::query().all())).await?,
            timed(group_page(&db, Message40::query().all())).await?,
        ];
        if run >= WARM_UP {
            for (i, (elapsed, read)) in timings.into_iter().enumerate() {
                samples[i].push(elapsed);
                reads[i] = read;
            }
        }
    }
    let baseline = percentile(&mut samples[0].clone(), 50);
    let mut report = String::new();
    writeln!(
        report,
        "## Collection-group queries on the emulator\n\n\
         The newest {PAGE} messages across {ROOMS} rooms of {PER_ROOM} messages\n\
         (`rooms/{{room}}/messages`), the same documents stored the same way in each collection\n\
         group; {RUNS} runs after {WARM_UP} warm-up runs, interleaved.\n\n\
         | query | documents read | median | p90 | median vs unsharded |\n|---|---|---|---|---|"
    )?;
    let names = [
        "unsharded collection group (baseline)",
        "sharded, n = 3, `in_group()`",
        "sharded, n = 40, `in_group()`",
    ];
    for (i, name) in names.iter().enumerate() {
        let median_time = percentile(&mut samples[i], 50);
        let p90 = percentile(&mut samples[i], 90);
        writeln!(
            report,
            "| {name} | {} | {:.1} ms | {:.1} ms | {:.2}× |",
            reads[i],
            median_time.as_secs_f64() * 1000.0,
            p90.as_secs_f64() * 1000.0,
            median_time.as_secs_f64() / baseline.as_secs_f64()
        )?;
    }
    Ok(report)
}
