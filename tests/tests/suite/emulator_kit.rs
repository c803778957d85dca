//! The emulator kit cannot leak a JVM or talk to a foreign server.

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sharded_emulator::emulator::{EMULATOR_HOST_ENV, Emulator, EmulatorError};

const CHILD_ENV: &str = "SHARDED_KIT_CHILD";

fn alive(pid: u32) -> bool {
    // A zombie is dead but still listed until its parent reaps it.
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.split_whitespace()
            .nth(2)
            .is_none_or(|state| state != "Z")
    })
}

/// Run as a child process by the test below: starts an emulator, says its JVM's PID, and
/// waits to be killed (for at most two minutes).
#[tokio::test]
async fn child_that_holds_an_emulator() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let emulator = Emulator::start().await.unwrap();
    println!("JVM {}", emulator.pid().expect("a started emulator"));
    tokio::time::sleep(Duration::from_secs(120)).await;
}

#[test]
fn a_test_process_killed_by_sigkill_leaves_no_jvm() {
    if std::env::var_os(EMULATOR_HOST_ENV).is_some() {
        eprintln!("skipped: FIRESTORE_EMULATOR_HOST names an emulator this test does not start");
        return;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "emulator_kit::child_that_holds_an_emulator",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let jvm: u32 = stdout
        .lines()
        .map_while(Result::ok)
        .find_map(|line| line.strip_prefix("JVM ").map(|pid| pid.parse().unwrap()))
        .expect("the child started an emulator");
    assert!(alive(jvm), "the JVM runs while its test process does");

    child.kill().unwrap(); // SIGKILL: no destructor, no handler runs in the child.
    child.wait().unwrap();
    let killed = Instant::now();
    while alive(jvm) && killed.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!alive(jvm), "JVM {jvm} outlived its killed test process");
}

#[tokio::test]
async fn a_port_another_process_holds_is_an_error_not_a_foreign_server() {
    if std::env::var_os(EMULATOR_HOST_ENV).is_some() {
        return;
    }
    // Hold a port, as a process that took it after the kit chose it would.
    let foreign = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = foreign.local_addr().unwrap().port();
    let started = Emulator::start_on(port, "256m").await;
    match started {
        Err(EmulatorError::Exited { log, .. }) => {
            assert!(log.contains("Address already in use"), "{log}");
        }
        other => panic!("expected the emulator to fail on a held port, got {other:?}"),
    }
    drop(foreign);
}

#[tokio::test]
async fn a_start_skips_a_port_taken_before_the_jvm_binds_it() {
    if std::env::var_os(EMULATOR_HOST_ENV).is_some() {
        return;
    }
    let foreign = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let held = foreign.local_addr().unwrap().port();
    let free = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let emulator = Emulator::start_on_first_free([held, free], "256m")
        .await
        .expect("the second port binds");
    assert_eq!(emulator.host(), format!("127.0.0.1:{free}"));
    // It answers Firestore calls there; the foreign listener still holds its port.
    let db = emulator.db("skips-a-held-port").await.unwrap();
    let none: Option<serde_json::Value> = db
        .fluent()
        .select()
        .by_id_in("c")
        .obj()
        .one("absent")
        .await
        .unwrap();
    assert!(none.is_none());
    assert_eq!(foreign.local_addr().unwrap().port(), held);

    // Every port held: the last bind failure, not a hang or a foreign server.
    let other = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let ports = [held, other.local_addr().unwrap().port()];
    match Emulator::start_on_first_free(ports, "256m").await {
        Err(EmulatorError::Exited { log, .. }) => {
            assert!(log.contains("Address already in use"), "{log}");
        }
        other => panic!("expected a bind failure, got {other:?}"),
    }
}

#[tokio::test]
async fn stopping_an_emulator_ends_its_jvm() {
    if std::env::var_os(EMULATOR_HOST_ENV).is_some() {
        return;
    }
    let mut emulator = Emulator::start().await.unwrap();
    let jvm = emulator.pid().unwrap();
    assert!(Path::new(&format!("/proc/{jvm}")).exists());
    emulator.stop();
    assert!(!alive(jvm), "stop waits until the JVM is gone");
}

#[tokio::test]
async fn a_stopped_emulator_leaves_no_log_behind() {
    if std::env::var_os(EMULATOR_HOST_ENV).is_some() {
        return;
    }
    let logs = || -> Vec<std::path::PathBuf> {
        let prefix = format!("sharded-firestore-emulator-{}-", std::process::id());
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| {
                path.file_name()
                    .is_some_and(|name| name.to_string_lossy().starts_with(&prefix))
            })
            .collect()
    };
    let mut emulator = Emulator::start().await.unwrap();
    let port = emulator.host().rsplit(':').next().unwrap().to_owned();
    assert!(
        logs()
            .iter()
            .any(|log| log.to_string_lossy().ends_with(&format!("-{port}.log")))
    );
    emulator.stop();
    assert!(
        !logs()
            .iter()
            .any(|log| log.to_string_lossy().ends_with(&format!("-{port}.log")))
    );
}

/// Dropping a fault proxy closes the connections through it, not only its listener.
#[tokio::test]
async fn a_dropped_fault_proxy_closes_its_connections() {
    use sharded_emulator::fault_proxy::{FaultProxy, Faults};
    use tokio::io::AsyncReadExt;
    let upstream = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = FaultProxy::start(&upstream.local_addr().unwrap().to_string(), Faults::NONE)
        .await
        .unwrap();
    let mut client = tokio::net::TcpStream::connect(proxy.host()).await.unwrap();
    let (_server_side, _) = upstream.accept().await.unwrap();
    drop(proxy);
    let mut buffer = [0u8; 8];
    let read = tokio::time::timeout(Duration::from_secs(30), client.read(&mut buffer)).await;
    assert!(
        matches!(read, Ok(Ok(0)) | Ok(Err(_))),
        "the connection outlived the proxy: {read:?}"
    );
}

/// One emulator per test binary, a project per test: projects do not see each other's
/// documents, and clearing one empties it (subcollections too) and leaves the other alone.
#[tokio::test]
async fn the_shared_emulator_gives_each_test_a_project_and_clears_one() {
    let emulator = Emulator::shared().unwrap();
    assert!(
        std::ptr::eq(emulator, Emulator::shared().unwrap()),
        "one per process"
    );
    let (a, b) = (
        emulator.project("kit").await.unwrap(),
        emulator.project("kit").await.unwrap(),
    );
    assert_ne!(a.get_database_path(), b.get_database_path());
    let write = |db: &sharded_runtime::firestore::FirestoreDb, parent: Option<String>, id: &str| {
        let (db, id) = (db.clone(), id.to_owned());
        async move {
            let insert = db.fluent().insert().into("things").document_id(&id);
            let insert = match parent {
                Some(parent) => insert.parent(parent),
                None => insert.parent(db.get_documents_path().clone()),
            };
            insert
                .object(&serde_json::json!({ "n": 1 }))
                .execute::<serde_json::Value>()
                .await
                .unwrap();
        }
    };
    write(&a, None, "x").await;
    let nested = format!("{}/things/x", a.get_documents_path());
    write(&a, Some(nested.clone()), "y").await;
    write(&b, None, "x").await;
    let count = |db: &sharded_runtime::firestore::FirestoreDb| {
        let db = db.clone();
        async move {
            let top = db
                .fluent()
                .select()
                .from("things")
                .query()
                .await
                .unwrap()
                .len();
            let group = db
                .fluent()
                .select()
                .from("things")
                .all_descendants()
                .query()
                .await
                .unwrap()
                .len();
            (top, group)
        }
    };
    assert_eq!(count(&a).await, (1, 2));
    assert_eq!(count(&b).await, (1, 1));
    emulator
        .clear(&sharded_tests::project_id(&a))
        .await
        .unwrap();
    assert_eq!(count(&a).await, (0, 0), "cleared, subcollections too");
    assert_eq!(count(&b).await, (1, 1), "another project kept");
    assert!(matches!(
        emulator.clear("not/a project").await,
        Err(EmulatorError::Clear { .. })
    ));
}
