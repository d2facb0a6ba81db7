//! Every transport/protocol combination over real TCP: replies come back in the request's
//! transport and protocol with the request's name and seqid, many calls per connection,
//! split and coalesced writes, and HBase's HTTP mode with keep-alive.

mod server_common;

use std::io::{BufReader, Write};
use std::time::Duration;

use server_common::*;
use tabula_gateway::server::ServerOptions;
use thrift::protocol::TMessageType;

#[test]
fn unframed_strict_binary_serves_several_calls_per_connection() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    for seqid in 0..5 {
        let reply = unframed_call(&stream, Flavor::StrictBinary, "getTableNames", seqid);
        assert_echo(&reply, "getTableNames", seqid);
    }
    assert_eq!(server.stats.snapshot().modes.unframed_binary, 1);
}

#[test]
fn unframed_non_strict_binary_gets_strict_replies() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    for seqid in [7, -3, i32::MAX] {
        // read_unframed_reply decodes with strict reading, so a non-strict reply fails.
        let reply = unframed_call(&stream, Flavor::NonStrictBinary, "scannerGetList", seqid);
        assert_echo(&reply, "scannerGetList", seqid);
    }
    assert_eq!(server.stats.snapshot().modes.unframed_binary, 1);
}

#[test]
fn framed_strict_binary_replies_are_framed() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    for seqid in 1..4 {
        let reply = framed_call(&stream, Flavor::StrictBinary, "mutateRows", seqid);
        assert_echo(&reply, "mutateRows", seqid);
    }
    assert_eq!(server.stats.snapshot().modes.framed_binary, 1);
}

#[test]
fn framed_non_strict_binary_replies_are_framed_and_strict() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    for seqid in 1..4 {
        let reply = framed_call(&stream, Flavor::NonStrictBinary, "get", seqid);
        assert_echo(&reply, "get", seqid);
    }
    assert_eq!(server.stats.snapshot().modes.framed_binary, 1);
}

#[test]
fn unframed_compact_round_trips() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    for seqid in [0, 1, 300, -1] {
        let reply = unframed_call(&stream, Flavor::Compact, "getRowWithColumns", seqid);
        assert_echo(&reply, "getRowWithColumns", seqid);
    }
    assert_eq!(server.stats.snapshot().modes.unframed_compact, 1);
}

#[test]
fn framed_compact_round_trips() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    for seqid in 10..13 {
        let reply = framed_call(&stream, Flavor::Compact, "scannerOpenWithScan", seqid);
        assert_echo(&reply, "scannerOpenWithScan", seqid);
    }
    assert_eq!(server.stats.snapshot().modes.framed_compact, 1);
}

#[test]
fn every_mode_works_side_by_side_on_one_port() {
    let server = TestServer::start(ServerOptions::default());
    let connections: Vec<_> = (0..5).map(|_| server.connect()).collect();
    for round in 0..3 {
        let seqid = 100 + round;
        assert_echo(
            &unframed_call(&connections[0], Flavor::StrictBinary, "a", seqid),
            "a",
            seqid,
        );
        assert_echo(
            &unframed_call(&connections[1], Flavor::NonStrictBinary, "b", seqid),
            "b",
            seqid,
        );
        assert_echo(
            &unframed_call(&connections[2], Flavor::Compact, "c", seqid),
            "c",
            seqid,
        );
        assert_echo(
            &framed_call(&connections[3], Flavor::StrictBinary, "d", seqid),
            "d",
            seqid,
        );
        assert_echo(
            &framed_call(&connections[4], Flavor::Compact, "e", seqid),
            "e",
            seqid,
        );
    }
    let modes = server.stats.snapshot().modes;
    assert_eq!(modes.unframed_binary, 2);
    assert_eq!(modes.unframed_compact, 1);
    assert_eq!(modes.framed_binary, 1);
    assert_eq!(modes.framed_compact, 1);
}

#[test]
fn http_post_binary_with_keep_alive() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    let mut reader = BufReader::new(&stream);
    for (seqid, path) in [(1, "/"), (2, "/hbase/thrift?x=1")] {
        let body = encode_call(Flavor::StrictBinary, "getTableNames", seqid);
        (&stream).write_all(&http_post(path, &body)).expect("send");
        let response = read_http_response(&mut reader).expect("response");
        assert_eq!(response.status, 200);
        assert_eq!(
            response.header("content-type"),
            Some("application/x-thrift")
        );
        let (reply, used) = decode_reply_bytes(Flavor::StrictBinary, &response.body);
        assert_eq!(used, response.body.len());
        assert_echo(&reply, "getTableNames", seqid);
    }
    let snap = server.stats.snapshot();
    assert_eq!(snap.modes.http, 1, "both requests used one connection");
    assert_eq!(snap.connections_total, 1);
}

#[test]
fn http_post_accepts_non_strict_and_compact_bodies() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    let mut reader = BufReader::new(&stream);
    for (flavor, seqid) in [(Flavor::NonStrictBinary, 5), (Flavor::Compact, 6)] {
        let body = encode_call(flavor, "get", seqid);
        (&stream).write_all(&http_post("/", &body)).expect("send");
        let response = read_http_response(&mut reader).expect("response");
        assert_eq!(response.status, 200);
        let (reply, _) = decode_reply_bytes(flavor, &response.body);
        assert_echo(&reply, "get", seqid);
    }
}

#[test]
fn http_requests_split_into_single_bytes_still_work() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    let request = http_post("/", &encode_call(Flavor::StrictBinary, "get", 9));
    for byte in &request {
        (&stream).write_all(&[*byte]).expect("send");
    }
    let response = read_http_response(&mut BufReader::new(&stream)).expect("response");
    assert_eq!(response.status, 200);
    assert_echo(
        &decode_reply_bytes(Flavor::StrictBinary, &response.body).0,
        "get",
        9,
    );
}

#[test]
fn http_quick_calls_and_others_both_know_their_connection() {
    // "whoami" is a loop call: over HTTP it runs on the runtime worker serving the
    // connection; "getTableNames" is not and runs on the blocking pool. Both see
    // the connection they came on.
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    let mut reader = BufReader::new(&stream);
    let mut ask = |name: &str, seqid: i32| {
        (&stream)
            .write_all(&http_post(
                "/",
                &encode_call(Flavor::StrictBinary, name, seqid),
            ))
            .expect("send");
        let response = read_http_response(&mut reader).expect("response");
        assert_eq!(response.status, 200);
        let (reply, _) = decode_reply_bytes(Flavor::StrictBinary, &response.body);
        assert_eq!((reply.name.as_str(), reply.seqid), (name, seqid));
        reply.success
    };
    let quick = ask("whoami", 1).expect("a connection id");
    assert!(quick.starts_with("conn-"), "{quick}");
    assert_eq!(ask("getTableNames", 2).as_deref(), Some("getTableNames"));
    assert_eq!(ask("whoami", 3), Some(quick));
    let stats = server.stats.snapshot();
    assert_eq!(stats.calls_total, 3, "{stats:?}");
    assert_eq!(stats.calls_in_flight, 0, "{stats:?}");
}

#[test]
fn http_non_post_is_refused_with_405() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    // Detection needs "POST " first; a POST then a GET on the same connection.
    let mut reader = BufReader::new(&stream);
    (&stream)
        .write_all(&http_post("/", &encode_call(Flavor::StrictBinary, "x", 1)))
        .expect("send");
    assert_eq!(read_http_response(&mut reader).expect("first").status, 200);
    (&stream)
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .expect("send");
    let response = read_http_response(&mut reader).expect("second");
    assert_eq!(response.status, 405);
    assert_eq!(response.header("allow"), Some("POST"));
}

#[test]
fn http_body_that_is_not_thrift_gets_400() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    (&stream)
        .write_all(&http_post("/", b"hello world"))
        .expect("send");
    let response = read_http_response(&mut BufReader::new(&stream)).expect("response");
    assert_eq!(response.status, 400);
}

#[test]
fn message_sent_one_byte_at_a_time_is_answered() {
    let server = TestServer::start(ServerOptions::default());
    for flavor in [
        Flavor::StrictBinary,
        Flavor::NonStrictBinary,
        Flavor::Compact,
    ] {
        for framed in [false, true] {
            let stream = server.connect();
            let message = encode_call(flavor, "getRow", 77);
            let wire = if framed { frame(&message) } else { message };
            for byte in &wire {
                (&stream).write_all(&[*byte]).expect("send");
                std::thread::sleep(Duration::from_micros(200));
            }
            let reply = if framed {
                read_framed_reply(&stream, flavor).expect("reply")
            } else {
                read_unframed_reply(&stream, flavor).expect("reply")
            };
            assert_echo(&reply, "getRow", 77);
        }
    }
}

#[test]
fn two_messages_in_one_write_get_two_replies_in_order() {
    let server = TestServer::start(ServerOptions::default());
    for flavor in [
        Flavor::StrictBinary,
        Flavor::NonStrictBinary,
        Flavor::Compact,
    ] {
        let stream = server.connect();
        let mut wire = encode_call(flavor, "first", 1);
        wire.extend_from_slice(&encode_call(flavor, "second", 2));
        (&stream).write_all(&wire).expect("send");
        assert_echo(
            &read_unframed_reply(&stream, flavor).expect("r1"),
            "first",
            1,
        );
        assert_echo(
            &read_unframed_reply(&stream, flavor).expect("r2"),
            "second",
            2,
        );

        let framed_stream = server.connect();
        let mut wire = frame(&encode_call(flavor, "third", 3));
        wire.extend_from_slice(&frame(&encode_call(flavor, "fourth", 4)));
        (&framed_stream).write_all(&wire).expect("send");
        assert_echo(
            &read_framed_reply(&framed_stream, flavor).expect("r3"),
            "third",
            3,
        );
        assert_echo(
            &read_framed_reply(&framed_stream, flavor).expect("r4"),
            "fourth",
            4,
        );
    }
}

#[test]
fn oneway_calls_get_no_reply_and_the_connection_goes_on() {
    let server = TestServer::start(ServerOptions::default());
    let stream = server.connect();
    let mut wire = encode_message(Flavor::StrictBinary, TMessageType::OneWay, "fire", 1);
    wire.extend_from_slice(&encode_call(Flavor::StrictBinary, "after", 2));
    (&stream).write_all(&wire).expect("send");
    // The first reply on the wire is the second call's.
    assert_echo(
        &read_unframed_reply(&stream, Flavor::StrictBinary).expect("reply"),
        "after",
        2,
    );
    assert_eq!(server.stats.snapshot().calls_total, 2);
}

#[test]
fn handler_sees_its_connection_id_and_ids_differ_per_connection() {
    let server = TestServer::start(ServerOptions::default());
    let first = server.connect();
    let second = server.connect();
    let id_of = |stream: &std::net::TcpStream, seqid| {
        let reply = unframed_call(stream, Flavor::StrictBinary, "whoami", seqid);
        reply.success.expect("id")
    };
    let a1 = id_of(&first, 1);
    let a2 = id_of(&first, 2);
    let b = id_of(&second, 3);
    assert!(a1.starts_with("conn-"), "{a1}");
    assert_eq!(a1, a2, "same connection, same id");
    assert_ne!(a1, b, "different connections, different ids");
}
