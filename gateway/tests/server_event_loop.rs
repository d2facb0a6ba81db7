//! Connections served by the server's event loops: quick calls run on a loop
//! thread, other calls and slow ones move their connection to a thread of its own
//! without losing or reordering anything, pipelined calls are answered in order,
//! replies larger than the socket buffers arrive whole, and idle limits, malformed
//! messages and shutdown behave as they do on connection threads.

mod server_common;

use std::io::Write;
use std::time::{Duration, Instant};

use server_common::*;
use tabula_gateway::server::ServerOptions;
use thrift::protocol::TMessageType;

/// Methods of the test processor that may run on a loop (`elsewhere` and every
/// other name may not).
const ON_LOOP: &[&str] = &["echo", "whereami", "whoami", "slow", "big", "stillAlive"];

fn loop_options() -> ServerOptions {
    ServerOptions {
        loop_calls: ON_LOOP,
        event_loops: 2,
        ..ServerOptions::default()
    }
}

const FLAVORS: [Flavor; 3] = [
    Flavor::StrictBinary,
    Flavor::NonStrictBinary,
    Flavor::Compact,
];

/// One call on `stream`, framed or not; the reply's field 0.
fn call(
    stream: &std::net::TcpStream,
    framed: bool,
    flavor: Flavor,
    name: &str,
    seqid: i32,
) -> String {
    let reply = if framed {
        framed_call(stream, flavor, name, seqid)
    } else {
        unframed_call(stream, flavor, name, seqid)
    };
    assert_eq!(reply.kind, TMessageType::Reply, "{reply:?}");
    assert_eq!(reply.seqid, seqid);
    assert_eq!(reply.name, name);
    reply.success.unwrap_or_default()
}

fn on_loop_thread(thread: &str) -> bool {
    thread.starts_with("tabula-loop-")
}

#[test]
fn quick_calls_run_on_a_loop_and_other_calls_move_the_connection_to_its_own_thread() {
    let server = TestServer::start(loop_options());
    for framed in [false, true] {
        for flavor in FLAVORS {
            let stream = server.connect();
            let first = call(&stream, framed, flavor, "whereami", 1);
            assert!(on_loop_thread(&first), "{first}");
            assert_eq!(call(&stream, framed, flavor, "echo", 2), "echo");
            // Not on the list: runs on a thread of the connection's own, and so
            // does everything after it.
            assert_eq!(call(&stream, framed, flavor, "elsewhere", 3), "elsewhere");
            let later = call(&stream, framed, flavor, "whereami", 4);
            assert!(!on_loop_thread(&later), "{later}");
            assert!(later.starts_with("tabula-"), "{later}");
            assert_eq!(call(&stream, framed, flavor, "echo", 5), "echo");
        }
    }
}

#[test]
fn a_slow_call_moves_its_connection_off_the_loop_and_others_keep_being_served() {
    let server = TestServer::start(ServerOptions {
        event_loops: 1,
        ..loop_options()
    });
    let slow = server.connect();
    let quick = server.connect();
    assert!(on_loop_thread(&call(
        &quick,
        true,
        Flavor::Compact,
        "whereami",
        1
    )));
    assert!(on_loop_thread(&call(
        &slow,
        true,
        Flavor::Compact,
        "whereami",
        1
    )));
    assert_eq!(call(&slow, true, Flavor::Compact, "slow", 2), "slow");
    let moved = call(&slow, true, Flavor::Compact, "whereami", 3);
    assert!(!on_loop_thread(&moved), "{moved}");
    // A second slow call now holds up only its own connection.
    (&slow)
        .write_all(&frame(&encode_call(Flavor::Compact, "slow", 4)))
        .expect("send");
    let began = Instant::now();
    for seqid in 2..12 {
        assert_eq!(call(&quick, true, Flavor::Compact, "echo", seqid), "echo");
    }
    assert!(
        began.elapsed() < SLOW_CALL,
        "quick calls waited for the slow one: {:?}",
        began.elapsed()
    );
    assert_echo(
        &read_framed_reply(&slow, Flavor::Compact).expect("reply"),
        "slow",
        4,
    );
    assert!(on_loop_thread(&call(
        &quick,
        true,
        Flavor::Compact,
        "whereami",
        20
    )));
}

#[test]
fn a_connection_that_left_for_a_slow_call_comes_back_after_quick_ones_and_others_do_not() {
    let server = TestServer::start(loop_options());
    for framed in [false, true] {
        let slow = server.connect();
        assert_eq!(call(&slow, framed, Flavor::Compact, "slow", 1), "slow");
        assert!(!on_loop_thread(&call(
            &slow,
            framed,
            Flavor::Compact,
            "whereami",
            2
        )));
        let mut seqid = 3;
        let back = loop {
            let thread = call(&slow, framed, Flavor::Compact, "whereami", seqid);
            if on_loop_thread(&thread) || seqid > 1000 {
                break seqid;
            }
            seqid += 1;
        };
        // Not before 64 quick calls; later only if one of them ran slowly (a
        // loaded machine), which starts the count again.
        assert!(
            (60..1000).contains(&back),
            "back on a loop after call {back} (64 quick calls after the move)"
        );
        // One that left for a call that may not run on a loop stays on its thread.
        let other = server.connect();
        assert_eq!(
            call(&other, framed, Flavor::Compact, "elsewhere", 1),
            "elsewhere"
        );
        for seqid in 2..200 {
            let thread = call(&other, framed, Flavor::Compact, "whereami", seqid);
            assert!(!on_loop_thread(&thread), "call {seqid} ran on {thread}");
        }
    }
}

#[test]
fn pipelined_calls_are_answered_in_order_across_a_move_to_a_thread() {
    let server = TestServer::start(loop_options());
    for flavor in FLAVORS {
        for framed in [false, true] {
            let stream = server.connect();
            let names = ["echo", "whoami", "echo", "elsewhere", "echo", "stillAlive"];
            let mut bytes = Vec::new();
            for seqid in 0..60 {
                let name = names[seqid % names.len()];
                let message = encode_call(flavor, name, seqid as i32);
                bytes.extend(if framed { frame(&message) } else { message });
            }
            (&stream).write_all(&bytes).expect("send");
            for seqid in 0..60 {
                let reply = if framed {
                    read_framed_reply(&stream, flavor).expect("reply")
                } else {
                    read_unframed_reply(&stream, flavor).expect("reply")
                };
                assert_eq!(reply.seqid, seqid as i32, "{reply:?}");
                assert_eq!(reply.name, names[seqid % names.len()]);
                assert_eq!(reply.kind, TMessageType::Reply);
            }
        }
    }
}

#[test]
fn many_connections_share_a_few_loop_threads() {
    raise_fd_limit(4096);
    let server = TestServer::start(loop_options());
    let before = thread_count().expect("thread count");
    let conns: Vec<_> = (0..300).map(|_| server.connect()).collect();
    for (n, stream) in conns.iter().enumerate() {
        let framed = n % 2 == 0;
        let flavor = FLAVORS[n % FLAVORS.len()];
        let thread = call(stream, framed, flavor, "whereami", n as i32);
        assert!(on_loop_thread(&thread), "{thread}");
    }
    let during = thread_count().expect("thread count");
    assert!(
        during < before + 50,
        "300 loop connections took {} threads",
        during - before
    );
    // All of them again, from several client threads at once.
    std::thread::scope(|scope| {
        for (part, chunk) in conns.chunks(75).enumerate() {
            scope.spawn(move || {
                for round in 0..20 {
                    for (n, stream) in chunk.iter().enumerate() {
                        let framed = (part * 75 + n) % 2 == 0;
                        let flavor = FLAVORS[(part * 75 + n) % FLAVORS.len()];
                        assert_eq!(call(stream, framed, flavor, "echo", round), "echo");
                    }
                }
            });
        }
    });
}

#[test]
fn a_reply_larger_than_the_socket_buffers_arrives_whole_and_in_order() {
    let server = TestServer::start(loop_options());
    for framed in [false, true] {
        let stream = server.connect();
        let mut bytes = Vec::new();
        for (seqid, name) in ["big", "echo", "big", "whereami"].iter().enumerate() {
            let message = encode_call(Flavor::StrictBinary, name, seqid as i32);
            bytes.extend(if framed { frame(&message) } else { message });
        }
        (&stream).write_all(&bytes).expect("send");
        // The client reads nothing for a while: the loop must not wait for it.
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(
            call(&server.connect(), framed, Flavor::Compact, "echo", 9),
            "echo"
        );
        for (seqid, name) in ["big", "echo", "big", "whereami"].iter().enumerate() {
            let reply = if framed {
                read_framed_reply(&stream, Flavor::StrictBinary).expect("reply")
            } else {
                read_unframed_reply(&stream, Flavor::StrictBinary).expect("reply")
            };
            assert_eq!(reply.seqid, seqid as i32);
            assert_eq!(reply.name, *name);
            let answer = reply.success.expect("answer");
            if *name == "big" {
                assert_eq!(answer.len(), BIG_REPLY);
                assert!(answer.bytes().all(|b| b == b'x'));
            }
        }
    }
}

#[test]
fn idle_loop_connections_are_closed_and_busy_ones_are_not() {
    let server = TestServer::start(ServerOptions {
        idle_timeout: Some(Duration::from_millis(300)),
        ..loop_options()
    });
    let idle = server.connect();
    let busy = server.connect();
    assert!(on_loop_thread(&call(
        &idle,
        true,
        Flavor::Compact,
        "whereami",
        1
    )));
    let until = Instant::now() + Duration::from_millis(900);
    let mut seqid = 0;
    while Instant::now() < until {
        seqid += 1;
        assert_eq!(call(&busy, true, Flavor::Compact, "echo", seqid), "echo");
        std::thread::sleep(Duration::from_millis(20));
    }
    idle.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    assert!(is_closed_by_server(&idle));
    assert_eq!(call(&busy, true, Flavor::Compact, "echo", 0), "echo");
}

#[test]
fn a_malformed_frame_on_a_loop_is_answered_and_the_connection_goes_on() {
    let server = TestServer::start(loop_options());
    let stream = server.connect();
    assert!(on_loop_thread(&call(
        &stream,
        true,
        Flavor::StrictBinary,
        "whereami",
        1
    )));
    // A whole frame whose message stops after its header: an exception answers it.
    let mut message = encode_call(Flavor::StrictBinary, "echo", 2);
    let header_len = 4 + 4 + "echo".len() + 4;
    message.truncate(header_len + 3);
    (&stream).write_all(&frame(&message)).expect("send");
    let reply = read_framed_reply(&stream, Flavor::StrictBinary).expect("reply");
    assert_eq!(reply.kind, TMessageType::Exception, "{reply:?}");
    assert_eq!(reply.seqid, 2);
    assert_eq!(call(&stream, true, Flavor::StrictBinary, "echo", 3), "echo");
    // Garbage where an unframed message should start closes only that connection.
    let other = server.connect();
    assert!(on_loop_thread(&call(
        &other,
        false,
        Flavor::Compact,
        "whereami",
        1
    )));
    (&other).write_all(&[0x82, 0xff, 0xff, 0xff]).expect("send");
    assert!(is_closed_by_server(&other));
    assert_eq!(call(&stream, true, Flavor::StrictBinary, "echo", 4), "echo");
}

#[test]
fn shutdown_closes_loop_connections_after_their_replies() {
    let server = TestServer::start(loop_options());
    let streams: Vec<_> = (0..10).map(|_| server.connect()).collect();
    for (n, stream) in streams.iter().enumerate() {
        assert!(on_loop_thread(&call(
            stream,
            n % 2 == 0,
            Flavor::Compact,
            "whereami",
            1
        )));
    }
    let report = server.stop();
    assert_eq!(report.connections_aborted, 0, "{report:?}");
    for stream in &streams {
        assert!(is_closed_by_server(stream));
    }
}

#[test]
fn loops_off_serves_every_connection_on_its_own_thread() {
    let server = TestServer::start(ServerOptions {
        event_loops: 0,
        ..loop_options()
    });
    let stream = server.connect();
    let thread = call(&stream, true, Flavor::Compact, "whereami", 1);
    assert!(!on_loop_thread(&thread), "{thread}");
}
