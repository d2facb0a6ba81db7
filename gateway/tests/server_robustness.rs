//! Bad clients lose only their own connection: garbage, oversized frames and bodies,
//! truncated messages, disconnects mid-call, failing calls, malformed arguments, and idle
//! timeouts. The server keeps answering everyone else, and says why in its log.

mod server_common;

use std::io::{BufReader, Write};
use std::net::Shutdown;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use server_common::*;
use tabula_gateway::server::{ConnectionId, ConnectionObserver, ServerOptions};
use thrift::protocol::TMessageType;
use thrift::ApplicationErrorKind;

/// Log lines of every test in this binary (one global subscriber).
fn captured_logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&logs);
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(move || LogWriter(Arc::clone(&sink)))
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
        logs
    })
    .clone()
}

struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Waits for a log line containing every one of `needles`.
fn wait_for_log_line(needles: &[&str]) -> String {
    let logs = captured_logs();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = String::from_utf8_lossy(&logs.lock().expect("log lock")).into_owned();
        if let Some(line) = text
            .lines()
            .find(|line| needles.iter().all(|n| line.contains(n)))
        {
            return line.to_string();
        }
        assert!(
            Instant::now() < deadline,
            "no log line with {needles:?} in:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn assert_server_still_serves(server: &TestServer) {
    let stream = server.connect();
    assert_echo(
        &unframed_call(&stream, Flavor::StrictBinary, "stillAlive", 1),
        "stillAlive",
        1,
    );
    assert_echo(
        &framed_call(&server.connect(), Flavor::Compact, "stillAlive", 2),
        "stillAlive",
        2,
    );
}

#[test]
fn garbage_first_bytes_close_only_that_connection() {
    captured_logs();
    let server = TestServer::start(ServerOptions::default());
    let healthy = server.connect();
    assert_echo(
        &unframed_call(&healthy, Flavor::StrictBinary, "before", 1),
        "before",
        1,
    );
    for garbage in [
        &b"\xff\xfe\xfd\xfc garbage"[..],
        b"GET / HTTP/1.1\r\n\r\n",
        b"\x00\x00\x00\x05\x01\x02",
    ] {
        let bad = server.connect();
        (&bad).write_all(garbage).expect("send");
        assert!(
            is_closed_by_server(&bad),
            "garbage {garbage:?} must close the connection"
        );
    }
    server.wait_for_stats("unrecognized count", |s| s.unrecognized_connections == 3);
    assert_echo(
        &unframed_call(&healthy, Flavor::StrictBinary, "after", 2),
        "after",
        2,
    );
    assert_server_still_serves(&server);
    wait_for_log_line(&["INFO", "match no supported Thrift transport"]);
}

#[test]
fn oversized_frame_closes_the_connection_with_a_warning_naming_peer_and_size() {
    captured_logs();
    let opts = ServerOptions {
        max_frame_size: 1024,
        ..ServerOptions::default()
    };
    let server = TestServer::start(opts);
    let bad = server.connect();
    let peer = bad.local_addr().expect("addr").to_string();
    let mut wire = 5000u32.to_be_bytes().to_vec();
    wire.extend_from_slice(&[0x80, 0x01, 0x00, 0x01]);
    (&bad).write_all(&wire).expect("send");
    assert!(is_closed_by_server(&bad));
    let line = wait_for_log_line(&["WARN", &peer, "size=5000", "max_frame_size"]);
    assert!(line.contains("limit=1024"), "{line}");
    assert_eq!(server.stats.snapshot().oversized_messages, 1);
    assert_server_still_serves(&server);
}

#[test]
fn default_limit_rejects_a_100_mib_frame_header() {
    captured_logs();
    let server = TestServer::start(ServerOptions::default());
    let bad = server.connect();
    let mut wire = (100u32 << 20).to_be_bytes().to_vec();
    wire.extend_from_slice(&[0x82, 0x21]);
    (&bad).write_all(&wire).expect("send");
    assert!(is_closed_by_server(&bad));
    assert_server_still_serves(&server);
}

#[test]
fn oversized_unframed_message_is_rejected() {
    captured_logs();
    let opts = ServerOptions {
        max_frame_size: 512,
        ..ServerOptions::default()
    };
    let server = TestServer::start(opts);
    let bad = server.connect();
    // A strict header, then one string field of 4000 bytes.
    let mut wire = vec![
        0x80, 0x01, 0x00, 0x01, 0, 0, 0, 3, b'p', b'u', b't', 0, 0, 0, 1,
    ];
    wire.extend_from_slice(&[11, 0, 1]);
    wire.extend_from_slice(&4000i32.to_be_bytes());
    wire.extend_from_slice(&[b'v'; 600]);
    (&bad).write_all(&wire).expect("send");
    assert!(is_closed_by_server(&bad));
    let peer = bad.local_addr().expect("addr").to_string();
    wait_for_log_line(&["WARN", &peer, "max_frame_size"]);
    assert_server_still_serves(&server);
}

#[test]
fn oversized_http_body_gets_413_and_the_connection_closes() {
    captured_logs();
    let opts = ServerOptions {
        max_frame_size: 256,
        ..ServerOptions::default()
    };
    let server = TestServer::start(opts);
    let stream = server.connect();
    (&stream)
        .write_all(&http_post("/", &[0u8; 1000]))
        .expect("send");
    let response = read_http_response(&mut BufReader::new(&stream)).expect("response");
    assert_eq!(response.status, 413);
    assert!(is_closed_by_server(&stream));
    let peer = stream.local_addr().expect("addr").to_string();
    wait_for_log_line(&["WARN", &peer, "size=1000"]);
    assert_server_still_serves(&server);
}

#[test]
fn truncated_message_then_disconnect_leaves_the_server_serving() {
    captured_logs();
    let server = TestServer::start(ServerOptions::default());
    for flavor in [Flavor::StrictBinary, Flavor::Compact] {
        let message = encode_call(flavor, "cutShort", 1);
        let cut = server.connect();
        (&cut)
            .write_all(&message[..message.len() / 2])
            .expect("send");
        cut.shutdown(Shutdown::Both).expect("shutdown");
        drop(cut);
        let framed_cut = server.connect();
        (&framed_cut)
            .write_all(&frame(&message)[..message.len() / 2])
            .expect("send");
        drop(framed_cut);
    }
    server.wait_for_stats("all cut connections closed", |s| s.connections_open == 0);
    assert_eq!(
        server
            .processor
            .calls
            .load(std::sync::atomic::Ordering::SeqCst),
        0
    );
    assert_server_still_serves(&server);
}

#[test]
fn client_disconnecting_mid_call_does_not_disturb_another_connection() {
    captured_logs();
    let server = TestServer::start(ServerOptions::default());
    let other = server.connect();
    assert_echo(
        &unframed_call(&other, Flavor::StrictBinary, "first", 1),
        "first",
        1,
    );
    let leaver = server.connect();
    (&leaver)
        .write_all(&encode_call(Flavor::StrictBinary, "slow", 1))
        .expect("send");
    server.wait_for_stats("slow call in flight", |s| s.calls_in_flight == 1);
    drop(leaver);
    // The other connection keeps working while and after the abandoned call runs.
    for seqid in 2..6 {
        assert_echo(
            &unframed_call(&other, Flavor::StrictBinary, "next", seqid),
            "next",
            seqid,
        );
    }
    std::thread::sleep(SLOW_CALL);
    server.wait_for_stats("abandoned connection closed", |s| s.connections_open == 1);
    assert_echo(
        &unframed_call(&other, Flavor::StrictBinary, "last", 9),
        "last",
        9,
    );
}

#[test]
fn processor_failure_without_reply_closes_only_that_connection() {
    captured_logs();
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    assert_echo(
        &unframed_call(&stream, Flavor::StrictBinary, "ok", 1),
        "ok",
        1,
    );
    (&stream)
        .write_all(&encode_call(Flavor::StrictBinary, "boom", 2))
        .expect("send");
    assert!(is_closed_by_server(&stream));
    let peer = stream.local_addr().expect("addr").to_string();
    wait_for_log_line(&[&peer, "processor failed without writing a reply"]);
    assert_eq!(server.stats.snapshot().calls_failed, 1);
    assert_server_still_serves(&server);
}

/// A call whose args hold an unknown field type: the header is fine, the body is not.
fn call_with_bad_field_type(seqid: i32) -> Vec<u8> {
    let mut wire = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 3, b'b', b'a', b'd'];
    wire.extend_from_slice(&seqid.to_be_bytes());
    wire.extend_from_slice(&[0x63, 0, 1, 0]);
    wire
}

#[test]
fn malformed_args_in_a_frame_get_a_protocol_error_and_the_connection_goes_on() {
    captured_logs();
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    (&stream)
        .write_all(&frame(&call_with_bad_field_type(4)))
        .expect("send");
    let reply = read_framed_reply(&stream, Flavor::StrictBinary).expect("exception");
    assert_eq!(reply.kind, TMessageType::Exception);
    assert_eq!(reply.seqid, 4);
    assert_eq!(reply.name, "bad");
    let error = reply.exception.expect("application error");
    assert_eq!(error.kind, ApplicationErrorKind::ProtocolError);
    assert!(
        error.message.contains("unknown type code 99"),
        "{}",
        error.message
    );
    assert_echo(
        &framed_call(&stream, Flavor::StrictBinary, "fine", 5),
        "fine",
        5,
    );
    assert_eq!(server.stats.snapshot().malformed_messages, 1);
}

#[test]
fn malformed_args_unframed_get_a_protocol_error_then_the_connection_closes() {
    captured_logs();
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    (&stream)
        .write_all(&call_with_bad_field_type(8))
        .expect("send");
    let reply = read_unframed_reply(&stream, Flavor::StrictBinary).expect("exception");
    assert_eq!(reply.kind, TMessageType::Exception);
    assert_eq!(reply.seqid, 8);
    assert!(is_closed_by_server(&stream));
    assert_server_still_serves(&server);
}

#[test]
fn deeply_nested_garbage_is_rejected_without_harm() {
    captured_logs();
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    // A header, then 10 000 nested struct fields: far deeper than the nesting bound.
    let mut wire = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 1, b'x', 0, 0, 0, 1];
    for _ in 0..10_000 {
        wire.extend_from_slice(&[12, 0, 1]);
    }
    (&stream).write_all(&wire).expect("send");
    let reply = read_unframed_reply(&stream, Flavor::StrictBinary).expect("exception");
    assert_eq!(reply.kind, TMessageType::Exception);
    assert!(is_closed_by_server(&stream));
    assert_server_still_serves(&server);
}

#[test]
fn idle_connections_are_kept_by_default() {
    captured_logs();
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    assert_echo(
        &unframed_call(&stream, Flavor::StrictBinary, "a", 1),
        "a",
        1,
    );
    std::thread::sleep(Duration::from_millis(1500));
    assert_echo(
        &unframed_call(&stream, Flavor::StrictBinary, "b", 2),
        "b",
        2,
    );
}

#[test]
fn idle_timeout_closes_quiet_connections_of_every_mode() {
    captured_logs();
    let opts = ServerOptions {
        idle_timeout: Some(Duration::from_millis(300)),
        ..ServerOptions::default()
    };
    let server = TestServer::start(opts);
    let silent = server.connect();
    let thrift = server.connect();
    assert_echo(
        &unframed_call(&thrift, Flavor::StrictBinary, "a", 1),
        "a",
        1,
    );
    let http = server.connect();
    (&http)
        .write_all(&http_post("/", &encode_call(Flavor::StrictBinary, "h", 1)))
        .expect("send");
    let mut reader = BufReader::new(&http);
    assert_eq!(
        read_http_response(&mut reader).expect("response").status,
        200
    );
    let started = Instant::now();
    assert!(is_closed_by_server(&silent));
    assert!(is_closed_by_server(&thrift));
    assert!(is_closed_by_server(&http));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_slow_call_is_not_cut_by_the_idle_timeout() {
    captured_logs();
    let opts = ServerOptions {
        idle_timeout: Some(Duration::from_millis(150)),
        ..ServerOptions::default()
    };
    let server = TestServer::start(opts);
    let stream = server.connect();
    // The call takes longer than the idle timeout; its reply still arrives.
    assert_echo(
        &unframed_call(&stream, Flavor::StrictBinary, "slow", 1),
        "slow",
        1,
    );
}

#[derive(Default)]
struct RecordingObserver {
    events: Mutex<Vec<(bool, ConnectionId)>>,
}

impl ConnectionObserver for RecordingObserver {
    fn on_open(&self, id: ConnectionId) {
        self.events.lock().expect("lock").push((true, id));
    }
    fn on_close(&self, id: ConnectionId) {
        self.events.lock().expect("lock").push((false, id));
    }
}

#[test]
fn observer_sees_open_and_close_with_the_handler_visible_id() {
    captured_logs();
    let observer = Arc::new(RecordingObserver::default());
    let opts = ServerOptions {
        observer: Some(observer.clone() as Arc<dyn ConnectionObserver>),
        ..ServerOptions::default()
    };
    let server = TestServer::start(opts);
    let stream = server.connect();
    let id = unframed_call(&stream, Flavor::StrictBinary, "whoami", 1)
        .success
        .expect("id");
    drop(stream);
    server.wait_for_stats("connection closed", |s| s.connections_open == 0);
    let events = observer.events.lock().expect("lock").clone();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events[0].0, "first event is the open");
    assert!(!events[1].0, "second event is the close");
    assert_eq!(events[0].1, events[1].1);
    assert_eq!(events[0].1.to_string(), id);
}
