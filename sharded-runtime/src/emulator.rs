//! The Cloud Firestore emulator, started for tests and examples (feature `emulator`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use firestore::gcloud_sdk::google_cloud_auth::credentials::{
    CacheableResource, Credentials, CredentialsProvider, EntityTag,
};
use firestore::gcloud_sdk::google_cloud_auth::errors::CredentialsError;
use firestore::{FirestoreDb, FirestoreDbOptions};

/// The environment variable that points clients at a running emulator (`host:port`).
pub const EMULATOR_HOST_ENV: &str = "FIRESTORE_EMULATOR_HOST";
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
}

/// A Cloud Firestore emulator this process uses: the one `FIRESTORE_EMULATOR_HOST` names, or
/// one it started on a free loopback port and stops (by PID) when dropped.
#[derive(Debug)]
pub struct Emulator {
    host: String,
    child: Option<Child>,
    log: Option<PathBuf>,
}

impl Emulator {
    /// The emulator of `FIRESTORE_EMULATOR_HOST` when set, else a new one with a
    /// [`EMULATOR_HEAP`] heap; returns once it answers Firestore calls.
    pub async fn start() -> Result<Emulator, EmulatorError> {
        Self::start_with_heap(EMULATOR_HEAP).await
    }

    /// Like [`start`](Self::start), with the JVM's maximum heap (`-Xmx`), e.g. `"1g"`, for a
    /// started emulator.
    pub async fn start_with_heap(max_heap: &str) -> Result<Emulator, EmulatorError> {
        if let Some(host) = std::env::var(EMULATOR_HOST_ENV)
            .ok()
            .filter(|h| !h.is_empty())
        {
            let mut emulator = Emulator {
                host,
                child: None,
                log: None,
            };
            emulator.wait_until_ready().await?;
            return Ok(emulator);
        }
        let jar = find_jar().ok_or(EmulatorError::NotInstalled)?;
        let port = free_port().map_err(EmulatorError::Spawn)?;
        let log = std::env::temp_dir().join(format!("sharded-firestore-emulator-{port}.log"));
        let log_file = std::fs::File::create(&log).map_err(EmulatorError::Spawn)?;
        let child = Command::new(java())
            .arg(format!("-Xmx{max_heap}"))
            .arg("-Duser.language=en")
            .arg("-cp")
            .arg(&jar)
            .arg(EMULATOR_MAIN_CLASS)
            .arg("start")
            .arg("--host=127.0.0.1")
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().map_err(EmulatorError::Spawn)?)
            .stderr(log_file)
            .spawn()
            .map_err(EmulatorError::Spawn)?;
        let mut emulator = Emulator {
            host: format!("127.0.0.1:{port}"),
            child: Some(child),
            log: Some(log),
        };
        emulator.wait_until_ready().await?;
        Ok(emulator)
    }

    /// `host:port` of the emulator.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The emulator's process id, when this process started it.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// A client of this emulator for `project_id` (any id works; each is its own database).
    pub async fn db(&self, project_id: &str) -> Result<FirestoreDb, EmulatorError> {
        let options = FirestoreDbOptions::new(project_id.to_owned())
            .with_firebase_api_url(format!("http://{}", self.host));
        let owner = Credentials::from(EmulatorOwner {
            entity_tag: EntityTag::new(),
        });
        Ok(FirestoreDb::with_options_auth(options, owner).await?)
    }

    /// Stops the emulator if this process started it. Called on drop.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
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
            if tokio::net::TcpStream::connect(&self.host).await.is_ok() {
                break self.db("sharded-emulator-probe").await?;
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
        let status = self.child.as_mut()?.try_wait().ok()??;
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
