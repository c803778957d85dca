//! A purge of expired documents on the emulator: 10,000 expired among 12,000, deleted by
//! `purge_expired` at 3 and 40 shard values (one query per shard value and page, each going
//! on after its last key), against the purge people write by hand on an unsharded collection
//! in the same run (`expires <= now ORDER BY expires LIMIT 500`, deleted, asked again from
//! the start until empty): the "Purging expired documents" section of BENCHMARKS.md.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use sharded_emulator::emulator::Emulator;
use sharded_runtime::Sharded;
use sharded_runtime::bulk::BulkWriterOptions;
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::jobs::PurgeOptions;

type Failure = Box<dyn std::error::Error>;

const EXPIRED: usize = 10_000;
const UNEXPIRED: usize = 2_000;
const PAGE: u32 = 500;
const NOW: i64 = 1_800_000_000;
const PLAIN: &str = "bench_plain_sessions";

// rustfmt re-indents the attribute below on every run (not idempotent inside macro_rules).
#[rustfmt::skip]
macro_rules! session {
    ($name:ident, $shards:literal, $collection:literal) => {
        /// A session that expires, sharded.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
        #[sharded(shards = $shards, order_by = "at", collection = $collection, expire_at = "expires")]
        pub struct $name {
            pub user: String,
            pub at: i64,
            pub expires: FirestoreTimestamp,
        }
    };
}

session!(Session3, 3, "bench_sessions3");
session!(Session40, 40, "bench_sessions40");

fn at(seconds: i64) -> FirestoreTimestamp {
    FirestoreTimestamp(
        sharded_runtime::firestore::jiff::Timestamp::from_second(seconds).expect("a time"),
    )
}

/// The documents, the same in each collection: expiries spread over the hour before `NOW`
/// (expired) and the hour after (not).
fn documents() -> Vec<(String, i64, i64)> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(64);
    (0..EXPIRED + UNEXPIRED)
        .map(|i| {
            let expires = match i < EXPIRED {
                true => NOW - rng.random_range(0..3600),
                false => NOW + 1 + rng.random_range(0..3600),
            };
            (format!("s{:08x}", rng.random::<u32>()), i as i64, expires)
        })
        .collect()
}

async fn write(db: &FirestoreDb, documents: &[(String, i64, i64)]) -> Result<(), Failure> {
    let writer = db.create_simple_batch_writer().await?;
    for chunk in documents.chunks(160) {
        let mut batch = writer.new_batch();
        for (id, at_, expires) in chunk {
            let user = format!("u{}", at_ % 97);
            Session3::collection(db).upsert_in(
                &mut batch,
                id,
                &Session3 {
                    user: user.clone(),
                    at: *at_,
                    expires: at(*expires),
                },
            )?;
            Session40::collection(db).upsert_in(
                &mut batch,
                id,
                &Session40 {
                    user: user.clone(),
                    at: *at_,
                    expires: at(*expires),
                },
            )?;
            db.fluent()
                .update()
                .in_col(PLAIN)
                .document_id(id)
                .object(&Session3 {
                    user,
                    at: *at_,
                    expires: at(*expires),
                })
                .add_to_batch(&mut batch)?;
        }
        batch.write().await?;
    }
    Ok(())
}

/// What one purge did.
struct Purged {
    elapsed: Duration,
    deleted: u64,
    queries: u64,
    read: u64,
}

/// The hand-written purge: the first page of what expired, deleted, then asked for again from
/// the start, until a page comes back empty.
async fn by_hand(db: &FirestoreDb) -> Result<Purged, Failure> {
    let started = Instant::now();
    let (mut deleted, mut queries, mut read) = (0, 0, 0);
    let writer = db.create_simple_batch_writer().await?;
    loop {
        let page = db
            .fluent()
            .select()
            .fields(["expires"])
            .from(PLAIN)
            .filter(|q| q.for_all([q.field("expires").less_than_or_equal(at(NOW))]))
            .order(|o| o.fields([o.field("expires").asc()]))
            .limit(PAGE)
            .query()
            .await?;
        queries += 1;
        read += page.len() as u64;
        if page.is_empty() {
            break;
        }
        let mut batch = writer.new_batch();
        for document in &page {
            let id = document.name.rsplit('/').next().unwrap_or_default();
            db.fluent()
                .delete()
                .from(PLAIN)
                .document_id(id)
                .add_to_batch(&mut batch)?;
        }
        batch.write().await?;
        deleted += page.len() as u64;
    }
    Ok(Purged {
        elapsed: started.elapsed(),
        deleted,
        queries,
        read,
    })
}

async fn sharded<T: sharded_runtime::bounds::Expiring + sharded_runtime::bounds::TopLevel>(
    db: &FirestoreDb,
) -> Result<Purged, Failure>
where
    FirestoreTimestamp: sharded_runtime::reads::OrderBound<T::Expiry>,
{
    let options = PurgeOptions {
        page_size: PAGE,
        // The emulator needs no ramp; nor does the baseline get one.
        writer: Some(BulkWriterOptions::unthrottled()),
        ..PurgeOptions::default()
    };
    let started = Instant::now();
    let done = T::collection(db)
        .purge_expired(at(NOW), options, |_| {})
        .await?;
    Ok(Purged {
        elapsed: started.elapsed(),
        deleted: done.deleted,
        queries: done.queries,
        read: done.read,
    })
}

/// The section, as Markdown.
pub async fn section() -> Result<String, Failure> {
    let emulator = Emulator::start_with_heap("2g").await?;
    let db = emulator.db("sharded-bench-purge").await?;
    write(&db, &documents()).await?;
    let baseline = by_hand(&db).await?;
    let rows = [
        (
            "by hand, unsharded: restarted from the start (baseline)",
            baseline,
        ),
        ("`purge_expired`, n = 3", sharded::<Session3>(&db).await?),
        ("`purge_expired`, n = 40", sharded::<Session40>(&db).await?),
    ];
    let mut report = String::new();
    writeln!(
        report,
        "## Purging expired documents on the emulator\n\n\
         {EXPIRED} expired documents among {}, the same in each collection, deleted by\n\
         `purge_expired` (pages of {PAGE}, 8 shard values side by side, the bulk writer\n\
         unthrottled) and by the purge written by hand on an unsharded collection\n\
         (`expires <= now ORDER BY expires LIMIT {PAGE}`, deleted in one batch, asked again\n\
         from the start until empty), one after the other in this run, the baseline first.\n\
         Without generations (not built yet). What the page warns of, a query from the start\n\
         walking the index entries of what was just deleted until compaction, is a cost of\n\
         production these times on the emulator do not claim to show; the queries and reads\n\
         count what each purge asks.\n\n\
         | purge | deleted | time | documents/s | queries | reads per deleted document | time vs baseline |\n\
         |---|---|---|---|---|---|---|",
        EXPIRED + UNEXPIRED
    )?;
    let base = rows[0].1.elapsed.as_secs_f64();
    for (name, purged) in &rows {
        let seconds = purged.elapsed.as_secs_f64();
        writeln!(
            report,
            "| {name} | {} | {:.2} s | {:.0} | {} | {:.3} | {:.2}× |",
            purged.deleted,
            seconds,
            purged.deleted as f64 / seconds,
            purged.queries,
            purged.read as f64 / purged.deleted.max(1) as f64,
            seconds / base
        )?;
    }
    Ok(report)
}
