//! Finding where one Thrift message ends, for transports that carry no length.
//!
//! Owns [`MessageScanner`], a resumable walker over the binary and compact wire formats:
//! message header, then the argument struct with every nested struct, list, set and map,
//! skipping values by type. It keeps an explicit stack (no recursion) and remembers the
//! last fully scanned item, so feeding it a growing buffer costs time linear in the
//! message size. It never decodes values into memory and never trusts a wire length
//! beyond the configured limit. It does not read sockets or run processors.

use crate::server::wire::{
    binary_type, checked_len, compact_element_type, read_header, Cursor, MessageHeader, ScanError,
    Stop, ValueType, WireProtocol, VARINT16_MAX, VARINT32_MAX, VARINT64_MAX,
};

/// Deepest nesting of structs and containers accepted (the argument struct is level 1).
pub const MAX_NESTING_DEPTH: usize = 64;

/// Outcome of scanning a buffer that starts at a message boundary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scan {
    /// A whole message occupies the first `n` bytes.
    Complete(usize),
    /// The buffer is a strict prefix of a message (or empty).
    NeedMore,
    /// The bytes are not a well-formed message.
    Invalid(ScanError),
}

/// One open struct or container on the scanner's stack.
#[derive(Debug, Clone, Copy)]
enum Frame {
    /// Inside a struct: the next item is a field header or STOP.
    Struct,
    /// Inside a list or set: `remaining` elements of one type follow.
    Elements { element: ValueType, remaining: u32 },
    /// Inside a map: `remaining` items follow, alternating key and value.
    Entries {
        key: ValueType,
        value: ValueType,
        remaining: u64,
    },
}

/// A struct field header, as far as the scanner cares.
enum Field {
    /// End of the struct.
    Stop,
    /// A compact-protocol boolean whose value is part of the header.
    InlineBool,
    /// A field whose value follows.
    Value(ValueType),
}

/// What a successful scan step did.
enum Step {
    /// Consumed an item; the scan goes on.
    Continue,
    /// Consumed the STOP that closes the argument struct.
    Finished,
}

/// Resumable message-boundary scanner for one message.
///
/// Call [`MessageScanner::scan`] with the bytes received so far, always starting at the
/// message's first byte; each later call must pass the same bytes extended by new ones.
/// After `Complete` or `Invalid`, the result is repeated until [`MessageScanner::reset`].
#[derive(Debug, Clone)]
pub struct MessageScanner {
    protocol: WireProtocol,
    limit: usize,
    header: Option<MessageHeader>,
    /// End of the last fully scanned item.
    pos: usize,
    stack: Vec<Frame>,
    outcome: Option<Scan>,
}

impl MessageScanner {
    /// A scanner for messages of `protocol` no longer than `limit` bytes.
    pub fn new(protocol: WireProtocol, limit: usize) -> Self {
        MessageScanner {
            protocol,
            limit,
            header: None,
            pos: 0,
            stack: Vec::new(),
            outcome: None,
        }
    }

    /// The protocol this scanner walks.
    pub fn protocol(&self) -> WireProtocol {
        self.protocol
    }

    /// The message header, once it has been scanned.
    pub fn header(&self) -> Option<&MessageHeader> {
        self.header.as_ref()
    }

    /// Forgets the current message so the scanner can start on the next one.
    pub fn reset(&mut self) {
        self.header = None;
        self.pos = 0;
        self.stack.clear();
        self.outcome = None;
    }

    /// Scans `buf`, resuming after the last item a previous call completed.
    pub fn scan(&mut self, buf: &[u8]) -> Scan {
        if let Some(done) = &self.outcome {
            return done.clone();
        }
        match self.advance(buf) {
            Ok(end) => self.finish(Scan::Complete(end)),
            Err(Stop::Invalid(err)) => self.finish(Scan::Invalid(err)),
            Err(Stop::Short) => {
                if buf.len() >= self.limit {
                    let size = (buf.len() as u64).saturating_add(1);
                    self.finish(Scan::Invalid(ScanError::TooLarge {
                        size,
                        limit: self.limit,
                    }))
                } else {
                    Scan::NeedMore
                }
            }
        }
    }

    fn finish(&mut self, outcome: Scan) -> Scan {
        self.outcome = Some(outcome.clone());
        outcome
    }

    /// Walks items until the message ends (returning its length) or the buffer does.
    fn advance(&mut self, buf: &[u8]) -> Result<usize, Stop> {
        if self.header.is_none() {
            let header = read_header(self.protocol, buf, self.limit)?;
            self.pos = header.len;
            self.header = Some(header);
            self.stack.push(Frame::Struct);
        }
        loop {
            let mut cur = Cursor::new(buf, self.pos);
            let step = self.step(&mut cur)?;
            self.pos = cur.pos();
            if self.pos > self.limit {
                return Err(ScanError::TooLarge {
                    size: self.pos as u64,
                    limit: self.limit,
                }
                .into());
            }
            if let Step::Finished = step {
                return Ok(self.pos);
            }
        }
    }

    /// Consumes one item (a field with its value's start, an element, or a STOP) atomically:
    /// on `Short` nothing is committed and the stack is unchanged.
    fn step(&mut self, cur: &mut Cursor<'_>) -> Result<Step, Stop> {
        let Some(top) = self.stack.last().copied() else {
            return Ok(Step::Finished);
        };
        let (value_type, after) = match top {
            Frame::Struct => match self.field_header(cur)? {
                Field::Stop => {
                    self.stack.pop();
                    return Ok(if self.stack.is_empty() {
                        Step::Finished
                    } else {
                        Step::Continue
                    });
                }
                Field::InlineBool => return Ok(Step::Continue),
                Field::Value(value_type) => (value_type, top),
            },
            Frame::Elements { remaining: 0, .. } | Frame::Entries { remaining: 0, .. } => {
                self.stack.pop();
                return Ok(Step::Continue);
            }
            Frame::Elements { element, remaining } => (
                element,
                Frame::Elements {
                    element,
                    remaining: remaining - 1,
                },
            ),
            Frame::Entries {
                key,
                value,
                remaining,
            } => {
                let current = if remaining % 2 == 0 { key } else { value };
                (
                    current,
                    Frame::Entries {
                        key,
                        value,
                        remaining: remaining - 1,
                    },
                )
            }
        };
        let opened = self.value(cur, value_type)?;
        if let Some(slot) = self.stack.last_mut() {
            *slot = after;
        }
        if let Some(frame) = opened {
            if self.stack.len() >= MAX_NESTING_DEPTH {
                return Err(ScanError::TooDeep(MAX_NESTING_DEPTH).into());
            }
            self.stack.push(frame);
        }
        Ok(Step::Continue)
    }

    /// Reads a field header (type and id).
    fn field_header(&self, cur: &mut Cursor<'_>) -> Result<Field, Stop> {
        match self.protocol {
            WireProtocol::Binary => {
                let Some(value_type) = binary_type(cur.u8()?)? else {
                    return Ok(Field::Stop);
                };
                cur.skip(2)?;
                Ok(Field::Value(value_type))
            }
            WireProtocol::Compact => {
                let byte = cur.u8()?;
                let type_code = byte & 0x0f;
                if type_code == 0 {
                    return Ok(Field::Stop);
                }
                let field = match type_code {
                    1 | 2 => Field::InlineBool,
                    other => Field::Value(compact_element_type(other)?),
                };
                if byte >> 4 == 0 {
                    cur.varint(VARINT16_MAX)?;
                }
                Ok(field)
            }
        }
    }

    /// Skips a scalar value or reads a container/struct header, returning the frame to open.
    fn value(&self, cur: &mut Cursor<'_>, value_type: ValueType) -> Result<Option<Frame>, Stop> {
        match self.protocol {
            WireProtocol::Binary => self.binary_value(cur, value_type),
            WireProtocol::Compact => self.compact_value(cur, value_type),
        }
    }

    fn binary_value(
        &self,
        cur: &mut Cursor<'_>,
        value_type: ValueType,
    ) -> Result<Option<Frame>, Stop> {
        match value_type {
            ValueType::Bool | ValueType::Byte => cur.skip(1)?,
            ValueType::I16 => cur.skip(2)?,
            ValueType::I32 => cur.skip(4)?,
            ValueType::I64 | ValueType::Double => cur.skip(8)?,
            ValueType::String => {
                let len = checked_len(i64::from(cur.i32_be()?), self.limit)?;
                cur.skip(len)?;
            }
            ValueType::Struct => return Ok(Some(Frame::Struct)),
            ValueType::Map => {
                let key_code = cur.u8()?;
                let value_code = cur.u8()?;
                let count = self.count(i64::from(cur.i32_be()?))?;
                if count == 0 {
                    return Ok(None);
                }
                let key = binary_type(key_code)?.ok_or(ScanError::UnknownType(key_code))?;
                let value = binary_type(value_code)?.ok_or(ScanError::UnknownType(value_code))?;
                return Ok(Some(Frame::Entries {
                    key,
                    value,
                    remaining: u64::from(count) * 2,
                }));
            }
            ValueType::Set | ValueType::List => {
                let element_code = cur.u8()?;
                let count = self.count(i64::from(cur.i32_be()?))?;
                if count == 0 {
                    return Ok(None);
                }
                let element =
                    binary_type(element_code)?.ok_or(ScanError::UnknownType(element_code))?;
                return Ok(Some(Frame::Elements {
                    element,
                    remaining: count,
                }));
            }
        }
        Ok(None)
    }

    fn compact_value(
        &self,
        cur: &mut Cursor<'_>,
        value_type: ValueType,
    ) -> Result<Option<Frame>, Stop> {
        match value_type {
            ValueType::Bool | ValueType::Byte => cur.skip(1)?,
            ValueType::I16 => {
                cur.varint(VARINT16_MAX)?;
            }
            ValueType::I32 => {
                cur.varint(VARINT32_MAX)?;
            }
            ValueType::I64 => {
                cur.varint(VARINT64_MAX)?;
            }
            ValueType::Double => cur.skip(8)?,
            ValueType::String => {
                let len = self.varint_len(cur)?;
                cur.skip(checked_len(len, self.limit)?)?;
            }
            ValueType::Struct => return Ok(Some(Frame::Struct)),
            ValueType::Map => {
                let count = self.count(self.varint_len(cur)?)?;
                if count == 0 {
                    return Ok(None);
                }
                let types = cur.u8()?;
                let key = compact_element_type(types >> 4)?;
                let value = compact_element_type(types & 0x0f)?;
                return Ok(Some(Frame::Entries {
                    key,
                    value,
                    remaining: u64::from(count) * 2,
                }));
            }
            ValueType::Set | ValueType::List => {
                let header = cur.u8()?;
                let short_count = header >> 4;
                let count = if short_count == 0x0f {
                    self.count(self.varint_len(cur)?)?
                } else {
                    u32::from(short_count)
                };
                if count == 0 {
                    return Ok(None);
                }
                let element = compact_element_type(header & 0x0f)?;
                return Ok(Some(Frame::Elements {
                    element,
                    remaining: count,
                }));
            }
        }
        Ok(None)
    }

    /// Reads a compact length varint, mapping values beyond `i32` to negative like Java does.
    fn varint_len(&self, cur: &mut Cursor<'_>) -> Result<i64, Stop> {
        let raw = cur.varint(VARINT32_MAX)?;
        Ok(i64::from(raw as u32 as i32))
    }

    /// Validates a container element count: every element takes at least one byte, so a
    /// count beyond the limit can never fit.
    fn count(&self, count: i64) -> Result<u32, Stop> {
        let count = checked_len(count, self.limit)?;
        u32::try_from(count).map_err(|_| Stop::Invalid(ScanError::BadLength(count as i64)))
    }
}

/// Scans one whole message in `buf` (which must start at the message's first byte).
pub fn scan_message(protocol: WireProtocol, buf: &[u8], limit: usize) -> Scan {
    MessageScanner::new(protocol, limit).scan(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = 1 << 20;

    /// Strict binary CALL header for method `m`, seqid 1.
    fn binary_header() -> Vec<u8> {
        vec![0x80, 0x01, 0x00, 0x01, 0, 0, 0, 1, b'm', 0, 0, 0, 1]
    }

    /// Compact CALL header for method `m`, seqid 1.
    fn compact_header() -> Vec<u8> {
        vec![0x82, 0x21, 0x01, 0x01, b'm']
    }

    fn binary(args: &[u8]) -> Vec<u8> {
        let mut bytes = binary_header();
        bytes.extend_from_slice(args);
        bytes
    }

    fn compact(args: &[u8]) -> Vec<u8> {
        let mut bytes = compact_header();
        bytes.extend_from_slice(args);
        bytes
    }

    #[test]
    fn empty_args_struct_completes_after_its_stop() {
        let bytes = binary(&[0]);
        assert_eq!(
            scan_message(WireProtocol::Binary, &bytes, LIMIT),
            Scan::Complete(bytes.len())
        );
        assert_eq!(
            scan_message(WireProtocol::Binary, &binary(&[]), LIMIT),
            Scan::NeedMore
        );
    }

    #[test]
    fn compact_bool_fields_carry_no_value_bytes() {
        // field 1 bool true (delta 1, type 1), field 2 bool false (delta 1, type 2), stop.
        let bytes = compact(&[0x11, 0x12, 0x00]);
        assert_eq!(
            scan_message(WireProtocol::Compact, &bytes, LIMIT),
            Scan::Complete(bytes.len())
        );
    }

    #[test]
    fn compact_long_form_field_id_and_bool_list_elements() {
        // field id 300 in long form (type list), list of 3 bools, then stop.
        let bytes = compact(&[0x09, 0xd8, 0x04, 0x31, 1, 2, 1, 0x00]);
        assert_eq!(
            scan_message(WireProtocol::Compact, &bytes, LIMIT),
            Scan::Complete(bytes.len())
        );
    }

    #[test]
    fn compact_list_with_varint_size_and_empty_map() {
        // field 1: list<i32> of 16 elements (size in a varint), field 2: empty map.
        let mut args = vec![0x19, 0xf5, 16];
        args.extend(std::iter::repeat_n(0x02, 16));
        args.extend_from_slice(&[0x1b, 0x00, 0x00]);
        let bytes = compact(&args);
        assert_eq!(
            scan_message(WireProtocol::Compact, &bytes, LIMIT),
            Scan::Complete(bytes.len())
        );
    }

    #[test]
    fn binary_empty_containers_are_complete() {
        // field 1 map<i32,string> size 0, field 2 list<i64> size 0, stop.
        let bytes = binary(&[13, 0, 1, 8, 11, 0, 0, 0, 0, 15, 0, 2, 10, 0, 0, 0, 0, 0]);
        assert_eq!(
            scan_message(WireProtocol::Binary, &bytes, LIMIT),
            Scan::Complete(bytes.len())
        );
    }

    #[test]
    fn negative_string_length_is_invalid() {
        let bytes = binary(&[11, 0, 1, 0xff, 0xff, 0xff, 0xff]);
        assert_eq!(
            scan_message(WireProtocol::Binary, &bytes, LIMIT),
            Scan::Invalid(ScanError::BadLength(-1))
        );
    }

    #[test]
    fn huge_container_count_is_too_large_without_waiting_for_data() {
        let bytes = binary(&[15, 0, 1, 8, 0x7f, 0xff, 0xff, 0xff]);
        assert!(matches!(
            scan_message(WireProtocol::Binary, &bytes, LIMIT),
            Scan::Invalid(ScanError::TooLarge { .. })
        ));
    }

    #[test]
    fn unknown_element_type_is_invalid() {
        let bytes = binary(&[15, 0, 1, 0x42, 0, 0, 0, 1]);
        assert_eq!(
            scan_message(WireProtocol::Binary, &bytes, LIMIT),
            Scan::Invalid(ScanError::UnknownType(0x42))
        );
    }

    #[test]
    fn nesting_beyond_the_bound_is_too_deep() {
        let mut args = Vec::new();
        for _ in 0..MAX_NESTING_DEPTH {
            args.extend_from_slice(&[12, 0, 1]);
        }
        assert_eq!(
            scan_message(WireProtocol::Binary, &binary(&args), LIMIT),
            Scan::Invalid(ScanError::TooDeep(MAX_NESTING_DEPTH))
        );
    }

    #[test]
    fn nesting_at_the_bound_is_accepted() {
        let depth = MAX_NESTING_DEPTH - 1;
        let mut args = Vec::new();
        for _ in 0..depth {
            args.extend_from_slice(&[12, 0, 1]);
        }
        args.extend(std::iter::repeat_n(0, depth + 1));
        let bytes = binary(&args);
        assert_eq!(
            scan_message(WireProtocol::Binary, &bytes, LIMIT),
            Scan::Complete(bytes.len())
        );
    }

    #[test]
    fn outcome_is_sticky_until_reset() {
        let bytes = binary(&[0]);
        let mut scanner = MessageScanner::new(WireProtocol::Binary, LIMIT);
        assert_eq!(scanner.scan(&bytes), Scan::Complete(bytes.len()));
        assert_eq!(scanner.scan(&[]), Scan::Complete(bytes.len()));
        scanner.reset();
        assert_eq!(scanner.scan(&[]), Scan::NeedMore);
        assert!(scanner.header().is_none());
    }

    #[test]
    fn need_more_at_the_limit_becomes_too_large() {
        let mut args = vec![11, 0, 1, 0, 0, 0, 60];
        args.extend_from_slice(&[b'x'; 10]);
        let bytes = binary(&args);
        let limit = bytes.len();
        assert!(matches!(
            scan_message(WireProtocol::Binary, &bytes, limit),
            Scan::Invalid(ScanError::TooLarge { .. })
        ));
    }
}
