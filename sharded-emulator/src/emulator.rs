//! The Cloud Firestore emulator, started for tests and examples (feature `emulator`).

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use firestore::gcloud_sdk::google_cloud_auth::credentials::{
    CacheableResource, Credentials, CredentialsProvider, EntityTag,
};
use firestore::gcloud_sdk::google_cloud_auth::errors::CredentialsError;
use firestore::{FirestoreDb, FirestoreDbOptions};

/// The environment variable that points clients at a running emulator (`host:port`).
pub const EMULATOR_HOST_ENV: &str = "FIRESTORE_EMULATOR_HOST";
/// The environment variable that points Datastore clients at a running emulator in Datastore
/// mode (`host:port`), as Google's client libraries read it.
pub const DATASTORE_EMULATOR_HOST_ENV: &str = "DATASTORE_EMULATOR_HOST";
/// Set to the emulator's jar to use that one instead of looking for the Google Cloud SDK's.
pub const EMULATOR_JAR_ENV: &str = "SHARDED_FIRESTORE_EMULATOR_JAR";
/// The default JVM heap cap for a started emulator: without one the JVM takes a quarter of RAM,
/// and the emulator grows to about 1 GB under load. Enough for tests; heavier loads (the
/// benchmarks) pass a larger one to [`Emulator::start_with_heap`].
pub const EMULATOR_HEAP: &str = "256m";

/// What the SDK's `cloud_firestore_emulator` script runs; run directly so that one PID owns it.
const EMULATOR_MAIN_CLASS: &str = "com.google.cloud.datastore.emulator.firestore.CloudFirestore";
const JAR_IN_SDK: &str = "platform/cloud-firestore-emulator/cloud-firestore-emulator.jar";
const SDK_ROOTS: &[&str] = &[
    "/usr/lib/google-cloud-sdk",
    "/usr/share/google-cloud-sdk",
    "/opt/google-cloud-sdk",
];
const STARTUP_TIMEOUT: Duration = Duration::from_secs(90);
/// What the emulator logs once it listens on its port; before that line, whatever answers on
/// the port may be another process that took it first.
const READY_LINE: &str = "Dev App Server is now running";
/// What the JVM logs when its port is held by another process.
const BIND_FAILURE: &str = "Address already in use";
/// How many ports a start tries before giving up on bind failures.
const START_ATTEMPTS: usize = 4;

/// Runs the JVM (`"$@"`) under a shell that prints its PID and kills it once its standard
/// input, a pipe from this process, closes: when the emulator is stopped, and also when this
/// process dies, SIGKILL included, since the kernel then closes the pipe; then it removes the
/// log, which is read first if start-up fails. The shell exits when the JVM does.
/// (A background job's standard input is /dev/null unless redirected, hence fd 3.)
const WATCHDOG: &str = r#"exec 3<&0
"$@" </dev/null >>"$SHARDED_EMULATOR_LOG" 2>&1 &
jvm=$!
echo "$jvm"
{ cat <&3 >/dev/null; kill -KILL "$jvm" 2>/dev/null; rm -f "$SHARDED_EMULATOR_LOG"; } &
exec 3<&-
wait "$jvm""#;

/// Why the emulator could not be had.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmulatorError {
    #[error(
        "no Cloud Firestore emulator found (looked for ${EMULATOR_JAR_ENV}, `gcloud`'s SDK root and {SDK_ROOTS:?}).\n\
         Install it with `apt-get install google-cloud-cli-firestore-emulator openjdk-17-jre-headless` \
         (or `gcloud components install cloud-firestore-emulator`), or point ${EMULATOR_HOST_ENV} at a running one"
    )]
    /// Neither a running emulator nor an installed one was found.
    NotInstalled,
    #[error("could not start the emulator: {0}")]
    /// The JVM could not be started.
    Spawn(#[source] std::io::Error),
    #[error("the emulator exited during start-up ({status}); its log:\n{log}")]
    /// The emulator stopped before it answered.
    Exited {
        /// How it exited.
        status: std::process::ExitStatus,
        /// What it printed.
        log: String,
    },
    #[error("the emulator did not answer within {0:?}; its log:\n{1}")]
    /// The emulator did not answer in time (the duration, and what it printed).
    Timeout(Duration, String),
    #[error("could not connect to the emulator: {0}")]
    /// The client could not be built.
    Connect(#[from] firestore::errors::FirestoreError),
    #[error("the shared emulator could not be started: {0}")]
    /// [`Emulator::shared`] failed to start the emulator, now or on an earlier call.
    Shared(String),
    #[error("the emulator did not clear project `{project}`: {reason}")]
    /// [`Emulator::clear`] failed.
    Clear {
        /// The project.
        project: String,
        /// What went wrong.
        reason: String,
    },
    #[error("the emulator did not load the security rules of project `{project}`: {reason}")]
    /// [`Emulator::load_rules`] failed: the rules do not compile (the emulator's message
    /// says where), or the emulator did not answer.
    Rules {
        /// The project.
        project: String,
        /// What went wrong.
        reason: String,
    },
}

/// A Cloud Firestore emulator this process uses: the one `FIRESTORE_EMULATOR_HOST` names, or
/// one it started on a free loopback port. A started one is stopped when dropped, and cannot
/// outlive this process even if it is killed: its JVM runs under a watchdog that ends it
/// when this process's end of a pipe closes. It exits on running out of memory rather than
/// thrash, and logs to a file of its own, shown when start-up fails.
#[derive(Debug)]
pub struct Emulator {
    host: String,
    mode: DatabaseMode,
    /// The watchdog shell, the JVM's parent.
    watchdog: Option<Child>,
    /// Held open while the emulator should run; closing it stops the JVM.
    lifeline: Option<ChildStdin>,
    jvm: Option<u32>,
    log: Option<PathBuf>,
}

/// Which API a database of the emulator serves: Firestore's (Native mode), or Datastore's
/// (Firestore in Datastore mode, `--database-mode=datastore-mode`), whose databases refuse
/// Firestore calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DatabaseMode {
    /// Firestore in Native mode, the emulator's default.
    Native,
    /// Firestore in Datastore mode.
    Datastore,
}

impl DatabaseMode {
    /// The variable that names a running emulator of this mode.
    fn host_env(self) -> &'static str {
        match self {
            DatabaseMode::Native => EMULATOR_HOST_ENV,
            DatabaseMode::Datastore => DATASTORE_EMULATOR_HOST_ENV,
        }
    }
}

impl Emulator {
    /// The emulator of `FIRESTORE_EMULATOR_HOST` when set, else a new one with a
    /// [`EMULATOR_HEAP`] heap; returns once it answers Firestore calls.
    pub async fn start() -> Result<Emulator, EmulatorError> {
        Self::start_with_heap(EMULATOR_HEAP).await
    }

    /// An emulator in Datastore mode: the one `DATASTORE_EMULATOR_HOST` names when set, else
    /// a new one started with `--database-mode=datastore-mode` and a [`EMULATOR_HEAP`] heap;
    /// returns once it answers Datastore calls. Reach it with a Datastore client at
    /// [`host`](Self::host); its Firestore API refuses every call.
    pub async fn start_datastore_mode() -> Result<Emulator, EmulatorError> {
        Self::start_in(DatabaseMode::Datastore, EMULATOR_HEAP).await
    }

    /// Like [`start`](Self::start), with the JVM's maximum heap (`-Xmx`), e.g. `"1g"`, for a
    /// started emulator.
    pub async fn start_with_heap(max_heap: &str) -> Result<Emulator, EmulatorError> {
        Self::start_in(DatabaseMode::Native, max_heap).await
    }

    async fn start_in(mode: DatabaseMode, max_heap: &str) -> Result<Emulator, EmulatorError> {
        if let Some(host) = std::env::var(mode.host_env())
            .ok()
            .filter(|h| !h.is_empty())
        {
            let mut emulator = Emulator {
                host,
                mode,
                watchdog: None,
                lifeline: None,
                jvm: None,
                log: None,
            };
            emulator.wait_until_ready().await?;
            return Ok(emulator);
        }
        // The port is free when chosen but not held until the JVM binds it, and the JVM's own
        // WebSocket server binds an ephemeral port first, which can be that one: seen once in
        // about ten CI runs. A bind failure is retried on another port; any other failure is not.
        let mut ports = Vec::with_capacity(START_ATTEMPTS);
        for _ in 0..START_ATTEMPTS {
            ports.push(free_port().map_err(EmulatorError::Spawn)?);
        }
        Self::first_free_in(mode, ports, max_heap).await
    }

    /// Starts an emulator on the first of `ports` it can bind: a port another process holds
    /// is skipped, any other failure returned. Fails with the last port's error if none binds.
    #[doc(hidden)]
    pub async fn start_on_first_free(
        ports: impl IntoIterator<Item = u16>,
        max_heap: &str,
    ) -> Result<Emulator, EmulatorError> {
        Self::first_free_in(DatabaseMode::Native, ports, max_heap).await
    }

    async fn first_free_in(
        mode: DatabaseMode,
        ports: impl IntoIterator<Item = u16>,
        max_heap: &str,
    ) -> Result<Emulator, EmulatorError> {
        let mut last = None;
        for port in ports {
            match Self::start_on_in(mode, port, max_heap).await {
                Err(EmulatorError::Exited { status, log }) if log.contains(BIND_FAILURE) => {
                    last = Some(EmulatorError::Exited { status, log });
                }
                started => return started,
            }
        }
        Err(last.unwrap_or_else(|| {
            EmulatorError::Spawn(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "no port to start the emulator on",
            ))
        }))
    }

    /// The emulator every test of this process shares, started on first use (or the one
    /// `FIRESTORE_EMULATOR_HOST` names) and never stopped while the process runs; its
    /// watchdog ends it when the process exits, however it exits. Started on a thread of its
    /// own, so each test may run its own runtime (as `#[tokio::test]` does). A failed start
    /// fails every later call with the same reason, without starting again.
    ///
    /// Give each test a project of its own ([`project`](Self::project)) and the tests of one
    /// binary run in parallel on one JVM; or [`clear`](Self::clear) a project between tests.
    pub fn shared() -> Result<&'static Emulator, EmulatorError> {
        static SHARED: std::sync::OnceLock<Result<Emulator, String>> = std::sync::OnceLock::new();
        Self::shared_in(&SHARED, DatabaseMode::Native)
    }

    /// Like [`shared`](Self::shared), an emulator in Datastore mode
    /// ([`start_datastore_mode`](Self::start_datastore_mode)) every test of this process
    /// shares; give each test a project of its own.
    pub fn shared_datastore_mode() -> Result<&'static Emulator, EmulatorError> {
        static SHARED: std::sync::OnceLock<Result<Emulator, String>> = std::sync::OnceLock::new();
        Self::shared_in(&SHARED, DatabaseMode::Datastore)
    }

    fn shared_in(
        shared: &'static std::sync::OnceLock<Result<Emulator, String>>,
        mode: DatabaseMode,
    ) -> Result<&'static Emulator, EmulatorError> {
        let started = shared.get_or_init(|| {
            std::thread::spawn(move || {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|error| error.to_string())?
                    .block_on(Emulator::start_in(mode, EMULATOR_HEAP))
                    .map_err(|error| error.to_string())
            })
            .join()
            .unwrap_or_else(|_| Err("the start-up thread panicked".into()))
        });
        started
            .as_ref()
            .map_err(|reason| EmulatorError::Shared(reason.clone()))
    }

    /// A client of a new project, `{name}-{random}`, that no other test uses: the isolation
    /// of a fresh emulator at the cost of none.
    pub async fn project(&self, name: &str) -> Result<FirestoreDb, EmulatorError> {
        self.db(&format!("{name}-{:08x}", rand::random::<u32>()))
            .await
    }

    /// Deletes every document of `project`'s default database (the emulator's own reset,
    /// `DELETE /emulator/v1/projects/{project}/databases/(default)/documents`), so a test can
    /// start from nothing on a project it reuses.
    pub async fn clear(&self, project_id: &str) -> Result<(), EmulatorError> {
        let fail = |reason: String| EmulatorError::Clear {
            project: project_id.to_owned(),
            reason,
        };
        check_project_id(project_id).map_err(fail)?;
        let path = format!("/emulator/v1/projects/{project_id}/databases/(default)/documents");
        match self.request("DELETE", &path, "").await.map_err(fail)? {
            (200, _) => Ok(()),
            (status, body) => Err(fail(format!("it answered {status}: {body}"))),
        }
    }

    /// Makes `rules` (the text of a `firestore.rules` file) the security rules of `project`,
    /// as `firebase deploy --only firestore:rules` would: from then on the emulator enforces
    /// them on that project's clients that are not admins (the Firebase JS SDK, mobile
    /// SDKs), while server SDKs such as this crate's clients bypass them, as in production.
    /// Other projects keep theirs (none: every request allowed). Rules that do not compile
    /// are an error with the emulator's message, and the project keeps its earlier rules.
    pub async fn load_rules(&self, project_id: &str, rules: &str) -> Result<(), EmulatorError> {
        let fail = |reason: String| EmulatorError::Rules {
            project: project_id.to_owned(),
            reason,
        };
        check_project_id(project_id).map_err(fail)?;
        let body = format!(
            "{{\"rules\":{{\"files\":[{{\"name\":\"firestore.rules\",\"content\":{}}}]}}}}",
            json_string(rules)
        );
        let path = format!("/emulator/v1/projects/{project_id}:securityRules");
        match self.request("PUT", &path, &body).await.map_err(fail)? {
            (200, _) => Ok(()),
            (status, body) => Err(fail(format!("it answered {status}: {body}"))),
        }
    }

    /// One request to the emulator's REST interface: its status and body. The emulator keeps
    /// the connection open after its answer whatever the request says, so the body is read
    /// by its length.
    async fn request(&self, method: &str, path: &str, body: &str) -> Result<(u16, String), String> {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let exchange = async {
            let mut stream = tokio::net::TcpStream::connect(&self.host).await?;
            let request = format!(
                "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                self.host,
                body.len()
            );
            stream.write_all(request.as_bytes()).await?;
            let mut answer = Vec::new();
            loop {
                if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&answer[..end]).into_owned();
                    let length = head.lines().find_map(|line| {
                        let (name, value) = line.split_once(':')?;
                        name.eq_ignore_ascii_case("content-length")
                            .then(|| value.trim().parse::<usize>().ok())?
                    });
                    let chunked = head
                        .to_ascii_lowercase()
                        .contains("transfer-encoding: chunked");
                    let body = &answer[end + 4..];
                    let complete = match length {
                        Some(length) => body.len() >= length,
                        None if chunked => body.ends_with(b"0\r\n\r\n"),
                        None => true,
                    };
                    if complete {
                        let status = head
                            .split_whitespace()
                            .nth(1)
                            .and_then(|status| status.parse().ok())
                            .unwrap_or(0);
                        return Ok((status, String::from_utf8_lossy(body).trim().to_owned()));
                    }
                }
                let mut chunk = [0u8; 4096];
                match stream.read(&mut chunk).await? {
                    0 => {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::UnexpectedEof,
                            "the emulator closed the connection before it answered",
                        ));
                    }
                    n => answer.extend_from_slice(&chunk[..n]),
                }
            }
        };
        tokio::time::timeout(Duration::from_secs(30), exchange)
            .await
            .map_err(|_| "no answer within 30 s".to_owned())?
            .map_err(|error: std::io::Error| error.to_string())
    }

    /// Starts an emulator on `port`; fails, rather than use it, if another process holds it.
    #[doc(hidden)]
    pub async fn start_on(port: u16, max_heap: &str) -> Result<Emulator, EmulatorError> {
        Self::start_on_in(DatabaseMode::Native, port, max_heap).await
    }

    async fn start_on_in(
        mode: DatabaseMode,
        port: u16,
        max_heap: &str,
    ) -> Result<Emulator, EmulatorError> {
        // Native mode is the emulator's default; its flag is left out as before.
        let mode_flag = match mode {
            DatabaseMode::Native => None,
            DatabaseMode::Datastore => Some("--database-mode=datastore-mode"),
        };
        let jar = find_jar().ok_or(EmulatorError::NotInstalled)?;
        let log = std::env::temp_dir().join(format!(
            "sharded-firestore-emulator-{}-{port}.log",
            std::process::id()
        ));
        std::fs::File::create(&log).map_err(EmulatorError::Spawn)?;
        let mut watchdog = Command::new("bash")
            .arg("-c")
            .arg(WATCHDOG)
            .arg("sharded-emulator-watchdog")
            .arg(java())
            .arg(format!("-Xmx{max_heap}"))
            .arg("-XX:+ExitOnOutOfMemoryError")
            .arg("-Duser.language=en")
            .arg("-cp")
            .arg(&jar)
            .arg(EMULATOR_MAIN_CLASS)
            .arg("start")
            .arg("--host=127.0.0.1")
            .arg(format!("--port={port}"))
            .args(mode_flag)
            .env("SHARDED_EMULATOR_LOG", &log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(EmulatorError::Spawn)?;
        let mut pid = String::new();
        if let Some(stdout) = watchdog.stdout.take() {
            std::io::BufReader::new(stdout)
                .read_line(&mut pid)
                .map_err(EmulatorError::Spawn)?;
        }
        let mut emulator = Emulator {
            host: format!("127.0.0.1:{port}"),
            mode,
            lifeline: watchdog.stdin.take(),
            watchdog: Some(watchdog),
            jvm: pid.trim().parse().ok(),
            log: Some(log),
        };
        emulator.wait_until_ready().await?;
        Ok(emulator)
    }

    /// `host:port` of the emulator.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Which API the emulator's databases serve.
    pub fn mode(&self) -> DatabaseMode {
        self.mode
    }

    /// The emulator's (the JVM's) process id, when this process started it.
    pub fn pid(&self) -> Option<u32> {
        self.jvm
    }

    /// A client of this emulator for `project_id` (any id works; each is its own database).
    pub async fn db(&self, project_id: &str) -> Result<FirestoreDb, EmulatorError> {
        connect(&self.host, project_id).await
    }

    /// A client of this emulator for the named database `database_id` of `project_id`
    /// (`(default)` is the one [`db`](Self::db) reaches).
    pub async fn named_db(
        &self,
        project_id: &str,
        database_id: &str,
    ) -> Result<FirestoreDb, EmulatorError> {
        connect_to_database(&self.host, project_id, database_id).await
    }

    /// Stops the emulator if this process started it, and waits until it has exited. Called
    /// on drop.
    pub fn stop(&mut self) {
        // Closing the lifeline makes the watchdog kill the JVM; the watchdog exits with it.
        drop(self.lifeline.take());
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = watchdog.wait();
        }
        if let Some(log) = self.log.take() {
            let _ = std::fs::remove_file(log);
        }
    }

    async fn wait_until_ready(&mut self) -> Result<(), EmulatorError> {
        let started = Instant::now();
        let db = loop {
            if let Some(error) = self.exited() {
                return Err(error);
            }
            // A started emulator is ready once it says so: a listener before that may be
            // another process's, on a port taken between choosing it and the JVM binding it
            // (the JVM then exits, and `exited` reports it with its log).
            let ours = self.log.is_none() || self.log_text().contains(READY_LINE);
            if ours && tokio::net::TcpStream::connect(&self.host).await.is_ok() {
                if self.mode == DatabaseMode::Datastore {
                    // Firestore calls are refused in Datastore mode: a Datastore query answers.
                    let query = "{\"query\":{\"kind\":[{\"name\":\"probe\"}]}}";
                    let path = "/v1/projects/sharded-emulator-probe:runQuery";
                    if let Ok((200, _)) = self.request("POST", path, query).await {
                        return Ok(());
                    }
                } else {
                    break self.db("sharded-emulator-probe").await?;
                }
            }
            if started.elapsed() > STARTUP_TIMEOUT {
                return Err(EmulatorError::Timeout(STARTUP_TIMEOUT, self.log_text()));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        loop {
            let probe = db.fluent().select().by_id_in("probe").one("probe").await;
            match probe {
                Ok(_) => return Ok(()),
                Err(_) if started.elapsed() < STARTUP_TIMEOUT => {
                    if let Some(error) = self.exited() {
                        return Err(error);
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(error) => return Err(EmulatorError::Connect(error)),
            }
        }
    }

    fn exited(&mut self) -> Option<EmulatorError> {
        let status = self.watchdog.as_mut()?.try_wait().ok()??;
        Some(EmulatorError::Exited {
            status,
            log: self.log_text(),
        })
    }

    fn log_text(&self) -> String {
        self.log
            .as_deref()
            .and_then(|log| std::fs::read_to_string(log).ok())
            .unwrap_or_default()
    }
}

/// A client for `project_id` of the emulator at `host` (`host:port`): this process's
/// emulator, or a [`FaultProxy`](crate::fault_proxy::FaultProxy) in front of it.
pub async fn connect(host: &str, project_id: &str) -> Result<FirestoreDb, EmulatorError> {
    connect_to_database(host, project_id, "(default)").await
}

/// [`connect`] to the named database `database_id`.
pub async fn connect_to_database(
    host: &str,
    project_id: &str,
    database_id: &str,
) -> Result<FirestoreDb, EmulatorError> {
    let options = FirestoreDbOptions::new(project_id.to_owned())
        .with_database_id(database_id.to_owned())
        .with_firebase_api_url(format!("http://{host}"));
    let owner = Credentials::from(EmulatorOwner {
        entity_tag: EntityTag::new(),
    });
    Ok(FirestoreDb::with_options_auth(options, owner).await?)
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The emulator's conventional stub token, which it requires for admin calls such as batch
/// writes. Sent without touching `FIRESTORE_EMULATOR_HOST`, which a test process cannot set
/// safely once threads run.
#[derive(Debug)]
struct EmulatorOwner {
    entity_tag: EntityTag,
}

impl CredentialsProvider for EmulatorOwner {
    async fn headers(
        &self,
        extensions: http::Extensions,
    ) -> Result<CacheableResource<http::HeaderMap>, CredentialsError> {
        if extensions.get::<EntityTag>() == Some(&self.entity_tag) {
            return Ok(CacheableResource::NotModified);
        }
        let mut headers = http::HeaderMap::new();
        headers.insert(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_static("Bearer owner"),
        );
        Ok(CacheableResource::New {
            entity_tag: self.entity_tag.clone(),
            data: headers,
        })
    }

    async fn universe_domain(&self) -> Option<String> {
        None
    }
}

fn find_jar() -> Option<PathBuf> {
    if let Some(jar) = std::env::var_os(EMULATOR_JAR_ENV) {
        return Some(PathBuf::from(jar));
    }
    let from_gcloud = Command::new("gcloud")
        .args(["info", "--format=value(installation.sdk_root)"])
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
    from_gcloud
        .into_iter()
        .chain(SDK_ROOTS.iter().map(PathBuf::from))
        .map(|root| root.join(JAR_IN_SDK))
        .find(|jar| jar.is_file())
}

fn java() -> PathBuf {
    std::env::var_os("JAVA_HOME")
        .map(|home| Path::new(&home).join("bin/java"))
        .filter(|java| java.is_file())
        .unwrap_or_else(|| PathBuf::from("java"))
}

fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// A project id the emulator's REST paths take as it is: letters, digits, `-` and `_`.
fn check_project_id(project_id: &str) -> Result<(), String> {
    if project_id.is_empty()
        || !project_id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err("a project id is letters, digits, `-` and `_`".into());
    }
    Ok(())
}

/// `text` as a JSON string.
fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ch if (ch as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", ch as u32)),
            ch => out.push(ch),
        }
    }
    out.push('"');
    out
}
