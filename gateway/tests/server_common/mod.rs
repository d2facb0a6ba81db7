//! Shared support for the server integration tests: a hand-made test processor, a
//! server running on its own runtime thread, and blocking Thrift clients for every
//! transport and protocol (decoding replies with the thrift crate, not the server's code).
#![allow(dead_code)]

use std::io::{self, BufRead, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tabula_gateway::server::{
    current_connection, ServerOptions, ServerStats, ShutdownHandle, ShutdownReport, ThriftServer,
};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TFieldIdentifier, TInputProtocol, TListIdentifier, TMessageIdentifier, TMessageType,
    TOutputProtocol, TStructIdentifier, TType,
};
use thrift::server::TProcessor;
use thrift::ApplicationError;

/// Generous bound on any single blocking read in the tests.
pub const IO_TIMEOUT: Duration = Duration::from_secs(20);

/// Test processor. Every method skips its args and replies with a result struct whose
/// field 0 is a string: the method name, except
/// - `boom`: writes nothing and fails;
/// - `slow`: sleeps 400 ms first;
/// - `whoami`: field 0 is the current connection id (`conn-N`, or `none`);
/// - `whereami`: field 0 is the name of the thread running the call;
/// - `big`: field 0 is [`BIG_REPLY`] bytes of `x`.
///
/// ONEWAY messages get no reply.
#[derive(Default)]
pub struct EchoProcessor {
    pub calls: AtomicUsize,
}

pub const SLOW_CALL: Duration = Duration::from_millis(400);
/// Length of the `big` call's answer: more than loopback socket buffers hold.
pub const BIG_REPLY: usize = 8 << 20;

impl TProcessor for EchoProcessor {
    fn process(
        &self,
        i: &mut dyn TInputProtocol,
        o: &mut dyn TOutputProtocol,
    ) -> thrift::Result<()> {
        let ident = i.read_message_begin()?;
        i.skip(TType::Struct)?;
        i.read_message_end()?;
        self.calls.fetch_add(1, Ordering::SeqCst);
        let answer = match ident.name.as_str() {
            "boom" => {
                return Err(thrift::Error::from(ApplicationError::new(
                    thrift::ApplicationErrorKind::InternalError,
                    "boom",
                )))
            }
            "slow" => {
                std::thread::sleep(SLOW_CALL);
                ident.name.clone()
            }
            "whoami" => {
                current_connection().map_or_else(|| "none".to_string(), |id| id.to_string())
            }
            "whereami" => std::thread::current().name().unwrap_or("").to_string(),
            "big" => "x".repeat(BIG_REPLY),
            other => other.to_string(),
        };
        if ident.message_type == TMessageType::OneWay {
            return Ok(());
        }
        let reply = TMessageIdentifier::new(ident.name, TMessageType::Reply, ident.sequence_number);
        o.write_message_begin(&reply)?;
        o.write_struct_begin(&TStructIdentifier::new("result"))?;
        o.write_field_begin(&TFieldIdentifier::new("success", TType::String, 0))?;
        o.write_string(&answer)?;
        o.write_field_end()?;
        o.write_field_stop()?;
        o.write_struct_end()?;
        o.write_message_end()?;
        o.flush()
    }
}

/// Test-processor methods a [`TestServer`] runs on its event loops unless the
/// options name their own list (`event_loops: 0` turns the loops off): as `tabula
/// serve` does, connections start on a loop and move to a thread of their own at
/// their first call of another name, or after a `slow` one.
pub const COMMON_LOOP_CALLS: &[&str] = &[
    "echo",
    "slow",
    "boom",
    "whoami",
    "whereami",
    "stillAlive",
    "ping",
    "fire",
    "warmup",
];

/// A server on its own two-worker runtime thread.
pub struct TestServer {
    pub addr: SocketAddr,
    pub stats: Arc<ServerStats>,
    pub processor: Arc<EchoProcessor>,
    handle: ShutdownHandle,
    thread: Option<JoinHandle<ShutdownReport>>,
}

impl TestServer {
    pub fn start(mut opts: ServerOptions) -> TestServer {
        if opts.loop_calls.is_empty() {
            opts.loop_calls = COMMON_LOOP_CALLS;
        }
        let processor = Arc::new(EchoProcessor::default());
        let shared = Arc::clone(&processor);
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                let server = ThriftServer::new(listener, shared, opts);
                let addr = server.local_addr().expect("addr");
                tx.send((addr, server.stats(), server.shutdown_handle()))
                    .expect("send");
                server.run(std::future::pending()).await
            })
        });
        let (addr, stats, handle) = rx.recv().expect("server started");
        TestServer {
            addr,
            stats,
            processor,
            handle,
            thread: Some(thread),
        }
    }

    pub fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(self.addr).expect("connect");
        stream.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
        stream.set_nodelay(true).expect("nodelay");
        stream
    }

    /// Starts graceful shutdown and waits for `run` to return.
    pub fn stop(mut self) -> ShutdownReport {
        self.handle.shutdown();
        self.thread
            .take()
            .expect("running")
            .join()
            .expect("server thread")
    }

    pub fn handle(&self) -> ShutdownHandle {
        self.handle.clone()
    }

    /// Waits until the stats satisfy `pred` (or panics after a while).
    pub fn wait_for_stats(
        &self,
        what: &str,
        pred: impl Fn(&tabula_gateway::server::StatsSnapshot) -> bool,
    ) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let snap = self.stats.snapshot();
            if pred(&snap) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}: {snap:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.handle.shutdown();
            let _ = thread.join();
        }
    }
}

/// Protocol flavours a client can speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    StrictBinary,
    NonStrictBinary,
    Compact,
}

/// Encodes a CALL (or ONEWAY) message whose args exercise several value types.
pub fn encode_message(flavor: Flavor, kind: TMessageType, name: &str, seqid: i32) -> Vec<u8> {
    let mut buf = Vec::new();
    match flavor {
        Flavor::StrictBinary => write_call(
            &mut TBinaryOutputProtocol::new(&mut buf, true),
            kind,
            name,
            seqid,
        ),
        Flavor::NonStrictBinary => write_call(
            &mut TBinaryOutputProtocol::new(&mut buf, false),
            kind,
            name,
            seqid,
        ),
        Flavor::Compact => write_call(
            &mut TCompactOutputProtocol::new(&mut buf),
            kind,
            name,
            seqid,
        ),
    }
    buf
}

pub fn encode_call(flavor: Flavor, name: &str, seqid: i32) -> Vec<u8> {
    encode_message(flavor, TMessageType::Call, name, seqid)
}

fn write_call(o: &mut dyn TOutputProtocol, kind: TMessageType, name: &str, seqid: i32) {
    let result: thrift::Result<()> = (|| {
        o.write_message_begin(&TMessageIdentifier::new(name, kind, seqid))?;
        o.write_struct_begin(&TStructIdentifier::new("args"))?;
        o.write_field_begin(&TFieldIdentifier::new("table", TType::String, 1))?;
        o.write_bytes(b"t1")?;
        o.write_field_end()?;
        o.write_field_begin(&TFieldIdentifier::new("flag", TType::Bool, 2))?;
        o.write_bool(true)?;
        o.write_field_end()?;
        o.write_field_begin(&TFieldIdentifier::new("rows", TType::List, 3))?;
        o.write_list_begin(&TListIdentifier::new(TType::String, 3))?;
        for row in ["a", "bb", "ccc"] {
            o.write_string(row)?;
        }
        o.write_list_end()?;
        o.write_field_end()?;
        o.write_field_begin(&TFieldIdentifier::new("ts", TType::I64, 4))?;
        o.write_i64(-1_234_567_890_123)?;
        o.write_field_end()?;
        o.write_field_stop()?;
        o.write_struct_end()?;
        o.write_message_end()?;
        o.flush()
    })();
    result.expect("encode");
}

pub fn frame(message: &[u8]) -> Vec<u8> {
    let mut out = (message.len() as u32).to_be_bytes().to_vec();
    out.extend_from_slice(message);
    out
}

/// A decoded reply.
#[derive(Debug)]
pub struct Reply {
    pub name: String,
    pub kind: TMessageType,
    pub seqid: i32,
    /// Field 0 of a REPLY.
    pub success: Option<String>,
    /// The body of an EXCEPTION.
    pub exception: Option<ApplicationError>,
}

fn decode_reply(i: &mut dyn TInputProtocol) -> thrift::Result<Reply> {
    let ident = i.read_message_begin()?;
    let mut reply = Reply {
        name: ident.name,
        kind: ident.message_type,
        seqid: ident.sequence_number,
        success: None,
        exception: None,
    };
    if ident.message_type == TMessageType::Exception {
        reply.exception = Some(thrift::Error::read_application_error_from_in_protocol(i)?);
    } else {
        i.read_struct_begin()?;
        loop {
            let field = i.read_field_begin()?;
            if field.field_type == TType::Stop {
                break;
            }
            if field.id == Some(0) && field.field_type == TType::String {
                reply.success = Some(i.read_string()?);
            } else {
                i.skip(field.field_type)?;
            }
            i.read_field_end()?;
        }
        i.read_struct_end()?;
    }
    i.read_message_end()?;
    Ok(reply)
}

/// Decodes one reply from `bytes`, requiring strict binary headers; returns the reply and
/// how many bytes it used.
pub fn decode_reply_bytes(flavor: Flavor, bytes: &[u8]) -> (Reply, usize) {
    let mut reader = bytes;
    let reply = match flavor {
        Flavor::StrictBinary | Flavor::NonStrictBinary => {
            decode_reply(&mut TBinaryInputProtocol::new(&mut reader, true))
        }
        Flavor::Compact => decode_reply(&mut TCompactInputProtocol::new(&mut reader)),
    }
    .expect("decode reply");
    (reply, bytes.len() - reader.len())
}

/// Reads one unframed reply straight off the socket (strict binary headers required).
pub fn read_unframed_reply(stream: &TcpStream, flavor: Flavor) -> thrift::Result<Reply> {
    let mut reader = stream;
    match flavor {
        Flavor::StrictBinary | Flavor::NonStrictBinary => {
            decode_reply(&mut TBinaryInputProtocol::new(&mut reader, true))
        }
        Flavor::Compact => decode_reply(&mut TCompactInputProtocol::new(&mut reader)),
    }
}

/// Reads one framed reply and checks the frame holds exactly one message.
pub fn read_framed_reply(mut stream: &TcpStream, flavor: Flavor) -> io::Result<Reply> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let mut body = vec![0u8; u32::from_be_bytes(len) as usize];
    stream.read_exact(&mut body)?;
    let (reply, used) = decode_reply_bytes(flavor, &body);
    assert_eq!(used, body.len(), "frame holds exactly one message");
    Ok(reply)
}

/// Asserts `reply` is the echo of a successful call `name`/`seqid`.
pub fn assert_echo(reply: &Reply, name: &str, seqid: i32) {
    assert_eq!(reply.kind, TMessageType::Reply, "{reply:?}");
    assert_eq!(reply.name, name);
    assert_eq!(reply.seqid, seqid);
    assert_eq!(reply.success.as_deref(), Some(name));
}

/// Sends one unframed call and reads its reply.
pub fn unframed_call(stream: &TcpStream, flavor: Flavor, name: &str, seqid: i32) -> Reply {
    let mut writer = stream;
    writer
        .write_all(&encode_call(flavor, name, seqid))
        .expect("send");
    read_unframed_reply(stream, flavor).expect("reply")
}

/// Sends one framed call and reads its reply.
pub fn framed_call(stream: &TcpStream, flavor: Flavor, name: &str, seqid: i32) -> Reply {
    let mut writer = stream;
    writer
        .write_all(&frame(&encode_call(flavor, name, seqid)))
        .expect("send");
    read_framed_reply(stream, flavor).expect("reply")
}

/// A parsed HTTP response.
#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

pub fn http_post(path: &str, body: &[u8]) -> Vec<u8> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-thrift\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    request
}

/// Reads one HTTP/1.1 response with a Content-Length body.
pub fn read_http_response(reader: &mut impl BufRead) -> io::Result<HttpResponse> {
    let mut status_line = String::new();
    if reader.read_line(&mut status_line)? == 0 {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "no response"));
    }
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| io::Error::other(format!("bad status line {status_line:?}")))?;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((key, value)) = line.split_once(':') {
            headers.push((key.trim().to_string(), value.trim().to_string()));
        }
    }
    let mut response = HttpResponse {
        status,
        headers,
        body: Vec::new(),
    };
    let length: usize = response
        .header("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    response.body = vec![0u8; length];
    reader.read_exact(&mut response.body)?;
    Ok(response)
}

/// True once the server has closed `stream` (EOF or reset), false on a read timeout.
pub fn is_closed_by_server(mut stream: &TcpStream) -> bool {
    let mut scratch = [0u8; 256];
    loop {
        match stream.read(&mut scratch) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(err)
                if matches!(
                    err.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}

/// Raises this process's open-file soft limit to at least `want` (up to the hard limit).
pub fn raise_fd_limit(want: u64) {
    // SAFETY: getrlimit/setrlimit only read/write the struct we pass.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return;
        }
        if limit.rlim_cur < want as libc::rlim_t {
            limit.rlim_cur = (want as libc::rlim_t).min(limit.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// Number of threads of this process (Linux).
pub fn thread_count() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Threads:"))
        .and_then(|count| count.trim().parse().ok())
}
