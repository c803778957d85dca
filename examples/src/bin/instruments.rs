//! The recipe's app: write instruments with a random shard each, then show the newest 5 of the
//! whole collection, run the recipe's three queries (common stock, exchange EXCHG1, USD
//! prices; newest 5 first) and one on two fields at once, each over every shard; then keep
//! the newest 5 live while a writer task adds instruments, printing every snapshot.
//!
//! `cargo run -p sharded-examples --bin instruments` starts the Cloud Firestore emulator on a
//! free port (or uses `FIRESTORE_EMULATOR_HOST`) and stops it on exit.

use std::collections::BTreeMap;
use std::error::Error;

use std::time::Duration;

use futures::StreamExt;
use rand::Rng;
use sharded_emulator::emulator::Emulator;
use sharded_examples::{Instrument, Price, at, recipe_instruments};
use sharded_runtime::bulk::{BulkWriter, BulkWriterOptions};
use sharded_runtime::firestore::{FirestoreDb, FirestoreTimestamp};
use sharded_runtime::{
    Sharded, Stored,
    listen::{ChangeKind, QuerySnapshot},
};

const GENERATED: usize = 3_000;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    println!("starting the Firestore emulator…");
    let emulator = Emulator::start().await?;
    let db = emulator.db("sharded-instruments").await?;
    println!("emulator at {}\n", emulator.host());

    let instruments = Instrument::collection(&db);
    for instrument in recipe_instruments() {
        let id = instruments.insert(&instrument).await?.id;
        let stored = instruments.get_stored(&id).await?.expect("just written");
        println!(
            "inserted {:<10} as {id} in shard {}",
            instrument.symbol, stored.shard
        );
    }

    // A few thousand more, all older than the recipe's own so the three queries still show
    // those first. A bulk writer sends them in batches of 20 and ramps up as Firestore asks
    // of a new collection (500 writes/s, half again every 5 minutes, up to 500 per shard
    // value); `insert` draws random ids, since sequential ids (`gen-0001`, …) would hotspot
    // the document-name index however well the fields are sharded.
    let mut rng = rand::rng();
    let writer = BulkWriter::new(&db, BulkWriterOptions::for_type::<Instrument>())?;
    let mut shards: BTreeMap<String, usize> = BTreeMap::new();
    for i in 0..GENERATED {
        let instrument = Instrument {
            symbol: format!("GEN{i:04}"),
            price: Price {
                currency: ["USD", "JPY", "EUR"][rng.random_range(0..3)].into(),
                micros: rng.random_range(1_000_000..900_000_000),
            },
            exchange: ["EXCHG1", "EXCHG2", "EXCHG3"][rng.random_range(0..3)].into(),
            instrument_type: ["commonstock", "etf"][rng.random_range(0..2)].into(),
            timestamp: at(&format!("2019-01-01T12:{:02}:{:02}Z", i / 60 % 60, i % 60)),
        };
        // Each write's outcome could be awaited; dropped, a failure is reported by `close`.
        let (_id, _pending) = writer.insert(&instrument).await?;
    }
    let stats = writer.close().await?;
    let everything = Instrument::query()
        .exchange("EXCHG1")
        .fetch_stored(&db)
        .await?;
    for stored in &everything {
        *shards.entry(stored.shard.clone()).or_default() += 1;
    }
    println!(
        "\nwrote {} generated instruments in {} requests; EXCHG1 documents per shard: {shards:?}",
        stats.written, stats.requests
    );

    // The newest of the whole collection: a feed, over every shard.
    let feed = Instrument::query().all().limit(5).fetch_stored(&db).await?;
    print_results("newest instruments (whole collection)", &feed);

    let common_stock = Instrument::query()
        .instrument_type("commonstock")
        .limit(5)
        .fetch_stored(&db)
        .await?;
    print_results("queryCommonStock", &common_stock);
    let exchange1 = Instrument::query()
        .exchange("EXCHG1")
        .limit(5)
        .fetch_stored(&db)
        .await?;
    print_results("queryExchange1Instruments", &exchange1);
    let usd = Instrument::query()
        .price_currency("USD")
        .limit(5)
        .fetch_stored(&db)
        .await?;
    print_results("queryUSDInstruments", &usd);
    // Two fields at once: declared with `#[sharded(index(exchange, instrument_type))]`, which
    // also puts its index (shard, exchange, instrumentType, timestamp) in the plan.
    let etfs_on_exchange1 = Instrument::query()
        .exchange_and_instrument_type("EXCHG1", "etf")
        .limit(5)
        .fetch_stored(&db)
        .await?;
    print_results("ETFs on EXCHG1", &etfs_on_exchange1);

    live_feed(&db).await?;

    println!(
        "\nthe indexes these queries need (`cargo build` writes them to firestore.indexes.json):"
    );
    print!("{}", Instrument::indexes().to_json());
    Ok(())
}

/// How many instruments the writer task adds while the feed is live.
const LIVE: usize = 5;

/// The newest 5 of the whole collection, live: one Listen stream over every shard, each
/// snapshot consistent across them, printed with its changes while a task adds instruments.
async fn live_feed(db: &FirestoreDb) -> Result<(), Box<dyn Error>> {
    println!("\n--- live: the newest 5, while a writer adds {LIVE} instruments");
    let mut feed = Instrument::query().all().limit(5).listen(db)?;
    let first = feed.next().await.ok_or("the feed ended")??;
    print_snapshot(&first);
    let writer = tokio::spawn({
        let db = db.clone();
        async move {
            for i in 0..LIVE {
                tokio::time::sleep(Duration::from_millis(300)).await;
                let instrument = Instrument {
                    symbol: format!("LIVE{i}"),
                    price: Price {
                        currency: "USD".into(),
                        micros: rand::rng().random_range(1_000_000..900_000_000),
                    },
                    exchange: "EXCHG1".into(),
                    instrument_type: "etf".into(),
                    timestamp: FirestoreTimestamp(
                        sharded_runtime::firestore::jiff::Timestamp::now(),
                    ),
                };
                Instrument::collection(&db).insert(&instrument).await?;
            }
            Ok::<(), sharded_runtime::Error>(())
        }
    });
    // Until the last instrument written is the newest shown.
    let last = format!("LIVE{}", LIVE - 1);
    while let Some(snapshot) = feed.next().await {
        let snapshot = snapshot?;
        print_snapshot(&snapshot);
        if snapshot
            .documents
            .first()
            .is_some_and(|s| s.document.symbol == last)
        {
            break;
        }
    }
    writer.await??;
    Ok(())
}

fn print_snapshot(snapshot: &QuerySnapshot<Instrument>) {
    let changes: Vec<String> = snapshot
        .changes
        .iter()
        .map(|change| {
            let sign = match change.kind {
                ChangeKind::Added => "+",
                ChangeKind::Modified => "~",
                ChangeKind::Removed => "-",
            };
            // A removal carries the document as it was.
            format!("{sign}{}", change.document.document.symbol)
        })
        .collect();
    let symbols: Vec<&str> = snapshot
        .documents
        .iter()
        .map(|stored| stored.document.symbol.as_str())
        .collect();
    println!(
        "  snapshot: {symbols:?}  ({} changes: {})",
        changes.len(),
        changes.join(" ")
    );
}

fn print_results(name: &str, results: &[Stored<Instrument>]) {
    println!("\n--- {name}:");
    for Stored {
        shard, document: i, ..
    } in results
    {
        println!(
            "  {} {:<10} {:<11} {:>16} {} {:<8} shard {shard}",
            i.timestamp.0.strftime("%Y-%m-%dT%H:%M:%S%.3fZ"),
            i.symbol,
            i.instrument_type,
            i.price.micros,
            i.price.currency,
            i.exchange
        );
    }
}
