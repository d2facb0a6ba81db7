//! The `tabula` binary.
//!
//! `tabula serve` runs coordinator, regionserver and Thrift gateway in one process;
//! `tabula bench` runs the load generator (the `tabula-loadgen` crate) against a
//! server. Owns only argument parsing, logging set-up, the runtime and signal
//! handling. (Its allocator, jemalloc, comes with the storage crate's `jemalloc`
//! feature: see storage/src/allocator.rs.)

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tabula_gateway::config::{Overrides, Settings};

#[derive(Parser)]
#[command(
    name = "tabula",
    version,
    about = "A Bigtable-style database speaking HBase's Thrift protocols"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where a process serving Thrift listens.
#[derive(clap::Args)]
struct GatewayPorts {
    /// Thrift1 listen address (default 127.0.0.1:9090).
    #[arg(long)]
    listen: Option<String>,
    /// Thrift2 listen address (default 127.0.0.1:9091).
    #[arg(long)]
    thrift2_listen: Option<String>,
    /// Metrics (`GET /metrics`) listen address (default 127.0.0.1:0; empty: off).
    #[arg(long)]
    metrics_listen: Option<String>,
    /// Serve reads only: every write and schema change is refused (HBase's
    /// `hbase.thrift.readonly`).
    #[arg(long)]
    readonly: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Run coordinator, regionserver and Thrift gateway in one process.
    Serve {
        /// TOML settings file (see docs/CONFIGURATION.md).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Data directory (default ./tabula-data).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// Use the etcd cluster at these client URLs (comma-separated) as the lock
        /// service instead of the embedded one.
        #[arg(long)]
        etcd_endpoints: Option<String>,
        #[command(flatten)]
        ports: GatewayPorts,
        /// Measurement mode: serve the Thrift APIs over a backend that stores
        /// nothing (writes succeed and are dropped, reads return a fixed value), to
        /// measure what the RPC path alone costs.
        #[arg(long)]
        null_backend: bool,
        /// Bytes of the value every read returns in --null-backend mode.
        #[arg(long, default_value_t = 1000, requires = "null_backend")]
        null_value_size: usize,
    },
    /// Run a regionserver alone, for a cluster of several processes: it registers in
    /// etcd (`--etcd-endpoints`), shares the data directory with the other servers,
    /// and serves the tablets the coordinator of a `tabula serve` assigns it.
    Regionserver {
        /// TOML settings file (see docs/CONFIGURATION.md).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The data directory the cluster's servers share (default ./tabula-data).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// The etcd cluster's client URLs, comma-separated.
        #[arg(long)]
        etcd_endpoints: Option<String>,
        /// Address of the regionserver's RPC (gRPC) port.
        #[arg(long, default_value = "127.0.0.1:16020")]
        listen: String,
        /// Metrics (`GET /metrics`) listen address (default 127.0.0.1:0; empty: off).
        #[arg(long)]
        metrics_listen: Option<String>,
    },
    /// Run a Thrift gateway alone, for a cluster of several processes: it follows the
    /// cluster through etcd (`--etcd-endpoints`), sends rows straight to the
    /// regionservers and admin calls to the active coordinator, and holds no data.
    Gateway {
        /// TOML settings file (see docs/CONFIGURATION.md).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The etcd cluster's client URLs, comma-separated.
        #[arg(long)]
        etcd_endpoints: Option<String>,
        #[command(flatten)]
        ports: GatewayPorts,
    },
    /// Verify a stopped server's data directory: every manifest, SSTable (every
    /// block through its checksum), commit-log segment and recovered edit. Prints
    /// what was read and every problem; exits 1 when a file is damaged or missing.
    Check {
        /// TOML settings file (its `data_dir` is checked).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Data directory (default ./tabula-data).
        #[arg(long)]
        data_dir: Option<PathBuf>,
    },
    /// Load a running server with the Bigtable paper's or YCSB's workloads and report
    /// throughput, latency percentiles and the server's memory and CPU.
    Bench(Box<tabula_loadgen::BenchArgs>),
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
    tracing::info!("shutdown requested");
}

/// Settings from the file, the environment and `overrides`; exit status 2 when
/// they are invalid.
fn settings(config: Option<&std::path::Path>, overrides: &Overrides) -> Result<Settings, ExitCode> {
    Settings::load(config, overrides).map_err(|e| {
        eprintln!("tabula: {e}");
        ExitCode::from(2)
    })
}

/// Runs `process` on a multi-threaded runtime.
fn on_runtime(process: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(process),
        Err(e) => {
            eprintln!("tabula: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Loads the settings (`config`, the environment, `overrides`; exit status 2 when
/// they are invalid), starts a process with them on a multi-threaded runtime
/// (`start`), prints its ready line (`ready`), then serves until a signal asks it
/// to stop (`run`); the exit status says how it ended.
fn run_process<R, Start, Run>(
    config: Option<&std::path::Path>,
    overrides: &Overrides,
    start: impl FnOnce(Settings) -> Start,
    ready: impl FnOnce(&R) -> String,
    run: impl FnOnce(R, std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>) -> Run,
) -> ExitCode
where
    Start: std::future::Future<Output = Result<R, tabula_gateway::serve::ServeError>>,
    Run: std::future::Future<Output = Result<(), tabula_gateway::serve::ServeError>>,
{
    let start = match settings(config, overrides) {
        Ok(settings) => start(settings),
        Err(code) => return code,
    };
    on_runtime(async move {
        let running = match start.await {
            Ok(r) => r,
            Err(e) => return start_failed(&e),
        };
        println!("{}", ready(&running));
        stopped(run(running, Box::pin(shutdown_signal())).await)
    })
}

/// `tabula check`: verifies `data_dir` and prints the report.
fn check(data_dir: &std::path::Path) -> ExitCode {
    let report = match tabula_storage::check::check_data_dir(data_dir) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("tabula check: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "{}: {} tablets, {} SSTables ({} entries, {} bytes), {} log segments ({} records, {} with a torn tail), {} recovered edits",
        data_dir.display(),
        report.tablets,
        report.sstables,
        report.sstable_entries,
        report.sstable_bytes,
        report.log_segments,
        report.log_records,
        report.torn_tails,
        report.recovered_edits
    );
    for path in &report.unlisted_sstables {
        println!(
            "unlisted (no manifest lists it; the server deletes it): {}",
            path.display()
        );
    }
    for path in &report.tablets_without_manifest {
        println!("tablet directory without a manifest: {}", path.display());
    }
    for p in &report.problems {
        println!("PROBLEM {}: {}", p.path.display(), p.problem);
    }
    if report.is_clean() {
        println!("clean");
        ExitCode::SUCCESS
    } else {
        println!("{} problems", report.problems.len());
        ExitCode::FAILURE
    }
}

/// The ready line's ` metrics=<addr>` when metrics are served.
fn metrics_field(addr: Option<std::net::SocketAddr>) -> String {
    addr.map(|a| format!(" metrics={a}")).unwrap_or_default()
}

/// The Thrift2 address for the ready line: `off` when `thrift2_listen` is empty.
fn thrift2_field(addr: Option<std::net::SocketAddr>) -> String {
    addr.map_or_else(|| "off".to_owned(), |a| a.to_string())
}

/// The exit status of a start-up error.
fn start_failed(e: &tabula_gateway::serve::ServeError) -> ExitCode {
    tracing::error!(error = %e, "start-up failed");
    eprintln!("tabula: {e}");
    ExitCode::FAILURE
}

/// The exit status of a process that ran until asked to stop.
fn stopped(result: Result<(), tabula_gateway::serve::ServeError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tabula: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    match cli.command {
        Command::Serve {
            config,
            data_dir,
            etcd_endpoints,
            ports,
            null_backend,
            null_value_size,
        } => {
            if let Err(e) = tabula_gateway::crash_points::arm_from_env() {
                eprintln!("tabula: {e}");
                return ExitCode::from(2);
            }
            let overrides = Overrides {
                data_dir,
                etcd_endpoints,
                listen: ports.listen,
                thrift2_listen: ports.thrift2_listen,
                metrics_listen: ports.metrics_listen,
                readonly: ports.readonly.then_some(true),
            };
            run_process(
                config.as_deref(),
                &overrides,
                |settings| async move {
                    if null_backend {
                        tabula_gateway::serve::start_null(&settings, null_value_size).await
                    } else {
                        tabula_gateway::serve::start(&settings).await
                    }
                },
                |r| {
                    format!(
                        "tabula ready thrift1={} thrift2={}{}",
                        r.thrift1_addr,
                        thrift2_field(r.thrift2_addr),
                        metrics_field(r.metrics_addr)
                    )
                },
                |r, shutdown| r.run(shutdown),
            )
        }
        Command::Regionserver {
            config,
            data_dir,
            etcd_endpoints,
            listen,
            metrics_listen,
        } => {
            let overrides = Overrides {
                data_dir,
                etcd_endpoints,
                listen: Some(listen),
                thrift2_listen: None,
                metrics_listen,
                readonly: None,
            };
            run_process(
                config.as_deref(),
                &overrides,
                |settings| async move { tabula_gateway::regionserver_process::start(&settings).await },
                |r| {
                    format!(
                        "tabula regionserver ready rpc={} name={}{}",
                        r.rpc_addr,
                        r.name,
                        metrics_field(r.metrics_addr)
                    )
                },
                |r, shutdown| r.run(shutdown),
            )
        }
        Command::Gateway {
            config,
            etcd_endpoints,
            ports,
        } => {
            let overrides = Overrides {
                data_dir: None,
                etcd_endpoints,
                listen: ports.listen,
                thrift2_listen: ports.thrift2_listen,
                metrics_listen: ports.metrics_listen,
                readonly: ports.readonly.then_some(true),
            };
            run_process(
                config.as_deref(),
                &overrides,
                |settings| async move { tabula_gateway::gateway_process::start(&settings).await },
                |r| {
                    format!(
                        "tabula gateway ready thrift1={} thrift2={}{}",
                        r.thrift1_addr,
                        thrift2_field(r.thrift2_addr),
                        metrics_field(r.metrics_addr)
                    )
                },
                |r, shutdown| r.run(shutdown),
            )
        }
        Command::Check { config, data_dir } => {
            let overrides = Overrides {
                data_dir,
                ..Overrides::default()
            };
            match settings(config.as_deref(), &overrides) {
                Ok(settings) => check(&settings.data_dir),
                Err(code) => code,
            }
        }
        Command::Bench(args) => match tabula_loadgen::run(&args) {
            Ok(reports) if reports.iter().any(|r| r.ops_per_sec == 0.0 && r.errors > 0) => {
                eprintln!("tabula bench: every operation of a run failed");
                ExitCode::FAILURE
            }
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("tabula bench: {e}");
                ExitCode::FAILURE
            }
        },
    }
}
