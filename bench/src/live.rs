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
use sharded_runtime::{Sharded, listen::SnapshotStream};
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

/// What a raw listener's events say at a global consistent point.
const CONSISTENT: &str = "<consistent>";

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
    // The first consistent point after the write's change: what any consistent snapshot of
    // the same targets waits for.
    let mut floor = [Latencies::default(), Latencies::default()];
    let chunks3 = sharded_runtime::__private::shard_chunks(Sharded3::SHARD_VALUES);
    let chunks64 = sharded_runtime::__private::shard_chunks(Sharded64::SHARD_VALUES);
    for (n, chunks) in [&chunks3, &chunks64].into_iter().enumerate() {
        let collection = [Sharded3::COLLECTION, Sharded64::COLLECTION][n];
        let (mut events, mut listener) = crate_listener(&db, collection, Some(chunks)).await?;
        for trial in 0..WARM_UP + TRIALS {
            serial += 1;
            let id = format!("live-{serial:05}");
            let plain = newest(serial);
            let started = Instant::now();
            let timed = timed_write(&mut events, &id, async {
                match n {
                    0 => {
                        Sharded3::collection(&db)
                            .upsert(&id, &Sharded3::from(&plain))
                            .await?;
                    }
                    _ => {
                        Sharded64::collection(&db)
                            .upsert(&id, &Sharded64::from(&plain))
                            .await?;
                    }
                }
                Ok(())
            })
            .await?;
            let consistent = shown(&mut events, CONSISTENT).await?;
            if trial >= WARM_UP {
                let acked_after = timed.1 / 1000.0;
                let seen = started + timed.0;
                let after = (consistent - seen).as_secs_f64();
                floor[n].push((consistent - started, (acked_after + after) * 1000.0));
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
         {}\n{}\n{}\n{}\n{}\n{}\n{}\n\n\
         The floor is when the same raw stream next declares every target consistent (a global\n\
         `NO_CHANGE` with a read time) after the write's change: no snapshot that shows every\n\
         target at one read time can come earlier. `listen` against that floor: **{:.2}×** (n = 3)\n\
         and **{:.2}×** (n = 64).\n",
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
        row(
            "floor: its next consistent point, n = 3",
            chunks3.len(),
            &floor[0],
            format!("{:.2}×", ratio(&floor[0], &baseline)),
            format!("{:.2}×", ratio(&floor[0], &raw[0])),
        ),
        row(
            "floor: its next consistent point, n = 64",
            chunks64.len(),
            &floor[1],
            format!("{:.2}×", ratio(&floor[1], &baseline)),
            format!("{:.2}×", ratio(&floor[1], &raw[1])),
        ),
        ratio(&ours[0], &floor[0]),
        ratio(&ours[1], &floor[1]),
    )?;
    report.push_str(&recovery_section().await?);
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
                match event {
                    FirestoreListenEvent::DocumentChange(change) => {
                        if let Some(document) = change.document {
                            let _ = events.send((Instant::now(), vec![document.name]));
                        }
                    }
                    // A global NO_CHANGE with a read time: every target is consistent there,
                    // the earliest any snapshot of all of them can be shown.
                    FirestoreListenEvent::TargetChange(change)
                        if change.target_ids.is_empty()
                            && change.read_time.is_some()
                            && change.target_change_type
                                == sharded_runtime::firestore::gcloud_sdk::google::firestore::v1::target_change::TargetChangeType::NoChange as i32 =>
                    {
                        let _ = events.send((Instant::now(), vec![CONSISTENT.to_owned()]));
                    }
                    _ => {}
                }
                Ok(())
            }
        })
        .await?;
    Ok((receiver, listener))
}

/// Trials of recovery with an idle timeout.
const RECOVERIES: usize = 5;
/// The idle timeout those trials listen with.
const IDLE_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest a recovery is waited for.
const RECOVERY_CAP: Duration = Duration::from_secs(240);

/// Recovery from a connection that goes dead without closing (a proxy keeps it open and
/// forwards nothing either way): the time from a write, made right after the connection
/// died, to the snapshot that shows it; with `listen`'s idle timeout, and without one (the
/// baseline: HTTP/2 keepalive notices the dead connection).
pub async fn recovery_section() -> Result<String, Failure> {
    use sharded_emulator::fault_proxy::{FaultProxy, Faults};
    use sharded_runtime::listen::ListenOptions;
    let emulator = Emulator::start().await?;
    let direct = emulator.db("live-recovery").await?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(12);
    let seeded = instruments(20, &mut rng);
    for (id, plain) in &seeded {
        Sharded3::collection(&direct)
            .upsert(id, &Sharded3::from(plain))
            .await?;
    }
    let template = seeded[0].1.clone();
    let mut serial = 0;
    let mut trial = |idle_timeout: Option<Duration>| {
        serial += 1;
        let (direct, template, emulator_host) =
            (direct.clone(), template.clone(), emulator.host().to_owned());
        async move {
            let proxy = FaultProxy::start(&emulator_host, Faults::NONE).await?;
            let db = sharded_emulator::emulator::connect(&proxy.host(), "live-recovery").await?;
            let options = ListenOptions::default().with_idle_timeout(idle_timeout);
            let (mut events, task) = forward(
                Sharded3::query()
                    .all()
                    .limit(FEED)
                    .listen_with(&db, options)?,
            );
            events.recv().await.ok_or("the listener ended")?;
            proxy.kill_open_connections_silently();
            let id = format!("recovery-{serial:03}");
            let mut plain = template;
            plain.timestamp = FirestoreTimestamp(
                sharded_runtime::firestore::jiff::Timestamp::from_second(2_100_000_000 + serial)
                    .expect("a valid timestamp"),
            );
            let started = Instant::now();
            Sharded3::collection(&direct)
                .upsert(&id, &Sharded3::from(&plain))
                .await?;
            let seen = tokio::time::timeout(RECOVERY_CAP, shown(&mut events, &id)).await;
            task.abort();
            Ok::<_, Failure>(seen.map(|seen| seen.map(|at| at - started)))
        }
    };
    let mut with_timeout = Vec::new();
    for _ in 0..RECOVERIES {
        with_timeout.push(trial(Some(IDLE_TIMEOUT)).await???);
    }
    let without = trial(None).await?;
    let secs = |d: Duration| d.as_secs_f64();
    let recovered = median(&mut with_timeout.iter().map(|d| secs(*d)).collect::<Vec<_>>());
    let baseline = match &without {
        Ok(Ok(d)) => format!("{:.1} s", secs(*d)),
        Ok(Err(error)) => return Err(error.to_string().into()),
        Err(_) => format!("over {} s (not recovered)", RECOVERY_CAP.as_secs()),
    };
    let ratio = match without {
        Ok(Ok(d)) => format!("{:.3}×", recovered / secs(d)),
        _ => format!("under {:.3}×", recovered / secs(RECOVERY_CAP)),
    };
    Ok(format!(
        "\n### Recovery from a silent connection\n\n\
         A connection that dies without closing (a NAT or load balancer dropping its state; here a\n\
         proxy that keeps it open and forwards nothing either way), then a write: the time from the\n\
         write to the snapshot that shows it, n = 3, the listener reading through the proxy.\n\n\
         | listener | recovery |\n|---|---|\n\
         | `listen` without an idle timeout (baseline: HTTP/2 keepalive, 60 s of pings then 60 s) | {baseline} |\n\
         | `listen` with `idle_timeout` = {} s, median of {RECOVERIES} | {recovered:.1} s |\n\n\
         Ratio: **{ratio}**. With the timeout, the stream is opened again over a fresh connection\n\
         once the timeout passes; over the dead one it stayed as silent.\n",
        IDLE_TIMEOUT.as_secs(),
    ))
}
