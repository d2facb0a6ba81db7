//! One client connection, from its first byte to its close.
//!
//! Owns the per-connection task: sniffing the mode from the first bytes, the
//! request/reply loop for framed and unframed Thrift (replies in order, written in the
//! request's transport and protocol), the idle timeout, the shutdown check between calls,
//! and the log line saying why a connection ended. HTTP connections are handed to
//! `http`. It never panics on client input; a bad client only loses its own connection.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::server::call::{protocol_error_reply, CallError, CallReply, Dispatcher};
use crate::server::detect::{detect, Detection, Transport, WireMode};
use crate::server::framing::{Extract, MessageReader};
use crate::server::identity::ConnectionId;
use crate::server::options::ServerOptions;
use crate::server::stats::ServerStats;
use crate::server::wire::ScanError;

/// Bytes requested from the socket per read.
const READ_CHUNK: usize = 8 * 1024;
/// An empty receive buffer holding more than this is released between calls.
const RETAIN_BUFFER_LIMIT: usize = 256 * 1024;

/// State shared by all connections of one server.
pub(crate) struct ConnShared {
    pub(crate) dispatcher: Dispatcher,
    pub(crate) opts: ServerOptions,
    pub(crate) stats: Arc<ServerStats>,
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
        ConnError::Unrecognized(_) | ConnError::Malformed(_) | ConnError::Call(_) => {
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
    let idle = shared.opts.idle_timeout;
    let mut buf = BytesMut::new();
    let mode = loop {
        match detect(&buf) {
            Detection::Detected(mode) => break mode,
            Detection::Unrecognized => {
                shared.stats.unrecognized_connection();
                let shown = buf.get(..buf.len().min(16)).unwrap_or(&[]).to_vec();
                return Err(ConnError::Unrecognized(shown));
            }
            Detection::NeedMore => {
                match read_more(&mut stream, &mut buf, idle, &mut shutdown).await? {
                    Input::Data => {}
                    Input::Eof if buf.is_empty() => return Ok(()),
                    Input::Eof => return Err(ConnError::Truncated(buf.len())),
                    Input::Shutdown => return Ok(()),
                }
            }
        }
    };
    shared.stats.mode_detected(mode);
    tracing::debug!(peer = %peer.addr, conn = %peer.id, ?mode, "connection mode detected");
    match mode.transport {
        Transport::Http => {
            crate::server::http::serve_http(shared, stream, buf.freeze(), peer, shutdown).await
        }
        Transport::Framed | Transport::Unframed => {
            serve_messages(shared, stream, buf, mode, peer, shutdown).await
        }
    }
}

/// The request/reply loop of a framed or unframed connection.
async fn serve_messages(
    shared: &ConnShared,
    mut stream: TcpStream,
    mut buf: BytesMut,
    mode: WireMode,
    peer: Peer,
    mut shutdown: watch::Receiver<bool>,
) -> Result<(), ConnError> {
    let limit = shared.opts.max_frame_size;
    let mut reader = MessageReader::new(mode, limit);
    loop {
        if *shutdown.borrow() {
            return Ok(());
        }
        match reader.next(&mut buf) {
            Extract::Message(request) => {
                let reply = shared
                    .dispatcher
                    .call(peer.id, reader.protocol(), request)
                    .await?;
                if let CallReply::Message(reply) = reply {
                    write_reply(&mut stream, mode.transport, reply).await?;
                }
                if buf.is_empty() && buf.capacity() > RETAIN_BUFFER_LIMIT {
                    buf = BytesMut::new();
                }
            }
            Extract::NeedMore => {
                let idle = shared.opts.idle_timeout;
                match read_more(&mut stream, &mut buf, idle, &mut shutdown).await? {
                    Input::Data => {}
                    Input::Eof if buf.is_empty() => return Ok(()),
                    Input::Eof => return Err(ConnError::Truncated(buf.len())),
                    Input::Shutdown => return Ok(()),
                }
            }
            Extract::Oversized { size } => {
                shared.stats.oversized_message();
                return Err(ConnError::Oversized { size, limit });
            }
            Extract::Malformed {
                header,
                error,
                resumable,
            } => {
                shared.stats.malformed_message();
                let reply = header
                    .as_ref()
                    .and_then(|h| protocol_error_reply(reader.protocol(), h, &error.to_string()));
                if let Some(reply) = reply {
                    write_reply(&mut stream, mode.transport, reply).await?;
                }
                if !resumable {
                    return Err(ConnError::Malformed(error));
                }
                tracing::info!(
                    peer = %peer.addr, conn = %peer.id,
                    "answered a malformed message with an exception: {error}"
                );
            }
        }
    }
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

/// Writes one reply in the connection's transport.
async fn write_reply(
    stream: &mut TcpStream,
    transport: Transport,
    reply: Vec<u8>,
) -> Result<(), ConnError> {
    match transport {
        Transport::Framed => {
            let len = u32::try_from(reply.len())
                .ok()
                .filter(|len| i32::try_from(*len).is_ok())
                .ok_or(ConnError::ReplyTooLarge(reply.len()))?;
            let mut out = Bytes::copy_from_slice(&len.to_be_bytes()).chain(Bytes::from(reply));
            stream.write_all_buf(&mut out).await?;
        }
        Transport::Unframed | Transport::Http => stream.write_all(&reply).await?,
    }
    stream.flush().await?;
    Ok(())
}
