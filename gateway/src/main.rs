//! The `tabula` binary.
//!
//! `tabula serve` runs coordinator, regionserver and Thrift gateway in one process.
//! Owns only argument parsing, logging set-up, the runtime and signal handling.

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
        /// Thrift1 listen address (default 127.0.0.1:9090).
        #[arg(long)]
        listen: Option<String>,
        /// Thrift2 listen address (default 127.0.0.1:9091).
        #[arg(long)]
        thrift2_listen: Option<String>,
    },
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    match cli.command {
        Command::Serve {
            config,
            data_dir,
            listen,
            thrift2_listen,
        } => {
            let overrides = Overrides {
                data_dir,
                listen,
                thrift2_listen,
            };
            let settings = match Settings::load(config.as_deref(), &overrides) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("tabula: {e}");
                    return ExitCode::from(2);
                }
            };
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("tabula: cannot start the runtime: {e}");
                    return ExitCode::FAILURE;
                }
            };
            runtime.block_on(async move {
                let running = match tabula_gateway::serve::start(&settings).await {
                    Ok(r) => r,
                    Err(e) => {
                        tracing::error!(error = %e, "start-up failed");
                        eprintln!("tabula: {e}");
                        return ExitCode::FAILURE;
                    }
                };
                println!(
                    "tabula ready thrift1={} thrift2={}",
                    running.thrift1_addr, running.thrift2_addr
                );
                match running.run(shutdown_signal()).await {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        eprintln!("tabula: {e}");
                        ExitCode::FAILURE
                    }
                }
            })
        }
    }
}
