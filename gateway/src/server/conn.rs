//! One client connection, from its first byte to its close.
//!
//! Owns the per-connection task: sniffing the mode from the first bytes, handing
//! framed and unframed Thrift connections to their own thread (`threaded`) and HTTP
//! connections to `http`, on a TLS port the handshake before HTTP (and closing a
//! connection that does not open with one), the idle timeout while sniffing, and the
//! log line saying why a connection ended. It never panics on client input; a bad
//! client only loses its own connection.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::server::ack::Acknowledger;
use crate::server::call::{CallError, Dispatcher};
use crate::server::detect::{detect, Detection, Transport, WireMode};
use crate::server::event_loop::Loops;
use crate::server::identity::ConnectionId;
use crate::server::options::ServerOptions;
use crate::server::replay::{Activity, ReplayStream};
use crate::server::stats::ServerStats;
use crate::server::tls::{self, TlsConfig, HANDSHAKE_TIMEOUT};
use crate::server::wire::{ScanError, WireProtocol};

/// Bytes requested from the socket per read.
const READ_CHUNK: usize = 8 * 1024;

/// State shared by all connections of one server.
pub(crate) struct ConnShared {
    pub(crate) dispatcher: Dispatcher,
    pub(crate) opts: ServerOptions,
    pub(crate) stats: Arc<ServerStats>,
    /// Answers calls whose synced writes were deferred (see `server::ack`).
    pub(crate) ack: Acknowledger,
    /// Serves framed and unframed connections while their calls are quick (see
    /// `server::event_loop`).
    pub(crate) loops: Loops,
}

/// Who is on the other end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer {
    pub(crate) id: ConnectionId,
    pub(crate) addr: SocketAddr,
}

/// Why a connection ended abnormally.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnError {
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    #[error("first bytes {0:02x?} match no supported Thrift transport or protocol")]
    Unrecognized(Vec<u8>),
    #[error("first bytes {0:02x?} are not a TLS handshake, which this port requires")]
    NotTls(Vec<u8>),
    #[error("TLS handshake failed: {0}")]
    Handshake(std::io::Error),
    #[error("message of at least {size} bytes exceeds the {limit}-byte limit")]
    Oversized { size: u64, limit: usize },
    #[error("malformed message: {0}")]
    Malformed(ScanError),
    #[error("client closed the connection inside a message ({0} bytes unprocessed)")]
    Truncated(usize),
    #[error("idle for {0:?}")]
    Idle(Duration),
    #[error("reply of {0} bytes does not fit a frame")]
    ReplyTooLarge(usize),
    #[error(transparent)]
    Call(#[from] CallError),
    #[error("http: {0}")]
    Http(#[from] hyper::Error),
}

/// How waiting for more input ended.
pub(crate) enum Input {
    /// New bytes were appended.
    Data,
    /// The client closed its side.
    Eof,
    /// The server is shutting down.
    Shutdown,
}

/// Resolves once the server asks connections to stop (or the server is gone).
pub(crate) async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// Runs one connection to its end and logs why it ended.
pub(crate) async fn run_connection(
    shared: Arc<ConnShared>,
    stream: TcpStream,
    peer: Peer,
    shutdown: watch::Receiver<bool>,
) {
    match drive(&shared, stream, peer, shutdown).await {
        Ok(()) => tracing::debug!(peer = %peer.addr, conn = %peer.id, "connection closed"),
        Err(err) => log_end(peer, &err),
    }
}

fn log_end(peer: Peer, err: &ConnError) {
    let (addr, id) = (peer.addr, peer.id);
    match err {
        ConnError::Oversized { size, limit } => tracing::warn!(
            peer = %addr, conn = %id, size, limit,
            "closing connection: message larger than max_frame_size"
        ),
        ConnError::Call(CallError::Panicked) => {
            tracing::warn!(peer = %addr, conn = %id, "closing connection: {err}")
        }
        ConnError::Unrecognized(_)
        | ConnError::NotTls(_)
        | ConnError::Handshake(_)
        | ConnError::Malformed(_)
        | ConnError::Call(_) => {
            tracing::info!(peer = %addr, conn = %id, "closing connection: {err}")
        }
        ConnError::Io(_)
        | ConnError::Truncated(_)
        | ConnError::Idle(_)
        | ConnError::ReplyTooLarge(_)
        | ConnError::Http(_) => {
            tracing::debug!(peer = %addr, conn = %id, "closing connection: {err}")
        }
    }
}

async fn drive(
    shared: &Arc<ConnShared>,
    mut stream: TcpStream,
    peer: Peer,
    mut shutdown: watch::Receiver<bool>,
) -> Result<(), ConnError> {
    if let Some(tls) = &shared.opts.tls {
        return serve_tls(shared, tls, stream, peer, shutdown).await;
    }
    let mut buf = BytesMut::new();
    let sniffed = sniff(
        shared,
        &mut stream,
        &mut buf,
        &mut shutdown,
        |prefix| match detect(prefix) {
            Detection::Detected(mode) => Some(Ok(mode)),
            Detection::Unrecognized => Some(Err(ConnError::Unrecognized(first_bytes(prefix)))),
            Detection::NeedMore => None,
        },
    );
    let Some(mode) = sniffed.await? else {
        return Ok(());
    };
    shared.stats.mode_detected(mode);
    tracing::debug!(peer = %peer.addr, conn = %peer.id, ?mode, "connection mode detected");
    match mode.transport {
        Transport::Http => {
            crate::server::http::serve_http(shared, stream, buf.freeze(), peer, shutdown).await
        }
        Transport::Framed | Transport::Unframed => {
            crate::server::threaded::serve_on_thread(
                Arc::clone(shared),
                stream,
                buf,
                mode,
                peer,
                shutdown,
            )
            .await
        }
    }
}

/// A connection on a TLS port: its first bytes must open a TLS handshake; once the
/// session is up, HBase's HTTP mode runs inside it (HTTPS, as HBase's Thrift servers
/// serve with `hbase.thrift.ssl.enabled`).
async fn serve_tls(
    shared: &Arc<ConnShared>,
    tls: &TlsConfig,
    mut stream: TcpStream,
    peer: Peer,
    mut shutdown: watch::Receiver<bool>,
) -> Result<(), ConnError> {
    let idle = shared.opts.idle_timeout;
    let mut buf = BytesMut::new();
    let sniffed = sniff(shared, &mut stream, &mut buf, &mut shutdown, |prefix| {
        match tls::starts_with_handshake(prefix)? {
            true => Some(Ok(())),
            false => Some(Err(ConnError::NotTls(first_bytes(prefix)))),
        }
    });
    if sniffed.await?.is_none() {
        return Ok(());
    }
    let activity = Arc::new(Activity::new());
    let replayed = ReplayStream::new(buf.freeze(), stream, Arc::clone(&activity));
    // A client that goes quiet inside its handshake is cut off like an idle one.
    let limit = idle.map_or(HANDSHAKE_TIMEOUT, |idle| idle.min(HANDSHAKE_TIMEOUT));
    let handshake = tokio::time::timeout(limit, tls.accept(replayed));
    let session = tokio::select! {
        biased;
        () = stopped(&mut shutdown) => return Ok(()),
        done = handshake => match done {
            Ok(Ok(session)) => session,
            Ok(Err(e)) => {
                shared.stats.tls_handshake_failed();
                return Err(ConnError::Handshake(e));
            }
            Err(_) => {
                shared.stats.tls_handshake_failed();
                let late = io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("not done within {limit:?}"),
                );
                return Err(ConnError::Handshake(late));
            }
        },
    };
    let mode = WireMode {
        transport: Transport::Http,
        protocol: WireProtocol::Binary,
    };
    shared.stats.mode_detected(mode);
    tracing::debug!(peer = %peer.addr, conn = %peer.id, "TLS session established");
    crate::server::http::serve_http_on(shared, session, &activity, peer, shutdown).await
}

/// Reads a connection's first bytes into `buf` until `decide` settles what they
/// are: `None` for more bytes, `Some(Err)` to refuse the connection (counted as
/// unrecognized). `Ok(None)`: the client left, or the server stops, first.
async fn sniff<T>(
    shared: &ConnShared,
    stream: &mut TcpStream,
    buf: &mut BytesMut,
    shutdown: &mut watch::Receiver<bool>,
    decide: impl Fn(&[u8]) -> Option<Result<T, ConnError>>,
) -> Result<Option<T>, ConnError> {
    loop {
        match decide(buf) {
            Some(Ok(decided)) => return Ok(Some(decided)),
            Some(Err(refused)) => {
                shared.stats.unrecognized_connection();
                return Err(refused);
            }
            None => match read_more(stream, buf, shared.opts.idle_timeout, shutdown).await? {
                Input::Data => {}
                Input::Eof if buf.is_empty() => return Ok(None),
                Input::Eof => return Err(ConnError::Truncated(buf.len())),
                Input::Shutdown => return Ok(None),
            },
        }
    }
}

/// The first bytes of `prefix`, as a refusal shows them.
fn first_bytes(prefix: &[u8]) -> Vec<u8> {
    prefix.get(..prefix.len().min(16)).unwrap_or(&[]).to_vec()
}

/// Reads more bytes into `buf`, giving up on shutdown or after `idle` without input.
pub(crate) async fn read_more(
    stream: &mut TcpStream,
    buf: &mut BytesMut,
    idle: Option<Duration>,
    shutdown: &mut watch::Receiver<bool>,
) -> Result<Input, ConnError> {
    if buf.capacity() - buf.len() < READ_CHUNK {
        buf.reserve(READ_CHUNK);
    }
    let read = async {
        match idle {
            Some(limit) => tokio::time::timeout(limit, stream.read_buf(buf))
                .await
                .map_err(|_| ConnError::Idle(limit))?
                .map_err(ConnError::from),
            None => stream.read_buf(buf).await.map_err(ConnError::from),
        }
    };
    tokio::select! {
        biased;
        () = stopped(shutdown) => Ok(Input::Shutdown),
        read = read => match read? {
            0 => Ok(Input::Eof),
            _ => Ok(Input::Data),
        },
    }
}
