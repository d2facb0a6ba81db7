//! Fuzz target: the message-boundary scanner, then the thrift crate's decoders.
//!
//! For both protocols it checks that scanning never panics, that scanning the input in
//! two pieces (resuming) agrees with scanning it whole, that a `Complete(n)` never
//! exceeds the input, and it then runs the message the scanner accepted through the
//! thrift crate's binary and compact input protocols (header, skip the args struct),
//! which is what the server's processor does with it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tabula_gateway::server::{scan_message, MessageScanner, Scan, WireProtocol};
use thrift::protocol::{TBinaryInputProtocol, TCompactInputProtocol, TInputProtocol, TType};

const LIMIT: usize = 1 << 20;

fn decode(protocol: &mut dyn TInputProtocol) {
    // Errors are expected for odd-but-accepted input; only panics are bugs.
    if protocol.read_message_begin().is_ok() && protocol.skip(TType::Struct).is_ok() {
        let _ = protocol.read_message_end();
    }
}

fn check(protocol: WireProtocol, data: &[u8]) {
    let whole = scan_message(protocol, data, LIMIT);

    let split = data.len() / 2;
    let mut scanner = MessageScanner::new(protocol, LIMIT);
    let first = scanner.scan(data.get(..split).unwrap_or(&[]));
    let resumed = scanner.scan(data);
    if let Scan::Complete(n) = first {
        assert!(n <= split, "complete beyond the bytes scanned");
    }
    assert_eq!(whole, resumed, "resumed scan disagrees with a whole scan");

    if let Scan::Complete(n) = whole {
        assert!(n <= data.len(), "complete beyond the input");
        let message = data.get(..n).unwrap_or(&[]);
        match protocol {
            WireProtocol::Binary => {
                let mut reader = message;
                decode(&mut TBinaryInputProtocol::new(&mut reader, false));
            }
            WireProtocol::Compact => {
                let mut reader = message;
                decode(&mut TCompactInputProtocol::new(&mut reader));
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(WireProtocol::Binary, data);
    check(WireProtocol::Compact, data);
});
