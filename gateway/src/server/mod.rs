//! The Thrift connection server: every transport and protocol HBase's Thrift servers
//! offer, on one port, detected per connection.
//!
//! Owns the public entry points ([`ThriftServer`], [`serve`]) and re-exports the pieces
//! callers use: options, connection identity, counters, mode detection and the message
//! boundary scanner. Each connection is one tokio task; calls run the synchronous
//! [`thrift::server::TProcessor`] on the blocking pool with in-memory transports holding
//! exactly one message. It knows nothing about HBase semantics (that is the processor's).
//!
//! Layout: `detect` (first-bytes sniffing), `wire` + `frame` (message boundary scanning),
//! `framing` (cutting messages out of a stream), `call` (running the processor), `conn`
//! (one connection's loop), `http` + `replay` (HBase HTTP mode), `tls` (HTTPS, when
//! the options carry a [`TlsConfig`]), `accept` (listener and shutdown), `identity`,
//! `options`, `stats`.

mod accept;
mod ack;
mod answer;
mod call;
mod conn;
mod detect;
mod event_loop;
mod frame;
mod framing;
mod http;
mod identity;
mod options;
mod replay;
mod stats;
mod threaded;
mod tls;
mod wire;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;

pub use accept::ShutdownReport;
pub use call::SharedProcessor;
pub use detect::{detect, Detection, Transport, WireMode, MAX_SNIFF_LEN};
pub use frame::{scan_message, MessageScanner, Scan, MAX_NESTING_DEPTH};
pub use identity::{current_connection, ConnectionId, ConnectionObserver};
pub use options::{
    ServerOptions, DEFAULT_MAX_CONCURRENT_CALLS, DEFAULT_MAX_FRAME_SIZE, DEFAULT_SHUTDOWN_GRACE,
    DEFAULT_TCP_KEEPALIVE,
};
pub use stats::{ModeCounts, ServerStats, StatsSnapshot};
pub use tls::{TlsConfig, TlsError};
pub use wire::{MessageHeader, ScanError, WireProtocol};

use call::Dispatcher;
use conn::ConnShared;

/// A Thrift server bound to a listener, ready to [`run`](ThriftServer::run).
pub struct ThriftServer {
    listener: TcpListener,
    shared: Arc<ConnShared>,
    stats: Arc<ServerStats>,
    stop: Arc<watch::Sender<bool>>,
}

/// Stops a running [`ThriftServer`] from anywhere; cloneable.
#[derive(Clone, Debug)]
pub struct ShutdownHandle {
    stop: Arc<watch::Sender<bool>>,
}

impl ShutdownHandle {
    /// Begins graceful shutdown (idempotent).
    pub fn shutdown(&self) {
        self.stop.send_replace(true);
    }
}

impl ThriftServer {
    /// Prepares a server for `listener`, calling `processor` for every request.
    pub fn new(listener: TcpListener, processor: SharedProcessor, opts: ServerOptions) -> Self {
        let stats = Arc::new(ServerStats::new());
        let dispatcher = Dispatcher::new(processor, opts.max_concurrent_calls, Arc::clone(&stats));
        let (stop, _) = watch::channel(false);
        let loops = event_loop::Loops::new(opts.event_loops);
        ThriftServer {
            listener,
            shared: Arc::new(ConnShared {
                dispatcher,
                opts,
                stats: Arc::clone(&stats),
                ack: ack::Acknowledger::new(),
                loops,
            }),
            stats,
            stop: Arc::new(stop),
        }
    }

    /// The address the listener is bound to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The server's live counters.
    pub fn stats(&self) -> Arc<ServerStats> {
        Arc::clone(&self.stats)
    }

    /// A handle that stops the server like the `shutdown` future of [`run`](Self::run).
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            stop: Arc::clone(&self.stop),
        }
    }

    /// Serves until `shutdown` completes or a [`ShutdownHandle`] fires; then stops
    /// accepting, lets in-flight calls finish and write their replies, closes every
    /// connection, and returns once all connection tasks are done (waiting at most
    /// [`ServerOptions::shutdown_grace`]).
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> ShutdownReport {
        match self.listener.local_addr() {
            Ok(addr) => tracing::info!(%addr, "Thrift server listening"),
            Err(err) => tracing::info!("Thrift server listening (address unknown: {err})"),
        }
        let stop = Arc::clone(&self.stop);
        let accept = accept::accept_until_stopped(self.listener, self.shared, Arc::clone(&stop));
        tokio::pin!(accept);
        let report = tokio::select! {
            report = &mut accept => report,
            () = shutdown => {
                stop.send_replace(true);
                accept.await
            }
        };
        tracing::info!(
            connections = report.connections_at_shutdown,
            aborted = report.connections_aborted,
            "Thrift server stopped"
        );
        report
    }
}

/// Serves `listener` with `processor` until `shutdown` completes (see
/// [`ThriftServer::run`]). Use [`ThriftServer`] directly to reach its counters.
pub async fn serve(
    listener: TcpListener,
    processor: SharedProcessor,
    opts: ServerOptions,
    shutdown: impl Future<Output = ()>,
) -> ShutdownReport {
    ThriftServer::new(listener, processor, opts)
        .run(shutdown)
        .await
}
