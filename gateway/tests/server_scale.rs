//! Many idle connections are cheap: 1,000 open at once (no thread per connection), then
//! every one of them makes a call.

mod server_common;

use std::io::Write;

use server_common::*;
use tabula_gateway::server::ServerOptions;

const CONNECTIONS: usize = 1000;

#[test]
fn a_thousand_idle_connections_then_a_call_on_each() {
    raise_fd_limit(4 * CONNECTIONS as u64 + 256);
    let server = TestServer::start(ServerOptions::default());
    let threads_before = thread_count();
    let flavors = [
        Flavor::StrictBinary,
        Flavor::NonStrictBinary,
        Flavor::Compact,
    ];
    let connections: Vec<_> = (0..CONNECTIONS).map(|_| server.connect()).collect();
    server.wait_for_stats("all connections accepted", |s| {
        s.connections_open == CONNECTIONS as u64
    });
    if let (Some(before), Some(now)) = (threads_before, thread_count()) {
        assert!(
            now < before + 64,
            "idle connections must not pin threads: {before} -> {now}"
        );
    }
    // Send every call first so they are all pending at once, then collect the replies.
    for (index, stream) in connections.iter().enumerate() {
        let flavor = flavors[index % flavors.len()];
        let message = encode_call(flavor, "ping", index as i32);
        let wire = if index % 2 == 0 {
            frame(&message)
        } else {
            message
        };
        (&*stream).write_all(&wire).expect("send");
    }
    for (index, stream) in connections.iter().enumerate() {
        let flavor = flavors[index % flavors.len()];
        let reply = if index % 2 == 0 {
            read_framed_reply(stream, flavor).expect("framed reply")
        } else {
            read_unframed_reply(stream, flavor).expect("unframed reply")
        };
        assert_echo(&reply, "ping", index as i32);
    }
    let snap = server.stats.snapshot();
    assert_eq!(snap.calls_total, CONNECTIONS as u64);
    assert_eq!(snap.connections_open, CONNECTIONS as u64);
    drop(connections);
    server.wait_for_stats("all connections closed", |s| s.connections_open == 0);
}
