//! The request/reply loop of a framed or unframed Thrift connection, on an OS thread
//! of its own, and the hand-off of a detected connection to where it is served.
//!
//! Owns: moving a detected connection's socket off the async runtime, either onto
//! one of the server's event loops (`event_loop`, when the options list calls for
//! them) or onto a dedicated thread that reads a message, runs the processor on that
//! same thread, writes the reply and reads again; taking over, on a new thread,
//! a connection an event loop gives up; and giving one that left its loop for a
//! slow call back once its calls are quick again. A call then costs one wake-up (the
//! socket's) instead of the three a hand-off to a blocking pool costs, which is most
//! of a small call's price. The thread polls for shutdown and the idle limit between
//! reads; the async task that started the connection waits for it, so the accept
//! loop's drain and the connection observer see the connection as before, and
//! closes the socket if it is dropped (cut off at shutdown).
//! Must not: parse messages (framing does) or run calls differently from
//! [`crate::server::answer`].

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use parking_lot::Mutex;
use tokio::sync::{oneshot, watch};

use crate::server::ack::ConnAck;
use crate::server::answer::{malformed_reply, Answer, CallSite, Route};
use crate::server::call::CallError;
use crate::server::conn::{ConnError, ConnShared, Peer};
use crate::server::detect::WireMode;
use crate::server::event_loop::SLOW_CALL;
use crate::server::framing::{Extract, MessageReader};
use crate::server::wire::WireProtocol;

/// Longest a connection thread sleeps in a read before looking at the shutdown flag.
const SHUTDOWN_POLL: Duration = Duration::from_millis(200);
/// Bytes read from the socket at a time.
const READ_CHUNK: usize = 16 * 1024;
/// An empty receive buffer (or a reply buffer) holding more than this is released
/// between calls.
pub(crate) const RETAIN_BUFFER_LIMIT: usize = 256 * 1024;
/// Quick loop calls in a row after which a connection that left its loop for a
/// slow call goes back.
pub(crate) const RETURN_AFTER: usize = 64;
/// Capacity a connection's reply buffer starts with (a get of a 1 KB value fits).
pub(crate) const REPLY_BUFFER: usize = 4 * 1024;

/// Closes the socket when the waiting task is dropped before the connection is done.
struct CloseOnDrop {
    socket: Option<TcpStream>,
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if let Some(s) = self.socket.take() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// A detected connection, ready to be served by a thread or an event loop.
pub(crate) struct ConnStart {
    pub(crate) shared: Arc<ConnShared>,
    pub(crate) socket: TcpStream,
    /// Bytes read and not yet cut into messages.
    pub(crate) buf: BytesMut,
    pub(crate) mode: WireMode,
    pub(crate) peer: Peer,
    pub(crate) shutdown: watch::Receiver<bool>,
    /// The runtime of the server's task (used only to wait for a call slot).
    pub(crate) runtime: tokio::runtime::Handle,
    /// This connection's side of the acknowledger (see `server::ack`).
    pub(crate) ack: Arc<ConnAck>,
    /// Told how the connection ended.
    pub(crate) done: oneshot::Sender<Result<(), ConnError>>,
}

/// Where a connection moved over from an event loop stands.
#[derive(Default)]
pub(crate) struct Resume {
    /// The connection left its loop for a slow call, not for a call that may not
    /// run on a loop: after [`RETURN_AFTER`] quick loop calls in a row (and none of
    /// another kind) it goes back to a loop.
    pub(crate) returnable: bool,
    /// Reply bytes not sent yet: they go first.
    pub(crate) unsent: Vec<u8>,
    /// A request already cut from the buffer and not run yet: it runs next.
    pub(crate) request: Option<Bytes>,
}

/// Serves `stream` (already detected as `mode`, with `buf` holding bytes read so far)
/// on an event loop of the server or on a thread of its own, and waits until it
/// is done.
pub(crate) async fn serve_on_thread(
    shared: Arc<ConnShared>,
    stream: tokio::net::TcpStream,
    buf: BytesMut,
    mode: WireMode,
    peer: Peer,
    shutdown: watch::Receiver<bool>,
) -> Result<(), ConnError> {
    let socket = stream.into_std()?;
    let mut guard = CloseOnDrop {
        socket: Some(socket.try_clone()?),
    };
    let ack = Arc::new(ConnAck::new(socket.try_clone()?));
    let (done, finished) = oneshot::channel();
    let start = ConnStart {
        shared: Arc::clone(&shared),
        socket,
        buf,
        mode,
        peer,
        shutdown,
        runtime: tokio::runtime::Handle::current(),
        ack,
        done,
    };
    let start = if shared.opts.serves_on_loops() {
        shared.loops.adopt(start)
    } else {
        Some(start)
    };
    if let Some(start) = start {
        let reader = MessageReader::new(mode, shared.opts.max_frame_size);
        spawn(start, reader, Resume::default())?;
    }
    let outcome = finished
        .await
        .unwrap_or(Err(ConnError::Call(CallError::Panicked)));
    // The connection is done with the socket; nothing to cut off.
    guard.socket = None;
    outcome
}

/// Serves `start` on a new thread from where `resume` says it stands.
pub(crate) fn spawn(start: ConnStart, reader: MessageReader, resume: Resume) -> io::Result<()> {
    let poll = start
        .shared
        .opts
        .idle_timeout
        .map_or(SHUTDOWN_POLL, |idle| idle.min(SHUTDOWN_POLL))
        .max(Duration::from_millis(1));
    start.socket.set_nonblocking(false)?;
    start.socket.set_read_timeout(Some(poll))?;
    let name = format!("tabula-{}", start.peer.id);
    // Held here too, so that a thread that does not start still answers `done`.
    let handed = Arc::new(Mutex::new(Some((start, reader, resume))));
    let taken = Arc::clone(&handed);
    let spawned = std::thread::Builder::new().name(name).spawn(move || {
        let Some((start, reader, resume)) = taken.lock().take() else {
            return;
        };
        serve_thread(start, reader, resume);
    });
    if let Err(e) = spawned {
        if let Some((start, _, _)) = handed.lock().take() {
            let _ = start
                .done
                .send(Err(ConnError::Io(io::Error::new(e.kind(), e.to_string()))));
        }
        return Err(e);
    }
    Ok(())
}

/// Serves a connection on the calling thread until it ends, or until it goes
/// back to an event loop (see [`Resume::returnable`]).
fn serve_thread(start: ConnStart, reader: MessageReader, resume: Resume) {
    let (mut conn, done) = ThreadConn::new(start);
    let served = conn.serve(reader, resume);
    if let Ok(Served::Return) = served {
        let shared = Arc::clone(&conn.shared);
        let Some(start) = shared.loops.adopt(conn.into_start(done)) else {
            return;
        };
        // No loop takes it: it stays here for good.
        let (conn, done) = ThreadConn::new(start);
        let reader = MessageReader::new(conn.mode, conn.shared.opts.max_frame_size);
        return serve_to_end(conn, reader, done);
    }
    finish(conn, done, served);
}

/// Serves a connection that may not go back to a loop until it ends.
fn serve_to_end(
    mut conn: ThreadConn,
    reader: MessageReader,
    done: oneshot::Sender<Result<(), ConnError>>,
) {
    let served = conn.serve(reader, Resume::default());
    finish(conn, done, served);
}

/// Says how a connection on a thread ended, once a reply still with the
/// acknowledger went out.
fn finish(
    conn: ThreadConn,
    done: oneshot::Sender<Result<(), ConnError>>,
    served: Result<Served, ConnError>,
) {
    let settled = conn.ack.settle().map(|_| ()).map_err(ConnError::Io);
    let _ = done.send(served.map(|_| ()).and(settled));
}

/// How [`ThreadConn::serve`] ended without an error.
enum Served {
    /// The connection ended.
    Ended,
    /// The connection goes back to an event loop.
    Return,
}

/// One connection's state on its thread.
struct ThreadConn {
    shared: Arc<ConnShared>,
    socket: TcpStream,
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

impl ThreadConn {
    fn new(start: ConnStart) -> (ThreadConn, oneshot::Sender<Result<(), ConnError>>) {
        let ConnStart {
            shared,
            socket,
            buf,
            mode,
            peer,
            shutdown,
            runtime,
            ack,
            done,
        } = start;
        let conn = ThreadConn {
            shared,
            socket,
            buf,
            mode,
            shutdown,
            peer,
            runtime,
            chunk: vec![0; READ_CHUNK],
            reply: Vec::with_capacity(REPLY_BUFFER),
            ack,
        };
        (conn, done)
    }

    fn into_start(self, done: oneshot::Sender<Result<(), ConnError>>) -> ConnStart {
        ConnStart {
            shared: self.shared,
            socket: self.socket,
            buf: self.buf,
            mode: self.mode,
            peer: self.peer,
            shutdown: self.shutdown,
            runtime: self.runtime,
            ack: self.ack,
            done,
        }
    }

    fn serve(&mut self, mut reader: MessageReader, resume: Resume) -> Result<Served, ConnError> {
        if !resume.unsent.is_empty() {
            self.socket.write_all(&resume.unsent)?;
        }
        let mut returnable = resume.returnable && self.shared.opts.serves_on_loops();
        let mut quick_streak = 0;
        if let Some(request) = resume.request {
            self.run_call(reader.protocol(), request, false)?;
        }
        let limit = self.shared.opts.max_frame_size;
        loop {
            if *self.shutdown.borrow() {
                return Ok(Served::Ended);
            }
            match reader.next(&mut self.buf) {
                Extract::Message(request) => {
                    let (on_loop, slow) = self.run_call(reader.protocol(), request, returnable)?;
                    if let Some(slow) = slow {
                        returnable = on_loop;
                        quick_streak = if slow { 0 } else { quick_streak + 1 };
                        // Back with no partial message held: the loop's reader starts
                        // at a message boundary.
                        if quick_streak >= RETURN_AFTER && self.buf.is_empty() {
                            return Ok(Served::Return);
                        }
                    }
                }
                Extract::NeedMore => match self.read_more()? {
                    Input::Data => {}
                    Input::Eof if self.buf.is_empty() => return Ok(Served::Ended),
                    Input::Eof => return Err(ConnError::Truncated(self.buf.len())),
                    Input::Shutdown => return Ok(Served::Ended),
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
                    let text = error.to_string();
                    if let Some(reply) =
                        malformed_reply(self.mode, reader.protocol(), header.as_ref(), &text)?
                    {
                        self.socket.write_all(&reply)?;
                    }
                    if !resumable {
                        return Err(ConnError::Malformed(error));
                    }
                    tracing::info!(
                        peer = %self.peer.addr, conn = %self.peer.id,
                        "answered a malformed message with an exception: {text}"
                    );
                }
            }
        }
    }

    /// Runs one request and sends its reply (or hands it to the acknowledger);
    /// returns whether the call may run on a loop and, if `timed`, how long it ran.
    fn run_call(
        &mut self,
        protocol: WireProtocol,
        request: Bytes,
        timed: bool,
    ) -> Result<(bool, Option<bool>), ConnError> {
        // The previous reply, if the acknowledger has it, goes first.
        if let Some(spare) = self.ack.settle()? {
            if self.reply.capacity() == 0 && spare.capacity() <= RETAIN_BUFFER_LIMIT {
                self.reply = spare;
            }
        }
        let route = Route::of(&self.shared.opts, protocol, &request);
        let began = timed.then(Instant::now);
        crate::call_notes::take_waited_on_network();
        let site = CallSite {
            shared: &self.shared,
            connection: self.peer.id,
            mode: self.mode,
            runtime: &self.runtime,
            ack: &self.ack,
        };
        let reply = match site.answer(protocol, request, route, std::mem::take(&mut self.reply))? {
            Answer::HandedOver => None,
            Answer::Reply(reply) => {
                self.socket.write_all(&reply)?;
                Some(reply)
            }
            Answer::Nothing(reply) => Some(reply),
        };
        if let Some(reply) = reply.filter(|r| r.capacity() <= RETAIN_BUFFER_LIMIT) {
            self.reply = reply;
        }
        // Slow: it ran long, or it waited on another process (a loop must not run it).
        let waited = crate::call_notes::take_waited_on_network();
        let slow = began.map(|b| waited || b.elapsed() > SLOW_CALL);
        if self.buf.is_empty() && self.buf.capacity() > RETAIN_BUFFER_LIMIT {
            self.buf = BytesMut::new();
        }
        Ok((route.on_loop, slow))
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
}
