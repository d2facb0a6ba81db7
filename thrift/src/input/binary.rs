//! The Thrift binary protocol, read from one message held in memory.
//!
//! Owns [`BinaryInput`]. Accepts both message header forms (the versioned
//! "strict" one and the old unversioned one), as HBase's server does. Every
//! length and size is checked against the bytes left before anything is
//! allocated; nesting is bounded by [`crate::input::MAX_NESTING_DEPTH`]. Must not panic on
//! any input and must decode a well-formed message exactly as
//! `thrift::protocol::TBinaryInputProtocol` does.

use thrift::protocol::{
    TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier, TMessageIdentifier,
    TSetIdentifier, TStructIdentifier, TType,
};

use crate::input::cursor::{ByteCursor, Nesting};
use crate::input::error::InputError;
use crate::input::message_type;

/// First two bytes of a versioned header: the sign bit and version 1.
const VERSION_1: [u8; 2] = [0x80, 0x01];

/// A `TInputProtocol` for the binary protocol over a byte slice that holds
/// one message. All errors are `thrift::Error::Protocol`.
#[derive(Debug, Clone)]
pub struct BinaryInput<'a> {
    cursor: ByteCursor<'a>,
    nesting: Nesting,
}

impl<'a> BinaryInput<'a> {
    /// Reads from the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> BinaryInput<'a> {
        BinaryInput {
            cursor: ByteCursor::new(bytes),
            nesting: Nesting::default(),
        }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.cursor.position()
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.cursor.remaining()
    }

    fn i16_value(&mut self, what: &'static str) -> Result<i16, InputError> {
        Ok(i16::from_be_bytes(self.cursor.array(what)?))
    }

    fn i32_value(&mut self, what: &'static str) -> Result<i32, InputError> {
        Ok(i32::from_be_bytes(self.cursor.array(what)?))
    }

    fn type_code(&mut self, what: &'static str) -> Result<TType, InputError> {
        let code = self.cursor.byte(what)?;
        type_from_code(code).ok_or(InputError::UnknownTypeCode { what, code })
    }

    fn bytes_value(&mut self, what: &'static str) -> Result<Vec<u8>, InputError> {
        let length = self.i32_value(what)?;
        let length = u64::try_from(length).map_err(|_| InputError::NegativeSize {
            what,
            size: i64::from(length),
        })?;
        self.cursor.sized_bytes(length, what)
    }

    fn string_value(&mut self, what: &'static str) -> Result<String, InputError> {
        let bytes = self.bytes_value(what)?;
        String::from_utf8(bytes).map_err(|_| InputError::NotUtf8 { what })
    }

    /// Reads a container size and checks that `count` elements of at least
    /// `min_bytes_each` bytes fit in what is left.
    fn container_size(
        &mut self,
        min_bytes_each: u64,
        what: &'static str,
    ) -> Result<i32, InputError> {
        let size = self.i32_value(what)?;
        let count = u64::try_from(size).map_err(|_| InputError::NegativeSize {
            what,
            size: i64::from(size),
        })?;
        self.cursor.check_elements(count, min_bytes_each, what)?;
        Ok(size)
    }

    fn message_begin(&mut self) -> Result<TMessageIdentifier, InputError> {
        let first = self.cursor.array::<4>("message header")?;
        let [b0, b1, _, b3] = first;
        if b0 & 0x80 != 0 {
            if [b0, b1] != VERSION_1 {
                return Err(InputError::BadVersion {
                    found: u32::from_be_bytes(first),
                });
            }
            let message_type = message_type(b3)?;
            let name = self.string_value("method name")?;
            let sequence_number = self.i32_value("sequence id")?;
            Ok(TMessageIdentifier::new(name, message_type, sequence_number))
        } else {
            // Unversioned header: the first word is the name's length.
            let length = u64::from(u32::from_be_bytes(first));
            let name = self.cursor.sized_bytes(length, "method name")?;
            let name = String::from_utf8(name).map_err(|_| InputError::NotUtf8 {
                what: "method name",
            })?;
            let message_type = message_type(self.cursor.byte("message type")?)?;
            let sequence_number = self.i32_value("sequence id")?;
            Ok(TMessageIdentifier::new(name, message_type, sequence_number))
        }
    }

    fn field_begin(&mut self) -> Result<TFieldIdentifier, InputError> {
        let field_type = self.type_code("field header")?;
        if field_type == TType::Stop {
            return Ok(
                TFieldIdentifier::new::<Option<String>, String, Option<i16>>(
                    None,
                    TType::Stop,
                    None,
                ),
            );
        }
        let id = self.i16_value("field id")?;
        Ok(TFieldIdentifier::new::<Option<String>, String, i16>(
            None, field_type, id,
        ))
    }

    fn list_begin(&mut self, what: &'static str) -> Result<(TType, i32), InputError> {
        let element_type = self.type_code(what)?;
        let size = self.container_size(min_encoded_len(element_type), what)?;
        self.nesting.enter()?;
        Ok((element_type, size))
    }

    fn map_begin(&mut self) -> Result<TMapIdentifier, InputError> {
        let key_type = self.type_code("map")?;
        let value_type = self.type_code("map")?;
        let entry_len = min_encoded_len(key_type) + min_encoded_len(value_type);
        let size = self.container_size(entry_len, "map")?;
        self.nesting.enter()?;
        Ok(TMapIdentifier::new(key_type, value_type, size))
    }
}

impl TInputProtocol for BinaryInput<'_> {
    fn read_message_begin(&mut self) -> thrift::Result<TMessageIdentifier> {
        Ok(self.message_begin()?)
    }

    fn read_message_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn read_struct_begin(&mut self) -> thrift::Result<Option<TStructIdentifier>> {
        self.nesting.enter()?;
        Ok(None)
    }

    fn read_struct_end(&mut self) -> thrift::Result<()> {
        self.nesting.leave();
        Ok(())
    }

    fn read_field_begin(&mut self) -> thrift::Result<TFieldIdentifier> {
        Ok(self.field_begin()?)
    }

    fn read_field_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn read_bool(&mut self) -> thrift::Result<bool> {
        Ok(self.cursor.byte("bool")? != 0)
    }

    fn read_bytes(&mut self) -> thrift::Result<Vec<u8>> {
        Ok(self.bytes_value("binary")?)
    }

    fn read_i8(&mut self) -> thrift::Result<i8> {
        Ok(i8::from_be_bytes(self.cursor.array("byte")?))
    }

    fn read_i16(&mut self) -> thrift::Result<i16> {
        Ok(self.i16_value("i16")?)
    }

    fn read_i32(&mut self) -> thrift::Result<i32> {
        Ok(self.i32_value("i32")?)
    }

    fn read_i64(&mut self) -> thrift::Result<i64> {
        Ok(i64::from_be_bytes(self.cursor.array("i64")?))
    }

    fn read_double(&mut self) -> thrift::Result<f64> {
        Ok(f64::from_be_bytes(self.cursor.array("double")?))
    }

    fn read_string(&mut self) -> thrift::Result<String> {
        Ok(self.string_value("string")?)
    }

    fn read_list_begin(&mut self) -> thrift::Result<TListIdentifier> {
        let (element_type, size) = self.list_begin("list")?;
        Ok(TListIdentifier::new(element_type, size))
    }

    fn read_list_end(&mut self) -> thrift::Result<()> {
        self.nesting.leave();
        Ok(())
    }

    fn read_set_begin(&mut self) -> thrift::Result<TSetIdentifier> {
        let (element_type, size) = self.list_begin("set")?;
        Ok(TSetIdentifier::new(element_type, size))
    }

    fn read_set_end(&mut self) -> thrift::Result<()> {
        self.nesting.leave();
        Ok(())
    }

    fn read_map_begin(&mut self) -> thrift::Result<TMapIdentifier> {
        Ok(self.map_begin()?)
    }

    fn read_map_end(&mut self) -> thrift::Result<()> {
        self.nesting.leave();
        Ok(())
    }

    fn read_byte(&mut self) -> thrift::Result<u8> {
        Ok(self.cursor.byte("byte")?)
    }
}

/// The binary protocol's type codes (the same table as the thrift crate's).
fn type_from_code(code: u8) -> Option<TType> {
    Some(match code {
        0x00 => TType::Stop,
        0x01 => TType::Void,
        0x02 => TType::Bool,
        0x03 => TType::I08,
        0x04 => TType::Double,
        0x06 => TType::I16,
        0x08 => TType::I32,
        0x0A => TType::I64,
        0x0B => TType::String,
        0x0C => TType::Struct,
        0x0D => TType::Map,
        0x0E => TType::Set,
        0x0F => TType::List,
        0x10 => TType::Utf8,
        0x11 => TType::Utf16,
        _ => return None,
    })
}

/// Fewest bytes one value of `value_type` takes in the binary protocol.
/// Types that cannot be decoded count one byte, so a size check never
/// rejects what decoding would have accepted.
fn min_encoded_len(value_type: TType) -> u64 {
    match value_type {
        TType::I16 => 2,
        TType::I32 | TType::String | TType::Utf7 | TType::Utf8 | TType::Utf16 => 4,
        TType::I64 | TType::Double => 8,
        TType::List | TType::Set => 5,
        TType::Map => 6,
        TType::Stop | TType::Void | TType::Bool | TType::I08 | TType::Struct => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::MAX_NESTING_DEPTH;
    use thrift::protocol::{TBinaryOutputProtocol, TMessageType, TOutputProtocol};
    use thrift::ProtocolErrorKind;

    const MAX_I32: [u8; 4] = i32::MAX.to_be_bytes();

    fn protocol_kind<T: std::fmt::Debug>(result: thrift::Result<T>) -> ProtocolErrorKind {
        match result {
            Err(thrift::Error::Protocol(error)) => error.kind,
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }

    #[test]
    fn reads_what_the_stock_writer_writes() {
        let mut bytes = Vec::new();
        {
            let mut o = TBinaryOutputProtocol::new(&mut bytes, true);
            let header = TMessageIdentifier::new("get", TMessageType::Call, -3);
            assert!(o.write_message_begin(&header).is_ok());
            assert!(o
                .write_field_begin(&TFieldIdentifier::new("f", TType::I64, -2))
                .is_ok());
            assert!(o.write_i64(i64::MIN).is_ok());
            assert!(o.write_double(-0.5).is_ok());
            assert!(o.write_i16(-300).is_ok());
            assert!(o.write_i8(-1).is_ok());
            assert!(o.write_bool(true).is_ok());
            assert!(o.write_string("héllo").is_ok());
            assert!(o
                .write_map_begin(&TMapIdentifier::new(TType::String, TType::Bool, 0))
                .is_ok());
            assert!(o.write_field_stop().is_ok());
        }
        let mut i = BinaryInput::new(&bytes);
        let header = i.read_message_begin().ok();
        assert_eq!(
            header,
            Some(TMessageIdentifier::new("get", TMessageType::Call, -3))
        );
        let field = i.read_field_begin().ok();
        assert_eq!(
            field.map(|f| (f.field_type, f.id)),
            Some((TType::I64, Some(-2)))
        );
        assert_eq!(i.read_i64().ok(), Some(i64::MIN));
        assert_eq!(i.read_double().ok(), Some(-0.5));
        assert_eq!(i.read_i16().ok(), Some(-300));
        assert_eq!(i.read_i8().ok(), Some(-1));
        assert_eq!(i.read_bool().ok(), Some(true));
        assert_eq!(i.read_string().ok().as_deref(), Some("héllo"));
        let map = i.read_map_begin().ok();
        assert_eq!(
            map,
            Some(TMapIdentifier::new(TType::String, TType::Bool, 0))
        );
        assert!(i.read_map_end().is_ok());
        let stop = i.read_field_begin().ok();
        assert_eq!(stop.map(|f| f.field_type), Some(TType::Stop));
        assert_eq!(i.remaining(), 0);
        assert_eq!(i.position(), bytes.len());
    }

    #[test]
    fn unversioned_header_is_accepted() {
        let mut bytes = Vec::new();
        {
            let mut o = TBinaryOutputProtocol::new(&mut bytes, false);
            let header = TMessageIdentifier::new("scan", TMessageType::OneWay, 9);
            assert!(o.write_message_begin(&header).is_ok());
        }
        let header = BinaryInput::new(&bytes).read_message_begin().ok();
        assert_eq!(
            header,
            Some(TMessageIdentifier::new("scan", TMessageType::OneWay, 9))
        );
    }

    #[test]
    fn bad_headers_are_rejected() {
        // Version 2.
        let bytes = [0x80, 0x02, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            protocol_kind(BinaryInput::new(&bytes).read_message_begin()),
            ProtocolErrorKind::BadVersion
        );
        // Message type 9.
        let bytes = [0x80, 0x01, 0x00, 0x09, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(
            protocol_kind(BinaryInput::new(&bytes).read_message_begin()),
            ProtocolErrorKind::InvalidData
        );
        // Unversioned header whose name length exceeds the message.
        let bytes = [0x7f, 0xff, 0xff, 0xff, b'a'];
        assert_eq!(
            protocol_kind(BinaryInput::new(&bytes).read_message_begin()),
            ProtocolErrorKind::SizeLimit
        );
        // Versioned header with a negative name length.
        let bytes = [0x80, 0x01, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff];
        assert_eq!(
            protocol_kind(BinaryInput::new(&bytes).read_message_begin()),
            ProtocolErrorKind::NegativeSize
        );
    }

    #[test]
    fn string_lengths_are_checked_before_allocating() {
        assert_eq!(
            protocol_kind(BinaryInput::new(&[0xff, 0xff, 0xff, 0xfe]).read_bytes()),
            ProtocolErrorKind::NegativeSize
        );
        assert_eq!(
            protocol_kind(BinaryInput::new(&MAX_I32).read_bytes()),
            ProtocolErrorKind::SizeLimit
        );
        assert_eq!(
            protocol_kind(BinaryInput::new(&[0, 0, 0, 2, 0xc3, 0x28]).read_string()),
            ProtocolErrorKind::InvalidData
        );
        assert_eq!(
            BinaryInput::new(&[0, 0, 0, 2, 0xc3, 0x28])
                .read_bytes()
                .ok(),
            Some(vec![0xc3, 0x28])
        );
    }

    #[test]
    fn container_sizes_are_checked_against_the_smallest_elements() {
        // 3 i32 elements need 12 bytes; 8 are left.
        let mut bytes = vec![0x08, 0, 0, 0, 3];
        bytes.extend_from_slice(&[0; 8]);
        assert_eq!(
            protocol_kind(BinaryInput::new(&bytes).read_list_begin()),
            ProtocolErrorKind::SizeLimit
        );
        // 8 bool elements fit in 8 bytes.
        bytes[0] = 0x02;
        bytes[4] = 8;
        assert_eq!(
            BinaryInput::new(&bytes).read_list_begin().ok(),
            Some(TListIdentifier::new(TType::Bool, 8))
        );
        let mut huge = vec![0x0C];
        huge.extend_from_slice(&MAX_I32);
        assert_eq!(
            protocol_kind(BinaryInput::new(&huge).read_set_begin()),
            ProtocolErrorKind::SizeLimit
        );
        let negative = [0x0B, 0x0B, 0x80, 0, 0, 0];
        assert_eq!(
            protocol_kind(BinaryInput::new(&negative).read_map_begin()),
            ProtocolErrorKind::NegativeSize
        );
        // A map entry of string to i64 takes at least 12 bytes.
        let mut map = vec![0x0B, 0x0A, 0, 0, 0, 1];
        map.extend_from_slice(&[0; 11]);
        assert_eq!(
            protocol_kind(BinaryInput::new(&map).read_map_begin()),
            ProtocolErrorKind::SizeLimit
        );
        map.push(0);
        assert!(BinaryInput::new(&map).read_map_begin().is_ok());
    }

    #[test]
    fn unknown_type_codes_and_truncation_are_errors() {
        assert_eq!(
            protocol_kind(BinaryInput::new(&[0x05, 0, 1]).read_field_begin()),
            ProtocolErrorKind::InvalidData
        );
        assert_eq!(
            protocol_kind(BinaryInput::new(&[0x08, 0]).read_field_begin()),
            ProtocolErrorKind::InvalidData
        );
        assert_eq!(
            protocol_kind(BinaryInput::new(&[1, 2, 3]).read_i64()),
            ProtocolErrorKind::InvalidData
        );
    }

    #[test]
    fn nesting_is_bounded() {
        let bytes = [0_u8; 0];
        let mut i = BinaryInput::new(&bytes);
        for _ in 0..MAX_NESTING_DEPTH {
            assert!(i.read_struct_begin().is_ok());
        }
        assert_eq!(
            protocol_kind(i.read_struct_begin()),
            ProtocolErrorKind::DepthLimit
        );
        assert!(i.read_struct_end().is_ok());
        assert!(i.read_struct_begin().is_ok());
    }
}
