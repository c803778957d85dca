//! Writes sensor readings to a sharded kind on the emulator in Datastore mode (started here,
//! or the one `DATASTORE_EMULATOR_HOST` names), then reads a sensor's latest page by page, its
//! count and its sum: `cargo run -p sharded-datastore-example`.

use sharded_datastore_example::Reading;
use sharded_emulator::emulator::Emulator;
use sharded_runtime::datastore::{BulkPut, Datastore};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let emulator = Emulator::start_datastore_mode().await?;
    let datastore = Datastore::emulator(emulator.host(), "sensors-demo")
        .await?
        .namespace("plant-7");
    let readings = datastore.kind::<Reading>();
    let sensors = ["boiler", "intake", "exhaust"];
    let batch = (0..1_200).map(|i| {
        let reading = Reading {
            sensor: sensors[i % 3].to_owned(),
            site: format!("site-{}", i % 4),
            recorded_at: 1_700_000_000_000_000 + (i as i64 / 7) * 1_000,
            value: (i % 50) as i64,
            raw: format!("frame {i}"),
        };
        // Random ids, never rising ones: the page's other hotspot.
        (format!("{:016x}", rand::random::<u64>()), reading)
    });
    let report = readings
        .bulk_put(batch, &BulkPut::default(), |_| {})
        .await?;
    println!(
        "wrote {} readings in {} commits",
        report.written, report.commits
    );

    let boiler = Reading::query().sensor("boiler".to_owned());
    let mut cursor = None;
    for page in 1..=3 {
        let next = readings.page(&boiler, 5, cursor.as_ref()).await?;
        let times: Vec<i64> = next.items.iter().map(|r| r.document.recorded_at).collect();
        println!("boiler, page {page}: {times:?}");
        cursor = next.next;
    }
    println!(
        "boiler: {} readings, values summing to {:?}",
        readings.count(&boiler).await?,
        readings.sum(&boiler, Reading::aggregates().value).await?
    );
    let some = Reading::query().sensor_in(["intake".to_owned(), "exhaust".to_owned()]);
    println!("intake or exhaust: {}", readings.count(&some).await?);
    Ok(())
}
