//! Live queries on the emulator: the latency from a write to the snapshot that shows it, for
//! sharded listeners on 3 and 64 shard values against the firestore crate's own listener on
//! the same query over an unsharded collection, in the same run: the "Live queries" section of
//! BENCHMARKS.md.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use futures::StreamExt;
use rand::SeedableRng;
use sharded_emulator::emulator::Emulator;
use sharded_runtime::firestore::{
    FirestoreDb, FirestoreListenEvent, FirestoreListenerTarget, FirestoreMemListenStateStorage,
    FirestoreTimestamp,
};
use sharded_runtime::{Sharded, SnapshotStream};
use tokio::sync::mpsc;

use crate::{PLAIN_COLLECTION, Sharded3, Sharded64, instruments, median, percentile};

type Failure = Box<dyn std::error::Error>;

/// Documents in each collection before listening.
const SEEDED: usize = 500;
/// The feed's length: the newest 20 of the whole collection.
const FEED: u32 = 20;
const WARM_UP: usize = 5;
const TRIALS: usize = 60;

/// One listener's latencies, one per trial.
#[derive(Default)]
struct Latencies {
    /// From sending the write to the event that shows it.
    end_to_end: Vec<Duration>,
    /// From the write's acknowledgement to that event, in ms (negative when the event came
    /// first).
    after_ack: Vec<f64>,
}

impl Latencies {
    fn push(&mut self, (end_to_end, after_ack): (Duration, f64)) {
        self.end_to_end.push(end_to_end);
        self.after_ack.push(after_ack);
    }
}

/// When a listener reported each document name it showed: for a sharded snapshot, every
/// document of it; for the crate's listener, each document change.
type Events = mpsc::UnboundedReceiver<(Instant, Vec<String>)>;

/// Waits for the first event that shows `id`.
async fn shown(events: &mut Events, id: &str) -> Result<Instant, Failure> {
    let suffix = format!("/{id}");
    loop {
        let (at, names) = events.recv().await.ok_or("a listener stopped")?;
        if names
            .iter()
            .any(|name| name == id || name.ends_with(&suffix))
        {
            return Ok(at);
        }
    }
}

/// Runs the measurements and returns the section as markdown.
pub async fn section() -> Result<String, Failure> {
    let emulator = Emulator::start().await?;
    let db = emulator.db("live-latency").await?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let seeded = instruments(SEEDED, &mut rng);
    for (id, plain) in &seeded {
        db.fluent()
            .update()
            .in_col(PLAIN_COLLECTION)
            .document_id(id)
            .object(plain)
            .execute::<()>()
            .await?;
        Sharded3::collection(&db)
            .upsert(id, &Sharded3::from(plain))
            .await?;
        Sharded64::collection(&db)
            .upsert(id, &Sharded64::from(plain))
            .await?;
    }

    // Phase one: the crate's listener on the unsharded feed, and `listen` on the sharded ones.
    let (mut unsharded, mut unsharded_listener) =
        crate_listener(&db, PLAIN_COLLECTION, None).await?;
    let (mut three, three_task) = forward(Sharded3::query().all().limit(FEED).listen(&db)?);
    let (mut sixty_four, sixty_four_task) =
        forward(Sharded64::query().all().limit(FEED).listen(&db)?);
    // The first snapshots: every target current.
    three.recv().await.ok_or("the listener ended")?;
    sixty_four.recv().await.ok_or("the listener ended")?;
    let template = seeded[0].1.clone();
    // Each write is the newest document, so it enters every feed's top 20.
    let newest = |serial: i64| {
        let mut plain = template.clone();
        plain.timestamp = FirestoreTimestamp(
            sharded_runtime::firestore::jiff::Timestamp::from_second(2_000_000_000 + serial)
                .expect("a valid timestamp"),
        );
        plain
    };
    let mut serial = 0;
    let mut baseline = Latencies::default();
    let mut ours = [Latencies::default(), Latencies::default()];
    for trial in 0..WARM_UP + TRIALS {
        let keep = trial >= WARM_UP;
        serial += 1;
        let id = format!("live-{serial:05}");
        let plain = newest(serial);
        let timed = timed_write(&mut unsharded, &id, async {
            db.fluent()
                .update()
                .in_col(PLAIN_COLLECTION)
                .document_id(&id)
                .object(&plain)
                .execute::<()>()
                .await?;
            Ok(())
        })
        .await?;
        if keep {
            baseline.push(timed);
        }
        let timed = timed_write(&mut three, &id, async {
            Sharded3::collection(&db)
                .upsert(&id, &Sharded3::from(&plain))
                .await?;
            Ok(())
        })
        .await?;
        if keep {
            ours[0].push(timed);
        }
        let timed = timed_write(&mut sixty_four, &id, async {
            Sharded64::collection(&db)
                .upsert(&id, &Sharded64::from(&plain))
                .await?;
            Ok(())
        })
        .await?;
        if keep {
            ours[1].push(timed);
        }
    }
    unsharded_listener.shutdown().await?;
    three_task.abort();
    sixty_four_task.abort();

    // Phase two: the crate's listener alone on each sharded feed's own chunk queries (what
    // `listen` sends), as raw events: what the snapshot layer adds on the same targets.
    let mut raw = [Latencies::default(), Latencies::default()];
    let chunks3 = sharded_runtime::__private::shard_chunks(Sharded3::SHARD_VALUES);
    let chunks64 = sharded_runtime::__private::shard_chunks(Sharded64::SHARD_VALUES);
    for (n, chunks) in [&chunks3, &chunks64].into_iter().enumerate() {
        let collection = [Sharded3::COLLECTION, Sharded64::COLLECTION][n];
        let (mut events, mut listener) = crate_listener(&db, collection, Some(chunks)).await?;
        for trial in 0..WARM_UP + TRIALS {
            serial += 1;
            let id = format!("live-{serial:05}");
            let plain = newest(serial);
            let timed = timed_write(&mut events, &id, async {
                match n {
                    0 => {
                        Sharded3::collection(&db)
                            .upsert(&id, &Sharded3::from(&plain))
                            .await?
                    }
                    _ => {
                        Sharded64::collection(&db)
                            .upsert(&id, &Sharded64::from(&plain))
                            .await?
                    }
                }
                Ok(())
            })
            .await?;
            if trial >= WARM_UP {
                raw[n].push(timed);
            }
        }
        listener.shutdown().await?;
    }

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let median_ms =
        |l: &Latencies| median(&mut l.end_to_end.iter().map(|d| ms(*d)).collect::<Vec<_>>());
    let ratio = |ours: &Latencies, to: &Latencies| median_ms(ours) / median_ms(to);
    let row = |name: &str, targets: usize, l: &Latencies, vs_baseline: String, vs_raw: String| {
        format!(
            "| {name} | {targets} | {:.2} ms | {:.2} ms | {:+.2} ms | {vs_baseline} | {vs_raw} |",
            median_ms(l),
            ms(percentile(&mut l.end_to_end.clone(), 90)),
            median(&mut l.after_ack.clone()),
        )
    };
    let mut report = String::new();
    writeln!(
        report,
        "\n## Live queries on the emulator\n\n\
         The latency from sending a write to the listener's event that shows it, on the feed query\n\
         (the newest {FEED} of the whole collection, {SEEDED} documents seeded), each write the\n\
         newest document; {TRIALS} trials after {WARM_UP} warm-up per listener. Baseline: the firestore\n\
         crate's own listener (`FirestoreListener`, raw `DocumentChange` events) on the same query\n\
         over an unsharded collection, its writes taking turns with those of the two sharded\n\
         `listen`s, whose snapshots wait until every chunk target is current at one read time.\n\
         Then, alone, the crate's listener on the very chunk queries `listen` sends: what the\n\
         snapshot layer adds on the same targets. \"After the ack\" is when the event came\n\
         relative to the write's response (negative: before it).\n\n\
         | listener | targets | median | p90 | after the ack (median) | ratio to baseline | ratio to the same targets' raw events |\n\
         |---|---|---|---|---|---|---|\n\
         {}\n{}\n{}\n{}\n{}\n",
        row(
            "crate listener, unsharded (baseline)",
            1,
            &baseline,
            "1.00".into(),
            String::new()
        ),
        row(
            "sharded `listen`, n = 3",
            chunks3.len(),
            &ours[0],
            format!("**{:.2}×**", ratio(&ours[0], &baseline)),
            format!("**{:.2}×**", ratio(&ours[0], &raw[0])),
        ),
        row(
            "sharded `listen`, n = 64",
            chunks64.len(),
            &ours[1],
            format!("**{:.2}×**", ratio(&ours[1], &baseline)),
            format!("**{:.2}×**", ratio(&ours[1], &raw[1])),
        ),
        row(
            "crate listener on n = 3's query",
            chunks3.len(),
            &raw[0],
            format!("{:.2}×", ratio(&raw[0], &baseline)),
            "1.00".into(),
        ),
        row(
            "crate listener on n = 64's chunk queries",
            chunks64.len(),
            &raw[1],
            format!("{:.2}×", ratio(&raw[1], &baseline)),
            "1.00".into(),
        ),
    )?;
    Ok(report)
}

/// Sends `write` and waits for `events` to show `id`: its end-to-end and after-ack latency.
async fn timed_write(
    events: &mut Events,
    id: &str,
    write: impl std::future::Future<Output = Result<(), Failure>>,
) -> Result<(Duration, f64), Failure> {
    let started = Instant::now();
    write.await?;
    let acked = Instant::now();
    let seen = shown(events, id).await?;
    let after = seen.saturating_duration_since(acked).as_secs_f64()
        - acked.saturating_duration_since(seen).as_secs_f64();
    Ok((seen - started, after * 1000.0))
}

/// Forwards each snapshot of `stream` with when it arrived, as the crate listener's callback
/// does with its events, so both are timed on arrival.
fn forward<T: Sharded + Clone>(
    mut stream: SnapshotStream<T>,
) -> (Events, tokio::task::JoinHandle<()>) {
    let (events, receiver) = mpsc::unbounded_channel();
    let task = tokio::spawn(async move {
        while let Some(Ok(snapshot)) = stream.next().await {
            let ids = snapshot
                .documents
                .into_iter()
                .map(|stored| stored.id.clone())
                .collect();
            if events.send((Instant::now(), ids)).is_err() {
                break;
            }
        }
    });
    (receiver, task)
}

/// The firestore crate's listener on the feed query over `collection`, one target per chunk
/// of shard values when `chunks` are given; each document change it reports, with when it
/// arrived.
async fn crate_listener(
    db: &FirestoreDb,
    collection: &str,
    chunks: Option<&[&'static [&'static str]]>,
) -> Result<
    (
        Events,
        sharded_runtime::firestore::FirestoreListener<FirestoreDb, FirestoreMemListenStateStorage>,
    ),
    Failure,
> {
    let mut listener = db
        .create_listener(FirestoreMemListenStateStorage::new())
        .await?;
    let targets: Vec<Option<Vec<&str>>> = match chunks {
        None => vec![None],
        Some(chunks) => chunks.iter().map(|chunk| Some(chunk.to_vec())).collect(),
    };
    for (id, chunk) in (1..).zip(targets) {
        db.fluent()
            .select()
            .from(collection)
            .filter(move |q| {
                q.for_all([chunk
                    .clone()
                    .and_then(|chunk| q.field("shard").is_in(chunk))])
            })
            .order(|o| o.fields([o.field("timestamp").desc()]))
            .limit(FEED)
            .listen()
            .add_target(FirestoreListenerTarget::new(id), &mut listener)?;
    }
    let (events, receiver) = mpsc::unbounded_channel();
    listener
        .start(move |event| {
            let events = events.clone();
            async move {
                if let FirestoreListenEvent::DocumentChange(change) = event
                    && let Some(document) = change.document
                {
                    let _ = events.send((Instant::now(), vec![document.name]));
                }
                Ok(())
            }
        })
        .await?;
    Ok((receiver, listener))
}
