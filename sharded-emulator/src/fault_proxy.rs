//! A TCP proxy that breaks connections on purpose (feature `emulator`): put it between a
//! client and the emulator to test that a job survives dropped connections and slow bytes.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy does to the bytes it forwards. Every decision comes from a random
/// generator seeded with `seed` and the connection's number, so a run can be repeated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Faults {
    /// The seed of every decision.
    pub seed: u64,
    /// The chance, for each chunk of bytes forwarded either way, that the connection is
    /// dropped instead (both directions closed at once, mid-request or mid-response).
    pub drop_chance: f64,
    /// The chance, for each chunk of bytes coming back from the server, that the connection
    /// is dropped instead: the server has done what was asked, and the answer is lost.
    pub lost_answer_chance: f64,
    /// The chance that a chunk is held back before it is forwarded.
    pub delay_chance: f64,
    /// The longest a chunk is held back.
    pub max_delay: Duration,
    /// The chance, for each chunk of bytes going to the server, that the client's side of
    /// the connection is closed at once and the chunk reaches the server only `late_by`
    /// later: a request whose connection broke, applied by the server after the client gave
    /// up on it (and perhaps after its retry and later writes).
    pub late_chance: f64,
    /// How late such a chunk reaches the server.
    pub late_by: Duration,
}

impl Faults {
    /// No faults: the proxy forwards every byte at once.
    pub const NONE: Faults = Faults {
        seed: 0,
        drop_chance: 0.0,
        lost_answer_chance: 0.0,
        delay_chance: 0.0,
        max_delay: Duration::ZERO,
        late_chance: 0.0,
        late_by: Duration::ZERO,
    };
}

/// A proxy on a loopback port of its own, forwarding to `upstream` with [`Faults`]. Dropping
/// it stops it and closes every connection through it.
#[derive(Debug)]
pub struct FaultProxy {
    address: SocketAddr,
    counters: Arc<Counters>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Debug, Default)]
struct Counters {
    connections: AtomicU64,
    dropped: AtomicU64,
    delayed: AtomicU64,
    /// Chunks that reached the server after the client's side was closed.
    late: AtomicU64,
    /// Bytes forwarded from the server to the client.
    from_server: AtomicU64,
    /// While true, nothing from the server is forwarded (held until it is false again): a
    /// connection that stays open but says nothing.
    stalled: AtomicBool,
    /// While false, the proxy forwards faithfully (to read the result of a test cleanly).
    paused: AtomicBool,
    /// Connections numbered below this forward nothing more, either way, and stay open: a
    /// peer gone without closing (a NAT or load balancer that dropped its state).
    dead_below: AtomicU64,
    /// Every connection goes dead that long after it opened, in milliseconds (0: never).
    silent_after_ms: AtomicU64,
    /// Faults aimed at requests by what they hold.
    aimed: Mutex<Vec<Aimed>>,
}

/// What happens to a request aimed at with [`FaultProxy::aim`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestFault {
    /// Its connection is closed before the request reaches the server: nothing is applied.
    Dropped,
    /// The request reaches the server, whose answer is held back and then lost with the
    /// connection (closed 500 ms later): it is applied, and its client never learns it.
    AnswerLost,
}

#[derive(Debug)]
struct Aimed {
    pattern: Vec<u8>,
    /// Matching requests still to let through before the fault applies.
    skip: u32,
    /// Matching requests the fault still applies to.
    times: u32,
    fault: RequestFault,
}

impl FaultProxy {
    /// Starts a proxy to `upstream` (`host:port`).
    pub async fn start(upstream: &str, faults: Faults) -> std::io::Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let counters = Arc::new(Counters::default());
        let upstream = upstream.to_owned();
        let task = tokio::spawn({
            let counters = counters.clone();
            async move {
                // Owned by this task: aborting it aborts every connection's task too.
                let mut connections = tokio::task::JoinSet::new();
                while let Ok((client, _)) = listener.accept().await {
                    while connections.try_join_next().is_some() {}
                    let n = counters.connections.fetch_add(1, Ordering::Relaxed);
                    let rng = StdRng::seed_from_u64(
                        faults
                            .seed
                            .wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                    );
                    connections.spawn(forward(
                        client,
                        upstream.clone(),
                        faults,
                        rng,
                        counters.clone(),
                        n,
                    ));
                }
            }
        });
        Ok(FaultProxy {
            address,
            counters,
            task,
        })
    }

    /// `host:port` to connect to instead of the upstream.
    pub fn host(&self) -> String {
        self.address.to_string()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.counters.connections.load(Ordering::Relaxed)
    }

    /// Connections dropped on purpose so far.
    pub fn dropped(&self) -> u64 {
        self.counters.dropped.load(Ordering::Relaxed)
    }

    /// Chunks held back so far.
    pub fn delayed(&self) -> u64 {
        self.counters.delayed.load(Ordering::Relaxed)
    }

    /// Chunks that reached the server after their client's connection was closed.
    pub fn late(&self) -> u64 {
        self.counters.late.load(Ordering::Relaxed)
    }

    /// Bytes forwarded from the server to clients so far: what a client was sent.
    pub fn bytes_from_server(&self) -> u64 {
        self.counters.from_server.load(Ordering::Relaxed)
    }

    /// Holds (`true`) or releases (`false`) everything the server sends, on every connection:
    /// while held, connections stay open and silent, as behind a network that drops packets.
    pub fn set_stalled(&self, stalled: bool) {
        self.counters.stalled.store(stalled, Ordering::Relaxed);
    }

    /// Every connection open now goes dead for good: it stays open, and what either side
    /// sends is dropped, as when a NAT or a load balancer between them drops its state.
    /// Connections made afterwards work.
    pub fn kill_open_connections_silently(&self) {
        let open = self.counters.connections.load(Ordering::Relaxed);
        self.counters.dead_below.store(open, Ordering::Relaxed);
    }

    /// Every connection, open or to come, goes dead (as
    /// [`kill_open_connections_silently`](Self::kill_open_connections_silently) makes it)
    /// once it has been open for `after`; `None` stops it for connections made afterwards.
    /// A client that opens a fresh connection each time one falls silent gets through,
    /// `after` at a time.
    pub fn set_silent_after(&self, after: Option<Duration>) {
        let ms = after.map_or(0, |after| {
            after.as_millis().clamp(1, u128::from(u64::MAX)) as u64
        });
        self.counters.silent_after_ms.store(ms, Ordering::Relaxed);
    }

    /// Aims `fault` at requests whose bytes hold `pattern` (a document's id, say): the first
    /// `skip` of them pass, the `times` after them meet the fault, and later ones pass again.
    /// A request is matched within one chunk read from its client (gRPC requests of a few
    /// kilobytes arrive whole). Faults aimed earlier are matched first.
    pub fn aim(&self, pattern: impl Into<Vec<u8>>, skip: u32, times: u32, fault: RequestFault) {
        self.counters
            .aimed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Aimed {
                pattern: pattern.into(),
                skip,
                times,
                fault,
            });
    }

    /// Stops (`false`) or resumes (`true`) injecting faults; connections stay up.
    pub fn set_faults(&self, on: bool) {
        self.counters.paused.store(!on, Ordering::Relaxed);
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(
    client: TcpStream,
    upstream: String,
    faults: Faults,
    mut rng: StdRng,
    counters: Arc<Counters>,
    number: u64,
) {
    let Ok(server) = TcpStream::connect(&upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let mut up = [0u8; 16 * 1024];
    let mut down = [0u8; 16 * 1024];
    let opened = tokio::time::Instant::now();
    let silent_after = counters.silent_after_ms.load(Ordering::Relaxed);
    // One loop for both directions, so one generator decides every fault in order.
    loop {
        let (n, to_server) = tokio::select! {
            read = client_read.read(&mut up) => (read, true),
            read = server_read.read(&mut down) => (read, false),
        };
        let n = match n {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if number < counters.dead_below.load(Ordering::Relaxed)
            || (silent_after > 0 && opened.elapsed() >= Duration::from_millis(silent_after))
        {
            continue;
        }
        if to_server && let Some(fault) = aimed_at(&counters, &up[..n]) {
            counters.dropped.fetch_add(1, Ordering::Relaxed);
            if fault == RequestFault::AnswerLost {
                let _ = server_write.write_all(&up[..n]).await;
                // Whatever the server answers in the next 500 ms is swallowed; then the
                // connection closes, both ways.
                let _ = tokio::time::timeout(Duration::from_millis(500), async {
                    while matches!(server_read.read(&mut down).await, Ok(read) if read > 0) {}
                })
                .await;
            }
            return;
        }
        let faulty = !counters.paused.load(Ordering::Relaxed);
        let drop_chance = if to_server {
            faults.drop_chance
        } else {
            1.0 - (1.0 - faults.drop_chance) * (1.0 - faults.lost_answer_chance)
        };
        if faulty && rng.random_bool(drop_chance.clamp(0.0, 1.0)) {
            counters.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if faulty && to_server && rng.random_bool(faults.late_chance.clamp(0.0, 1.0)) {
            counters.late.fetch_add(1, Ordering::Relaxed);
            drop((client_read, client_write));
            tokio::time::sleep(faults.late_by).await;
            let _ = server_write.write_all(&up[..n]).await;
            // The server's side stays open a while, so that what it was sent is not cancelled
            // by the connection closing first.
            let _ = tokio::time::timeout(Duration::from_secs(2), async {
                while matches!(server_read.read(&mut down).await, Ok(read) if read > 0) {}
            })
            .await;
            return;
        }
        if faulty
            && rng.random_bool(faults.delay_chance.clamp(0.0, 1.0))
            && !faults.max_delay.is_zero()
        {
            counters.delayed.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(rng.random_range(Duration::ZERO..faults.max_delay)).await;
        }
        let written = if to_server {
            server_write.write_all(&up[..n]).await
        } else {
            while counters.stalled.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            counters.from_server.fetch_add(n as u64, Ordering::Relaxed);
            client_write.write_all(&down[..n]).await
        };
        if written.is_err() {
            return;
        }
    }
}

/// The fault aimed at a request whose bytes are `chunk`, if one applies to it now.
fn aimed_at(counters: &Counters, chunk: &[u8]) -> Option<RequestFault> {
    let mut aimed = counters
        .aimed
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let rule = aimed.iter_mut().find(|rule| {
        rule.times > 0
            && !rule.pattern.is_empty()
            && chunk
                .windows(rule.pattern.len())
                .any(|window| window == rule.pattern.as_slice())
    })?;
    if rule.skip > 0 {
        rule.skip -= 1;
        return None;
    }
    rule.times -= 1;
    Some(rule.fault)
}
