//! The accept loop: one lightweight task per connection, and the shutdown drain.
//!
//! Owns accepting sockets (TCP_NODELAY and keepalive set on each), allocating connection
//! ids, telling the observer, spawning connection tasks, and at shutdown: stop
//! accepting, signal every connection, wait (bounded) for them, cut off the rest.
//! It does not read or write any connection.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinError, JoinSet};

use crate::server::conn::{run_connection, stopped, ConnShared, Peer};
use crate::server::identity::{ConnectionId, OpenConnection};

/// Pause after an accept error that is not about one connection (e.g. out of file
/// descriptors), so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// How a server run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShutdownReport {
    /// Connections still open when shutdown began.
    pub connections_at_shutdown: usize,
    /// Connections cut off because they outlived the shutdown grace period.
    pub connections_aborted: usize,
}

/// Accepts until `stop` turns true, then drains.
pub(crate) async fn accept_until_stopped(
    listener: TcpListener,
    shared: Arc<ConnShared>,
    stop: Arc<watch::Sender<bool>>,
) -> ShutdownReport {
    let mut stop_rx = stop.subscribe();
    // Connections hear of shutdown only from this loop, once it has stopped accepting.
    let (connections_stop, _) = watch::channel(false);
    let mut tasks = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            () = stopped(&mut stop_rx) => break,
            Some(joined) = tasks.join_next(), if !tasks.is_empty() => log_join(joined),
            accepted = listener.accept() => match accepted {
                Ok((stream, addr)) => {
                    spawn_connection(&mut tasks, &shared, stream, addr, &connections_stop);
                }
                Err(err) if is_per_connection(&err) => {
                    tracing::debug!("accept failed for one connection: {err}");
                }
                Err(err) => {
                    tracing::warn!("accept failed: {err}; retrying shortly");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
        }
    }
    drop(listener);
    let report = ShutdownReport {
        connections_at_shutdown: tasks.len(),
        connections_aborted: 0,
    };
    connections_stop.send_replace(true);
    // Loops look at their connections' shutdown flags now, not at their next tick.
    shared.loops.recheck();
    drain(tasks, shared.opts.shutdown_grace, report).await
}

fn spawn_connection(
    tasks: &mut JoinSet<()>,
    shared: &Arc<ConnShared>,
    stream: TcpStream,
    addr: SocketAddr,
    stop: &watch::Sender<bool>,
) {
    if let Err(err) = configure_socket(&stream, shared.opts.tcp_keepalive) {
        tracing::debug!(peer = %addr, "could not set socket options: {err}");
    }
    let id = ConnectionId::allocate();
    shared.stats.connection_opened();
    let stats = Arc::clone(&shared.stats);
    let open = OpenConnection::open(
        id,
        shared.opts.observer.clone(),
        Box::new(move || stats.connection_closed()),
    );
    tracing::debug!(peer = %addr, conn = %id, "connection accepted");
    let shared = Arc::clone(shared);
    let shutdown = stop.subscribe();
    tasks.spawn(async move {
        let _open = open;
        run_connection(shared, stream, Peer { id, addr }, shutdown).await;
    });
}

/// TCP_NODELAY on (replies are small and latency matters) and keepalive probes so dead
/// peers of idle connections are noticed.
fn configure_socket(stream: &TcpStream, keepalive: Option<Duration>) -> io::Result<()> {
    stream.set_nodelay(true)?;
    if let Some(idle) = keepalive {
        let params = socket2::TcpKeepalive::new().with_time(idle);
        socket2::SockRef::from(stream).set_tcp_keepalive(&params)?;
    }
    Ok(())
}

/// Errors that concern only the connection being accepted.
fn is_per_connection(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

fn log_join(joined: Result<(), JoinError>) {
    if let Err(err) = joined {
        if err.is_panic() {
            tracing::error!("connection task panicked: {err}");
        }
    }
}

async fn drain(mut tasks: JoinSet<()>, grace: Duration, report: ShutdownReport) -> ShutdownReport {
    let finished = tokio::time::timeout(grace, async {
        while let Some(joined) = tasks.join_next().await {
            log_join(joined);
        }
    })
    .await;
    let connections_aborted = if finished.is_ok() {
        0
    } else {
        let left = tasks.len();
        tracing::warn!(
            left,
            ?grace,
            "shutdown grace elapsed; cutting off connections"
        );
        tasks.shutdown().await;
        left
    };
    ShutdownReport {
        connections_aborted,
        ..report
    }
}
