//! The Thrift compact protocol, read from one message held in memory.
//!
//! Owns [`CompactInput`]: varints and zigzag integers, field-id deltas, bool
//! values carried in field headers, the short and long list/set size forms
//! and the one-byte empty map. Every length and size is checked against the
//! bytes left before anything is allocated; nesting is bounded by
//! [`crate::input::MAX_NESTING_DEPTH`]. Must not panic on any input and must decode a
//! well-formed message exactly as `thrift::protocol::TCompactInputProtocol`
//! does, except that bool element types 1 and 2 are both accepted, as
//! Thrift's Java library accepts them.

use thrift::protocol::{
    TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier, TMessageIdentifier,
    TSetIdentifier, TStructIdentifier, TType,
};

use crate::input::cursor::{ByteCursor, Nesting};
use crate::input::error::InputError;
use crate::input::message_type;

const PROTOCOL_ID: u8 = 0x82;
const VERSION: u8 = 0x01;
const VERSION_MASK: u8 = 0x1f;
/// Longest varint encodings of 32- and 64-bit values.
const VARINT32_MAX_BYTES: usize = 5;
const VARINT64_MAX_BYTES: usize = 10;
/// A list or set header's size nibble that announces a varint size.
const LONG_SIZE_FORM: u8 = 0x0f;

/// A `TInputProtocol` for the compact protocol over a byte slice that holds
/// one message. All errors are `thrift::Error::Protocol`.
#[derive(Debug, Clone)]
pub struct CompactInput<'a> {
    cursor: ByteCursor<'a>,
    nesting: Nesting,
    /// Id of the last field read in the innermost open struct.
    last_field_id: i16,
    /// `last_field_id` of each enclosing struct; as deep as `nesting`.
    enclosing_field_ids: Vec<i16>,
    /// The value of a bool field, which travels in its field header.
    pending_bool: Option<bool>,
}

impl<'a> CompactInput<'a> {
    /// Reads from the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> CompactInput<'a> {
        CompactInput {
            cursor: ByteCursor::new(bytes),
            nesting: Nesting::default(),
            last_field_id: 0,
            enclosing_field_ids: Vec::new(),
            pending_bool: None,
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

    fn varint(&mut self, max_bytes: usize, what: &'static str) -> Result<u128, InputError> {
        let mut value: u128 = 0;
        for index in 0..max_bytes {
            let byte = self.cursor.byte(what)?;
            value |= u128::from(byte & 0x7f) << (7 * index);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(InputError::VarintTooLong { what, max_bytes })
    }

    fn varint32(&mut self, what: &'static str) -> Result<u32, InputError> {
        let value = self.varint(VARINT32_MAX_BYTES, what)?;
        u32::try_from(value).map_err(|_| out_of_range(what, value))
    }

    fn varint64(&mut self, what: &'static str) -> Result<u64, InputError> {
        let value = self.varint(VARINT64_MAX_BYTES, what)?;
        u64::try_from(value).map_err(|_| out_of_range(what, value))
    }

    fn i16_value(&mut self, what: &'static str) -> Result<i16, InputError> {
        let encoded = self.varint32(what)?;
        i16::try_from(unzigzag32(encoded)).map_err(|_| out_of_range(what, u128::from(encoded)))
    }

    fn bytes_value(&mut self, what: &'static str) -> Result<Vec<u8>, InputError> {
        let length = self.varint32(what)?;
        self.cursor.sized_bytes(u64::from(length), what)
    }

    fn string_value(&mut self, what: &'static str) -> Result<String, InputError> {
        let bytes = self.bytes_value(what)?;
        String::from_utf8(bytes).map_err(|_| InputError::NotUtf8 { what })
    }

    /// A size as the wire's signed 32-bit count, checked against the bytes
    /// `count` elements of at least `min_bytes_each` bytes need.
    fn container_size(
        &self,
        count: u32,
        min_bytes_each: u64,
        what: &'static str,
    ) -> Result<i32, InputError> {
        let size = i32::from_ne_bytes(count.to_ne_bytes());
        if size < 0 {
            return Err(InputError::NegativeSize {
                what,
                size: i64::from(size),
            });
        }
        self.cursor
            .check_elements(u64::from(count), min_bytes_each, what)?;
        Ok(size)
    }

    fn message_begin(&mut self) -> Result<TMessageIdentifier, InputError> {
        let protocol_id = self.cursor.byte("message header")?;
        if protocol_id != PROTOCOL_ID {
            return Err(InputError::BadVersion {
                found: u32::from(protocol_id),
            });
        }
        let version_and_type = self.cursor.byte("message header")?;
        if version_and_type & VERSION_MASK != VERSION {
            return Err(InputError::BadVersion {
                found: u32::from(version_and_type),
            });
        }
        let message_type = message_type(version_and_type >> 5)?;
        // The sequence id travels as an unsigned varint of its 32 bits.
        let sequence_number = i32::from_ne_bytes(self.varint32("sequence id")?.to_ne_bytes());
        let name = self.string_value("method name")?;
        self.last_field_id = 0;
        self.pending_bool = None;
        Ok(TMessageIdentifier::new(name, message_type, sequence_number))
    }

    fn field_begin(&mut self) -> Result<TFieldIdentifier, InputError> {
        self.pending_bool = None;
        let header = self.cursor.byte("field header")?;
        let type_code = header & 0x0f;
        if type_code == 0 {
            return Ok(
                TFieldIdentifier::new::<Option<String>, String, Option<i16>>(
                    None,
                    TType::Stop,
                    None,
                ),
            );
        }
        let field_type = match type_code {
            0x01 => {
                self.pending_bool = Some(true);
                TType::Bool
            }
            0x02 => {
                self.pending_bool = Some(false);
                TType::Bool
            }
            code => value_type_from_code(code).ok_or(InputError::UnknownTypeCode {
                what: "field header",
                code,
            })?,
        };
        let delta = header >> 4;
        let id = if delta == 0 {
            self.i16_value("field id")?
        } else {
            self.last_field_id.wrapping_add(i16::from(delta))
        };
        self.last_field_id = id;
        Ok(TFieldIdentifier::new::<Option<String>, String, i16>(
            None, field_type, id,
        ))
    }

    fn element_type(&mut self, code: u8, what: &'static str) -> Result<TType, InputError> {
        collection_type_from_code(code).ok_or(InputError::UnknownTypeCode { what, code })
    }

    fn list_begin(&mut self, what: &'static str) -> Result<(TType, i32), InputError> {
        let header = self.cursor.byte(what)?;
        let element_type = self.element_type(header & 0x0f, what)?;
        let short_size = header >> 4;
        let count = if short_size == LONG_SIZE_FORM {
            self.varint32(what)?
        } else {
            u32::from(short_size)
        };
        let size = self.container_size(count, min_encoded_len(element_type), what)?;
        self.nesting.enter()?;
        Ok((element_type, size))
    }

    fn map_begin(&mut self) -> Result<TMapIdentifier, InputError> {
        let count = self.varint32("map")?;
        if count == 0 {
            self.nesting.enter()?;
            return Ok(TMapIdentifier::new(None, None, 0));
        }
        let types = self.cursor.byte("map")?;
        let key_type = self.element_type(types >> 4, "map")?;
        let value_type = self.element_type(types & 0x0f, "map")?;
        let entry_len = min_encoded_len(key_type) + min_encoded_len(value_type);
        let size = self.container_size(count, entry_len, "map")?;
        self.nesting.enter()?;
        Ok(TMapIdentifier::new(key_type, value_type, size))
    }

    fn struct_begin(&mut self) -> Result<(), InputError> {
        self.nesting.enter()?;
        self.enclosing_field_ids.push(self.last_field_id);
        self.last_field_id = 0;
        Ok(())
    }

    fn struct_end(&mut self) -> Result<(), InputError> {
        self.last_field_id = self
            .enclosing_field_ids
            .pop()
            .ok_or(InputError::UnbalancedStructEnd)?;
        self.nesting.leave();
        Ok(())
    }

    fn bool_value(&mut self) -> Result<bool, InputError> {
        if let Some(value) = self.pending_bool.take() {
            return Ok(value);
        }
        match self.cursor.byte("bool")? {
            0x01 => Ok(true),
            0x02 => Ok(false),
            other => Err(InputError::InvalidBool(other)),
        }
    }
}

impl TInputProtocol for CompactInput<'_> {
    fn read_message_begin(&mut self) -> thrift::Result<TMessageIdentifier> {
        Ok(self.message_begin()?)
    }

    fn read_message_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn read_struct_begin(&mut self) -> thrift::Result<Option<TStructIdentifier>> {
        self.struct_begin()?;
        Ok(None)
    }

    fn read_struct_end(&mut self) -> thrift::Result<()> {
        Ok(self.struct_end()?)
    }

    fn read_field_begin(&mut self) -> thrift::Result<TFieldIdentifier> {
        Ok(self.field_begin()?)
    }

    fn read_field_end(&mut self) -> thrift::Result<()> {
        Ok(())
    }

    fn read_bool(&mut self) -> thrift::Result<bool> {
        Ok(self.bool_value()?)
    }

    fn read_bytes(&mut self) -> thrift::Result<Vec<u8>> {
        Ok(self.bytes_value("binary")?)
    }

    fn read_i8(&mut self) -> thrift::Result<i8> {
        Ok(i8::from_ne_bytes(self.cursor.array("byte")?))
    }

    fn read_i16(&mut self) -> thrift::Result<i16> {
        Ok(self.i16_value("i16")?)
    }

    fn read_i32(&mut self) -> thrift::Result<i32> {
        Ok(unzigzag32(self.varint32("i32")?))
    }

    fn read_i64(&mut self) -> thrift::Result<i64> {
        Ok(unzigzag64(self.varint64("i64")?))
    }

    fn read_double(&mut self) -> thrift::Result<f64> {
        Ok(f64::from_le_bytes(self.cursor.array("double")?))
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

fn out_of_range(what: &'static str, value: u128) -> InputError {
    InputError::OutOfRange {
        what,
        value: u64::try_from(value).unwrap_or(u64::MAX),
    }
}

fn unzigzag32(encoded: u32) -> i32 {
    let magnitude = i32::from_ne_bytes((encoded >> 1).to_ne_bytes());
    magnitude ^ -i32::from(encoded & 1 == 1)
}

fn unzigzag64(encoded: u64) -> i64 {
    let magnitude = i64::from_ne_bytes((encoded >> 1).to_ne_bytes());
    magnitude ^ -i64::from(encoded & 1 == 1)
}

/// The compact type codes of values (fields, elements, keys, values); bool
/// (1 and 2) is handled by the caller.
fn value_type_from_code(code: u8) -> Option<TType> {
    Some(match code {
        0x03 => TType::I08,
        0x04 => TType::I16,
        0x05 => TType::I32,
        0x06 => TType::I64,
        0x07 => TType::Double,
        0x08 => TType::String,
        0x09 => TType::List,
        0x0A => TType::Set,
        0x0B => TType::Map,
        0x0C => TType::Struct,
        _ => return None,
    })
}

/// Element, key and value type codes: both bool codes mean bool, and 0 is
/// reported as `Stop` (undecodable, as the thrift crate reports it).
fn collection_type_from_code(code: u8) -> Option<TType> {
    match code {
        0x00 => Some(TType::Stop),
        0x01 | 0x02 => Some(TType::Bool),
        other => value_type_from_code(other),
    }
}

/// Fewest bytes one container element of `value_type` takes in the compact
/// protocol: a double is 8, everything else at least 1 (a bool element is
/// one byte, a varint at least one, an empty string, struct or container
/// one).
fn min_encoded_len(value_type: TType) -> u64 {
    match value_type {
        TType::Double => 8,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::MAX_NESTING_DEPTH;
    use thrift::protocol::{TCompactOutputProtocol, TMessageType, TOutputProtocol};
    use thrift::ProtocolErrorKind;

    fn protocol_kind<T: std::fmt::Debug>(result: thrift::Result<T>) -> ProtocolErrorKind {
        match result {
            Err(thrift::Error::Protocol(error)) => error.kind,
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }

    fn field(o: &mut dyn TOutputProtocol, field_type: TType, id: i16) {
        assert!(o
            .write_field_begin(&TFieldIdentifier::new("f", field_type, id))
            .is_ok());
    }

    #[test]
    fn reads_what_the_stock_writer_writes() {
        let mut bytes = Vec::new();
        {
            let mut o = TCompactOutputProtocol::new(&mut bytes);
            let header = TMessageIdentifier::new("mutateRow", TMessageType::Call, -7);
            assert!(o.write_message_begin(&header).is_ok());
            assert!(o.write_struct_begin(&TStructIdentifier::new("s")).is_ok());
            field(&mut o, TType::Bool, 1); // delta form, value in the header
            assert!(o.write_bool(false).is_ok());
            field(&mut o, TType::I64, 40); // long form
            assert!(o.write_i64(i64::MIN).is_ok());
            field(&mut o, TType::I32, 41);
            assert!(o.write_i32(-1).is_ok());
            field(&mut o, TType::I16, -5); // negative id, long form
            assert!(o.write_i16(i16::MIN).is_ok());
            field(&mut o, TType::Double, 3);
            assert!(o.write_double(2.5).is_ok());
            field(&mut o, TType::List, 4);
            assert!(o
                .write_list_begin(&TListIdentifier::new(TType::Bool, 20))
                .is_ok());
            for index in 0..20 {
                assert!(o.write_bool(index % 3 == 0).is_ok());
            }
            assert!(o.write_list_end().is_ok());
            field(&mut o, TType::Map, 5);
            assert!(o
                .write_map_begin(&TMapIdentifier::new(TType::String, TType::String, 0))
                .is_ok());
            assert!(o.write_map_end().is_ok());
            field(&mut o, TType::Struct, 6);
            assert!(o.write_struct_begin(&TStructIdentifier::new("t")).is_ok());
            field(&mut o, TType::String, 1);
            assert!(o.write_string("ünï").is_ok());
            assert!(o.write_field_stop().is_ok());
            assert!(o.write_struct_end().is_ok());
            field(&mut o, TType::Bool, 7);
            assert!(o.write_bool(true).is_ok());
            assert!(o.write_field_stop().is_ok());
            assert!(o.write_struct_end().is_ok());
            assert!(o.write_message_end().is_ok());
        }
        let mut i = CompactInput::new(&bytes);
        let header = i.read_message_begin().ok();
        assert_eq!(
            header,
            Some(TMessageIdentifier::new("mutateRow", TMessageType::Call, -7))
        );
        assert!(i.read_struct_begin().is_ok());
        let next = |i: &mut CompactInput<'_>| {
            i.read_field_begin()
                .ok()
                .map(|f| (f.field_type, f.id.unwrap_or(i16::MAX)))
        };
        assert_eq!(next(&mut i), Some((TType::Bool, 1)));
        assert_eq!(i.read_bool().ok(), Some(false));
        assert_eq!(next(&mut i), Some((TType::I64, 40)));
        assert_eq!(i.read_i64().ok(), Some(i64::MIN));
        assert_eq!(next(&mut i), Some((TType::I32, 41)));
        assert_eq!(i.read_i32().ok(), Some(-1));
        assert_eq!(next(&mut i), Some((TType::I16, -5)));
        assert_eq!(i.read_i16().ok(), Some(i16::MIN));
        assert_eq!(next(&mut i), Some((TType::Double, 3)));
        assert_eq!(i.read_double().ok(), Some(2.5));
        assert_eq!(next(&mut i), Some((TType::List, 4)));
        assert_eq!(
            i.read_list_begin().ok(),
            Some(TListIdentifier::new(TType::Bool, 20))
        );
        for index in 0..20 {
            assert_eq!(i.read_bool().ok(), Some(index % 3 == 0));
        }
        assert!(i.read_list_end().is_ok());
        assert_eq!(next(&mut i), Some((TType::Map, 5)));
        assert_eq!(
            i.read_map_begin().ok(),
            Some(TMapIdentifier::new(None, None, 0))
        );
        assert!(i.read_map_end().is_ok());
        assert_eq!(next(&mut i), Some((TType::Struct, 6)));
        assert!(i.read_struct_begin().is_ok());
        assert_eq!(next(&mut i), Some((TType::String, 1)));
        assert_eq!(i.read_string().ok().as_deref(), Some("ünï"));
        assert_eq!(next(&mut i), Some((TType::Stop, i16::MAX)));
        assert!(i.read_struct_end().is_ok());
        // The id delta continues from the outer struct's last field.
        assert_eq!(next(&mut i), Some((TType::Bool, 7)));
        assert_eq!(i.read_bool().ok(), Some(true));
        assert_eq!(next(&mut i), Some((TType::Stop, i16::MAX)));
        assert!(i.read_struct_end().is_ok());
        assert_eq!(i.remaining(), 0);
    }

    #[test]
    fn both_bool_codes_are_bool_elements() {
        assert_eq!(
            CompactInput::new(&[0x22, 0x01, 0x02])
                .read_list_begin()
                .ok(),
            Some(TListIdentifier::new(TType::Bool, 2))
        );
        // Two entries: a one-byte key and value each; types string -> bool(2).
        assert_eq!(
            CompactInput::new(&[0x02, 0x82, 0, 0, 0, 0])
                .read_map_begin()
                .ok(),
            Some(TMapIdentifier::new(TType::String, TType::Bool, 2))
        );
        assert_eq!(
            protocol_kind(CompactInput::new(&[0x03]).read_bool()),
            ProtocolErrorKind::InvalidData
        );
    }

    #[test]
    fn headers_are_checked() {
        assert_eq!(
            protocol_kind(CompactInput::new(&[0x80, 0x21, 0, 0]).read_message_begin()),
            ProtocolErrorKind::BadVersion
        );
        assert_eq!(
            protocol_kind(CompactInput::new(&[0x82, 0x22, 0, 0]).read_message_begin()),
            ProtocolErrorKind::BadVersion
        );
        assert_eq!(
            protocol_kind(CompactInput::new(&[0x82, 0xa1, 0, 0]).read_message_begin()),
            ProtocolErrorKind::InvalidData
        );
        // Name length 2^32 - 1 in a 7-byte message.
        let bytes = [0x82, 0x21, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert_eq!(
            protocol_kind(CompactInput::new(&bytes).read_message_begin()),
            ProtocolErrorKind::SizeLimit
        );
        // Sequence id 0xffff_ffff is -1.
        let bytes = [0x82, 0x21, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01, b'g'];
        assert_eq!(
            CompactInput::new(&bytes).read_message_begin().ok(),
            Some(TMessageIdentifier::new("g", TMessageType::Call, -1))
        );
    }

    #[test]
    fn varints_are_bounded() {
        let too_long = [0x80, 0x80, 0x80, 0x80, 0x80, 0x01];
        assert_eq!(
            protocol_kind(CompactInput::new(&too_long).read_i32()),
            ProtocolErrorKind::InvalidData
        );
        // Five bytes carrying 35 bits do not fit an i32.
        let wide = [0xff, 0xff, 0xff, 0xff, 0x7f];
        assert_eq!(
            protocol_kind(CompactInput::new(&wide).read_i32()),
            ProtocolErrorKind::InvalidData
        );
        // 70000 zigzagged does not fit an i16.
        let big = [0xe0, 0xc5, 0x08];
        assert_eq!(
            protocol_kind(CompactInput::new(&big).read_i16()),
            ProtocolErrorKind::InvalidData
        );
        let max = [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(CompactInput::new(&max).read_i64().ok(), Some(i64::MAX));
        let over = [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02];
        assert_eq!(
            protocol_kind(CompactInput::new(&over).read_i64()),
            ProtocolErrorKind::InvalidData
        );
    }

    #[test]
    fn lengths_and_sizes_are_checked_before_allocating() {
        // String length 2^31 with two bytes left.
        let bytes = [0x80, 0x80, 0x80, 0x80, 0x08, 0, 0];
        assert_eq!(
            protocol_kind(CompactInput::new(&bytes).read_bytes()),
            ProtocolErrorKind::SizeLimit
        );
        // Long-form list of 2^31 - 1 structs.
        let bytes = [0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0];
        assert_eq!(
            protocol_kind(CompactInput::new(&bytes).read_list_begin()),
            ProtocolErrorKind::SizeLimit
        );
        // Long-form size 2^32 - 1 is -1 as a signed count.
        let bytes = [0xf8, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert_eq!(
            protocol_kind(CompactInput::new(&bytes).read_set_begin()),
            ProtocolErrorKind::NegativeSize
        );
        // Three doubles need 24 bytes.
        let mut bytes = vec![0x37];
        bytes.extend_from_slice(&[0; 23]);
        assert_eq!(
            protocol_kind(CompactInput::new(&bytes).read_list_begin()),
            ProtocolErrorKind::SizeLimit
        );
        bytes.push(0);
        assert!(CompactInput::new(&bytes).read_list_begin().is_ok());
        // A map of a million entries in four bytes.
        let bytes = [0xc0, 0x84, 0x3d, 0x88];
        assert_eq!(
            protocol_kind(CompactInput::new(&bytes).read_map_begin()),
            ProtocolErrorKind::SizeLimit
        );
    }

    #[test]
    fn unknown_codes_and_unbalanced_structs_are_errors() {
        assert_eq!(
            protocol_kind(CompactInput::new(&[0x1d]).read_field_begin()),
            ProtocolErrorKind::InvalidData
        );
        assert_eq!(
            protocol_kind(CompactInput::new(&[0x1e]).read_list_begin()),
            ProtocolErrorKind::InvalidData
        );
        assert_eq!(
            protocol_kind(CompactInput::new(&[]).read_struct_end()),
            ProtocolErrorKind::InvalidData
        );
    }

    #[test]
    fn field_id_deltas_wrap_instead_of_overflowing() {
        // Long-form id 32767, then a delta of 15.
        let bytes = [0x05, 0xfe, 0xff, 0x03, 0x00, 0xf5, 0x00];
        let mut i = CompactInput::new(&bytes);
        assert!(i.read_struct_begin().is_ok());
        assert_eq!(i.read_field_begin().ok().and_then(|f| f.id), Some(i16::MAX));
        assert_eq!(i.read_i32().ok(), Some(0));
        let wrapped = i16::MAX.wrapping_add(15);
        assert_eq!(i.read_field_begin().ok().and_then(|f| f.id), Some(wrapped));
    }

    #[test]
    fn nesting_is_bounded() {
        let bytes = [0_u8; 0];
        let mut i = CompactInput::new(&bytes);
        for _ in 0..MAX_NESTING_DEPTH {
            assert!(i.read_struct_begin().is_ok());
        }
        assert_eq!(
            protocol_kind(i.read_struct_begin()),
            ProtocolErrorKind::DepthLimit
        );
        let empty_map = [0x00];
        let mut i = CompactInput::new(&empty_map);
        for _ in 0..MAX_NESTING_DEPTH {
            assert!(i.read_struct_begin().is_ok());
        }
        assert_eq!(
            protocol_kind(i.read_map_begin()),
            ProtocolErrorKind::DepthLimit
        );
    }
}
