//! `tabula serve`: the whole system in one process.
//!
//! Owns: starting the components in order (embedded lock service, storage engine,
//! regionserver, coordinator, the Thrift1 and Thrift2 gateways), and the orderly stop:
//! stop accepting, finish in-flight calls, flush every tablet, release the locks.
//! Also the measurement mode [`start_null`]: the same gateways over a
//! [`NullBackend`] and no storage at all.
//! Must not: implement any component's behaviour.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tabula_coordinator::lock::{EmbeddedLockService, EtcdConfig, EtcdLockService, LockService};
use tabula_coordinator::{Coordinator, CoordinatorAddress, CoordinatorOptions, HotSplitRule};
use tabula_regionserver::rpc::tls::error_chain;
use tabula_regionserver::rpc::{ClusterTls, ClusterTlsError};
use tabula_regionserver::server::server_log_dir_name;
use tabula_regionserver::{RegionServer, RegionServerOptions, TabletService};
use tabula_storage::{Engine, EngineOptions};
use tokio::net::TcpListener;

use crate::backend::Backend;
use crate::cluster::ClusterBackend;
use crate::config::Settings;
use crate::metrics::http::MetricsServer;
use crate::metrics::Sources;
use crate::null_backend::NullBackend;
use crate::read_only::ReadOnlyBackend;
use crate::rpc_security::{cluster_tls, etcd_tls, remote_options};
use crate::server::{ServerOptions, ThriftServer, TlsConfig};
use crate::thrift1::coalescer::IncrementCoalescer;
use crate::thrift1::{Thrift1Handler, Thrift1Options};
use crate::thrift2::Thrift2Handler;

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot open the lock service: {0}")]
    Lock(String),
    #[error("cannot open the storage engine: {0}")]
    Storage(#[from] tabula_storage::Error),
    #[error("cannot start the coordinator: {0}")]
    Coordinator(#[from] tabula_coordinator::CoordError),
    #[error("clean shutdown failed: {0}")]
    Shutdown(String),
    #[error("cannot set up TLS: {0}")]
    Tls(#[from] crate::server::TlsError),
    #[error("cannot set up the cluster's TLS: {0}")]
    ClusterTls(#[from] tabula_regionserver::rpc::ClusterTlsError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
}

/// A started system.
pub struct Running {
    pub thrift1_addr: SocketAddr,
    /// Where Thrift2 is served, unless `thrift2_listen` is empty.
    pub thrift2_addr: Option<SocketAddr>,
    /// Where `GET /metrics` is served, unless `metrics_listen` is empty.
    pub metrics_addr: Option<SocketAddr>,
    thrift1: ThriftServer,
    thrift2: Option<ThriftServer>,
    metrics: Option<MetricsServer>,
    /// Thrift1's queued increments, applied before the database stops.
    increments: Option<Arc<IncrementCoalescer>>,
    /// The database behind the gateways; `None` in null-backend mode.
    system: Option<System>,
}

/// Coordinator, regionserver and their background threads.
struct System {
    coordinator: Arc<Coordinator>,
    regionserver: Arc<RegionServer>,
    background: Vec<std::thread::JoinHandle<()>>,
    stop_background: Arc<std::sync::atomic::AtomicBool>,
    /// On etcd: the RPC other processes call (admin and tablet services).
    rpc: Option<RpcServer>,
}

/// The gRPC server of a `tabula serve` on etcd, and how to stop it.
struct RpcServer {
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

/// Serves the coordinator's admin service and the tablet service of this process's
/// regionserver on `listener` until stopped, over the cluster's mutual TLS when
/// `tls` is given.
fn serve_rpc(
    listener: TcpListener,
    coordinator: Arc<Coordinator>,
    regionserver: Arc<RegionServer>,
    tls: Option<&ClusterTls>,
) -> Result<RpcServer, ServeError> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tabula_regionserver::rpc::server_builder(tls)
        .map_err(|e| ClusterTlsError::Unusable(error_chain(&e)))?
        .add_service(tabula_coordinator::rpc::admin_service(coordinator))
        .add_service(tabula_regionserver::rpc::tablet_rpc(regionserver, None));
    let task = tokio::spawn(async move {
        let incoming = tabula_regionserver::rpc::incoming(listener);
        let stopped = async {
            let _ = stopped.await;
        };
        if let Err(e) = server.serve_with_incoming_shutdown(incoming, stopped).await {
            tracing::error!(error = %e, "the RPC server stopped");
        }
    });
    Ok(RpcServer { stop, task })
}

pub(crate) fn engine_options(s: &Settings) -> EngineOptions {
    let mut o = EngineOptions::new(&s.data_dir);
    o.memory_budget = s.memory_budget_mb << 20;
    o.memtable_size = s.memtable_size_mb << 20;
    o.block_size = s.block_size_kb << 10;
    o.max_files_per_read = s.max_files_per_read;
    o.max_value_size = s.max_value_size;
    o.compaction_bytes_per_sec = s.compaction_mb_per_sec << 20;
    o.log_fsync = s.log_fsync;
    o
}

/// [`bind`], or nothing when `addr` is empty (a port turned off).
async fn bind_unless_empty(
    addr: &str,
) -> Result<(Option<TcpListener>, Option<SocketAddr>), ServeError> {
    if addr.is_empty() {
        return Ok((None, None));
    }
    let (listener, local) = bind(addr).await?;
    Ok((Some(listener), Some(local)))
}

/// Binds `addr`; returns the listener and the address it got.
async fn bind(addr: &str) -> Result<(TcpListener, SocketAddr), ServeError> {
    let listen_error = |source| ServeError::Listen {
        addr: addr.to_string(),
        source,
    };
    let listener = TcpListener::bind(addr).await.map_err(listen_error)?;
    let local = listener.local_addr().map_err(listen_error)?;
    Ok((listener, local))
}

/// Starts every component and binds the Thrift listeners (not yet serving).
pub async fn start(settings: &Settings) -> Result<Running, ServeError> {
    let server_opts = server_options(settings)?;
    let rpc_tls = cluster_tls(settings)?;
    let remote = remote_options(rpc_tls.clone());
    std::fs::create_dir_all(&settings.data_dir).map_err(|e| {
        ServeError::Storage(tabula_storage::Error::io("creating the data directory", e))
    })?;
    let (listener, thrift1_addr) = bind(&settings.listen).await?;
    let (listener2, thrift2_addr) = bind_unless_empty(&settings.thrift2_listen).await?;
    let gateway_settings = settings.clone();
    let on_etcd = settings.etcd_urls().next().is_some();
    let rpc_listener = match on_etcd {
        true => Some(bind(&settings.rpc_listen).await?),
        false => None,
    };
    let settings_metrics = settings.metrics_listen.clone();
    let settings = settings.clone();
    let name = if settings.server_name.is_empty() {
        thrift1_addr.to_string()
    } else {
        settings.server_name.clone()
    };
    let address = rpc_listener.as_ref().map(|(_, addr)| CoordinatorAddress {
        rpc: addr.to_string(),
        server: name.clone(),
    });
    let (coordinator, regionserver) =
        tokio::task::spawn_blocking(move || -> Result<_, ServeError> {
            let lock = open_lock_service(&settings)?;
            let embedded_lock = settings.etcd_urls().next().is_none();
            let mut engine_opts = engine_options(&settings);
            // On etcd the data directory may be shared with regionservers of other
            // processes: each keeps its commit log under logs/<its name>.
            let logs_root = (!embedded_lock).then(|| settings.data_dir.join(LOGS_DIR));
            if let Some(root) = &logs_root {
                let dir =
                    server_log_dir_name(&name).map_err(|e| ServeError::Lock(e.to_string()))?;
                engine_opts.log_dir = Some(root.join(dir));
            }
            let engine = Arc::new(Engine::open(engine_opts)?);
            let rs = Arc::new(RegionServer::new(
                engine,
                RegionServerOptions {
                    name,
                    scanner_lease: Duration::from_secs(settings.scanner_lease_secs.max(1)),
                    logs_root,
                    slow_log: settings.slow_log(),
                },
            ));
            // Regionservers of other processes already registered keep their tablets.
            let remote = if embedded_lock {
                Vec::new()
            } else {
                crate::membership::connect_registered(&*lock, &rs.name(), &remote)
            };
            let coord = Coordinator::start_with_remote(
                lock,
                vec![Arc::clone(&rs) as Arc<dyn TabletService>],
                remote,
                CoordinatorOptions {
                    split_threshold_bytes: settings.split_threshold_mb << 20,
                    maintenance_interval: Duration::from_secs(settings.maintenance_interval_secs),
                    hot_split: HotSplitRule {
                        min_rate: settings.hot_split_requests_per_sec as f64,
                        min_bytes: settings.hot_split_min_mb << 20,
                    },
                    retake_lost_lock: embedded_lock,
                    lock_wait: (!settings.standby)
                        .then_some(CoordinatorOptions::default().lock_wait)
                        .flatten(),
                    address,
                    ..CoordinatorOptions::default()
                },
            )?;
            if !embedded_lock {
                // Another coordinator may be acting now: stop at once, as HBase's
                // master aborts on losing its ZooKeeper session. Every acknowledged
                // write is in the commit log; a restart recovers it.
                coord.on_deposed(Box::new(|why| {
                    tracing::error!(
                        reason = why,
                        "exiting: this server's coordinator was deposed"
                    );
                    eprintln!("tabula: exiting: the coordinator was deposed ({why})");
                    std::process::exit(DEPOSED_EXIT_CODE);
                }));
            }
            Ok((coord, rs))
        })
        .await
        .map_err(|e| ServeError::Lock(format!("start-up task failed: {e}")))??;

    let backend = Arc::new(ClusterBackend::new(Arc::clone(&coordinator)));
    let engine = Arc::clone(regionserver.engine());
    let server_opts = ServerOptions {
        writes_stalled: Some(Arc::new(move || engine.memtable_memory().over_limit())),
        ..server_opts
    };
    let (thrift1, thrift2, increments) = gateways(
        backend as Arc<dyn Backend>,
        (listener, listener2),
        &gateway_settings,
        server_opts,
    );

    let metrics = start_metrics(
        &settings_metrics,
        Sources {
            gateways: gateway_stats(&thrift1, thrift2.as_ref()),
            regionserver: Some(Arc::clone(&regionserver)),
            coordinator: Some(Arc::clone(&coordinator)),
            increments: increments.clone(),
        },
    )
    .await?;
    let rpc = match rpc_listener {
        Some((listener, addr)) => {
            tracing::info!(%addr, tls = rpc_tls.is_some(), "RPC (admin and tablet services) listening");
            Some(serve_rpc(
                listener,
                Arc::clone(&coordinator),
                Arc::clone(&regionserver),
                rpc_tls.as_ref(),
            )?)
        }
        None => None,
    };
    let stop_background = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut background = Vec::new();
    background.extend(coordinator.spawn_maintenance());
    if on_etcd {
        background.extend(crate::membership::spawn(
            Arc::clone(&coordinator),
            Arc::clone(&stop_background),
            remote_options(rpc_tls),
        ));
    }
    {
        let rs = Arc::clone(&regionserver);
        let stop = Arc::clone(&stop_background);
        background.extend(
            std::thread::Builder::new()
                .name("tabula-scanner-leases".into())
                .spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Acquire) {
                        std::thread::sleep(Duration::from_millis(500));
                        rs.expire_scanners();
                    }
                })
                .ok(),
        );
    }
    Ok(Running {
        thrift1_addr,
        thrift2_addr,
        metrics_addr: metrics.as_ref().map(MetricsServer::addr),
        increments,
        thrift1,
        thrift2,
        metrics,
        system: Some(System {
            coordinator,
            regionserver,
            background,
            stop_background,
            rpc,
        }),
    })
}

/// Where the regionservers sharing a data directory keep their commit logs, one
/// directory per server name (on etcd only).
pub const LOGS_DIR: &str = "logs";

/// Exit status of a `tabula serve` whose coordinator lost its etcd session or lock.
pub const DEPOSED_EXIT_CODE: i32 = 3;

/// The lock service the settings name: etcd when endpoints are given, else the
/// embedded one under `data_dir/lock`.
pub(crate) fn open_lock_service(settings: &Settings) -> Result<Arc<dyn LockService>, ServeError> {
    let endpoints: Vec<String> = settings.etcd_urls().map(str::to_owned).collect();
    if endpoints.is_empty() {
        let lock = EmbeddedLockService::open(&settings.data_dir.join("lock"))
            .map_err(|e| ServeError::Lock(e.to_string()))?;
        return Ok(Arc::new(lock));
    }
    let mut config = EtcdConfig::new(endpoints).with_namespace(settings.etcd_namespace.clone());
    if let Some(tls) = etcd_tls(settings)? {
        config = config.with_tls(tls);
    }
    let lock = EtcdLockService::connect(config)
        .map_err(|e| ServeError::Lock(format!("etcd at {}: {e}", settings.etcd_endpoints)))?;
    tracing::info!(endpoints = %settings.etcd_endpoints, namespace = %settings.etcd_namespace, "lock service: etcd");
    Ok(Arc::new(lock))
}

/// Connection-layer options from the settings (reading the TLS files they name).
fn server_options(settings: &Settings) -> Result<ServerOptions, ServeError> {
    let tls = match settings.tls_cert_file.as_str() {
        "" => None,
        cert => {
            let client_ca = Some(settings.tls_client_ca_file.as_str())
                .filter(|f| !f.is_empty())
                .map(std::path::Path::new);
            let tls = TlsConfig::from_pem_files(
                std::path::Path::new(cert),
                std::path::Path::new(&settings.tls_key_file),
                client_ca,
            )?;
            tracing::info!(
                cert,
                client_certificates = tls.requires_client_certificates(),
                "TLS on the Thrift ports: HTTPS only"
            );
            Some(tls)
        }
    };
    Ok(ServerOptions {
        max_frame_size: settings.max_frame_size,
        idle_timeout: (settings.idle_timeout_secs > 0)
            .then(|| Duration::from_secs(settings.idle_timeout_secs)),
        max_concurrent_calls: settings.max_concurrent_calls,
        event_loops: settings.event_loops,
        tls,
        ..ServerOptions::default()
    })
}

/// The Thrift1 and Thrift2 servers over `backend` (refusing changes in read-only
/// mode), on the two listeners (Thrift2 only when it has one), and Thrift1's
/// increment coalescer when increments are coalesced.
fn gateways(
    backend: Arc<dyn Backend>,
    (listener, listener2): (TcpListener, Option<TcpListener>),
    settings: &Settings,
    server_opts: ServerOptions,
) -> (
    ThriftServer,
    Option<ThriftServer>,
    Option<Arc<IncrementCoalescer>>,
) {
    let backend: Arc<dyn Backend> = if settings.readonly {
        Arc::new(ReadOnlyBackend::new(backend))
    } else {
        backend
    };
    let scanner_lease = Duration::from_secs(settings.scanner_lease_secs.max(1));
    let handler_options = Thrift1Options {
        scanner_lease,
        ..Thrift1Options::default()
    };
    let handler = Thrift1Handler::with_options(
        Arc::clone(&backend),
        Thrift1Options {
            // Read-only: an increment must be refused to its caller, not queued.
            coalesce_increments: settings.coalesce_increments && !settings.readonly,
            ..handler_options.clone()
        },
    );
    let increments = handler.coalescer().cloned();
    let observer = handler.connection_observer();
    let processor = Arc::new(tabula_thrift::hbase::HbaseSyncProcessor::new(handler));
    let thrift1 = ThriftServer::new(
        listener,
        processor,
        ServerOptions {
            observer: Some(observer),
            deferrable_calls: crate::thrift1::DEFERRABLE_CALLS,
            loop_calls: crate::thrift1::LOOP_CALLS,
            ..server_opts.clone()
        },
    );
    let thrift2 = listener2.map(|listener2| {
        let handler2 = Thrift2Handler::with_options(backend, handler_options);
        let observer2 = handler2.connection_observer();
        let processor2 = Arc::new(tabula_thrift::hbase2::THBaseServiceSyncProcessor::new(
            handler2,
        ));
        ThriftServer::new(
            listener2,
            processor2,
            ServerOptions {
                observer: Some(observer2),
                deferrable_calls: crate::thrift2::DEFERRABLE_CALLS,
                loop_calls: crate::thrift2::LOOP_CALLS,
                ..server_opts
            },
        )
    });
    (thrift1, thrift2, increments)
}

/// Starts the Thrift gateways over a [`NullBackend`] whose reads return
/// `value_size`-byte values: no lock service, no storage, no data directory. For
/// measuring what the RPC path alone costs.
pub async fn start_null(settings: &Settings, value_size: usize) -> Result<Running, ServeError> {
    start_gateways(settings, Arc::new(NullBackend::new(value_size))).await
}

/// Binds the Thrift listeners and starts the gateways over `backend`, with no
/// system of this process behind them (`tabula gateway`, and the null backend).
pub(crate) async fn start_gateways(
    settings: &Settings,
    backend: Arc<dyn Backend>,
) -> Result<Running, ServeError> {
    let server_opts = server_options(settings)?;
    let (listener, thrift1_addr) = bind(&settings.listen).await?;
    let (listener2, thrift2_addr) = bind_unless_empty(&settings.thrift2_listen).await?;
    let (thrift1, thrift2, increments) =
        gateways(backend, (listener, listener2), settings, server_opts);
    let metrics = start_metrics(
        &settings.metrics_listen,
        Sources {
            gateways: gateway_stats(&thrift1, thrift2.as_ref()),
            increments: increments.clone(),
            ..Sources::default()
        },
    )
    .await?;
    Ok(Running {
        thrift1_addr,
        thrift2_addr,
        metrics_addr: metrics.as_ref().map(MetricsServer::addr),
        increments,
        thrift1,
        thrift2,
        metrics,
        system: None,
    })
}

/// The counters of the Thrift servers, for metrics.
fn gateway_stats(
    thrift1: &ThriftServer,
    thrift2: Option<&ThriftServer>,
) -> Vec<(&'static str, Arc<crate::server::ServerStats>)> {
    let mut stats = vec![("thrift1", thrift1.stats())];
    stats.extend(thrift2.map(|t| ("thrift2", t.stats())));
    stats
}

/// Serves `sources` at `listen` (`GET /metrics`); `None` when `listen` is empty.
pub(crate) async fn start_metrics(
    listen: &str,
    sources: Sources,
) -> Result<Option<MetricsServer>, ServeError> {
    if listen.is_empty() {
        return Ok(None);
    }
    let (listener, _) = bind(listen).await?;
    MetricsServer::start(listener, sources)
        .map(Some)
        .map_err(|source| ServeError::Listen {
            addr: listen.to_owned(),
            source,
        })
}

impl Running {
    /// Serves until `shutdown` completes, then stops everything in order.
    pub async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<(), ServeError> {
        let stop_thrift2 = self.thrift2.as_ref().map(ThriftServer::shutdown_handle);
        let shutdown = async move {
            shutdown.await;
            if let Some(stop) = stop_thrift2 {
                stop.shutdown();
            }
        };
        let thrift2 = async move {
            match self.thrift2 {
                Some(server) => {
                    server
                        .run(std::future::pending::<()>())
                        .await
                        .connections_aborted
                }
                None => 0,
            }
        };
        let (report1, aborted2) = tokio::join!(self.thrift1.run(shutdown), thrift2);
        if let Some(metrics) = self.metrics {
            metrics.stop().await;
        }
        if let Some(increments) = self.increments {
            let pending = increments.pending_cells();
            tokio::task::spawn_blocking(move || increments.drain())
                .await
                .map_err(|e| ServeError::Shutdown(format!("increment drain failed: {e}")))?;
            tracing::info!(pending, "queued increments applied");
        }
        tracing::info!(
            aborted = report1.connections_aborted + aborted2,
            "gateways stopped; flushing tablets"
        );
        let Some(system) = self.system else {
            tracing::info!("tabula stopped");
            return Ok(());
        };
        if let Some(rpc) = system.rpc {
            let _ = rpc.stop.send(());
            let _ = rpc.task.await;
        }
        system
            .stop_background
            .store(true, std::sync::atomic::Ordering::Release);
        system.coordinator.stop();
        for h in system.background {
            let _ = h.join();
        }
        let rs = Arc::clone(&system.regionserver);
        tokio::task::spawn_blocking(move || rs.shutdown())
            .await
            .map_err(|e| ServeError::Shutdown(format!("shutdown task failed: {e}")))?
            .map_err(|e| ServeError::Shutdown(e.to_string()))?;
        tracing::info!("tabula stopped");
        Ok(())
    }
}
