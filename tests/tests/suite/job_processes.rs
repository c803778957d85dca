//! A tracked backfill as an engine runs it: each task a process of its own, told its part by
//! the engine's variables (Cloud Run's `CLOUD_RUN_TASK_INDEX`/`CLOUD_RUN_TASK_COUNT`, or a
//! Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` with `SHARDED_TASK_COUNT`), in an empty
//! working directory, with nothing but Firestore to resume from.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sharded_runtime::firestore::FirestoreDb;
use sharded_runtime::{
    Sharded,
    jobs::{JobStatus, PartPhase, PartRun, TaskPart},
};
use sharded_tests::migration::{
    assert_nothing_outstanding, concurrent_writer, expected_state, stored_state, unthrottled,
};
use sharded_tests::test_db;
use tokio::io::{AsyncBufReadExt, BufReader};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Sharded)]
#[sharded(shards = 8, order_by = "at", collection = "adopted")]
struct Reading {
    at: i64,
    n: i64,
}

const LEASE: Duration = Duration::from_secs(2);
/// The name `n` was stored under before a rename, in the rename job's test.
const OLD_NAME: &str = "count";
const JOB: &str = "adopt";

/// One task: its part from the engine's variables, its database from `TRACKED_HOST` and
/// `TRACKED_PROJECT`; prints `checkpoint <scanned>` after each page, then how it ended.
#[tokio::test]
#[ignore = "a task process of the tests below"]
async fn tracked_task() {
    let var = |name: &str| std::env::var(name).ok();
    let Some(host) = var("TRACKED_HOST") else {
        return;
    };
    let db = sharded_emulator::emulator::connect(&host, &var("TRACKED_PROJECT").unwrap())
        .await
        .unwrap();
    let part = TaskPart::from_env().unwrap();
    let slow = Duration::from_millis(var("TRACKED_SLOW_MS").map_or(0, |ms| ms.parse().unwrap()));
    let job = match var("TRACKED_CHANGE").as_deref() {
        Some("rename") => Reading::collection(&db)
            .rename_field(OLD_NAME, Reading::fields().n)
            .unwrap(),
        _ => Reading::collection(&db).backfill(),
    };
    let millis = |name: &str, default: u64| {
        Duration::from_millis(var(name).map_or(default, |ms| ms.parse().unwrap()))
    };
    let mut tracked = job
        .page_size(10)
        .writer(unthrottled())
        .tracked(JOB, part)
        .lease_timeout(millis("TRACKED_LEASE_MS", LEASE.as_millis() as u64))
        .heartbeat_every(millis("TRACKED_HEARTBEAT_MS", 400));
    if var("TRACKED_LEAVE_IF_HELD").is_some() {
        tracked = tracked.leave_if_held();
    }
    let run = tracked
        .run(|progress| {
            println!("checkpoint {}", progress.scanned);
            std::thread::sleep(slow);
        })
        .await
        .unwrap();
    match run {
        PartRun::Finished { progress, .. } => println!("finished {}", progress.scanned),
        PartRun::AlreadyDone(_) => println!("already-done"),
        PartRun::HeldElsewhere(_) => println!("held"),
        other => println!("other {other:?}"),
    }
}

type Lines = tokio::io::Lines<BufReader<tokio::process::ChildStdout>>;

/// Starts a task process with the engine's `variables`, in an empty directory of its own.
fn task(
    db: &FirestoreDb,
    host: &str,
    variables: &[(&str, String)],
    slow_ms: u64,
) -> (tokio::process::Child, Lines) {
    let project = sharded_tests::project_id(db);
    let dir = std::env::temp_dir().join(format!("sharded-task-{}", rand::random::<u64>()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut command = tokio::process::Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "job_processes::tracked_task",
            "--exact",
            "--ignored",
            "--nocapture",
            "--quiet",
        ])
        .current_dir(&dir)
        .env("TRACKED_HOST", host)
        .env("TRACKED_PROJECT", project)
        .env("TRACKED_SLOW_MS", slow_ms.to_string())
        .env_remove("CLOUD_RUN_TASK_INDEX")
        .env_remove("CLOUD_RUN_TASK_COUNT")
        .env_remove("JOB_COMPLETION_INDEX")
        .env_remove("SHARDED_TASK_COUNT")
        .env_remove("CLOUD_RUN_EXECUTION")
        .env_remove("CLOUD_RUN_TASK_ATTEMPT")
        .env_remove("HOSTNAME")
        .env_remove("SHARDED_JOB_NAME")
        .env_remove("SHARDED_JOB_UID")
        .env_remove("SHARDED_POD_NAME")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    for (name, value) in variables {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    (child, lines)
}

fn cloud_run(index: u32, count: u32) -> Vec<(&'static str, String)> {
    vec![
        ("CLOUD_RUN_TASK_INDEX", index.to_string()),
        ("CLOUD_RUN_TASK_COUNT", count.to_string()),
    ]
}

/// How a task ended: its last line of its own (the test harness prints around it).
async fn last_line(mut lines: Lines) -> String {
    let mut last = String::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        if ["finished ", "already-done", "held", "other "]
            .iter()
            .any(|outcome| line.starts_with(outcome))
        {
            last = line;
        }
    }
    last
}

/// `count` documents written before the collection was sharded.
async fn legacy(db: &FirestoreDb, count: usize) -> Vec<String> {
    let writer = db.create_simple_batch_writer().await.unwrap();
    let mut rng = rand::rng();
    let ids: Vec<String> = (0..count)
        .map(|_| sharded_tests::generated_id(&mut rng))
        .collect();
    for chunk in ids.chunks(500) {
        let mut batch = writer.new_batch();
        for (n, id) in chunk.iter().enumerate() {
            let row = serde_json::json!({ "at": n, "n": n });
            batch
                .update_object(Reading::COLLECTION, id, &row, None, None, Vec::new())
                .unwrap();
        }
        batch.write().await.unwrap();
    }
    ids
}

#[tokio::test]
async fn four_cloud_run_tasks_one_killed_and_restarted_adopt_every_document_beside_an_app() {
    let test = test_db("job-processes").await;
    let db = &test.db;
    let host = test.emulator.host().to_owned();
    let ids = legacy(db, 1_600).await;
    let before = stored_state(db, Reading::COLLECTION, Reading::SHARD_FIELD).await;
    // The app keeps writing while the job runs.
    let touched: Vec<String> = ids.iter().step_by(8).cloned().collect();
    let app = concurrent_writer(
        db.clone(),
        touched,
        |n| Reading {
            at: i64::from(n),
            n: i64::from(n),
        },
        Reading::fields().n,
    );
    let mut tasks: Vec<_> = (0..4)
        .map(|i| task(db, &host, &cloud_run(i, 4), 100))
        .collect();
    let started = std::time::Instant::now();
    // Task 1 is killed (SIGKILL) after its part's first stored checkpoint, once task 2 holds
    // its part too.
    loop {
        let status = JobStatus::read(db, JOB).await;
        if let Ok(status) = status
            && status.parts[1].checkpoint.is_some()
            && status.parts[2].phase == PartPhase::Running
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no checkpoint of part 1 while part 2 runs: {:?}",
            JobStatus::read(db, JOB).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tasks[1].0.start_kill().unwrap();
    tasks[1].0.wait().await.unwrap();
    // A duplicate attempt of a part whose holder is alive (the same attempt, as far as the
    // engine says) writes nothing and waits for the holder to end: the part done, it ends.
    // (The process is killed when its handle drops: keep it.)
    let (_duplicate, duplicate) = task(db, &host, &cloud_run(2, 4), 0);
    assert_eq!(last_line(duplicate).await, "already-done");
    // After the lease, a new attempt in an empty directory resumes part 1 from Firestore.
    tokio::time::sleep(LEASE + Duration::from_millis(300)).await;
    let (_restarted, restarted) = task(db, &host, &cloud_run(1, 4), 0);
    let ended = last_line(restarted).await;
    let resumed: u64 = ended
        .strip_prefix("finished ")
        .unwrap_or_else(|| panic!("{ended}"))
        .parse()
        .unwrap();
    for (i, (_, lines)) in tasks.into_iter().enumerate() {
        if i != 1 {
            let ended = last_line(lines).await;
            assert!(ended.starts_with("finished "), "task {i}: {ended}");
        }
    }
    let changes = app.await.unwrap();
    let status = JobStatus::read(db, JOB).await.unwrap();
    assert!(status.is_done(), "{status:?}");
    // The sweep and the census ran once for the whole job, after every part.
    assert_eq!(status.closing.as_ref().map(|closing| closing.runs), Some(1));
    assert_eq!(status.parts[1].attempt, 2);
    assert_eq!(
        status.parts[2].attempt, 1,
        "the duplicate never took part 2"
    );
    assert!(
        resumed < status.parts[1].scanned,
        "part 1 resumed, not restarted"
    );
    for part in &status.parts {
        assert_eq!(
            part.updated + part.unchanged + part.deleted,
            part.scanned,
            "{part:?}"
        );
    }
    // Every document once: each part scanned its range once over its attempts, and every
    // document the app did not create itself is in one.
    assert!(
        status.scanned()
            >= (ids.len()
                - changes
                    .values()
                    .filter(|c| matches!(c, sharded_tests::migration::Change::Deleted))
                    .count()) as u64
    );
    // No write of the app's was overwritten, and every document has a current shard.
    let after = stored_state(db, Reading::COLLECTION, Reading::SHARD_FIELD).await;
    let expected = expected_state(&before, &changes);
    assert_eq!(after.len(), expected.len());
    let fields: BTreeMap<_, _> = after
        .iter()
        .map(|(id, (fields, _))| (id.clone(), fields.clone()))
        .collect();
    assert_eq!(fields, expected);
    assert_nothing_outstanding::<Reading>(db).await;
}

#[tokio::test]
async fn eight_indexed_job_pods_adopt_every_document_once() {
    let test = test_db("job-pods").await;
    let db = &test.db;
    let host = test.emulator.host().to_owned();
    let ids = legacy(db, 1_200).await;
    let pods: Vec<_> = (0..8)
        .map(|i| {
            task(
                db,
                &host,
                &[
                    ("JOB_COMPLETION_INDEX", i.to_string()),
                    ("SHARDED_TASK_COUNT", "8".into()),
                ],
                0,
            )
        })
        .collect();
    for (i, (_, lines)) in pods.into_iter().enumerate() {
        let ended = last_line(lines).await;
        assert!(ended.starts_with("finished "), "pod {i}: {ended}");
    }
    let status = JobStatus::read(db, JOB).await.unwrap();
    assert!(status.is_done());
    assert_eq!(status.count(PartPhase::Done), 8);
    let closing = status.closing.clone().expect("closed once");
    assert_eq!((closing.runs, closing.outstanding), (1, Some(0)));
    assert_eq!(
        (status.scanned(), status.updated()),
        (ids.len() as u64, ids.len() as u64)
    );
    assert_nothing_outstanding::<Reading>(db).await;
}

/// The rename job in the same shape: four Cloud Run tasks, one killed after its first stored
/// checkpoint and started again after the lease in an empty directory, a duplicate of a live
/// part that writes nothing, beside an app already writing the new name.
#[tokio::test]
async fn four_tasks_of_a_rename_one_killed_and_restarted_leave_no_document_under_the_old_name() {
    let test = test_db("rename-processes").await;
    let db = &test.db;
    let host = test.emulator.host().to_owned();
    // Sharded already, `n` stored as `count`.
    let writer = db.create_simple_batch_writer().await.unwrap();
    let ids: Vec<String> = (0..1_200)
        .map(|i| format!("{}{i:05}", ['2', 'H', 'X', 'y'][i % 4]))
        .collect();
    for chunk in ids.chunks(500) {
        let mut batch = writer.new_batch();
        for (i, id) in chunk.iter().enumerate() {
            let row =
                serde_json::json!({ "at": i, OLD_NAME: i, "shard": Reading::SHARD_VALUES[i % 8] });
            batch
                .update_object(Reading::COLLECTION, id, &row, None, None, Vec::new())
                .unwrap();
        }
        batch.write().await.unwrap();
    }
    let rename = |index: u32| {
        let mut variables = cloud_run(index, 4);
        variables.push(("TRACKED_CHANGE", "rename".into()));
        variables
    };
    // The app, on the new type, rewrites some documents meanwhile.
    let app = {
        let db = db.clone();
        let touched: Vec<String> = ids.iter().step_by(9).cloned().collect();
        tokio::spawn(async move {
            let mut written = BTreeMap::new();
            for (k, id) in touched.into_iter().enumerate() {
                let reading = Reading {
                    at: -1,
                    n: 10_000 + k as i64,
                };
                Reading::collection(&db)
                    .upsert(&id, &reading)
                    .await
                    .unwrap();
                written.insert(id, reading);
                tokio::time::sleep(Duration::from_millis(3)).await;
            }
            written
        })
    };
    let mut tasks: Vec<_> = (0..4).map(|i| task(db, &host, &rename(i), 100)).collect();
    let started = std::time::Instant::now();
    loop {
        if let Ok(status) = JobStatus::read(db, JOB).await
            && status.parts[1].checkpoint.is_some()
            && status.parts[2].phase == PartPhase::Running
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no checkpoint of part 1 while part 2 runs: {:?}",
            JobStatus::read(db, JOB).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tasks[1].0.start_kill().unwrap();
    tasks[1].0.wait().await.unwrap();
    let (_duplicate, duplicate) = task(db, &host, &rename(2), 0);
    assert_eq!(last_line(duplicate).await, "already-done");
    tokio::time::sleep(LEASE + Duration::from_millis(300)).await;
    let (_restarted, restarted) = task(db, &host, &rename(1), 0);
    assert!(last_line(restarted).await.starts_with("finished "));
    for (i, (_, lines)) in tasks.into_iter().enumerate() {
        if i != 1 {
            let ended = last_line(lines).await;
            assert!(ended.starts_with("finished "), "task {i}: {ended}");
        }
    }
    let written = app.await.unwrap();
    let status = JobStatus::read(db, JOB).await.unwrap();
    assert!(status.is_done(), "{status:?}");
    assert_eq!(status.parts[1].attempt, 2);
    let closing = status.closing.clone().unwrap();
    assert_eq!((closing.runs, closing.outstanding), (1, Some(0)));
    assert_eq!(status.scanned(), ids.len() as u64);
    for document in sharded_tests::all_documents(db, Reading::COLLECTION).await {
        let id = sharded_tests::id_of(&document).to_owned();
        assert!(!document.fields.contains_key(OLD_NAME), "{id}");
        let read = Reading::collection(db).get(&id).await.unwrap().unwrap();
        match written.get(&id) {
            Some(reading) => assert_eq!(&read, reading, "the app's write stands"),
            None => assert_eq!(read.n, read.at, "{id} keeps its value under the new name"),
        }
    }
}

/// The retries the shipped Cloud Run script gives a task (`--max-retries`), and the ones the
/// shipped Indexed Job gives an index (`backoffLimitPerIndex`).
fn shipped_retries() -> (u32, u32) {
    let deploy = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/deploy");
    let script = std::fs::read_to_string(deploy.join("cloud-run-job.sh")).unwrap();
    let cloud_run = script
        .split_once("--max-retries ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .expect("the script sets --max-retries");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(deploy.join("indexed-job.json")).unwrap())
            .unwrap();
    let kubernetes = manifest["spec"]["backoffLimitPerIndex"]
        .as_u64()
        .expect("the manifest sets backoffLimitPerIndex") as u32;
    (cloud_run, kubernetes)
}

/// A lease no test waits out: a task that takes a part over within it did so because its
/// engine said the holder's attempt was over.
const LONG_LEASE_MS: &str = "600000";

/// Waits until `done` holds for the job's status, at most a minute (the bound of a test that
/// would otherwise hang: a part not taken over waits out its ten-minute lease).
async fn until(db: &FirestoreDb, what: &str, done: impl Fn(&JobStatus) -> bool) -> JobStatus {
    let started = std::time::Instant::now();
    loop {
        if let Ok(status) = JobStatus::read(db, JOB).await
            && done(&status)
        {
            return status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what}: {:?}",
            JobStatus::read(db, JOB).await
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Kills part 1's task after each of its stored checkpoints and starts the engine's next
/// attempt of it at once, `kills` times, with `attempt(n)`'s variables; then lets the last
/// one finish beside part 0's. Every attempt takes the part over from the last checkpoint
/// though its holder's ten-minute lease is fresh, and the job ends done, closed once.
async fn killed_and_retried_at_once(
    db: &FirestoreDb,
    host: &str,
    attempt: impl Fn(u32, u32) -> Vec<(&'static str, String)>,
    kills: u32,
) -> JobStatus {
    let long = |mut variables: Vec<(&'static str, String)>| {
        variables.push(("TRACKED_LEASE_MS", LONG_LEASE_MS.into()));
        variables.push(("TRACKED_HEARTBEAT_MS", "100".into()));
        variables
    };
    let (_other, other) = task(db, host, &long(attempt(0, 0)), 20);
    let mut current = task(db, host, &long(attempt(1, 0)), 20);
    let mut scanned = 0;
    for n in 1..=kills {
        // This attempt holds the part and stored a checkpoint past the last one.
        let status = until(
            db,
            &format!("attempt {n} of part 1 takes it over"),
            |status| status.parts[1].attempt == n && status.parts[1].scanned > scanned,
        )
        .await;
        scanned = status.parts[1].scanned;
        current.0.start_kill().unwrap();
        current.0.wait().await.unwrap();
        // The engine's next attempt, started as soon as the last one ended.
        current = task(db, host, &long(attempt(1, n)), 20);
    }
    let ended = last_line(current.1).await;
    assert!(ended.starts_with("finished "), "the last attempt: {ended}");
    assert!(last_line(other).await.starts_with("finished "));
    let status = until(db, "the job closes", JobStatus::is_done).await;
    assert_eq!(status.parts[1].attempt, kills + 1);
    assert_eq!(status.parts[0].attempt, 1);
    assert_eq!(status.closing.as_ref().map(|c| c.runs), Some(1));
    assert_nothing_outstanding::<Reading>(db).await;
    status
}

/// Cloud Run retries a failed task within seconds, with the next attempt number and no
/// backoff of its own: each attempt takes the part over at once, so the script's retries
/// are enough for as many crashes, however long the lease.
#[tokio::test]
async fn a_cloud_run_task_killed_and_retried_at_once_goes_on_from_its_checkpoint() {
    let test = test_db("job-cloud-run-retries").await;
    let db = &test.db;
    let host = test.emulator.host().to_owned();
    let ids = legacy(db, 800).await;
    let (retries, _) = shipped_retries();
    let kills = retries.min(5);
    let attempt = |index: u32, attempt: u32| {
        let mut variables = cloud_run(index, 2);
        variables.push(("CLOUD_RUN_EXECUTION", "adopt-x7k2p".into()));
        variables.push(("CLOUD_RUN_TASK_ATTEMPT", attempt.to_string()));
        variables
    };
    let status = killed_and_retried_at_once(db, &host, attempt, kills).await;
    assert!(kills < retries + 1, "within the script's retries");
    assert_eq!(status.scanned(), ids.len() as u64, "each document once");
}

/// A pod as the Job controller starts it for `index` of the Job `job` (uid `uid`): the
/// variables Kubernetes sets (`JOB_COMPLETION_INDEX`, the host name `{job}-{index}`, the same
/// for every pod of the index) and those the manifest passes through the downward API (the
/// Job's name and uid from its labels, the pod's own name, `{job}-{index}-` and five
/// characters of its own).
fn pod(job: &str, uid: &str, index: u32, count: u32) -> Vec<(&'static str, String)> {
    use rand::Rng as _;
    let suffix: String = (0..5)
        .map(|_| (b'a' + rand::rng().random_range(0..26)) as char)
        .collect();
    vec![
        ("JOB_COMPLETION_INDEX", index.to_string()),
        ("SHARDED_TASK_COUNT", count.to_string()),
        ("HOSTNAME", format!("{job}-{index}")),
        ("SHARDED_JOB_NAME", job.to_owned()),
        ("SHARDED_JOB_UID", uid.to_owned()),
        ("SHARDED_POD_NAME", format!("{job}-{index}-{suffix}")),
    ]
}

/// A Kubernetes Indexed Job starts a new pod for a failed index (a name of its own, the same
/// Job's name and uid, the same host name): each takes the part over at once.
#[tokio::test]
async fn an_indexed_job_pod_killed_and_replaced_goes_on_from_its_checkpoint() {
    let test = test_db("job-pod-retries").await;
    let db = &test.db;
    let host = test.emulator.host().to_owned();
    let ids = legacy(db, 800).await;
    let (_, retries) = shipped_retries();
    let kills = retries.min(4);
    let attempt = |index: u32, _attempt: u32| pod("adopt-instruments", "5b9e1f7c", index, 2);
    let status = killed_and_retried_at_once(db, &host, attempt, kills).await;
    assert_eq!(status.scanned(), ids.len() as u64, "each document once");
}

/// Two Jobs never take parts from each other: with Job `adopt-1`'s pod for index 1 killed
/// while it holds its part under a long lease, a pod of Job `adopt` for index 1 (whose host
/// name `adopt-1` would parse as Job `adopt-1`'s), one of Job `adopt-2`, and one of a Job
/// `adopt-1` created again (another uid) each find the part held, and leave it; a
/// replacement pod of `adopt-1` itself takes it over at once and finishes it.
#[tokio::test]
async fn a_pod_of_another_job_never_takes_a_part_over() {
    let test = test_db("job-pod-other-job").await;
    let db = &test.db;
    let host = test.emulator.host().to_owned();
    let ids = legacy(db, 400).await;
    let long = |mut variables: Vec<(&'static str, String)>| {
        variables.push(("TRACKED_LEASE_MS", LONG_LEASE_MS.into()));
        variables.push(("TRACKED_HEARTBEAT_MS", "100".into()));
        variables
    };
    let (_zero, zero) = task(db, &host, &long(pod("adopt-1", "u1", 0, 2)), 20);
    let mut holder = task(db, &host, &long(pod("adopt-1", "u1", 1, 2)), 20);
    until(db, "part 1 is held with a checkpoint", |status| {
        status.parts[1].attempt == 1 && status.parts[1].scanned > 0
    })
    .await;
    holder.0.start_kill().unwrap();
    holder.0.wait().await.unwrap();
    for (job, uid) in [("adopt", "u0"), ("adopt-2", "u2"), ("adopt-1", "u9")] {
        let mut variables = long(pod(job, uid, 1, 2));
        variables.push(("TRACKED_LEAVE_IF_HELD", "1".into()));
        let (_other, other) = task(db, &host, &variables, 0);
        assert_eq!(last_line(other).await, "held", "a pod of {job} ({uid})");
    }
    let status = JobStatus::read(db, JOB).await.unwrap();
    assert_eq!(status.parts[1].attempt, 1, "no other Job took part 1");
    let (_replacement, replacement) = task(db, &host, &long(pod("adopt-1", "u1", 1, 2)), 0);
    assert!(last_line(replacement).await.starts_with("finished "));
    assert!(last_line(zero).await.starts_with("finished "));
    let status = until(db, "the job closes", JobStatus::is_done).await;
    assert_eq!(status.parts[1].attempt, 2);
    assert_eq!(status.scanned(), ids.len() as u64, "each document once");
}

/// The task that claimed the job's closing step is killed in the middle of it; the engine's
/// next attempt of that task finds its part done and takes the closing over at once, so the
/// job ends closed (where it used to end with every task successful and nobody closing).
#[tokio::test]
async fn a_task_killed_in_the_closing_step_and_retried_closes_the_job() {
    let test = test_db("job-closing-retries").await;
    let db = &test.db;
    let host = test.emulator.host().to_owned();
    legacy(db, 1_200).await;
    let attempt = |index: u32, attempt: u32| {
        let mut variables = cloud_run(index, 2);
        variables.push(("CLOUD_RUN_EXECUTION", "adopt-c4l0s".into()));
        variables.push(("CLOUD_RUN_TASK_ATTEMPT", attempt.to_string()));
        variables.push(("TRACKED_LEASE_MS", LONG_LEASE_MS.into()));
        variables.push(("TRACKED_HEARTBEAT_MS", "100".into()));
        variables
    };
    let mut tasks = vec![
        task(db, &host, &attempt(0, 0), 0),
        task(db, &host, &attempt(1, 0), 0),
    ];
    // The closing step is claimed (its census reads the collection ten documents a page).
    let status = until(db, "the closing step is claimed", |status| {
        status
            .closing
            .as_ref()
            .is_some_and(|closing| closing.outstanding.is_none())
    })
    .await;
    let closer = status
        .closing
        .unwrap()
        .claimed_by
        .expect("claimed by a part's task");
    let mut killed = tasks.remove(closer as usize);
    killed.0.start_kill().unwrap();
    killed.0.wait().await.unwrap();
    let (_retried, retried) = task(db, &host, &attempt(closer, 1), 0);
    // Bounded: an attempt that waited out the killed one's ten-minute lease would hang here.
    let ended = tokio::time::timeout(Duration::from_secs(60), last_line(retried)).await;
    assert_eq!(
        ended.as_deref(),
        Ok("already-done"),
        "the retried task closes the job"
    );
    for (_, lines) in tasks {
        assert!(last_line(lines).await.starts_with("finished "));
    }
    let status = JobStatus::read(db, JOB).await.unwrap();
    assert!(status.is_done(), "{status:?}");
    let closing = status.closing.unwrap();
    assert_eq!((closing.runs, closing.outstanding), (1, Some(0)));
}
