//! Cutting request messages out of a connection's receive buffer.
//!
//! Owns [`MessageReader`], which knows the connection's transport: framed messages are
//! cut at their length prefix and then checked with the boundary scanner (so the
//! processor never sees a length it would trust blindly); unframed messages are cut
//! where the resumable scanner says they end. It does not read sockets or send replies.

use bytes::{Buf, Bytes, BytesMut};

use crate::server::detect::{Transport, WireMode};
use crate::server::frame::{MessageScanner, Scan};
use crate::server::wire::{MessageHeader, ScanError, WireProtocol};

/// Size of the big-endian length prefix of a framed message.
const FRAME_PREFIX_LEN: usize = 4;

/// What the buffer holds next.
#[derive(Debug)]
pub(crate) enum Extract {
    /// One whole request message, removed from the buffer.
    Message(Bytes),
    /// The next message is not complete yet.
    NeedMore,
    /// The next message is larger than the limit; the connection must close.
    Oversized { size: u64 },
    /// The next message is not well-formed Thrift.
    Malformed {
        /// Its header, when that much could be read (an EXCEPTION can then answer it).
        header: Option<MessageHeader>,
        /// What is wrong.
        error: ScanError,
        /// Whether the stream is still in sync (framed: the bad frame was consumed).
        resumable: bool,
    },
}

/// Extracts messages for one connection.
pub(crate) struct MessageReader {
    transport: Transport,
    limit: usize,
    scanner: MessageScanner,
}

impl MessageReader {
    /// A reader for a framed or unframed connection (HTTP bodies are scanned directly).
    pub(crate) fn new(mode: WireMode, limit: usize) -> Self {
        MessageReader {
            transport: mode.transport,
            limit,
            scanner: MessageScanner::new(mode.protocol, limit),
        }
    }

    pub(crate) fn protocol(&self) -> WireProtocol {
        self.scanner.protocol()
    }

    /// Looks for the next message at the start of `buf`.
    pub(crate) fn next(&mut self, buf: &mut BytesMut) -> Extract {
        match self.transport {
            Transport::Framed => self.next_framed(buf),
            Transport::Unframed | Transport::Http => self.next_unframed(buf),
        }
    }

    fn next_framed(&mut self, buf: &mut BytesMut) -> Extract {
        let Some(prefix) = buf.get(..FRAME_PREFIX_LEN) else {
            return Extract::NeedMore;
        };
        let mut word = [0u8; FRAME_PREFIX_LEN];
        word.copy_from_slice(prefix);
        let declared = i32::from_be_bytes(word);
        let Ok(len) = usize::try_from(declared) else {
            return Extract::Malformed {
                header: None,
                error: ScanError::BadLength(i64::from(declared)),
                resumable: false,
            };
        };
        if len == 0 {
            return Extract::Malformed {
                header: None,
                error: ScanError::BadLength(0),
                resumable: false,
            };
        }
        if len > self.limit {
            return Extract::Oversized { size: len as u64 };
        }
        if buf.len() - FRAME_PREFIX_LEN < len {
            return Extract::NeedMore;
        }
        buf.advance(FRAME_PREFIX_LEN);
        let payload = buf.split_to(len).freeze();
        self.scanner.reset();
        match self.scanner.scan(&payload) {
            // Bytes after the message inside its frame are ignored, as Thrift servers do.
            Scan::Complete(end) => Extract::Message(payload.slice(..end)),
            Scan::NeedMore => self.malformed_frame(ScanError::Truncated(len)),
            Scan::Invalid(error) => self.malformed_frame(error),
        }
    }

    fn malformed_frame(&self, error: ScanError) -> Extract {
        Extract::Malformed {
            header: self.scanner.header().cloned(),
            error,
            resumable: true,
        }
    }

    fn next_unframed(&mut self, buf: &mut BytesMut) -> Extract {
        match self.scanner.scan(buf) {
            Scan::Complete(end) => {
                self.scanner.reset();
                Extract::Message(buf.split_to(end).freeze())
            }
            Scan::NeedMore => Extract::NeedMore,
            Scan::Invalid(ScanError::TooLarge { size, .. }) => Extract::Oversized { size },
            Scan::Invalid(error) => Extract::Malformed {
                header: self.scanner.header().cloned(),
                error,
                resumable: false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use thrift::protocol::{
        TBinaryOutputProtocol, TFieldIdentifier, TMessageIdentifier, TMessageType, TOutputProtocol,
        TStructIdentifier, TType,
    };

    fn call(name: &str, seqid: i32) -> Vec<u8> {
        let mut buf = Vec::new();
        let mut o = TBinaryOutputProtocol::new(&mut buf, true);
        let _ = o.write_message_begin(&TMessageIdentifier::new(name, TMessageType::Call, seqid));
        let _ = o.write_struct_begin(&TStructIdentifier::new("args"));
        let _ = o.write_field_begin(&TFieldIdentifier::new("x", TType::I32, 1));
        let _ = o.write_i32(5);
        let _ = o.write_field_end();
        let _ = o.write_field_stop();
        let _ = o.write_struct_end();
        buf
    }

    fn framed(message: &[u8]) -> Vec<u8> {
        let mut out = (message.len() as u32).to_be_bytes().to_vec();
        out.extend_from_slice(message);
        out
    }

    fn reader(transport: Transport) -> MessageReader {
        MessageReader::new(
            WireMode {
                transport,
                protocol: WireProtocol::Binary,
            },
            1024,
        )
    }

    #[test]
    fn unframed_messages_are_cut_one_at_a_time() {
        let first = call("a", 1);
        let second = call("bb", 2);
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&first);
        buf.extend_from_slice(&second);
        let mut reader = reader(Transport::Unframed);
        assert!(matches!(reader.next(&mut buf), Extract::Message(m) if m == first));
        assert!(matches!(reader.next(&mut buf), Extract::Message(m) if m == second));
        assert!(matches!(reader.next(&mut buf), Extract::NeedMore));
    }

    #[test]
    fn unframed_message_arriving_bytewise_completes_once() {
        let message = call("slow", 3);
        let mut reader = reader(Transport::Unframed);
        let mut buf = BytesMut::new();
        let mut extracted = Vec::new();
        for byte in &message {
            buf.extend_from_slice(&[*byte]);
            if let Extract::Message(m) = reader.next(&mut buf) {
                extracted.push(m);
            }
        }
        assert_eq!(extracted, vec![Bytes::from(message)]);
    }

    #[test]
    fn framed_messages_strip_the_prefix() {
        let message = call("f", 4);
        let mut buf = BytesMut::from(&framed(&message)[..]);
        let mut reader = reader(Transport::Framed);
        assert!(matches!(reader.next(&mut buf), Extract::Message(m) if m == message));
        assert!(buf.is_empty());
    }

    #[test]
    fn oversized_frames_are_reported_before_their_body_arrives() {
        let mut buf = BytesMut::from(&[0u8, 0, 8, 0, 0x80, 0x01][..]);
        let mut reader = reader(Transport::Framed);
        assert!(matches!(
            reader.next(&mut buf),
            Extract::Oversized { size: 2048 }
        ));
    }

    #[test]
    fn negative_frame_length_is_malformed_and_not_resumable() {
        let mut buf = BytesMut::from(&[0xffu8, 0xff, 0xff, 0xfe, 0][..]);
        let mut reader = reader(Transport::Framed);
        assert!(matches!(
            reader.next(&mut buf),
            Extract::Malformed {
                resumable: false,
                ..
            }
        ));
    }

    #[test]
    fn frame_cutting_a_message_short_is_malformed_but_resumable() {
        let message = call("cut", 5);
        let short = message.get(..message.len() - 2).unwrap_or(&[]);
        let mut bytes = framed(short);
        bytes.extend_from_slice(&framed(&call("next", 6)));
        let mut buf = BytesMut::from(&bytes[..]);
        let mut reader = reader(Transport::Framed);
        match reader.next(&mut buf) {
            Extract::Malformed {
                header: Some(header),
                resumable: true,
                ..
            } => assert_eq!(header.name, "cut"),
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(reader.next(&mut buf), Extract::Message(_)));
    }

    #[test]
    fn unframed_garbage_after_a_header_keeps_the_header() {
        let mut bytes = call("bad", 7);
        let args_start = bytes.len() - 8;
        if let Some(byte) = bytes.get_mut(args_start) {
            *byte = 0x7f; // not a field type
        }
        let mut buf = BytesMut::from(&bytes[..]);
        let mut reader = reader(Transport::Unframed);
        match reader.next(&mut buf) {
            Extract::Malformed {
                header: Some(header),
                error: ScanError::UnknownType(0x7f),
                resumable: false,
            } => assert_eq!(header.seqid, 7),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn unframed_message_over_the_limit_is_oversized() {
        let mut bytes = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 1, b'x', 0, 0, 0, 1];
        bytes.extend_from_slice(&[11, 0, 1]);
        bytes.extend_from_slice(&1010i32.to_be_bytes());
        bytes.extend_from_slice(&vec![b'v'; 1100]);
        let mut buf = BytesMut::from(&bytes[..]);
        let mut reader = reader(Transport::Unframed);
        assert!(matches!(reader.next(&mut buf), Extract::Oversized { .. }));
    }
}
