//! Event loops serving many framed and unframed connections on a few threads.
//!
//! Owns [`Loops`]: a server's event-loop threads (started at its first connection),
//! each polling its connections' sockets and running their quick calls
//! ([`crate::server::ServerOptions::loop_calls`]) inline. A request that arrives
//! while its loop is busy costs no thread wake-up at all, and one that arrives
//! while it sleeps wakes one thread for every socket ready by then, where a thread
//! per connection pays a wake-up per request.
//! A connection whose next call is not on the list moves to a thread of its own
//! (`threaded::spawn`) for the rest of its life, and one whose call ran longer than
//! [`SLOW_CALL`] (a disk read, a write stall) moves there until it has made
//! `threaded::RETURN_AFTER` quick calls in a row: scanners, admin calls, batches and
//! slow calls hold up the other connections of a loop at most once each, and a
//! passing stall does not keep a connection off the loops.
//! Replies go out without blocking; what the socket does not take is sent when it
//! is writable again, and the connection's next call waits for it. A reply with the
//! acknowledger holds the next call back the same way: the acknowledger tells the
//! loop when it is answered (`ConnAck::on_unsettled`), so the loop never waits.
//! Must not: parse messages (framing does), run calls differently from
//! [`crate::server::answer`], or block on a socket.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token, Waker};
use parking_lot::Mutex;

use crate::server::ack::Settled;
use crate::server::answer::{malformed_reply, Answer, CallSite, Route};
use crate::server::conn::ConnError;
use crate::server::framing::{Extract, MessageReader};
use crate::server::threaded::{self, ConnStart, Resume, REPLY_BUFFER, RETAIN_BUFFER_LIMIT};
use crate::server::wire::{MessageHeader, ScanError};

/// A call that runs longer than this moves its connection off the loop.
pub(crate) const SLOW_CALL: Duration = Duration::from_millis(10);
/// How often a loop looks at the shutdown flags and idle limits of its connections.
const TICK: Duration = Duration::from_millis(200);
/// Calls one connection runs before the loop turns to the others.
const CALLS_PER_TURN: usize = 16;
/// Bytes read from a socket at a time.
const READ_CHUNK: usize = 16 * 1024;
/// Readiness events taken per poll.
const EVENTS: usize = 256;
/// The token of a loop's waker.
const WAKE: Token = Token(usize::MAX);

/// A server's event loops.
pub(crate) struct Loops {
    count: usize,
    started: OnceLock<Vec<LoopHandle>>,
    next: AtomicUsize,
}

/// What reaches a loop from other threads.
struct LoopHandle {
    inbox: Arc<Inbox>,
    waker: Arc<Waker>,
}

#[derive(Default)]
struct Inbox {
    queue: Mutex<InboxQueue>,
}

#[derive(Default)]
struct InboxQueue {
    /// Connections to serve.
    adopted: Vec<ConnStart>,
    /// Connections whose reply the acknowledger answered (by token).
    unsettled: Vec<usize>,
    /// The server is gone, or the loop stopped: nothing more is adopted.
    closed: bool,
    /// Shutdown began: look at every connection's shutdown flag now.
    recheck: bool,
}

impl Loops {
    /// `count` loops, started at the first [`Loops::adopt`].
    pub(crate) fn new(count: usize) -> Loops {
        Loops {
            count,
            started: OnceLock::new(),
            next: AtomicUsize::new(0),
        }
    }

    /// Serves `start` on one of the loops (round robin). Gives it back when no loop
    /// runs (none could start, or they stopped).
    pub(crate) fn adopt(&self, start: ConnStart) -> Option<ConnStart> {
        let handles = self.started.get_or_init(|| start_loops(self.count));
        if handles.is_empty() {
            return Some(start);
        }
        let pick = self.next.fetch_add(1, Ordering::Relaxed) % handles.len();
        let Some(handle) = handles.get(pick) else {
            return Some(start);
        };
        {
            let mut q = handle.inbox.queue.lock();
            if q.closed {
                return Some(start);
            }
            q.adopted.push(start);
        }
        if let Err(e) = handle.waker.wake() {
            // The loop still finds the connection at its next tick.
            tracing::warn!("waking an event loop failed: {e}");
        }
        None
    }
}

impl Loops {
    /// Has every running loop look at its connections' shutdown flags and idle
    /// limits at once instead of at its next tick.
    pub(crate) fn recheck(&self) {
        for handle in self.started.get().into_iter().flatten() {
            handle.inbox.queue.lock().recheck = true;
            if let Err(e) = handle.waker.wake() {
                tracing::warn!("waking an event loop failed: {e}");
            }
        }
    }
}

impl Drop for Loops {
    fn drop(&mut self) {
        for handle in self.started.get().into_iter().flatten() {
            handle.inbox.queue.lock().closed = true;
            let _ = handle.waker.wake();
        }
    }
}

/// Starts up to `count` loop threads; returns the handles of those that started.
fn start_loops(count: usize) -> Vec<LoopHandle> {
    let mut handles = Vec::with_capacity(count);
    for n in 0..count {
        match start_loop(n) {
            Ok(handle) => handles.push(handle),
            Err(e) => tracing::warn!("event loop {n} did not start: {e}"),
        }
    }
    handles
}

fn start_loop(n: usize) -> io::Result<LoopHandle> {
    let poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
    let inbox = Arc::new(Inbox::default());
    let event_loop = EventLoop {
        poll,
        inbox: Arc::clone(&inbox),
        waker: Arc::clone(&waker),
        conns: HashMap::new(),
        next_token: 0,
        again: Vec::new(),
        chunk: vec![0; READ_CHUNK],
    };
    std::thread::Builder::new()
        .name(format!("tabula-loop-{n}"))
        .spawn(move || event_loop.run())?;
    Ok(LoopHandle { inbox, waker })
}

/// One loop thread's state.
struct EventLoop {
    poll: Poll,
    inbox: Arc<Inbox>,
    waker: Arc<Waker>,
    conns: HashMap<usize, LoopConn>,
    next_token: usize,
    /// Connections that stopped for others' sake with work left.
    again: Vec<usize>,
    /// Receive buffer sockets are read into.
    chunk: Vec<u8>,
}

/// What serving a connection for a while ended with.
enum Step {
    /// Nothing to do until the socket (or the acknowledger) says so.
    Wait,
    /// More to do after the other connections' turn.
    Again,
    /// The connection ends.
    End(Result<(), ConnError>),
    /// The connection moves to a thread of its own.
    Move(Resume),
}

impl EventLoop {
    fn run(mut self) {
        let served = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.serve()));
        if served.is_err() {
            tracing::error!("an event loop panicked; its connections are closed");
        }
        // No connection may wait on a loop that is gone: those still in the inbox
        // are dropped, which ends them with an error.
        let mut q = self.inbox.queue.lock();
        q.closed = true;
        q.adopted.clear();
    }

    fn serve(&mut self) {
        let mut events = Events::with_capacity(EVENTS);
        let mut ready: Vec<usize> = Vec::new();
        let mut last_tick = Instant::now();
        loop {
            let timeout = if self.again.is_empty() {
                TICK
            } else {
                Duration::ZERO
            };
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    tracing::error!("an event loop's poll failed: {e}");
                    std::thread::sleep(TICK);
                }
            }
            ready.append(&mut self.again);
            let mut woken = false;
            for event in events.iter() {
                match event.token() {
                    WAKE => woken = true,
                    Token(t) => ready.push(t),
                }
            }
            let mut tick = last_tick.elapsed() >= TICK;
            if woken || tick {
                let (closed, recheck) = self.take_inbox(&mut ready);
                if closed && self.conns.is_empty() {
                    return;
                }
                tick |= recheck;
            }
            for token in ready.drain(..) {
                self.service(token);
            }
            if tick {
                last_tick = Instant::now();
                self.tick();
            }
        }
    }

    /// Registers adopted connections and collects the tokens the acknowledger
    /// named into `ready`; returns whether the inbox is closed and whether a
    /// recheck of the connections was asked for.
    fn take_inbox(&mut self, ready: &mut Vec<usize>) -> (bool, bool) {
        let (adopted, unsettled, closed, recheck) = {
            let mut q = self.inbox.queue.lock();
            (
                std::mem::take(&mut q.adopted),
                std::mem::take(&mut q.unsettled),
                q.closed,
                std::mem::take(&mut q.recheck),
            )
        };
        ready.extend(unsettled);
        for start in adopted {
            if let Some(token) = self.register(start) {
                ready.push(token);
            }
        }
        (closed, recheck)
    }

    /// Starts serving `start`; its token, or `None` if it could not be registered
    /// (then it moves to a thread).
    fn register(&mut self, start: ConnStart) -> Option<usize> {
        let token = self.next_token;
        self.next_token = self.next_token.wrapping_add(1) % WAKE.0;
        let registered = start.socket.set_nonblocking(true).and_then(|()| {
            self.poll.registry().register(
                &mut SourceFd(&start.socket.as_raw_fd()),
                Token(token),
                Interest::READABLE | Interest::WRITABLE,
            )
        });
        let reader = MessageReader::new(start.mode, start.shared.opts.max_frame_size);
        if let Err(e) = registered {
            tracing::warn!(conn = %start.peer.id, "an event loop could not take a connection: {e}");
            let _ = threaded::spawn(start, reader, Resume::default());
            return None;
        }
        let inbox = Arc::clone(&self.inbox);
        let waker = Arc::clone(&self.waker);
        start.ack.on_unsettled(Some(Arc::new(move || {
            inbox.queue.lock().unsettled.push(token);
            let _ = waker.wake();
        })));
        let conn = LoopConn {
            start,
            reader,
            held: None,
            out: Vec::new(),
            sent: 0,
            spare: Vec::with_capacity(REPLY_BUFFER),
            last_active: Instant::now(),
        };
        self.conns.insert(token, conn);
        Some(token)
    }

    fn service(&mut self, token: usize) {
        let Some(conn) = self.conns.get_mut(&token) else {
            return;
        };
        match conn.step(&mut self.chunk) {
            Step::Wait => {}
            Step::Again => self.again.push(token),
            Step::End(outcome) => {
                if let Some(conn) = self.remove(token) {
                    conn.finish(outcome);
                }
            }
            Step::Move(resume) => {
                if let Some(conn) = self.remove(token) {
                    conn.move_to_thread(resume);
                }
            }
        }
    }

    fn remove(&mut self, token: usize) -> Option<LoopConn> {
        let conn = self.conns.remove(&token)?;
        let fd = conn.start.socket.as_raw_fd();
        if let Err(e) = self.poll.registry().deregister(&mut SourceFd(&fd)) {
            tracing::debug!(conn = %conn.start.peer.id, "deregistering a connection failed: {e}");
        }
        Some(conn)
    }

    /// Ends connections of a stopping server and those idle too long.
    fn tick(&mut self) {
        let ending: Vec<(usize, Result<(), ConnError>)> = self
            .conns
            .iter_mut()
            .filter_map(|(token, conn)| conn.ending().map(|outcome| (*token, outcome)))
            .collect();
        for (token, outcome) in ending {
            if let Some(conn) = self.remove(token) {
                conn.finish(outcome);
            }
        }
    }
}

/// What a read of a socket found.
enum Input {
    /// Bytes were appended to the buffer.
    Data,
    /// None are there yet.
    Empty,
    /// The client closed its side.
    Eof,
}

/// One connection on a loop.
struct LoopConn {
    start: ConnStart,
    reader: MessageReader,
    /// A request cut from the buffer that waits for the previous reply to leave.
    held: Option<Bytes>,
    /// Reply bytes to send; `sent` of them are.
    out: Vec<u8>,
    sent: usize,
    /// A reply buffer to reuse.
    spare: Vec<u8>,
    /// When the client last sent something.
    last_active: Instant,
}

impl LoopConn {
    /// Runs what the connection has for the loop: sends what is pending, reads,
    /// and runs calls until it would block, has had its turn, or leaves the loop.
    fn step(&mut self, chunk: &mut [u8]) -> Step {
        let mut calls = 0;
        loop {
            // The previous reply, if the acknowledger has it, goes before the next
            // call runs; the acknowledger is asked to say when it is answered only
            // once a call is waiting for it.
            let settled = match self
                .start
                .ack
                .try_settle_into(&mut self.out, self.held.is_some())
            {
                Ok(Settled::Pending) => false,
                Ok(Settled::Done(spare)) => {
                    if let Some(spare) = spare {
                        self.reuse(spare);
                    }
                    true
                }
                Err(e) => return Step::End(Err(ConnError::Io(e))),
            };
            match self.flush() {
                Ok(true) => {}
                Ok(false) => return Step::Wait,
                Err(e) => return Step::End(Err(ConnError::Io(e))),
            }
            if !settled && self.held.is_some() {
                return Step::Wait;
            }
            if calls >= CALLS_PER_TURN {
                return Step::Again;
            }
            let request = match self.held.take() {
                Some(request) => request,
                None => match self.reader.next(&mut self.start.buf) {
                    Extract::Message(request) => request,
                    Extract::NeedMore => match self.read(chunk) {
                        Ok(Input::Data) => continue,
                        Ok(Input::Empty) => return Step::Wait,
                        Ok(Input::Eof) if self.start.buf.is_empty() => return Step::End(Ok(())),
                        Ok(Input::Eof) => {
                            return Step::End(Err(ConnError::Truncated(self.start.buf.len())))
                        }
                        Err(e) => return Step::End(Err(ConnError::Io(e))),
                    },
                    Extract::Oversized { size } => {
                        self.start.shared.stats.oversized_message();
                        let limit = self.start.shared.opts.max_frame_size;
                        return Step::End(Err(ConnError::Oversized { size, limit }));
                    }
                    Extract::Malformed {
                        header,
                        error,
                        resumable,
                    } => {
                        if let Err(e) = self.answer_malformed(header.as_ref(), &error) {
                            return Step::End(Err(e));
                        }
                        if !resumable {
                            return Step::End(Err(ConnError::Malformed(error)));
                        }
                        continue;
                    }
                },
            };
            if !settled {
                self.held = Some(request);
                continue;
            }
            let protocol = self.reader.protocol();
            let route = Route::of(&self.start.shared.opts, protocol, &request);
            if !route.on_loop {
                return Step::Move(Resume {
                    returnable: false,
                    unsent: Vec::new(),
                    request: Some(request),
                });
            }
            calls += 1;
            let began = Instant::now();
            crate::call_notes::take_waited_on_network();
            let site = CallSite {
                shared: &self.start.shared,
                connection: self.start.peer.id,
                mode: self.start.mode,
                runtime: &self.start.runtime,
                ack: &self.start.ack,
            };
            let buffer = std::mem::take(&mut self.spare);
            match site.answer(protocol, request, route, buffer) {
                Ok(Answer::HandedOver) => {}
                Ok(Answer::Reply(reply)) => {
                    self.out = reply;
                    self.sent = 0;
                }
                Ok(Answer::Nothing(buffer)) => self.reuse(buffer),
                Err(e) => return Step::End(Err(e)),
            }
            let took = began.elapsed();
            let waited = crate::call_notes::take_waited_on_network();
            if took > SLOW_CALL || waited {
                tracing::debug!(
                    conn = %self.start.peer.id,
                    waited_on_network = waited,
                    "a call ran {took:?}; the connection moves to a thread of its own"
                );
                return Step::Move(Resume {
                    returnable: true,
                    unsent: self.take_unsent(),
                    request: None,
                });
            }
        }
    }

    /// Answers a malformed message with an exception when its header was read.
    fn answer_malformed(
        &mut self,
        header: Option<&MessageHeader>,
        error: &ScanError,
    ) -> Result<(), ConnError> {
        self.start.shared.stats.malformed_message();
        let text = error.to_string();
        let protocol = self.reader.protocol();
        if let Some(reply) = malformed_reply(self.start.mode, protocol, header, &text)? {
            self.out = reply;
            self.sent = 0;
        }
        tracing::info!(
            peer = %self.start.peer.addr, conn = %self.start.peer.id,
            "answered a malformed message with an exception: {text}"
        );
        Ok(())
    }

    /// Reads what the socket has.
    fn read(&mut self, chunk: &mut [u8]) -> io::Result<Input> {
        loop {
            match (&self.start.socket).read(chunk) {
                Ok(0) => return Ok(Input::Eof),
                Ok(n) => {
                    self.start
                        .buf
                        .extend_from_slice(chunk.get(..n).unwrap_or(&[]));
                    self.last_active = Instant::now();
                    return Ok(Input::Data);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if self.start.buf.is_empty() && self.start.buf.capacity() > RETAIN_BUFFER_LIMIT
                    {
                        self.start.buf = BytesMut::new();
                    }
                    return Ok(Input::Empty);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends what is pending without blocking; whether all of it left.
    fn flush(&mut self) -> io::Result<bool> {
        while let Some(rest) = self.out.get(self.sent..).filter(|r| !r.is_empty()) {
            match (&self.start.socket).write(rest) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if !self.out.is_empty() {
            let sent = std::mem::take(&mut self.out);
            self.reuse(sent);
        }
        self.sent = 0;
        Ok(true)
    }

    /// Keeps `buffer` (emptied) as the next reply's, unless it grew too large.
    fn reuse(&mut self, mut buffer: Vec<u8>) {
        if buffer.capacity() <= RETAIN_BUFFER_LIMIT && buffer.capacity() > self.spare.capacity() {
            buffer.clear();
            self.spare = buffer;
        }
    }

    /// The reply bytes not sent yet, taken out.
    fn take_unsent(&mut self) -> Vec<u8> {
        let unsent = self.out.get(self.sent..).unwrap_or(&[]).to_vec();
        self.out.clear();
        self.sent = 0;
        unsent
    }

    /// Why the connection must end now, at a tick: its server stops and it has no
    /// reply left to send (one the client does not read waits for the shutdown's
    /// grace to run out, which closes the socket), or it has been idle too long.
    fn ending(&mut self) -> Option<Result<(), ConnError>> {
        if *self.start.shutdown.borrow() {
            let settled = match self.start.ack.try_settle_into(&mut self.out, false) {
                Ok(Settled::Pending) => false,
                Ok(Settled::Done(_)) => true,
                Err(e) => return Some(Err(ConnError::Io(e))),
            };
            return match self.flush() {
                Ok(true) if settled && self.held.is_none() => Some(Ok(())),
                Ok(_) => None,
                Err(e) => Some(Err(ConnError::Io(e))),
            };
        }
        let limit = self.start.shared.opts.idle_timeout?;
        let idle = self.held.is_none()
            && self.out.len() == self.sent
            && self.last_active.elapsed() >= limit;
        idle.then_some(Err(ConnError::Idle(limit)))
    }

    /// Sends what is left as far as the socket takes it without blocking (after
    /// waiting for a reply still with the acknowledger, no longer than its sync)
    /// and says how the connection ended.
    fn finish(mut self, outcome: Result<(), ConnError>) {
        let settled = self
            .start
            .ack
            .settle_into(&mut self.out)
            .and_then(|_| match self.flush() {
                Ok(true) => Ok(()),
                Ok(false) => {
                    tracing::debug!(
                        conn = %self.start.peer.id,
                        "closing with {} reply bytes the client did not take",
                        self.out.len().saturating_sub(self.sent)
                    );
                    Ok(())
                }
                Err(e) => Err(e),
            });
        let _ = self
            .start
            .done
            .send(outcome.and(settled.map_err(ConnError::Io)));
    }

    /// Hands the connection to a thread of its own, from where `resume` says.
    fn move_to_thread(mut self, mut resume: Resume) {
        self.start.ack.on_unsettled(None);
        if let Some(held) = self.held.take() {
            resume.request = Some(held);
        }
        let peer = self.start.peer;
        if let Err(e) = threaded::spawn(self.start, self.reader, resume) {
            tracing::warn!(conn = %peer.id, "a connection thread did not start: {e}");
        }
    }
}
