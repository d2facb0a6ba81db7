//! Graceful shutdown: in-flight calls finish and their replies are written, idle
//! connections are closed, new connections are refused, and the grace bound holds.

mod server_common;

use std::io::{BufReader, Write};
use std::time::{Duration, Instant};

use server_common::*;
use tabula_gateway::server::ServerOptions;

#[test]
fn shutdown_completes_an_in_flight_call_before_returning() {
    let server = TestServer::start(ServerOptions::default());
    let busy = server.connect();
    let idle = server.connect();
    assert_echo(
        &unframed_call(&idle, Flavor::StrictBinary, "warmup", 1),
        "warmup",
        1,
    );
    (&busy)
        .write_all(&encode_call(Flavor::StrictBinary, "slow", 42))
        .expect("send");
    server.wait_for_stats("slow call in flight", |s| s.calls_in_flight == 1);
    let addr = server.addr;
    let started = Instant::now();
    let report = server.stop();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded by the call, not the grace"
    );
    assert_eq!(report.connections_at_shutdown, 2);
    assert_eq!(report.connections_aborted, 0);
    // The reply was written before the connection closed.
    let reply = read_unframed_reply(&busy, Flavor::StrictBinary).expect("in-flight reply");
    assert_echo(&reply, "slow", 42);
    assert!(is_closed_by_server(&busy));
    assert!(is_closed_by_server(&idle));
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "listener closed"
    );
}

#[test]
fn shutdown_completes_an_in_flight_http_call() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    (&stream)
        .write_all(&http_post(
            "/",
            &encode_call(Flavor::StrictBinary, "slow", 3),
        ))
        .expect("send");
    server.wait_for_stats("slow call in flight", |s| s.calls_in_flight == 1);
    let report = server.stop();
    assert_eq!(report.connections_aborted, 0);
    let response = read_http_response(&mut BufReader::new(&stream)).expect("response");
    assert_eq!(response.status, 200);
    assert_echo(
        &decode_reply_bytes(Flavor::StrictBinary, &response.body).0,
        "slow",
        3,
    );
    assert!(is_closed_by_server(&stream));
}

#[test]
fn shutdown_with_only_idle_connections_is_prompt() {
    let server = TestServer::start(ServerOptions::default());
    let connections: Vec<_> = (0..50).map(|_| server.connect()).collect();
    server.wait_for_stats("connections accepted", |s| s.connections_open == 50);
    let started = Instant::now();
    let report = server.stop();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(report.connections_at_shutdown, 50);
    assert_eq!(report.connections_aborted, 0);
    for stream in &connections {
        assert!(is_closed_by_server(stream));
    }
}

/// Sends calls whose replies (each about 100 KB) a client that never reads cannot
/// take, until the connection stops taking calls; returns the client socket and the
/// thread still writing.
fn stuck_client(server: &TestServer) -> (std::net::TcpStream, std::thread::JoinHandle<()>) {
    let stuck = server.connect();
    let long_name = "n".repeat(50_000);
    let mut message = Vec::new();
    for seqid in 0..1000 {
        message.extend_from_slice(&encode_call(Flavor::StrictBinary, &long_name, seqid));
    }
    let writer = {
        let stuck = stuck.try_clone().expect("clone");
        std::thread::spawn(move || {
            let _ = (&stuck).write_all(&message);
        })
    };
    // Wait until the connection is stuck: no new calls for a while.
    let mut last = u64::MAX;
    loop {
        std::thread::sleep(Duration::from_millis(300));
        let now = server.stats.snapshot().calls_total;
        if now == last && now > 0 {
            break;
        }
        last = now;
    }
    assert!(
        last < 1000,
        "the client never read, so the server must be stuck writing"
    );
    (stuck, writer)
}

/// Stops `server`, asserting the stop took under 3 s.
fn stop_within_3s(server: TestServer) -> tabula_gateway::server::ShutdownReport {
    let started = Instant::now();
    let report = server.stop();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    report
}

#[test]
fn shutdown_grace_bounds_the_wait_for_a_stuck_client() {
    // On a thread of its own, the connection is stuck in a blocking write: only
    // the grace bound ends it.
    let server = TestServer::start(ServerOptions {
        shutdown_grace: Duration::from_millis(200),
        max_frame_size: 1 << 20,
        event_loops: 0,
        ..ServerOptions::default()
    });
    let (stuck, writer) = stuck_client(&server);
    let report = stop_within_3s(server);
    assert_eq!(report.connections_aborted, 1);
    drop(stuck);
    let _ = writer.join();
}

#[test]
fn a_stuck_client_on_an_event_loop_neither_holds_up_shutdown_nor_the_loop() {
    // On an event loop, the reply waits in the connection's buffer: the loop goes
    // on serving others, and shutdown ends the connection once the socket took the
    // reply or the grace ran out, whichever comes first.
    let server = TestServer::start(ServerOptions {
        shutdown_grace: Duration::from_millis(200),
        max_frame_size: 1 << 20,
        event_loops: 1,
        loop_calls: &["echo"],
        ..ServerOptions::default()
    });
    let (stuck, writer) = stuck_client(&server);
    let other = server.connect();
    for seqid in 0..20 {
        assert_echo(
            &framed_call(&other, Flavor::Compact, "echo", seqid),
            "echo",
            seqid,
        );
    }
    let report = stop_within_3s(server);
    assert!(report.connections_aborted <= 1, "{report:?}");
    stuck
        .set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    assert!(is_closed_by_server(&stuck));
    drop(stuck);
    let _ = writer.join();
}
