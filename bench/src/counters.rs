//! Distributed counters on the emulator: increments per second through a counter of 1, 10
//! and 100 shard documents against Firestore's own `increment` transform on one document and
//! a read-modify-write transaction on one document, from many tasks at once; and what reading
//! the exact value costs at each size: the "Counters" section of BENCHMARKS.md.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use futures::FutureExt as _;
use serde::{Deserialize, Serialize};
use sharded_emulator::emulator::Emulator;
use sharded_runtime::Sharded;
use sharded_runtime::counters::{COUNTER_COLLECTION_PREFIX, CounterField};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::document_transform::FieldTransform;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::document_transform::field_transform::TransformType;
use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
    CommitRequest, Document, DocumentMask, Value, Write, value::ValueType, write::Operation,
};

use crate::percentile;

type Failure = Box<dyn std::error::Error>;

/// Tasks incrementing at once.
const TASKS: usize = 16;
/// Increments per task and run.
const PER_TASK: usize = 20;
/// Every variant's load but the transactions'.
const LOAD: (usize, usize) = (TASKS, PER_TASK);
/// Runs of each variant before the timed ones (connections, the emulator's JIT).
const WARM_UP: usize = 1;
/// Timed runs of each variant, interleaved.
const RUNS: usize = 5;
/// Timed reads of each exact value.
const READS: usize = 30;
const PLAIN: &str = "bench_plain_counters";

// rustfmt re-indents the attribute below on every run (not idempotent inside macro_rules).
#[rustfmt::skip]
macro_rules! post {
    ($name:ident, $shards:literal, $collection:literal) => {
        /// A post whose likes are a counter of this many shard documents.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = 3, order_by = "at", collection = $collection)]
        pub struct $name {
            #[sharded(counter(shards = $shards))]
            pub likes: i64,
            pub at: i64,
        }
    };
}

post!(Post1, 1, "bench_counted_1");
post!(Post10, 10, "bench_counted_10");
post!(Post100, 100, "bench_counted_100");

/// Firestore's own increment of one field of one document (`FieldValue.increment`): one
/// commit, not idempotent.
async fn plain_increment(db: &FirestoreDb, id: &str) -> Result<(), Failure> {
    let write = Write {
        operation: Some(Operation::Update(Document {
            name: format!("{}/{PLAIN}/{id}", db.get_documents_path()),
            ..Document::default()
        })),
        update_mask: Some(DocumentMask::default()),
        update_transforms: vec![FieldTransform {
            field_path: "likes".into(),
            transform_type: Some(TransformType::Increment(Value {
                value_type: Some(ValueType::IntegerValue(1)),
            })),
        }],
        ..Write::default()
    };
    let request = CommitRequest {
        database: db.get_database_path().clone(),
        writes: vec![write],
        ..Default::default()
    };
    db.client().get().commit(request).await?;
    Ok(())
}

/// A read-modify-write of one document's field in a transaction, as code without transforms
/// counts: run again, as a caller would, when the firestore crate's own retries give up on
/// contention (the emulator's lock timeout).
async fn transaction_increment(db: &FirestoreDb, id: &str) -> Result<(), Failure> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        match transaction_increment_once(db, id).await {
            Ok(()) => return Ok(()),
            Err(_) if attempts < 100 => {
                GAVE_UP.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Err(err) => return Err(err),
        }
    }
}

/// Transactions the firestore crate gave up on for contention, run again.
static GAVE_UP: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

async fn transaction_increment_once(db: &FirestoreDb, id: &str) -> Result<(), Failure> {
    #[derive(Serialize, Deserialize, Default)]
    struct Likes {
        likes: i64,
    }
    let id = id.to_owned();
    db.run_transaction(|db, transaction| {
        let id = id.clone();
        async move {
            let current: Option<Likes> =
                db.fluent().select().by_id_in(PLAIN).obj().one(&id).await?;
            let likes = current.unwrap_or_default().likes + 1;
            db.fluent()
                .update()
                .in_col(PLAIN)
                .document_id(&id)
                .object(&Likes { likes })
                .add_to_transaction(transaction)?;
            Ok(())
        }
        .boxed()
    })
    .await?;
    Ok(())
}

/// Tasks of the read-modify-write transactions, fewer: at `TASKS` on one document the
/// emulator's lock timeouts make a run take minutes (measured; a first run at 32 tasks failed
/// on "Transaction lock timeout").
const TRANSACTION_TASKS: usize = 4;
const TRANSACTION_PER_TASK: usize = 5;

/// One variant: `tasks` tasks each adding 1 `per_task` times; the time it took.
async fn run<F, Fut>(
    db: &FirestoreDb,
    (tasks, per_task): (usize, usize),
    increment: F,
) -> Result<Duration, Failure>
where
    F: Fn(FirestoreDb) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send,
{
    let started = Instant::now();
    let tasks = (0..tasks).map(|_| {
        let (db, increment) = (db.clone(), increment.clone());
        tokio::spawn(async move {
            for _ in 0..per_task {
                increment(db.clone()).await?;
            }
            Ok::<_, String>(())
        })
    });
    for result in futures::future::join_all(tasks).await {
        result??;
    }
    Ok(started.elapsed())
}

async fn plain_value(db: &FirestoreDb, id: &str) -> Result<i64, Failure> {
    #[derive(Deserialize)]
    struct Likes {
        likes: i64,
    }
    let likes: Option<Likes> = db.fluent().select().by_id_in(PLAIN).obj().one(id).await?;
    Ok(likes.map_or(0, |likes| likes.likes))
}

/// The shard documents a counter of `id` has, counted by reading them.
async fn shard_documents<T: Sharded>(
    db: &FirestoreDb,
    field: CounterField<T>,
    id: &str,
) -> Result<usize, Failure> {
    let parent = format!("{}/{}/{id}", db.get_documents_path(), T::COLLECTION);
    let shards: Vec<sharded_runtime::firestore::FirestoreDocument> = db
        .fluent()
        .select()
        .from(format!("{COUNTER_COLLECTION_PREFIX}{}", field.path()).as_str())
        .parent(parent.as_str())
        .query()
        .await?;
    Ok(shards.len())
}

/// The median time of `READS` reads by `read`.
async fn read_time<F, Fut>(read: F) -> Result<Duration, Failure>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<i64, Failure>>,
{
    let mut samples = Vec::new();
    for _ in 0..READS {
        let started = Instant::now();
        read().await?;
        samples.push(started.elapsed());
    }
    Ok(percentile(&mut samples, 50))
}

/// The section, as Markdown.
pub async fn section() -> Result<String, Failure> {
    let emulator = Emulator::start_with_heap("1g").await?;
    let db = emulator.db("sharded-bench-counters").await?;
    let names = [
        "one document, `increment` transform (baseline)",
        "one document, read-modify-write transaction",
        "counter, 1 shard document",
        "counter, 10 shard documents",
        "counter, 100 shard documents",
    ];
    let mut samples: [Vec<Duration>; 5] = Default::default();
    for run_number in 0..WARM_UP + RUNS {
        let id = format!("p{run_number}");
        let variants: [Duration; 5] = [
            {
                let id = id.clone();
                run(&db, LOAD, move |db| {
                    let id = id.clone();
                    async move {
                        plain_increment(&db, &format!("{id}-transform"))
                            .await
                            .map_err(|e| e.to_string())
                    }
                })
                .await?
            },
            {
                let id = id.clone();
                run(&db, (TRANSACTION_TASKS, TRANSACTION_PER_TASK), move |db| {
                    let id = id.clone();
                    async move {
                        transaction_increment(&db, &format!("{id}-transaction"))
                            .await
                            .map_err(|e| e.to_string())
                    }
                })
                .await?
            },
            {
                let id = id.clone();
                run(&db, LOAD, move |db| {
                    let id = id.clone();
                    async move {
                        Post1::collection(&db)
                            .increment(&id, Post1::counters().likes, 1)
                            .await
                            .map_err(|e| e.to_string())
                    }
                })
                .await?
            },
            {
                let id = id.clone();
                run(&db, LOAD, move |db| {
                    let id = id.clone();
                    async move {
                        Post10::collection(&db)
                            .increment(&id, Post10::counters().likes, 1)
                            .await
                            .map_err(|e| e.to_string())
                    }
                })
                .await?
            },
            {
                let id = id.clone();
                run(&db, LOAD, move |db| {
                    let id = id.clone();
                    async move {
                        Post100::collection(&db)
                            .increment(&id, Post100::counters().likes, 1)
                            .await
                            .map_err(|e| e.to_string())
                    }
                })
                .await?
            },
        ];
        // Every variant counted every increment, or the figures mean nothing.
        let expected = (TASKS * PER_TASK) as i64;
        let values = [
            plain_value(&db, &format!("{id}-transform")).await?,
            plain_value(&db, &format!("{id}-transaction")).await?,
            Post1::collection(&db)
                .counter(&id, Post1::counters().likes)
                .await?,
            Post10::collection(&db)
                .counter(&id, Post10::counters().likes)
                .await?,
            Post100::collection(&db)
                .counter(&id, Post100::counters().likes)
                .await?,
        ];
        let transactions = (TRANSACTION_TASKS * TRANSACTION_PER_TASK) as i64;
        if values != [expected, transactions, expected, expected, expected] {
            return Err(format!("counted {values:?}, expected {expected} each").into());
        }
        eprintln!("counters: run {run_number}: {variants:?}");
        if run_number < WARM_UP {
            continue;
        }
        for (i, elapsed) in variants.into_iter().enumerate() {
            samples[i].push(elapsed);
        }
    }
    let increments = |variant: usize| match variant {
        1 => TRANSACTION_TASKS * TRANSACTION_PER_TASK,
        _ => TASKS * PER_TASK,
    };
    let rate =
        |variant: usize, elapsed: Duration| increments(variant) as f64 / elapsed.as_secs_f64();
    let baseline = rate(0, percentile(&mut samples[0].clone(), 50));
    let mut report = String::new();
    writeln!(
        report,
        "## Counters on the emulator\n\n\
         {TASKS} tasks at once, each adding 1 {PER_TASK} times to one document's likes\n\
         ({} increments); the median of {RUNS} runs after {WARM_UP} warm-up run, the variants\n\
         interleaved. Every run checks that each variant counted every increment. Each counter\n\
         increment is one commit of two writes (the shard's addition and the increment's marker,\n\
         which makes it count once). The emulator does not hold one document to Firestore's\n\
         sustained one write a second, so the transform on one document is not slowed here as\n\
         it is in production; what the emulator does show is contention on one document's lock\n\
         (the transactions), which spreading over shard documents removes.\n\n\
         | increments | per second | vs the `increment` transform |\n|---|---|---|",
        TASKS * PER_TASK
    )?;
    let gave_up = GAVE_UP.load(std::sync::atomic::Ordering::Relaxed);
    for (i, name) in names.iter().enumerate() {
        let per_second = rate(i, percentile(&mut samples[i], 50));
        writeln!(
            report,
            "| {name} | {per_second:.0} | {:.2}× |",
            per_second / baseline
        )?;
    }

    writeln!(
        report,
        "\nThe transactions ran at {TRANSACTION_TASKS} tasks of {TRANSACTION_PER_TASK} increments:\n\
         at {TASKS} tasks on one document the emulator's lock timeouts stretch a run to minutes.\n\
         The firestore crate gave up on {gave_up} of them (lock timeouts) over the {RUNS} runs,\n\
         each run again until it committed."
    )?;

    // Reading the exact value: the document itself against the counter's aggregation.
    let id = "p0";
    let plain = read_time(|| plain_value(&db, "p0-transform")).await?;
    let reads = [
        (
            "counter, 1 shard document",
            read_time(|| async {
                Ok(Post1::collection(&db)
                    .counter(id, Post1::counters().likes)
                    .await?)
            })
            .await?,
            shard_documents(&db, Post1::counters().likes, id).await?,
        ),
        (
            "counter, 10 shard documents",
            read_time(|| async {
                Ok(Post10::collection(&db)
                    .counter(id, Post10::counters().likes)
                    .await?)
            })
            .await?,
            shard_documents(&db, Post10::counters().likes, id).await?,
        ),
        (
            "counter, 100 shard documents",
            read_time(|| async {
                Ok(Post100::collection(&db)
                    .counter(id, Post100::counters().likes)
                    .await?)
            })
            .await?,
            shard_documents(&db, Post100::counters().likes, id).await?,
        ),
    ];
    writeln!(
        report,
        "\nReading the exact value, median of {READS} reads. Firestore bills an aggregation one read\n\
         per 1,000 index entries it matches (at least one); a transaction, or a fold, reads\n\
         each shard document (one read each). The emulator reports no billing: the shard\n\
         documents are counted by reading them.\n\n\
         | value read | median | vs the document | billed reads (aggregation) | shard documents (transaction, fold) |\n|---|---|---|---|---|\n\
         | one document's field (baseline) | {:.1} ms | 1.00× | 1 | |",
        plain.as_secs_f64() * 1000.0
    )?;
    for (name, median, shards) in reads {
        writeln!(
            report,
            "| {name} | {:.1} ms | {:.2}× | {} | {shards} |",
            median.as_secs_f64() * 1000.0,
            median.as_secs_f64() / plain.as_secs_f64(),
            shards.div_ceil(1000).max(1),
        )?;
    }
    Ok(report)
}
