//! A running `tabula serve` fed 10,000 random, truncated and corrupted messages
//! (buffered and framed, one connection each, several at a time) keeps serving:
//! after every thousand, a well-formed call on a fresh connection gets the right
//! answer.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::Duration;

use common::*;
use rand::{Rng, SeedableRng};
use tabula_thrift::hbase::THbaseSyncClient;
use thrift::protocol::{
    TBinaryOutputProtocol, TCompactOutputProtocol, TFieldIdentifier, TMapIdentifier,
    TMessageIdentifier, TMessageType, TOutputProtocol, TStructIdentifier, TType,
};

const MESSAGES: usize = 10_000;
const SENDERS: usize = 8;

/// A `getRow(table, row, {})` call in the strict binary or the compact protocol,
/// written with the thrift crate's own output protocols.
fn get_row_call(compact: bool, table: &[u8], row: &[u8], seqid: i32) -> Vec<u8> {
    fn write(o: &mut dyn TOutputProtocol, table: &[u8], row: &[u8], seqid: i32) {
        let result: thrift::Result<()> = (|| {
            o.write_message_begin(&TMessageIdentifier::new(
                "getRow",
                TMessageType::Call,
                seqid,
            ))?;
            o.write_struct_begin(&TStructIdentifier::new("getRow_args"))?;
            for (id, value) in [(1i16, table), (2, row)] {
                o.write_field_begin(&TFieldIdentifier::new("f", TType::String, id))?;
                o.write_bytes(value)?;
                o.write_field_end()?;
            }
            o.write_field_begin(&TFieldIdentifier::new("attributes", TType::Map, 3))?;
            o.write_map_begin(&TMapIdentifier::new(TType::String, TType::String, 0))?;
            o.write_map_end()?;
            o.write_field_end()?;
            o.write_field_stop()?;
            o.write_struct_end()?;
            o.write_message_end()?;
            o.flush()
        })();
        result.expect("encode getRow");
    }
    let mut buf = Vec::new();
    if compact {
        write(
            &mut TCompactOutputProtocol::new(&mut buf),
            table,
            row,
            seqid,
        );
    } else {
        write(
            &mut TBinaryOutputProtocol::new(&mut buf, true),
            table,
            row,
            seqid,
        );
    }
    buf
}

/// One hostile message: a corrupted, truncated or random-bytes variant of a valid
/// call, sometimes framed.
fn hostile(rng: &mut impl Rng, table: &[u8]) -> Vec<u8> {
    let mut m = get_row_call(rng.gen(), table, b"r", rng.gen());
    match rng.gen_range(0..4) {
        0 => {
            let cut = rng.gen_range(0..m.len());
            m.truncate(cut);
        }
        1 => {
            for _ in 0..rng.gen_range(1..6) {
                let at = rng.gen_range(0..m.len());
                m[at] = rng.gen();
            }
        }
        2 => {
            let n = rng.gen_range(0..256);
            m = (0..n).map(|_| rng.gen()).collect();
        }
        _ => {
            let at = rng.gen_range(0..m.len());
            let word: [u8; 4] = [0x7f, rng.gen(), rng.gen(), rng.gen()];
            for (i, b) in word.iter().enumerate() {
                if let Some(slot) = m.get_mut(at + i) {
                    *slot = *b;
                }
            }
        }
    }
    if rng.gen_bool(0.3) {
        let mut framed = (m.len() as i32).to_be_bytes().to_vec();
        if rng.gen_bool(0.2) {
            framed = rng.gen::<[u8; 4]>().to_vec();
        }
        framed.extend_from_slice(&m);
        m = framed;
    }
    m
}

/// Sends one message, half-closes, and drains whatever comes back until the
/// server closes (or a bounded wait passes).
fn send_one(addr: SocketAddr, message: &[u8]) {
    let Ok(mut s) = TcpStream::connect(addr) else {
        panic!("the server stopped accepting connections");
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = s.write_all(message);
    let _ = s.shutdown(Shutdown::Write);
    let mut sink = [0u8; 4096];
    while let Ok(n) = s.read(&mut sink) {
        if n == 0 {
            break;
        }
    }
}

#[test]
fn ten_thousand_hostile_messages_then_well_formed_calls_are_answered() {
    let server = Tabula::start();
    let mut c = server.client();
    let table = b"hostile".to_vec();
    create(&mut c, &table, &["cf"]);
    put(&mut c, &table, "r", &[("cf:q", "intact")]);

    // The unmodified calls are well formed: each gets a reply naming the row's value,
    // so the corrupted variants below start from real calls.
    for compact in [false, true] {
        let mut s = TcpStream::connect(server.thrift1).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("read timeout");
        s.write_all(&get_row_call(compact, &table, b"r", 1))
            .expect("send");
        s.shutdown(Shutdown::Write).expect("half-close");
        let mut reply = Vec::new();
        let _ = s.read_to_end(&mut reply);
        assert!(
            reply.windows(6).any(|w| w == b"intact"),
            "compact={compact}: no value in the reply {reply:?}"
        );
    }

    let per_sender = MESSAGES / SENDERS;
    let rounds = 10;
    for round in 0..rounds {
        let handles: Vec<_> = (0..SENDERS)
            .map(|s| {
                let addr = server.thrift1;
                let table = table.clone();
                std::thread::spawn(move || {
                    let mut rng = rand::rngs::StdRng::seed_from_u64((round * 100 + s) as u64);
                    for _ in 0..per_sender / rounds {
                        send_one(addr, &hostile(&mut rng, &table));
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().expect("sender thread");
        }
        let mut fresh = server.client();
        let rows = fresh
            .get_row(table.clone(), b"r".to_vec(), no_attrs())
            .expect("a well-formed getRow after hostile input");
        assert_eq!(rows.len(), 1, "round {round}");
        assert_eq!(
            columns_of(&rows[0]).get("cf:q").map(String::as_str),
            Some("intact"),
            "round {round}"
        );
    }
    // The connection opened before the storm still works too.
    let names = c.get_table_names().expect("getTableNames");
    assert!(names.contains(&table));
    assert!(
        !server.log().contains("panicked"),
        "the server log reports a panic"
    );
}
