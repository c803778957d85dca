//! The deployable job binary as its engines run it: two tasks with Cloud Run's variables, each
//! a process in an empty directory, against the emulator; then `status`, which returns once
//! the whole job is done and prints its totals.

use std::process::Stdio;
use std::time::Duration;

use rand::Rng;
use sharded_emulator::emulator::Emulator;
use sharded_examples::{Instrument, Price, at};
use sharded_runtime::Sharded;
use sharded_runtime::bulk::{BulkWriter, BulkWriterOptions, Throttling};

const INSTRUMENTS: u64 = 400;
const JOB: &str = "adopt-instruments";

fn adopt_job(
    emulator: &Emulator,
    project: &str,
    args: &[&str],
    variables: &[(&str, String)],
) -> tokio::process::Command {
    let dir = std::env::temp_dir().join(format!("sharded-adopt-job-{}", rand::random::<u64>()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_adopt_job"));
    command
        .args(args)
        .current_dir(dir)
        .env("FIRESTORE_EMULATOR_HOST", emulator.host())
        .env("GOOGLE_CLOUD_PROJECT", project)
        .env_remove("CLOUD_RUN_TASK_INDEX")
        .env_remove("CLOUD_RUN_TASK_COUNT")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("SHARDED_TASK_COUNT")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (name, value) in variables {
        command.env(name, value);
    }
    command
}

async fn finished(mut command: tokio::process::Command) -> std::process::Output {
    let out = tokio::time::timeout(Duration::from_secs(300), command.output())
        .await
        .expect("the process ends within 5 minutes")
        .unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[tokio::test]
async fn two_cloud_run_tasks_adopt_every_instrument_and_status_sees_the_job_done() {
    let emulator = Emulator::shared().unwrap();
    let project = format!("adopt-job-{:08x}", rand::random::<u32>());
    let db = emulator.db(&project).await.unwrap();
    let legacy = BulkWriter::new(
        &db,
        BulkWriterOptions::default().with_throttling(Throttling::Off),
    )
    .unwrap();
    let mut rng = rand::rng();
    for i in 0..INSTRUMENTS {
        let instrument = Instrument {
            symbol: format!("OLD{i:05}"),
            price: Price {
                currency: "USD".into(),
                micros: rng.random_range(1_000_000..900_000_000),
            },
            exchange: "EXCHG1".into(),
            instrument_type: "etf".into(),
            timestamp: at(&format!("2019-01-01T00:{:02}:{:02}Z", i / 60, i % 60)),
        };
        let id = format!("{:020}", rng.random::<u64>());
        drop(
            legacy
                .set(Instrument::COLLECTION, &id, &instrument)
                .await
                .unwrap(),
        );
    }
    legacy.close().await.unwrap();

    let tasks = (0..2u32).map(|index| {
        let variables = [
            ("CLOUD_RUN_TASK_INDEX", index.to_string()),
            ("CLOUD_RUN_TASK_COUNT", "2".to_owned()),
        ];
        finished(adopt_job(emulator, &project, &["run", JOB], &variables))
    });
    futures::future::join_all(tasks).await;

    let status = finished(adopt_job(emulator, &project, &["status", JOB], &[])).await;
    let printed = String::from_utf8_lossy(&status.stdout);
    assert!(
        printed.contains(&format!("job {JOB}: {INSTRUMENTS} updated, 0 left, ")),
        "{printed}"
    );
    assert_eq!(
        Instrument::collection(&db)
            .verify()
            .await
            .unwrap()
            .outstanding(),
        0
    );
    // A task without its engine's variables is refused, naming what is missing.
    let out = adopt_job(emulator, &project, &["run", JOB], &[])
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("CLOUD_RUN_TASK_INDEX"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
