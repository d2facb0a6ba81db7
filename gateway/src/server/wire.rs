//! Reading Thrift binary- and compact-protocol primitives out of an in-memory byte buffer.
//!
//! Owns the byte-level cursor, the wire type codes of both protocols and message-header
//! parsing. It never allocates from lengths found on the wire and never panics on any
//! input; it does not decide where a message ends (that is `frame`'s job).

use thrift::protocol::TMessageType;

/// The two Thrift protocols the gateway speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WireProtocol {
    /// `TBinaryProtocol` (strict or non-strict message headers).
    Binary,
    /// `TCompactProtocol`.
    Compact,
}

/// Why a byte sequence is not a well-formed Thrift message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    /// The message does not start with a known protocol version header.
    #[error("bad protocol version header 0x{0:08x}")]
    BadVersion(u32),
    /// The message type is not CALL, REPLY, EXCEPTION or ONEWAY.
    #[error("message type {0} is not a Thrift message type")]
    BadMessageType(u8),
    /// The method name is not valid UTF-8.
    #[error("method name is not valid UTF-8")]
    BadMethodName,
    /// A string, container or message length is negative or not representable.
    #[error("invalid length {0}")]
    BadLength(i64),
    /// A field, element, key or value type code is unknown.
    #[error("unknown type code {0}")]
    UnknownType(u8),
    /// A compact-protocol varint is longer than its integer type allows.
    #[error("varint longer than {0} bytes")]
    VarintTooLong(usize),
    /// Structs and containers are nested deeper than the scanner allows.
    #[error("values nested deeper than {0} levels")]
    TooDeep(usize),
    /// The message ends before its last value does (e.g. cut short by its frame).
    #[error("message is cut short after {0} bytes")]
    Truncated(usize),
    /// The message (or one value inside it) is larger than the configured limit.
    #[error("message of at least {size} bytes exceeds the {limit}-byte limit")]
    TooLarge {
        /// Size known so far (a lower bound of the real size).
        size: u64,
        /// The configured limit.
        limit: usize,
    },
}

/// Why a read from the buffer could not complete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The buffer ends before the item does.
    Short,
    /// The bytes can never form a valid item.
    Invalid(ScanError),
}

impl From<ScanError> for Stop {
    fn from(err: ScanError) -> Self {
        Stop::Invalid(err)
    }
}

/// The value types both protocols share, independent of their type codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValueType {
    Bool,
    Byte,
    I16,
    I32,
    I64,
    Double,
    String,
    Struct,
    Map,
    Set,
    List,
}

/// A decoded message header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageHeader {
    /// Method name.
    pub name: String,
    /// Message type (CALL, ONEWAY, ...).
    pub kind: TMessageType,
    /// Sequence id chosen by the client.
    pub seqid: i32,
    /// Whether a binary header carried the strict version word (always true for compact).
    pub strict: bool,
    /// Number of bytes the header occupies.
    pub len: usize,
}

/// A read position inside a borrowed buffer.
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(buf: &'a [u8], pos: usize) -> Self {
        Cursor { buf, pos }
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Takes `n` bytes, or reports `Short` without moving.
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Stop> {
        let end = self.pos.checked_add(n).ok_or(Stop::Short)?;
        let bytes = self.buf.get(self.pos..end).ok_or(Stop::Short)?;
        self.pos = end;
        Ok(bytes)
    }

    pub(crate) fn skip(&mut self, n: usize) -> Result<(), Stop> {
        self.take(n).map(|_| ())
    }

    pub(crate) fn u8(&mut self) -> Result<u8, Stop> {
        let bytes = self.take(1)?;
        bytes.first().copied().ok_or(Stop::Short)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Stop> {
        let bytes = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }

    pub(crate) fn i32_be(&mut self) -> Result<i32, Stop> {
        self.array::<4>().map(i32::from_be_bytes)
    }

    /// Reads an unsigned LEB128 varint of at most `max_bytes` bytes.
    pub(crate) fn varint(&mut self, max_bytes: usize) -> Result<u64, Stop> {
        let mut value: u64 = 0;
        for index in 0..max_bytes {
            let byte = self.u8()?;
            let shift = 7 * index as u32;
            value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(Stop::Invalid(ScanError::VarintTooLong(max_bytes)))
    }
}

/// Maximum encoded sizes of compact-protocol varints.
pub(crate) const VARINT16_MAX: usize = 3;
pub(crate) const VARINT32_MAX: usize = 5;
pub(crate) const VARINT64_MAX: usize = 10;

const BINARY_VERSION_MASK: u32 = 0xffff_0000;
const BINARY_VERSION_1: u32 = 0x8001_0000;
const COMPACT_PROTOCOL_ID: u8 = 0x82;
const COMPACT_VERSION: u8 = 0x01;
const COMPACT_VERSION_MASK: u8 = 0x1f;

/// Maps a binary-protocol type code to a value type (`None` for STOP).
pub(crate) fn binary_type(code: u8) -> Result<Option<ValueType>, ScanError> {
    Ok(Some(match code {
        0 => return Ok(None),
        2 => ValueType::Bool,
        3 => ValueType::Byte,
        4 => ValueType::Double,
        6 => ValueType::I16,
        8 => ValueType::I32,
        10 => ValueType::I64,
        11 => ValueType::String,
        12 => ValueType::Struct,
        13 => ValueType::Map,
        14 => ValueType::Set,
        15 => ValueType::List,
        other => return Err(ScanError::UnknownType(other)),
    }))
}

/// Maps a compact-protocol element type nibble (list, set and map contents) to a value type.
/// Both boolean codes are accepted, as Java's reader does.
pub(crate) fn compact_element_type(code: u8) -> Result<ValueType, ScanError> {
    Ok(match code {
        1 | 2 => ValueType::Bool,
        3 => ValueType::Byte,
        4 => ValueType::I16,
        5 => ValueType::I32,
        6 => ValueType::I64,
        7 => ValueType::Double,
        8 => ValueType::String,
        9 => ValueType::List,
        10 => ValueType::Set,
        11 => ValueType::Map,
        12 => ValueType::Struct,
        other => return Err(ScanError::UnknownType(other)),
    })
}

/// Checks that a length read from the wire is non-negative and within `limit`.
pub(crate) fn checked_len(len: i64, limit: usize) -> Result<usize, ScanError> {
    if len < 0 {
        return Err(ScanError::BadLength(len));
    }
    let as_usize = usize::try_from(len).map_err(|_| ScanError::BadLength(len))?;
    if as_usize > limit {
        return Err(ScanError::TooLarge {
            size: len.unsigned_abs(),
            limit,
        });
    }
    Ok(as_usize)
}

fn message_type(code: u8) -> Result<TMessageType, ScanError> {
    match code {
        1 => Ok(TMessageType::Call),
        2 => Ok(TMessageType::Reply),
        3 => Ok(TMessageType::Exception),
        4 => Ok(TMessageType::OneWay),
        other => Err(ScanError::BadMessageType(other)),
    }
}

/// A message header whose method name still lies in the message's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeaderRef<'a> {
    /// Method name (valid UTF-8).
    pub(crate) name: &'a str,
    pub(crate) kind: TMessageType,
    pub(crate) seqid: i32,
    pub(crate) strict: bool,
    pub(crate) len: usize,
}

impl HeaderRef<'_> {
    fn to_owned(self) -> MessageHeader {
        MessageHeader {
            name: self.name.to_owned(),
            kind: self.kind,
            seqid: self.seqid,
            strict: self.strict,
            len: self.len,
        }
    }
}

fn method_name(bytes: &[u8]) -> Result<&str, ScanError> {
    std::str::from_utf8(bytes).map_err(|_| ScanError::BadMethodName)
}

/// Parses the message header at the start of `buf`. Method names longer than `limit`
/// are rejected.
pub(crate) fn read_header(
    protocol: WireProtocol,
    buf: &[u8],
    limit: usize,
) -> Result<MessageHeader, Stop> {
    peek_header(protocol, buf, limit).map(HeaderRef::to_owned)
}

/// [`read_header`] without copying the method name out of `buf`.
pub(crate) fn peek_header(
    protocol: WireProtocol,
    buf: &[u8],
    limit: usize,
) -> Result<HeaderRef<'_>, Stop> {
    let mut cur = Cursor::new(buf, 0);
    match protocol {
        WireProtocol::Binary => read_binary_header(&mut cur, limit),
        WireProtocol::Compact => read_compact_header(&mut cur, limit),
    }
}

fn read_binary_header<'a>(cur: &mut Cursor<'a>, limit: usize) -> Result<HeaderRef<'a>, Stop> {
    let first = cur.i32_be()?;
    if first < 0 {
        let word = first as u32;
        if word & BINARY_VERSION_MASK != BINARY_VERSION_1 {
            return Err(ScanError::BadVersion(word).into());
        }
        let kind = message_type((word & 0xff) as u8)?;
        let name_len = checked_len(i64::from(cur.i32_be()?), limit)?;
        let name = method_name(cur.take(name_len)?)?;
        let seqid = cur.i32_be()?;
        Ok(HeaderRef {
            name,
            kind,
            seqid,
            strict: true,
            len: cur.pos(),
        })
    } else {
        let name_len = checked_len(i64::from(first), limit)?;
        let name = method_name(cur.take(name_len)?)?;
        let kind = message_type(cur.u8()?)?;
        let seqid = cur.i32_be()?;
        Ok(HeaderRef {
            name,
            kind,
            seqid,
            strict: false,
            len: cur.pos(),
        })
    }
}

fn read_compact_header<'a>(cur: &mut Cursor<'a>, limit: usize) -> Result<HeaderRef<'a>, Stop> {
    let id = cur.u8()?;
    if id != COMPACT_PROTOCOL_ID {
        return Err(ScanError::BadVersion(u32::from(id)).into());
    }
    let type_and_version = cur.u8()?;
    if type_and_version & COMPACT_VERSION_MASK != COMPACT_VERSION {
        return Err(ScanError::BadVersion(u32::from_be_bytes([0, 0, id, type_and_version])).into());
    }
    let kind = message_type(type_and_version >> 5)?;
    let seqid = cur.varint(VARINT32_MAX)? as u32 as i32;
    let name_len = cur.varint(VARINT32_MAX)?;
    let name_len = checked_len(i64::try_from(name_len).unwrap_or(i64::MAX), limit)?;
    let name = method_name(cur.take(name_len)?)?;
    Ok(HeaderRef {
        name,
        kind,
        seqid,
        strict: true,
        len: cur.pos(),
    })
}

/// Whether the first bytes of a compact message header are plausible.
pub(crate) fn is_compact_start(id: u8, type_and_version: u8) -> bool {
    id == COMPACT_PROTOCOL_ID
        && type_and_version & COMPACT_VERSION_MASK == COMPACT_VERSION
        && (1..=4).contains(&(type_and_version >> 5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_decodes_multi_byte_values() {
        let mut cur = Cursor::new(&[0xac, 0x02], 0);
        assert_eq!(cur.varint(VARINT32_MAX), Ok(300));
        assert_eq!(cur.pos(), 2);
    }

    #[test]
    fn varint_rejects_overlong_encodings() {
        let mut cur = Cursor::new(&[0x80, 0x80, 0x80, 0x01], 0);
        assert_eq!(
            cur.varint(VARINT16_MAX),
            Err(Stop::Invalid(ScanError::VarintTooLong(3)))
        );
    }

    #[test]
    fn short_reads_do_not_move_the_cursor() {
        let mut cur = Cursor::new(&[1, 2, 3], 1);
        assert_eq!(cur.i32_be(), Err(Stop::Short));
        assert_eq!(cur.pos(), 1);
    }

    #[test]
    fn strict_binary_header_parses() {
        let mut buf = vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 3];
        buf.extend_from_slice(b"get");
        buf.extend_from_slice(&7i32.to_be_bytes());
        let header = read_header(WireProtocol::Binary, &buf, 100);
        assert_eq!(
            header,
            Ok(MessageHeader {
                name: "get".into(),
                kind: TMessageType::Call,
                seqid: 7,
                strict: true,
                len: 15,
            })
        );
    }

    #[test]
    fn non_strict_binary_header_parses() {
        let mut buf = vec![0, 0, 0, 2];
        buf.extend_from_slice(b"hi");
        buf.push(1);
        buf.extend_from_slice(&(-5i32).to_be_bytes());
        let header = read_header(WireProtocol::Binary, &buf, 100);
        assert!(matches!(
            header,
            Ok(MessageHeader {
                seqid: -5,
                strict: false,
                len: 11,
                ..
            })
        ));
    }

    #[test]
    fn bad_binary_version_is_invalid() {
        let buf = [0x80, 0x02, 0x00, 0x01, 0, 0, 0, 0];
        assert!(matches!(
            read_header(WireProtocol::Binary, &buf, 100),
            Err(Stop::Invalid(ScanError::BadVersion(_)))
        ));
    }

    #[test]
    fn compact_header_parses() {
        let buf = [0x82, 0x21, 0x05, 0x02, b'o', b'k'];
        let header = read_header(WireProtocol::Compact, &buf, 100);
        assert!(matches!(
            header,
            Ok(MessageHeader {
                seqid: 5,
                kind: TMessageType::Call,
                len: 6,
                ..
            })
        ));
    }

    #[test]
    fn name_longer_than_limit_is_too_large() {
        let buf = [0x80, 0x01, 0x00, 0x01, 0, 0, 1, 0];
        assert!(matches!(
            read_header(WireProtocol::Binary, &buf, 100),
            Err(Stop::Invalid(ScanError::TooLarge {
                size: 256,
                limit: 100
            }))
        ));
    }
}
