//! `tabula regionserver`: a regionserver in a process of its own, on the storage it
//! shares with the other servers of the cluster (the data directory), found by the
//! coordinator through etcd.
//!
//! Owns: the order of start-up (register, then open the engine with its commit log
//! under `logs/<name>`, then serve gRPC), the registration heartbeat (a lost
//! registration ends the process at once: the coordinator is moving its tablets and
//! splitting its log), and the orderly stop (flush every tablet, then leave).
//! Must not: decide which tablets it serves (the coordinator assigns them).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tabula_coordinator::lock::{LockError, LockService, LockToken, SessionId};
use tabula_coordinator::SERVERS_PREFIX;
use tabula_regionserver::rpc::{serve_guarded, CallGuard};
use tabula_regionserver::server::server_log_dir_name;
use tabula_regionserver::{RegionServer, RegionServerOptions, RemoteFailure, RsError};
use tabula_storage::Engine;
use tokio::net::TcpListener;

use crate::config::Settings;
use tabula_regionserver::rpc::ClusterTls;

use crate::rpc_security::cluster_tls;
use crate::serve::{engine_options, open_lock_service, ServeError, DEPOSED_EXIT_CODE, LOGS_DIR};

/// The lease of a regionserver's registration: the coordinator notices a dead
/// server this long after its last heartbeat.
const REGISTRATION_TTL: Duration = Duration::from_secs(10);
/// How often the registration is renewed.
const RENEW_EVERY: Duration = Duration::from_millis(2500);
/// A server whose last renewal is older than this refuses every call and exits:
/// its lease may lapse soon after, and then the coordinator splits its log and
/// opens its tablets elsewhere. Well inside the lease, so it is gone first.
const FENCE_AFTER: Duration = Duration::from_secs(6);
/// How long a starting regionserver waits for its name to be free (a previous
/// process's lease lapsing, or the coordinator splitting its old log).
const REGISTRATION_WAIT: Duration = Duration::from_secs(120);

/// The value of a registration file: how to reach the server.
pub fn registration_value(rpc_addr: &str) -> Vec<u8> {
    format!("rpc={rpc_addr}").into_bytes()
}

/// The RPC address in a registration file's value, if it is one (the coordinator
/// holds the same path with another value while it recovers a dead server).
pub fn registered_address(value: &[u8]) -> Option<&str> {
    std::str::from_utf8(value).ok()?.strip_prefix("rpc=")
}

/// A started regionserver process.
pub struct RunningRegionServer {
    pub rpc_addr: SocketAddr,
    pub name: String,
    /// Where `GET /metrics` is served, unless `metrics_listen` is empty.
    pub metrics_addr: Option<SocketAddr>,
    metrics: Option<crate::metrics::http::MetricsServer>,
    listener: TcpListener,
    /// The cluster's mutual TLS on the RPC port, when on.
    tls: Option<ClusterTls>,
    regionserver: Arc<RegionServer>,
    lock: Arc<dyn LockService>,
    session: SessionId,
    stop_background: Arc<AtomicBool>,
    background: Vec<std::thread::JoinHandle<()>>,
    renewed: Arc<Renewal>,
}

/// When the registration was last renewed, for the call guard.
struct Renewal {
    started: Instant,
    /// Milliseconds after `started` of the last successful renewal.
    at_ms: std::sync::atomic::AtomicU64,
}

impl Renewal {
    fn new() -> Self {
        Renewal {
            started: Instant::now(),
            at_ms: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn renewed(&self) {
        self.at_ms.store(self.now_ms(), Ordering::Release);
    }

    /// How long since the last renewal.
    fn age(&self) -> Duration {
        Duration::from_millis(
            self.now_ms()
                .saturating_sub(self.at_ms.load(Ordering::Acquire)),
        )
    }
}

/// Registers under the settings' name, opens the engine and binds the RPC port.
pub async fn start(settings: &Settings) -> Result<RunningRegionServer, ServeError> {
    if settings.etcd_urls().next().is_none() {
        return Err(ServeError::Lock(
            "tabula regionserver needs etcd_endpoints (the cluster's lock service)".into(),
        ));
    }
    let tls = cluster_tls(settings)?;
    let listener = TcpListener::bind(&settings.listen)
        .await
        .map_err(|source| ServeError::Listen {
            addr: settings.listen.clone(),
            source,
        })?;
    let rpc_addr = listener.local_addr().map_err(|source| ServeError::Listen {
        addr: settings.listen.clone(),
        source,
    })?;
    let name = if settings.server_name.is_empty() {
        rpc_addr.to_string()
    } else {
        settings.server_name.clone()
    };
    let metrics_listen = settings.metrics_listen.clone();
    let settings = settings.clone();
    let (lock, session, token, regionserver) = {
        let name = name.clone();
        tokio::task::spawn_blocking(move || register_and_open(&settings, &name, rpc_addr))
            .await
            .map_err(|e| ServeError::Lock(format!("start-up task failed: {e}")))??
    };
    let stop_background = Arc::new(AtomicBool::new(false));
    let renewed = Arc::new(Renewal::new());
    let mut background = Vec::new();
    background.extend(heartbeat(
        Arc::clone(&lock),
        session,
        token,
        Arc::clone(&renewed),
        Arc::clone(&stop_background),
    ));
    background.extend(expire_scanners(
        Arc::clone(&regionserver),
        Arc::clone(&stop_background),
    ));
    let metrics = crate::serve::start_metrics(
        &metrics_listen,
        crate::metrics::Sources {
            regionserver: Some(Arc::clone(&regionserver)),
            ..crate::metrics::Sources::default()
        },
    )
    .await?;
    Ok(RunningRegionServer {
        rpc_addr,
        name,
        metrics_addr: metrics.as_ref().map(|m| m.addr()),
        metrics,
        listener,
        tls,
        regionserver,
        lock,
        session,
        stop_background,
        background,
        renewed,
    })
}

type Registered = (
    Arc<dyn LockService>,
    SessionId,
    LockToken,
    Arc<RegionServer>,
);

/// Takes the registration lock (waiting while a previous process's lease lapses or
/// the coordinator recovers its log), then opens the engine.
fn register_and_open(
    settings: &Settings,
    name: &str,
    rpc_addr: SocketAddr,
) -> Result<Registered, ServeError> {
    let lock_error = |e: LockError| ServeError::Lock(e.to_string());
    let dir = server_log_dir_name(name).map_err(|e| ServeError::Lock(e.to_string()))?;
    let lock = open_lock_service(settings)?;
    let session = lock.create_session(REGISTRATION_TTL).map_err(lock_error)?;
    let path = format!("{SERVERS_PREFIX}{name}");
    let value = registration_value(&rpc_addr.to_string());
    let deadline = Instant::now() + REGISTRATION_WAIT;
    let token = loop {
        if let Some(token) = lock
            .lock(&path, session, &value, REGISTRATION_TTL / 3)
            .map_err(lock_error)?
        {
            break token;
        }
        if Instant::now() >= deadline {
            return Err(ServeError::Lock(format!(
                "the name {name} stayed taken for {REGISTRATION_WAIT:?}"
            )));
        }
        lock.keep_alive(session).map_err(lock_error)?;
    };
    let mut options = engine_options(settings);
    options.log_dir = Some(settings.data_dir.join(LOGS_DIR).join(dir));
    let engine = Arc::new(Engine::open(options)?);
    let regionserver = Arc::new(RegionServer::new(
        engine,
        RegionServerOptions {
            name: name.to_owned(),
            scanner_lease: Duration::from_secs(settings.scanner_lease_secs.max(1)),
            logs_root: Some(settings.data_dir.join(LOGS_DIR)),
            slow_log: settings.slow_log(),
        },
    ));
    tracing::info!(server = name, rpc = %rpc_addr, "registered with the cluster");
    Ok((lock, session, token, regionserver))
}

/// Renews the registration every [`RENEW_EVERY`]; ends the process when it is lost,
/// or when it could not be renewed for [`FENCE_AFTER`] (the lease may lapse next,
/// and the coordinator would split this server's log under it).
fn heartbeat(
    lock: Arc<dyn LockService>,
    session: SessionId,
    token: LockToken,
    renewed: Arc<Renewal>,
    stop: Arc<AtomicBool>,
) -> Option<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("tabula-rs-lease".into())
        .spawn(move || {
            let tick = Duration::from_millis(100);
            let mut waited = Duration::ZERO;
            while !stop.load(Ordering::Acquire) {
                std::thread::sleep(tick);
                waited += tick;
                let stale = renewed.age() > FENCE_AFTER;
                let mut lost = false;
                if waited >= RENEW_EVERY || stale {
                    waited = Duration::ZERO;
                    lost = match lock.keep_alive(session) {
                        Err(LockError::SessionExpired(_)) => true,
                        Err(e) => {
                            tracing::warn!(error = %e, "registration heartbeat failed; retrying");
                            false
                        }
                        Ok(()) => match lock.holds_lock(&token) {
                            Ok(held) => {
                                if held {
                                    renewed.renewed();
                                }
                                !held
                            }
                            Err(_) => false,
                        },
                    };
                }
                if (lost || renewed.age() > FENCE_AFTER) && !stop.load(Ordering::Acquire) {
                    tracing::error!(lost, "exiting: this regionserver's registration was lost or could not be renewed");
                    eprintln!("tabula: exiting: the regionserver's registration was lost");
                    std::process::exit(DEPOSED_EXIT_CODE);
                }
            }
        })
        .ok()
}

fn expire_scanners(
    regionserver: Arc<RegionServer>,
    stop: Arc<AtomicBool>,
) -> Option<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("tabula-scanner-leases".into())
        .spawn(move || {
            while !stop.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(500));
                regionserver.expire_scanners();
            }
        })
        .ok()
}

impl RunningRegionServer {
    /// Serves until `shutdown` completes; then flushes every tablet and leaves the
    /// cluster (the coordinator moves its tablets).
    pub async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send,
    ) -> Result<(), ServeError> {
        let service = Arc::clone(&self.regionserver) as Arc<dyn tabula_regionserver::TabletService>;
        // Between a missed renewal and the exit, refuse everything: the tablets
        // may be opening elsewhere.
        let renewed = Arc::clone(&self.renewed);
        let guard: CallGuard = Arc::new(move || {
            if renewed.age() > FENCE_AFTER {
                return Err(RsError::Remote {
                    kind: RemoteFailure::Other { permanent: false },
                    message: "this regionserver lost its registration and stops".into(),
                });
            }
            Ok(())
        });
        serve_guarded(
            self.listener,
            service,
            Some(guard),
            self.tls.as_ref(),
            shutdown,
        )
        .await
        .map_err(|e| ServeError::Shutdown(format!("the RPC server failed: {e}")))?;
        tracing::info!("RPC stopped; flushing tablets");
        if let Some(metrics) = self.metrics {
            metrics.stop().await;
        }
        self.stop_background.store(true, Ordering::Release);
        for h in self.background {
            let _ = h.join();
        }
        let rs = Arc::clone(&self.regionserver);
        let lock = Arc::clone(&self.lock);
        let session = self.session;
        tokio::task::spawn_blocking(move || {
            let flushed = rs.shutdown();
            // Leave only once everything is flushed: the coordinator then finds
            // nothing in the log to recover.
            if let Err(e) = lock.close_session(session) {
                tracing::warn!(error = %e, "could not end the registration");
            }
            flushed
        })
        .await
        .map_err(|e| ServeError::Shutdown(format!("shutdown task failed: {e}")))?
        .map_err(|e| ServeError::Shutdown(e.to_string()))?;
        tracing::info!("regionserver stopped");
        Ok(())
    }
}
