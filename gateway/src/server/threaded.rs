//! The request/reply loop of a framed or unframed Thrift connection, on an OS thread
//! of its own.
//!
//! Owns: moving a detected connection's socket off the async runtime onto a
//! dedicated thread that reads a message, runs the processor on that same thread,
//! writes the reply and reads again. A call then costs one wake-up (the socket's)
//! instead of the three a hand-off to a blocking pool costs, which is most of a small
//! call's price. The thread polls for shutdown and the idle limit between reads; the
//! async task that started it waits for it, so the accept loop's drain and the
//! connection observer see the connection as before, and closes the socket if it is
//! dropped (cut off at shutdown).
//! Must not: parse messages (framing does) or run the processor differently from
//! [`crate::server::call`] (it calls the same `Dispatcher`).

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use tokio::sync::{oneshot, watch};

use tabula_storage::deferred::DeferScope;
use thrift::protocol::TMessageType;

use crate::server::ack::{ConnAck, FailureReply, Handoff};
use crate::server::call::{protocol_error_reply, CallError};
use crate::server::conn::{ConnError, ConnShared, Peer};
use crate::server::detect::{Transport, WireMode};
use crate::server::framing::{Extract, MessageReader};
use crate::server::wire::{peek_header, WireProtocol};

/// Longest a connection thread sleeps in a read before looking at the shutdown flag.
const SHUTDOWN_POLL: Duration = Duration::from_millis(200);
/// Bytes read from the socket at a time.
const READ_CHUNK: usize = 16 * 1024;
/// An empty receive buffer (or a reply buffer) holding more than this is released
/// between calls.
const RETAIN_BUFFER_LIMIT: usize = 256 * 1024;
/// Bytes of a frame's length prefix.
const FRAME_PREFIX: usize = 4;
/// Capacity a connection's reply buffer starts with (a get of a 1 KB value fits).
const REPLY_BUFFER: usize = 4 * 1024;
/// Longest method name looked at when deciding whether a call may defer its writes.
const MAX_DEFERRABLE_NAME: usize = 64;

/// Closes the socket when the waiting task is dropped before the thread is done.
struct CloseOnDrop {
    socket: Option<std::net::TcpStream>,
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if let Some(s) = self.socket.take() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// Serves `stream` (already detected as `mode`, with `buf` holding bytes read so far)
/// on a new thread and waits for it to finish.
pub(crate) async fn serve_on_thread(
    shared: Arc<ConnShared>,
    stream: tokio::net::TcpStream,
    buf: BytesMut,
    mode: WireMode,
    peer: Peer,
    shutdown: watch::Receiver<bool>,
) -> Result<(), ConnError> {
    let socket = stream.into_std()?;
    socket.set_nonblocking(false)?;
    let poll = shared
        .opts
        .idle_timeout
        .map_or(SHUTDOWN_POLL, |idle| idle.min(SHUTDOWN_POLL))
        .max(Duration::from_millis(1));
    socket.set_read_timeout(Some(poll))?;
    let mut guard = CloseOnDrop {
        socket: Some(socket.try_clone()?),
    };
    let ack = Arc::new(ConnAck::new(socket.try_clone()?));
    let runtime = tokio::runtime::Handle::current();
    let (done, finished) = oneshot::channel();
    std::thread::Builder::new()
        .name(format!("tabula-{}", peer.id))
        .spawn(move || {
            let mut conn = ThreadConn {
                shared: &shared,
                socket,
                buf,
                mode,
                peer,
                shutdown,
                runtime,
                chunk: vec![0; READ_CHUNK],
                reply: Vec::with_capacity(REPLY_BUFFER),
                ack,
            };
            let served = conn.serve();
            // A reply still with the acknowledger goes out before the socket closes.
            let settled = conn.ack.settle().map(|_| ()).map_err(ConnError::Io);
            let _ = done.send(served.and(settled));
        })?;
    let outcome = finished
        .await
        .unwrap_or(Err(ConnError::Call(CallError::Panicked)));
    // The thread is done with the socket; nothing to cut off.
    guard.socket = None;
    outcome
}

/// One connection's state on its thread.
struct ThreadConn<'a> {
    shared: &'a ConnShared,
    socket: std::net::TcpStream,
    buf: BytesMut,
    mode: WireMode,
    peer: Peer,
    shutdown: watch::Receiver<bool>,
    runtime: tokio::runtime::Handle,
    /// Receive buffer the socket is read into (allocated once per connection).
    chunk: Vec<u8>,
    /// Reply buffer, reused from call to call.
    reply: Vec<u8>,
    /// This connection's side of the acknowledger (see `server::ack`).
    ack: Arc<ConnAck>,
}

/// How waiting for input ended.
enum Input {
    Data,
    Eof,
    Shutdown,
}

impl ThreadConn<'_> {
    fn serve(&mut self) -> Result<(), ConnError> {
        let limit = self.shared.opts.max_frame_size;
        let mut reader = MessageReader::new(self.mode, limit);
        loop {
            if *self.shutdown.borrow() {
                return Ok(());
            }
            match reader.next(&mut self.buf) {
                Extract::Message(request) => {
                    // The previous reply, if the acknowledger has it, goes first.
                    if let Some(spare) = self.ack.settle()? {
                        if self.reply.capacity() == 0 && spare.capacity() <= RETAIN_BUFFER_LIMIT {
                            self.reply = spare;
                        }
                    }
                    let mut reply = std::mem::take(&mut self.reply);
                    reply.clear();
                    let prefix = self.frame_prefix_len();
                    reply.resize(prefix, 0);
                    let deferrable = self.deferrable(reader.protocol(), &request);
                    let scope = deferrable.as_ref().map(|_| DeferScope::enter());
                    let answered = self.shared.dispatcher.call_blocking(
                        self.peer.id,
                        reader.protocol(),
                        request,
                        &self.runtime,
                        &mut reply,
                    );
                    // Writes a failed or oneway call deferred are completed when
                    // the scope drops; a reply's writes go to the acknowledger.
                    let deferred = match (&scope, &answered) {
                        (Some(scope), Ok(true)) => scope.take(),
                        _ => Vec::new(),
                    };
                    drop(scope);
                    if answered? {
                        if let (Some((method, seqid)), false) = (deferrable, deferred.is_empty()) {
                            self.set_frame_length(&mut reply)?;
                            self.shared.ack.hand_over(Handoff {
                                writes: deferred,
                                reply,
                                failure: FailureReply {
                                    protocol: reader.protocol(),
                                    method,
                                    seqid,
                                    framed: prefix > 0,
                                },
                                conn: Arc::clone(&self.ack),
                            });
                            continue;
                        }
                        self.send_reply(&mut reply)?;
                    }
                    if reply.capacity() <= RETAIN_BUFFER_LIMIT {
                        self.reply = reply;
                    }
                    if self.buf.is_empty() && self.buf.capacity() > RETAIN_BUFFER_LIMIT {
                        self.buf = BytesMut::new();
                    }
                }
                Extract::NeedMore => match self.read_more()? {
                    Input::Data => {}
                    Input::Eof if self.buf.is_empty() => return Ok(()),
                    Input::Eof => return Err(ConnError::Truncated(self.buf.len())),
                    Input::Shutdown => return Ok(()),
                },
                Extract::Oversized { size } => {
                    self.shared.stats.oversized_message();
                    return Err(ConnError::Oversized { size, limit });
                }
                Extract::Malformed {
                    header,
                    error,
                    resumable,
                } => {
                    self.shared.stats.malformed_message();
                    let reply = header.as_ref().and_then(|h| {
                        protocol_error_reply(reader.protocol(), h, &error.to_string())
                    });
                    if let Some(mut reply) = reply {
                        let prefix = self.frame_prefix_len();
                        reply.splice(0..0, std::iter::repeat_n(0, prefix));
                        self.send_reply(&mut reply)?;
                    }
                    if !resumable {
                        return Err(ConnError::Malformed(error));
                    }
                    tracing::info!(
                        peer = %self.peer.addr, conn = %self.peer.id,
                        "answered a malformed message with an exception: {error}"
                    );
                }
            }
        }
    }

    /// Reads more bytes, waking every poll interval to check shutdown and the idle
    /// limit.
    fn read_more(&mut self) -> Result<Input, ConnError> {
        let idle = self.shared.opts.idle_timeout;
        let waiting_since = Instant::now();
        loop {
            if *self.shutdown.borrow() {
                return Ok(Input::Shutdown);
            }
            match self.socket.read(&mut self.chunk) {
                Ok(0) => return Ok(Input::Eof),
                Ok(n) => {
                    self.buf
                        .extend_from_slice(self.chunk.get(..n).unwrap_or(&[]));
                    return Ok(Input::Data);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    // A reply the acknowledger could not send whole waits for this.
                    self.ack.settle_if_idle()?;
                    if let Some(limit) = idle {
                        if waiting_since.elapsed() >= limit {
                            return Err(ConnError::Idle(limit));
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ConnError::Io(e)),
            }
        }
    }

    /// Bytes a reply buffer starts with before the message: a frame's length.
    fn frame_prefix_len(&self) -> usize {
        match self.mode.transport {
            Transport::Framed => FRAME_PREFIX,
            Transport::Unframed | Transport::Http => 0,
        }
    }

    /// The method (as the options spell it) and sequence id of `request` if its
    /// method may defer its synced writes to the acknowledger
    /// ([`crate::server::ServerOptions::deferrable_calls`]).
    fn deferrable(&self, protocol: WireProtocol, request: &[u8]) -> Option<(&'static str, i32)> {
        let calls = self.shared.opts.deferrable_calls;
        if calls.is_empty() {
            return None;
        }
        let header = peek_header(protocol, request, MAX_DEFERRABLE_NAME).ok()?;
        if header.kind != TMessageType::Call {
            return None;
        }
        let method = calls.iter().find(|c| **c == header.name)?;
        Some((method, header.seqid))
    }

    /// Writes one reply (`reply` starts with [`Self::frame_prefix_len`] bytes of room
    /// for the frame length, filled in here) in one write.
    fn send_reply(&mut self, reply: &mut [u8]) -> Result<(), ConnError> {
        self.set_frame_length(reply)?;
        self.socket.write_all(reply)?;
        Ok(())
    }

    /// Fills in a framed reply's length prefix (nothing for other transports).
    fn set_frame_length(&self, reply: &mut [u8]) -> Result<(), ConnError> {
        if let Transport::Framed = self.mode.transport {
            let body = reply.len().saturating_sub(FRAME_PREFIX);
            let len = u32::try_from(body)
                .ok()
                .filter(|len| i32::try_from(*len).is_ok())
                .ok_or(ConnError::ReplyTooLarge(body))?;
            if let Some(prefix) = reply.get_mut(..FRAME_PREFIX) {
                prefix.copy_from_slice(&len.to_be_bytes());
            }
        }
        Ok(())
    }
}
