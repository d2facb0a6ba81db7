//! Answering synced writes from the thread that waits for their commit log.
//!
//! Owns [`Acknowledger`]: one thread per server that takes the replies of calls
//! whose synced writes were deferred (see [`tabula_storage::deferred`]), completes
//! the writes of every reply waiting (one log sync per commit log for all of them:
//! a group commit), and then sends each reply on its connection, or an IOError in
//! its place when the write's sync failed. A connection thread hands a reply over
//! and goes back to its socket instead of sleeping through the group commit and
//! being woken for it: a synced one-row put costs its connection thread one
//! wake-up (the request's) instead of two.
//! Each connection has one [`ConnAck`]: at most one reply of it is handed over at a
//! time, and the connection thread waits for it before running its next call, so
//! replies leave in request order and a client's next call sees its write. An HTTP
//! call hands its reply over with a channel instead ([`ReplyTo::Waiter`]) and
//! awaits it: HTTP/1.1 answers a connection's requests in order anyway.
//! Must not: decide which calls may defer their writes (the connection loop does)
//! or parse requests.

use std::io::{self, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};
use tabula_storage::deferred::{self, DeferredWrite};

use crate::server::answer::{frame_prefix_len, set_frame_length};
use crate::server::call::io_error_reply;
use crate::server::detect::WireMode;
use crate::server::wire::WireProtocol;

/// A reply whose call deferred its writes' log sync.
pub(crate) struct Handoff {
    /// The writes to complete before the reply may be sent.
    pub(crate) writes: Vec<DeferredWrite>,
    /// The whole reply, frame length included.
    pub(crate) reply: Vec<u8>,
    /// What answers the call instead if a write's sync fails.
    pub(crate) failure: FailureReply,
    /// Who gets the answer.
    pub(crate) to: ReplyTo,
}

impl Handoff {
    pub(crate) fn new(
        writes: Vec<DeferredWrite>,
        reply: Vec<u8>,
        failure: FailureReply,
        to: ReplyTo,
    ) -> Handoff {
        Handoff {
            writes,
            reply,
            failure,
            to,
        }
    }
}

impl FailureReply {
    /// What answers `call` (its method and sequence id), sent in `protocol` and
    /// delimited as `mode` says, if its writes fail to sync.
    pub(crate) fn of(
        (method, seqid): (&'static str, i32),
        protocol: WireProtocol,
        mode: WireMode,
    ) -> FailureReply {
        FailureReply {
            protocol,
            method,
            seqid,
            mode,
        }
    }
}

/// Where a handed-over reply goes once its writes are synced.
pub(crate) enum ReplyTo {
    /// Sent on a framed or unframed connection's socket.
    Connection(Arc<ConnAck>),
    /// Given to an HTTP call awaiting it (the reply, or why there is none); a
    /// dropped sender (the acknowledger failed) is an error for the call too.
    Waiter(tokio::sync::oneshot::Sender<io::Result<Vec<u8>>>),
}

/// Enough of a request to answer it with an IOError.
pub(crate) struct FailureReply {
    pub(crate) protocol: WireProtocol,
    pub(crate) method: &'static str,
    pub(crate) seqid: i32,
    /// How the connection's replies are delimited.
    pub(crate) mode: WireMode,
}

/// A connection's side of the hand-over.
pub(crate) struct ConnAck {
    /// The connection's socket (a duplicate of the connection thread's handle).
    socket: TcpStream,
    slot: Mutex<Slot>,
    settled: Condvar,
    /// Told when a reply leaves bytes unsent or fails to send: set by an event loop,
    /// which has no thread waiting on this connection to notice.
    unsettled: Mutex<Option<Arc<dyn Fn() + Send + Sync>>>,
}

#[derive(Default)]
struct Slot {
    /// A reply is handed over and not yet sent.
    in_flight: bool,
    /// Bytes of a sent reply the socket did not take without blocking; the
    /// connection thread writes them.
    unsent: Vec<u8>,
    /// Sending failed: the connection is broken.
    failed: Option<io::Error>,
    /// A reply buffer given back for reuse.
    spare: Option<Vec<u8>>,
    /// The connection waits to hear when the reply in flight is answered.
    watched: bool,
}

/// What [`ConnAck::try_settle_into`] found.
pub(crate) enum Settled {
    /// A reply is still with the acknowledger.
    Pending,
    /// Nothing is handed over; a reply buffer to reuse, if one came back.
    Done(Option<Vec<u8>>),
}

impl ConnAck {
    pub(crate) fn new(socket: TcpStream) -> Self {
        ConnAck {
            socket,
            slot: Mutex::new(Slot::default()),
            settled: Condvar::new(),
            unsettled: Mutex::new(None),
        }
    }

    /// Has `notify` called whenever the acknowledger leaves part of a reply unsent
    /// or fails to send one, or answers a watched reply (replacing the callback set
    /// before, if any; `None` removes it).
    pub(crate) fn on_unsettled(&self, notify: Option<Arc<dyn Fn() + Send + Sync>>) {
        *self.unsettled.lock() = notify;
    }

    /// Waits until no reply of this connection is handed over, writes (blocking)
    /// what the acknowledger could not send without blocking, and reports a failed
    /// send. Returns a reply buffer to reuse, if one came back.
    pub(crate) fn settle(&self) -> io::Result<Option<Vec<u8>>> {
        let (unsent, spare) = self.wait_settled()?;
        if !unsent.is_empty() {
            (&self.socket).write_all(&unsent)?;
        }
        Ok(spare)
    }

    /// [`ConnAck::settle`] for a socket that does not block: waits for a reply in
    /// flight and appends what the acknowledger could not send to `out`.
    pub(crate) fn settle_into(&self, out: &mut Vec<u8>) -> io::Result<Option<Vec<u8>>> {
        let (unsent, spare) = self.wait_settled()?;
        out.extend_from_slice(&unsent);
        Ok(spare)
    }

    /// [`ConnAck::settle`] without waiting or writing, for a connection whose socket
    /// does not block: while a reply is handed over, answers [`Settled::Pending`]
    /// (and, with `watch`, has the acknowledger call the [`ConnAck::on_unsettled`]
    /// callback once it is answered); otherwise appends what the acknowledger could
    /// not send to `out`.
    pub(crate) fn try_settle_into(&self, out: &mut Vec<u8>, watch: bool) -> io::Result<Settled> {
        let mut slot = self.slot.lock();
        if slot.in_flight {
            slot.watched |= watch;
            return Ok(Settled::Pending);
        }
        if let Some(e) = slot.failed.take() {
            return Err(e);
        }
        out.extend_from_slice(&slot.unsent);
        slot.unsent = Vec::new();
        Ok(Settled::Done(slot.spare.take()))
    }

    /// Waits until no reply is handed over; returns the bytes left unsent and a
    /// buffer to reuse, or the error that ended sending.
    fn wait_settled(&self) -> io::Result<(Vec<u8>, Option<Vec<u8>>)> {
        let mut slot = self.slot.lock();
        while slot.in_flight {
            self.settled.wait(&mut slot);
        }
        if let Some(e) = slot.failed.take() {
            return Err(e);
        }
        Ok((std::mem::take(&mut slot.unsent), slot.spare.take()))
    }

    /// [`ConnAck::settle`] if no reply is in flight; otherwise nothing (no wait).
    pub(crate) fn settle_if_idle(&self) -> io::Result<()> {
        if self.slot.lock().in_flight {
            return Ok(());
        }
        self.settle().map(|_| ())
    }

    /// Ends a hand-over that will not be answered: the connection thread gets an
    /// error and closes the connection (the client sees it closed, unanswered).
    fn abandon(&self) {
        let mut slot = self.slot.lock();
        if slot.in_flight {
            slot.in_flight = false;
            slot.failed = Some(io::Error::other("the acknowledger failed"));
            drop(slot);
            self.settled.notify_all();
            self.tell_unsettled();
        }
    }

    fn tell_unsettled(&self) {
        let notify = self.unsettled.lock().clone();
        if let Some(notify) = notify {
            notify();
        }
    }

    fn begin(&self) {
        self.slot.lock().in_flight = true;
    }

    /// Sends `answer` (the reply, or why there is none) and settles the slot: under
    /// the slot's lock, so a connection thread that wakes for the client's next
    /// request while the reply is being sent waits on the lock, not on a sleep.
    /// What the socket does not take without blocking is left for the connection
    /// thread; the answer's buffer comes back for reuse (`spare` when it was not sent).
    fn answer(&self, answer: io::Result<Vec<u8>>, spare: Vec<u8>) {
        let mut slot = self.slot.lock();
        let (unsent, failed, mut spare) = match answer {
            Ok(bytes) => {
                let (unsent, failed) = self.send(&bytes);
                let keep = if bytes.capacity() > 0 { bytes } else { spare };
                (unsent, failed, keep)
            }
            Err(e) => (Vec::new(), Some(e), spare),
        };
        spare.clear();
        let unsettled = !unsent.is_empty() || failed.is_some() || slot.watched;
        slot.watched = false;
        slot.in_flight = false;
        slot.unsent = unsent;
        slot.failed = failed;
        slot.spare = Some(spare);
        drop(slot);
        self.settled.notify_all();
        if unsettled {
            self.tell_unsettled();
        }
    }

    /// Sends `bytes` without blocking; returns what the socket did not take and the
    /// error that ended sending.
    fn send(&self, bytes: &[u8]) -> (Vec<u8>, Option<io::Error>) {
        let sock = socket2::SockRef::from(&self.socket);
        let mut sent = 0;
        while let Some(rest) = bytes.get(sent..).filter(|r| !r.is_empty()) {
            match sock.send_with_flags(rest, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) {
                Ok(0) => return (Vec::new(), Some(io::ErrorKind::WriteZero.into())),
                Ok(n) => sent += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return (rest.to_vec(), None),
                Err(e) => return (Vec::new(), Some(e)),
            }
        }
        (Vec::new(), None)
    }
}

struct Queue {
    waiting: Vec<Handoff>,
    stopping: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    work: Condvar,
}

/// The thread that completes deferred writes and sends their replies (started at
/// the first hand-over).
pub(crate) struct Acknowledger {
    shared: Arc<Shared>,
    /// Set once the thread has started.
    started: AtomicBool,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Acknowledger {
    pub(crate) fn new() -> Acknowledger {
        Acknowledger {
            shared: Arc::new(Shared {
                queue: Mutex::new(Queue {
                    waiting: Vec::new(),
                    stopping: false,
                }),
                work: Condvar::new(),
            }),
            started: AtomicBool::new(false),
            thread: Mutex::new(None),
        }
    }

    /// Takes over a reply: its connection must [`ConnAck::settle`] before its next
    /// call. Once stopped (or if its thread cannot start) the acknowledger completes
    /// and sends the reply on the calling thread.
    pub(crate) fn hand_over(&self, handoff: Handoff) {
        if let ReplyTo::Connection(conn) = &handoff.to {
            conn.begin();
        }
        if self.running() {
            let mut q = self.shared.queue.lock();
            if !q.stopping {
                q.waiting.push(handoff);
                drop(q);
                self.shared.work.notify_one();
                return;
            }
        }
        acknowledge(vec![handoff]);
    }

    /// Whether the thread runs, starting it if it was never started.
    fn running(&self) -> bool {
        if self.started.load(Ordering::Acquire) {
            return true;
        }
        let mut thread = self.thread.lock();
        if thread.is_some() {
            return true;
        }
        if self.shared.queue.lock().stopping {
            return false;
        }
        let shared = Arc::clone(&self.shared);
        match std::thread::Builder::new()
            .name("tabula-ack".into())
            .spawn(move || run(&shared))
        {
            Ok(handle) => {
                *thread = Some(handle);
                self.started.store(true, Ordering::Release);
                true
            }
            Err(e) => {
                tracing::warn!("the acknowledger thread did not start: {e}");
                false
            }
        }
    }

    /// Completes what is handed over and stops the thread.
    pub(crate) fn stop(&self) {
        self.shared.queue.lock().stopping = true;
        self.shared.work.notify_one();
        if let Some(thread) = self.thread.lock().take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Acknowledger {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(shared: &Shared) {
    loop {
        let batch = {
            let mut q = shared.queue.lock();
            while q.waiting.is_empty() && !q.stopping {
                shared.work.wait(&mut q);
            }
            if q.waiting.is_empty() {
                return;
            }
            std::mem::take(&mut q.waiting)
        };
        let conns: Vec<Arc<ConnAck>> = batch
            .iter()
            .filter_map(|h| match &h.to {
                ReplyTo::Connection(conn) => Some(Arc::clone(conn)),
                ReplyTo::Waiter(_) => None,
            })
            .collect();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| acknowledge(batch)));
        if outcome.is_err() {
            // No connection may wait forever for a reply that will not come (an
            // HTTP call's sender was dropped with the batch: it hears it).
            tracing::error!("the acknowledger panicked; its connections are closed");
            for conn in conns {
                conn.abandon();
            }
        }
    }
}

/// Completes every write of `batch` (one sync per commit log) and answers each call:
/// its reply, or an IOError if one of its writes did not sync.
fn acknowledge(batch: Vec<Handoff>) {
    let mut writes = Vec::new();
    let mut counts = Vec::with_capacity(batch.len());
    let mut replies = Vec::with_capacity(batch.len());
    for h in batch {
        counts.push(h.writes.len());
        writes.extend(h.writes);
        replies.push((h.reply, h.failure, h.to));
    }
    let results = deferred::complete(&writes);
    let mut results = results.into_iter();
    for ((mut reply, failure, to), count) in replies.into_iter().zip(counts) {
        // Every result of this call is consumed, so the next call's start where
        // they should even when one of these failed.
        let failed = results
            .by_ref()
            .take(count)
            .fold(None, |first, r| first.or(r.err()));
        let answer = match failed {
            None => Ok(std::mem::take(&mut reply)),
            Some(e) => {
                tracing::warn!(method = %failure.method, "a write's commit log sync failed: {e}");
                failure_bytes(&failure, &e.to_string())
                    .ok_or_else(|| io::Error::other("the IOError reply did not encode"))
            }
        };
        match to {
            ReplyTo::Connection(conn) => conn.answer(answer, reply),
            // A caller that stopped waiting (its connection closed) needs nothing.
            ReplyTo::Waiter(sender) => {
                let _ = sender.send(answer);
            }
        }
    }
}

/// The IOError answering `failure`'s call, framed as its replies are.
fn failure_bytes(failure: &FailureReply, reason: &str) -> Option<Vec<u8>> {
    let message = format!("the commit log sync failed: {reason}");
    let mut reply = io_error_reply(failure.protocol, failure.method, failure.seqid, &message)?;
    reply.splice(0..0, std::iter::repeat_n(0, frame_prefix_len(failure.mode)));
    set_frame_length(failure.mode, &mut reply).ok()?;
    Some(reply)
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};

    use bytes::Bytes;
    use tabula_storage::deferred::DeferScope;
    use tabula_storage::{
        Durability, Engine, EngineOptions, FamilySchema, ReadOptions, RowMutation, TableSchema,
        Tablet, TabletDescriptor,
    };

    use super::*;

    /// A connected (client, server) socket pair on loopback.
    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let client = TcpStream::connect(addr).expect("connect");
        let (server, _) = listener.accept().expect("accept");
        (client, server)
    }

    fn tablet(dir: &std::path::Path) -> (Engine, Arc<Tablet>) {
        let mut opts = EngineOptions::new(dir);
        opts.background_work = false;
        let engine = Engine::open(opts).expect("engine");
        let schema = TableSchema::new("t", vec![FamilySchema::new(&b"f"[..])]).expect("schema");
        let tablet = engine
            .open_tablet(TabletDescriptor {
                id: 1,
                schema,
                start_row: Bytes::new(),
                end_row: Bytes::new(),
            })
            .expect("tablet");
        (engine, tablet)
    }

    /// A synced put of `row` made in a deferral scope: the writes it left there.
    fn deferred_put(tablet: &Tablet, row: &'static str) -> Vec<DeferredWrite> {
        let scope = DeferScope::enter();
        let rm =
            RowMutation::new(Bytes::from_static(row.as_bytes())).put(&b"f"[..], &b"q"[..], 1, "v");
        tablet.mutate(&rm, Durability::Sync).expect("put");
        scope.take()
    }

    fn visible(tablet: &Tablet, row: &'static str) -> bool {
        let row = Bytes::from_static(row.as_bytes());
        !tablet
            .get(&row, ReadOptions::latest())
            .expect("get")
            .is_empty()
    }

    fn failure() -> FailureReply {
        FailureReply {
            protocol: WireProtocol::Binary,
            method: "mutateRow",
            seqid: 1,
            mode: WireMode {
                transport: crate::server::detect::Transport::Unframed,
                protocol: WireProtocol::Binary,
            },
        }
    }

    #[test]
    fn a_failed_sync_is_answered_as_the_connection_frames_its_replies() {
        let unframed = failure_bytes(&failure(), "disk gone").expect("unframed reply");
        let needle = b"the commit log sync failed: disk gone";
        assert!(unframed.windows(needle.len()).any(|w| w == needle));
        let framed_failure = FailureReply {
            mode: WireMode {
                transport: crate::server::detect::Transport::Framed,
                protocol: WireProtocol::Binary,
            },
            ..failure()
        };
        let framed = failure_bytes(&framed_failure, "disk gone").expect("framed reply");
        let (prefix, body) = framed.split_at(4);
        assert_eq!(prefix, (unframed.len() as u32).to_be_bytes());
        assert_eq!(body, unframed.as_slice());
    }

    #[test]
    fn a_handed_over_reply_is_sent_once_its_write_is_synced_and_visible() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_engine, tablet) = tablet(dir.path());
        let (mut client, server) = pair();
        let conn = Arc::new(ConnAck::new(server));
        let writes = deferred_put(&tablet, "r");
        assert_eq!(writes.len(), 1);
        assert!(!visible(&tablet, "r"), "deferred: not visible yet");
        let ack = Acknowledger::new();
        ack.hand_over(Handoff {
            writes,
            reply: b"REPLY".to_vec(),
            failure: failure(),
            to: ReplyTo::Connection(Arc::clone(&conn)),
        });
        let mut got = [0u8; 5];
        client.read_exact(&mut got).expect("reply");
        assert_eq!(&got, b"REPLY");
        let spare = conn.settle().expect("settled");
        assert!(spare.is_some_and(|b| b.is_empty() && b.capacity() >= 5));
        assert!(visible(&tablet, "r"), "published before the reply was sent");
        ack.stop();
    }

    #[test]
    fn a_reply_the_socket_cannot_take_is_finished_by_the_connection_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_engine, tablet) = tablet(dir.path());
        let (mut client, server) = pair();
        socket2::SockRef::from(&server)
            .set_send_buffer_size(64 * 1024)
            .expect("send buffer");
        let conn = Arc::new(ConnAck::new(server));
        let reply: Vec<u8> = (0..16 * 1024 * 1024).map(|i| (i % 251) as u8).collect();
        let expected = reply.clone();
        let ack = Acknowledger::new();
        ack.hand_over(Handoff {
            writes: deferred_put(&tablet, "r"),
            reply,
            failure: failure(),
            to: ReplyTo::Connection(Arc::clone(&conn)),
        });
        // The client reads nothing yet: the socket's buffers fill and the rest is
        // left to the connection thread, which settles while the client reads.
        while conn.slot.lock().in_flight {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(!conn.slot.lock().unsent.is_empty(), "part of it is unsent");
        let settler = {
            let conn = Arc::clone(&conn);
            std::thread::spawn(move || conn.settle().map(|_| ()))
        };
        let mut got = vec![0u8; expected.len()];
        client.read_exact(&mut got).expect("whole reply");
        assert!(got == expected, "the reply arrives whole and in order");
        assert!(matches!(settler.join(), Ok(Ok(()))));
        ack.stop();
    }

    #[test]
    fn after_stop_a_reply_is_answered_on_the_calling_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_engine, tablet) = tablet(dir.path());
        let (mut client, server) = pair();
        let conn = Arc::new(ConnAck::new(server));
        let ack = Acknowledger::new();
        ack.stop();
        ack.hand_over(Handoff {
            writes: deferred_put(&tablet, "r"),
            reply: b"OK".to_vec(),
            failure: failure(),
            to: ReplyTo::Connection(Arc::clone(&conn)),
        });
        assert!(visible(&tablet, "r"), "completed before hand_over returned");
        let mut got = [0u8; 2];
        client.read_exact(&mut got).expect("reply");
        assert_eq!(&got, b"OK");
        assert!(conn.settle().is_ok());
    }

    #[test]
    fn a_closed_connection_is_reported_to_its_thread() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_engine, tablet) = tablet(dir.path());
        let (client, server) = pair();
        drop(client);
        let conn = Arc::new(ConnAck::new(server));
        let ack = Acknowledger::new();
        // The first send to a closed peer may still be accepted; the next fails.
        let mut failed = false;
        for _ in 0..50 {
            ack.hand_over(Handoff {
                writes: deferred_put(&tablet, "r"),
                reply: vec![1; 64 * 1024],
                failure: failure(),
                to: ReplyTo::Connection(Arc::clone(&conn)),
            });
            if conn.settle().is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed, "a send to a closed peer fails");
        assert!(visible(&tablet, "r"), "the write itself completed");
        ack.stop();
    }

    #[test]
    fn a_loop_is_told_when_a_watched_reply_is_answered_and_not_otherwise() {
        use std::sync::atomic::AtomicUsize;
        let dir = tempfile::tempdir().expect("tempdir");
        let (_engine, tablet) = tablet(dir.path());
        let (mut client, server) = pair();
        let conn = Arc::new(ConnAck::new(server));
        let told = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&told);
        conn.on_unsettled(Some(Arc::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
        })));
        let ack = Acknowledger::new();
        let mut got = [0u8; 5];
        // Not watched: answered and sent whole without a word to the loop.
        ack.hand_over(Handoff {
            writes: deferred_put(&tablet, "a"),
            reply: b"FIRST".to_vec(),
            failure: failure(),
            to: ReplyTo::Connection(Arc::clone(&conn)),
        });
        client.read_exact(&mut got).expect("reply");
        assert_eq!(&got, b"FIRST");
        let mut out = Vec::new();
        while matches!(conn.try_settle_into(&mut out, false), Ok(Settled::Pending)) {
            std::thread::yield_now();
        }
        assert!(out.is_empty());
        assert_eq!(told.load(Ordering::SeqCst), 0);
        // Watched while in flight: the loop hears once it is answered.
        conn.begin();
        assert!(matches!(
            conn.try_settle_into(&mut out, true),
            Ok(Settled::Pending)
        ));
        conn.answer(Ok(b"AGAIN".to_vec()), Vec::new());
        assert_eq!(told.load(Ordering::SeqCst), 1);
        client.read_exact(&mut got).expect("reply");
        assert_eq!(&got, b"AGAIN");
        assert!(matches!(
            conn.try_settle_into(&mut out, false),
            Ok(Settled::Done(_))
        ));
        assert!(out.is_empty());
        ack.stop();
    }

    #[test]
    fn an_http_call_hears_its_reply_once_its_write_is_synced_and_visible() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_engine, tablet) = tablet(dir.path());
        let writes = deferred_put(&tablet, "h");
        assert!(!visible(&tablet, "h"), "deferred: not visible yet");
        let ack = Acknowledger::new();
        let (sender, receiver) = tokio::sync::oneshot::channel();
        ack.hand_over(Handoff {
            writes,
            reply: b"REPLY".to_vec(),
            failure: failure(),
            to: ReplyTo::Waiter(sender),
        });
        let answer = receiver.blocking_recv().expect("an answer");
        assert_eq!(answer.expect("the reply"), b"REPLY".to_vec());
        assert!(visible(&tablet, "h"), "visible once answered");
        // After stop, the calling thread completes a hand-over itself.
        ack.stop();
        let (sender, receiver) = tokio::sync::oneshot::channel();
        ack.hand_over(Handoff {
            writes: deferred_put(&tablet, "i"),
            reply: b"AFTER".to_vec(),
            failure: failure(),
            to: ReplyTo::Waiter(sender),
        });
        assert!(visible(&tablet, "i"));
        let answer = receiver.blocking_recv().expect("an answer");
        assert_eq!(answer.expect("the reply"), b"AFTER".to_vec());
    }
}
