//! Billed reads per page past 30 shard values: the pages of a collection read in order, each
//! page's documents read and rounds of queries, against what the same pages read before
//! (every chunk asked for the whole page), counted exactly from the stored shards.

use std::fmt::Write as _;

use sharded_emulator::emulator::Emulator;
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{Stored, limits::MAX_DISJUNCTIONS};

use crate::{Sharded40, Sharded64, Sharded300, instruments};

const DOCUMENTS: usize = 3_000;
const PAGE: u32 = 20;
const PAGES: usize = 40;

/// One row: (chunks, reads before, reads now, rounds, pages in one round), per page.
struct Row {
    chunks: usize,
    before: f64,
    now: f64,
    rounds: f64,
    one_round: f64,
}

async fn measure<T>(
    db: &FirestoreDb,
    data: &[(String, crate::Plain)],
    query: sharded_runtime::WholeCollection<T>,
) -> Result<Row, Box<dyn std::error::Error>>
where
    T: sharded_runtime::bounds::TopLevel + for<'p> From<&'p crate::Plain>,
{
    let writer = db.create_simple_batch_writer().await?;
    for chunk in data.chunks(500) {
        let mut batch = writer.new_batch();
        for (id, plain) in chunk {
            T::collection(db).upsert_in(&mut batch, id, &T::from(plain))?;
        }
        batch.write().await?;
    }
    let everything: Vec<Stored<T>> = query.fetch_stored(db).await?;
    let chunk_of = |stored: &Stored<T>| {
        T::READ_SHARD_VALUES
            .iter()
            .position(|value| *value == stored.shard)
            .expect("a read value")
            / MAX_DISJUNCTIONS
    };
    let chunks = T::READ_SHARD_VALUES.len().div_ceil(MAX_DISJUNCTIONS);
    let (mut before, mut now, mut rounds, mut one_round) = (0, 0, 0, 0);
    let mut next = None;
    for page_number in 0..PAGES {
        let page_query = query.clone().after(next.take());
        let page = page_query.page(db, PAGE).await?;
        // Before: each chunk returned up to the page and its look-ahead from this position.
        let start = page_number * PAGE as usize;
        let mut left = vec![0usize; chunks];
        for stored in &everything[start..] {
            left[chunk_of(stored)] += 1;
        }
        before += left
            .iter()
            .map(|&n| n.min(PAGE as usize + 1))
            .sum::<usize>();
        now += page.stats.documents_read;
        rounds += page.stats.rounds;
        one_round += usize::from(page.stats.rounds == 1);
        match page.next {
            Some(cursor) => next = Some(cursor),
            None => break,
        }
    }
    let per_page = |n: usize| n as f64 / PAGES as f64;
    Ok(Row {
        chunks,
        before: per_page(before),
        now: per_page(now),
        rounds: per_page(rounds),
        one_round: per_page(one_round) * 100.0,
    })
}

/// The section, as Markdown.
pub async fn section() -> Result<String, Box<dyn std::error::Error>> {
    let emulator = Emulator::start_with_heap("1g").await?;
    let db = emulator.db("sharded-bench-reads").await?;
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(7);
    let data = instruments(DOCUMENTS, &mut rng);
    let rows = [
        (40, measure(&db, &data, Sharded40::query().all()).await?),
        (64, measure(&db, &data, Sharded64::query().all()).await?),
        (300, measure(&db, &data, Sharded300::query().all()).await?),
    ];
    let mut report = String::new();
    writeln!(
        report,
        "## Reads per page past 30 shard values\n\n\
         The first {PAGES} pages of {PAGE} of the whole collection ({DOCUMENTS} documents), each page\n\
         reading one document more to know whether another follows. Before: every chunk returned\n\
         up to the page (counted exactly from each document's shard, the baseline); now: each\n\
         chunk is asked for about its share and asked again only when it may hold more.\n\n\
         | n | chunks k | reads per page, before | reads per page, now | now vs before | budget ⌈1.3·{l}⌉ + k | rounds per page | pages in one round |\n\
         |---|---|---|---|---|---|---|---|",
        l = PAGE + 1,
    )?;
    for (n, row) in rows {
        let budget = (1.3 * f64::from(PAGE + 1)).ceil() + row.chunks as f64;
        writeln!(
            report,
            "| {n} | {} | {:.1} | {:.1} | {:.2}× | {budget:.0} | {:.2} | {:.0} % |",
            row.chunks,
            row.before,
            row.now,
            row.now / row.before,
            row.rounds,
            row.one_round,
        )?;
    }
    let (page, rollback) = release_cost(&db).await?;
    writeln!(
        report,
        "\nA page over more than 30 shard values reads in one read-only transaction, which is\n\
         rolled back after the reads. The rollback is sent from a task of its own, so the page no\n\
         longer waits for it. Interleaved in this run, medians of {RELEASES}: a page of {PAGE} at n = 64\n\
         {page:.2} ms; one rollback of a read-only transaction {rollback:.2} ms, {share:.1} % of it: the\n\
         round trip each such read no longer waits for, small here because the emulator scans\n\
         slowly and answers from this machine; against Firestore it is a network round trip.",
        share = rollback / page * 100.0,
    )?;
    Ok(report)
}

const RELEASES: usize = 41;

/// Medians, in milliseconds, of a page at 64 shard values and of one rollback of a read-only
/// transaction (begun just before, untimed), interleaved.
async fn release_cost(db: &FirestoreDb) -> Result<(f64, f64), Box<dyn std::error::Error>> {
    use sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::{
        BeginTransactionRequest, RollbackRequest, TransactionOptions, transaction_options,
    };
    use std::time::Instant;
    let (mut pages, mut rollbacks) = (Vec::new(), Vec::new());
    for _ in 0..RELEASES {
        let started = Instant::now();
        Sharded64::query().all().page(db, PAGE).await?;
        pages.push(started.elapsed().as_secs_f64() * 1e3);
        let transaction = db
            .client()
            .get()
            .begin_transaction(BeginTransactionRequest {
                database: db.get_database_path().clone(),
                options: Some(TransactionOptions {
                    mode: Some(transaction_options::Mode::ReadOnly(
                        transaction_options::ReadOnly::default(),
                    )),
                }),
                ..BeginTransactionRequest::default()
            })
            .await?
            .into_inner()
            .transaction;
        let started = Instant::now();
        db.client()
            .get()
            .rollback(RollbackRequest {
                database: db.get_database_path().clone(),
                transaction,
                ..RollbackRequest::default()
            })
            .await?;
        rollbacks.push(started.elapsed().as_secs_f64() * 1e3);
    }
    Ok((crate::median(&mut pages), crate::median(&mut rollbacks)))
}
