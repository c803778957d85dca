//! Adopting sharded on a collection that already exists: 20,000 instruments written without
//! a shard field (invisible to every sharded query), then the backfill that gives each one a
//! shard, with a progress bar, then `verify` and a query.
//!
//! `cargo run -p sharded-examples --bin backfill` starts the Cloud Firestore emulator on a free
//! port (or uses `FIRESTORE_EMULATOR_HOST`) and stops it on exit.

use std::error::Error;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use rand::Rng;
use sharded_emulator::emulator::Emulator;
use sharded_examples::{Instrument, Price, at};
use sharded_runtime::Sharded;
use sharded_runtime::bulk::{BulkWriter, BulkWriterOptions, Throttling};

const EXISTING: u64 = 20_000;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    println!("starting the Firestore emulator…");
    let emulator = Emulator::start().await?;
    let db = emulator.db("sharded-backfill").await?;

    // The collection as an app wrote it before sharded: plain documents, no shard field.
    // (Written unthrottled: the emulator is not a production key range.)
    let legacy = BulkWriter::new(
        &db,
        BulkWriterOptions::default().with_throttling(Throttling::Off),
    )?;
    let mut rng = rand::rng();
    for i in 0..EXISTING {
        let instrument = Instrument {
            symbol: format!("OLD{i:05}"),
            price: Price {
                currency: ["USD", "JPY", "EUR"][rng.random_range(0..3)].into(),
                micros: rng.random_range(1_000_000..900_000_000),
            },
            exchange: ["EXCHG1", "EXCHG2", "EXCHG3"][rng.random_range(0..3)].into(),
            instrument_type: ["commonstock", "etf"][rng.random_range(0..2)].into(),
            timestamp: at(&format!(
                "2019-01-01T{:02}:{:02}:{:02}Z",
                i / 3600 % 24,
                i / 60 % 60,
                i % 60
            )),
        };
        let id = format!("{:020}", rng.random::<u64>());
        let _pending = legacy.set(Instrument::COLLECTION, &id, &instrument).await?;
    }
    legacy.close().await?;
    let instruments = Instrument::collection(&db);
    println!(
        "{EXISTING} instruments written without a shard: {:?}",
        instruments.verify().await?
    );
    let visible = Instrument::query().exchange("EXCHG1").count(&db).await?;
    println!("EXCHG1 instruments a sharded query sees before the backfill: {visible}");

    // The backfill: reads only the shard field, writes only it, ramps up from 500 writes/s.
    let bar = ProgressBar::new(EXISTING).with_style(ProgressStyle::with_template(
        "{spinner} backfill [{bar:40}] {pos}/{len} scanned, {msg}",
    )?);
    bar.enable_steady_tick(Duration::from_millis(100));
    let done = instruments
        .backfill()
        .run(|progress| {
            bar.set_position(progress.scanned);
            bar.set_message(format!(
                "{} updated, {:.0} docs/s, ETA {:.0?}",
                progress.updated,
                progress.rate(),
                progress.eta().unwrap_or_default()
            ));
            // A real job would persist `progress.checkpoint` here, to resume after a crash
            // with `.backfill().resume_from(checkpoint)`.
        })
        .await?;
    bar.finish();
    println!("done: {done:?}");

    let census = instruments.verify().await?;
    println!(
        "verify: {census:?} ({} still without a current shard)",
        census.outstanding()
    );
    let visible = Instrument::query().exchange("EXCHG1").count(&db).await?;
    println!("EXCHG1 instruments a sharded query sees after the backfill: {visible}");
    Ok(())
}
