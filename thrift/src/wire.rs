//! Wire helpers called by the generated processors in [`crate::hbase`] and
//! [`crate::hbase2`] (the calls are inserted by `codegen/patch_generated.py`).
//!
//! Owns byte-safe skipping of values, the mapping of argument-decoding
//! failures to `PROTOCOL_ERROR`, the error for a union that carries no
//! known field, and the nameless identifiers the generated writers use. Container decoding lives in [`crate::containers`]. Must not
//! depend on the generated modules, and must not change what a well-formed
//! call decodes to.

use thrift::protocol::{
    TBinaryInputProtocol, TFieldIdentifier, TInputProtocol, TSerializable, TStructIdentifier, TType,
};
use thrift::{ApplicationError, ApplicationErrorKind, ProtocolError, ProtocolErrorKind};

/// Deepest nesting of structs and containers [`skip_value`] walks into
/// before giving up with a `DepthLimit` protocol error.
pub const MAX_SKIP_DEPTH: u32 = 64;

/// Consumes one encoded value of type `field_type` without keeping it.
///
/// Unlike `TInputProtocol::skip`, strings are skipped as raw bytes, so a
/// skipped binary field need not be UTF-8. Errors: the protocol's own read
/// errors; `DepthLimit` past [`MAX_SKIP_DEPTH`] levels; `InvalidData` for a
/// type that has no encoding (`Stop`, `Void`, `Utf7`, `Utf8`, `Utf16`) or a
/// non-empty map without key/value types.
pub fn skip_value(i_prot: &mut dyn TInputProtocol, field_type: TType) -> thrift::Result<()> {
    skip_nested(i_prot, field_type, MAX_SKIP_DEPTH)
}

/// The identifier a generated writer passes to `write_field_begin`. The binary
/// and compact protocols write a field's type and id and never its name, so
/// `_name` (the IDL's, kept for the reader of the generated code) is left out
/// instead of being copied into a `String` for every field written.
#[inline]
pub fn field_header(_name: &'static str, field_type: TType, id: i16) -> TFieldIdentifier {
    TFieldIdentifier {
        name: None,
        field_type,
        id: Some(id),
    }
}

/// The identifier a generated writer passes to `write_struct_begin`: nameless,
/// as [`field_header`]'s (`String::new` does not allocate).
#[inline]
pub fn struct_header(_name: &'static str) -> TStructIdentifier {
    TStructIdentifier {
        name: String::new(),
    }
}

/// Consumes the rest of a message whose header has been read: its argument
/// struct and the message end. Used when a call names an unknown method.
pub fn skip_message_body(i_prot: &mut dyn TInputProtocol) -> thrift::Result<()> {
    skip_value(i_prot, TType::Struct)?;
    i_prot.read_message_end()
}

/// Turns a failure to decode a call's arguments into the application error a
/// client receives: protocol errors (malformed data, a missing `required`
/// argument or field, invalid UTF-8 in a `string`) become `PROTOCOL_ERROR`
/// with the decoder's message. Transport and other errors pass unchanged.
pub fn args_decode_error(error: thrift::Error) -> thrift::Error {
    match error {
        thrift::Error::Protocol(protocol_error) => thrift::Error::Application(
            ApplicationError::new(ApplicationErrorKind::ProtocolError, protocol_error.message),
        ),
        other => other,
    }
}

/// The value a struct reader produces for an empty struct (no fields, just
/// the end marker): what an absent struct argument stands for. Errors: the
/// `required`-field check of `T`, as a protocol error.
pub fn decode_empty_struct<T: TSerializable>() -> thrift::Result<T> {
    // In the binary protocol an empty struct is the single STOP byte.
    let empty: &[u8] = &[0];
    T::read_from_in_protocol(&mut TBinaryInputProtocol::new(empty, true))
}

/// The error a union reader returns when its one field was unknown or had
/// the wrong wire type, so it was skipped and the union holds nothing.
pub fn union_without_known_field(union_name: &str) -> thrift::Error {
    protocol_error(
        ProtocolErrorKind::InvalidData,
        format!("received no known field for union {union_name}"),
    )
}

fn skip_nested(
    i_prot: &mut dyn TInputProtocol,
    field_type: TType,
    depth_left: u32,
) -> thrift::Result<()> {
    let Some(inner_depth) = depth_left.checked_sub(1) else {
        return Err(protocol_error(
            ProtocolErrorKind::DepthLimit,
            format!("values nested deeper than {MAX_SKIP_DEPTH} levels"),
        ));
    };
    match field_type {
        TType::Bool => i_prot.read_bool().map(drop),
        TType::I08 => i_prot.read_i8().map(drop),
        TType::I16 => i_prot.read_i16().map(drop),
        TType::I32 => i_prot.read_i32().map(drop),
        TType::I64 => i_prot.read_i64().map(drop),
        TType::Double => i_prot.read_double().map(drop),
        TType::String => i_prot.read_bytes().map(drop),
        TType::Struct => {
            i_prot.read_struct_begin()?;
            loop {
                let field = i_prot.read_field_begin()?;
                if field.field_type == TType::Stop {
                    break;
                }
                skip_nested(i_prot, field.field_type, inner_depth)?;
                i_prot.read_field_end()?;
            }
            i_prot.read_struct_end()
        }
        TType::List => {
            let list = i_prot.read_list_begin()?;
            for _ in 0..list.size {
                skip_nested(i_prot, list.element_type, inner_depth)?;
            }
            i_prot.read_list_end()
        }
        TType::Set => {
            let set = i_prot.read_set_begin()?;
            for _ in 0..set.size {
                skip_nested(i_prot, set.element_type, inner_depth)?;
            }
            i_prot.read_set_end()
        }
        TType::Map => {
            let map = i_prot.read_map_begin()?;
            if map.size > 0 {
                let (Some(key_type), Some(value_type)) = (map.key_type, map.value_type) else {
                    return Err(protocol_error(
                        ProtocolErrorKind::InvalidData,
                        "non-empty map without key and value types".to_owned(),
                    ));
                };
                for _ in 0..map.size {
                    skip_nested(i_prot, key_type, inner_depth)?;
                    skip_nested(i_prot, value_type, inner_depth)?;
                }
            }
            i_prot.read_map_end()
        }
        TType::Stop | TType::Void | TType::Utf7 | TType::Utf8 | TType::Utf16 => {
            Err(protocol_error(
                ProtocolErrorKind::InvalidData,
                format!("cannot skip a value of type {field_type:?}"),
            ))
        }
    }
}

fn protocol_error(kind: ProtocolErrorKind, message: String) -> thrift::Error {
    thrift::Error::Protocol(ProtocolError::new(kind, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use thrift::protocol::{
        TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
        TFieldIdentifier, TListIdentifier, TMapIdentifier, TOutputProtocol, TStructIdentifier,
    };
    use thrift::transport::TBufferChannel;

    /// A struct holding a non-UTF-8 binary, a list of structs and a map,
    /// followed by an i32 marker that must be readable after the skip.
    fn write_sample(o_prot: &mut dyn TOutputProtocol) -> thrift::Result<()> {
        o_prot.write_struct_begin(&TStructIdentifier::new("sample"))?;
        o_prot.write_field_begin(&TFieldIdentifier::new("raw", TType::String, 1))?;
        o_prot.write_bytes(&[0xff, 0xfe, 0x00, 0x80])?;
        o_prot.write_field_end()?;
        o_prot.write_field_begin(&TFieldIdentifier::new("items", TType::List, 2))?;
        o_prot.write_list_begin(&TListIdentifier::new(TType::Struct, 2))?;
        for value in [7_i64, -7] {
            o_prot.write_struct_begin(&TStructIdentifier::new("item"))?;
            o_prot.write_field_begin(&TFieldIdentifier::new("v", TType::I64, 1))?;
            o_prot.write_i64(value)?;
            o_prot.write_field_end()?;
            o_prot.write_field_stop()?;
            o_prot.write_struct_end()?;
        }
        o_prot.write_list_end()?;
        o_prot.write_field_end()?;
        o_prot.write_field_begin(&TFieldIdentifier::new("attrs", TType::Map, 3))?;
        o_prot.write_map_begin(&TMapIdentifier::new(TType::String, TType::Bool, 1))?;
        o_prot.write_bytes(b"k")?;
        o_prot.write_bool(true)?;
        o_prot.write_map_end()?;
        o_prot.write_field_end()?;
        o_prot.write_field_stop()?;
        o_prot.write_struct_end()?;
        o_prot.write_i32(0x5eed)?;
        o_prot.flush()
    }

    fn encoded(compact: bool) -> Vec<u8> {
        let mut channel = TBufferChannel::with_capacity(0, 4096);
        let written = if compact {
            write_sample(&mut TCompactOutputProtocol::new(&mut channel))
        } else {
            write_sample(&mut TBinaryOutputProtocol::new(&mut channel, true))
        };
        assert!(written.is_ok());
        channel.write_bytes()
    }

    fn skip_then_marker(bytes: &[u8], compact: bool) -> thrift::Result<i32> {
        let mut channel = TBufferChannel::with_capacity(bytes.len(), 0);
        channel.set_readable_bytes(bytes);
        if compact {
            let mut i_prot = TCompactInputProtocol::new(channel);
            skip_value(&mut i_prot, TType::Struct)?;
            i_prot.read_i32()
        } else {
            let mut i_prot = TBinaryInputProtocol::new(channel, true);
            skip_value(&mut i_prot, TType::Struct)?;
            i_prot.read_i32()
        }
    }

    type StructHeader = dyn Fn(&'static str) -> TStructIdentifier;
    type FieldHeader = dyn Fn(&'static str, TType, i16) -> TFieldIdentifier;

    /// A struct with a nested struct and a bool field (which the compact protocol
    /// folds into the field header), written with the given identifiers.
    fn write_headers(
        o_prot: &mut dyn TOutputProtocol,
        structure: &StructHeader,
        field: &FieldHeader,
    ) -> thrift::Result<()> {
        o_prot.write_struct_begin(&structure("Outer"))?;
        o_prot.write_field_begin(&field("flag", TType::Bool, 3))?;
        o_prot.write_bool(true)?;
        o_prot.write_field_end()?;
        o_prot.write_field_begin(&field("inner", TType::Struct, 20))?;
        o_prot.write_struct_begin(&structure("Inner"))?;
        o_prot.write_field_begin(&field("ts", TType::I64, 2))?;
        o_prot.write_i64(-5)?;
        o_prot.write_field_end()?;
        o_prot.write_field_stop()?;
        o_prot.write_struct_end()?;
        o_prot.write_field_end()?;
        o_prot.write_field_begin(&field("name", TType::String, 21))?;
        o_prot.write_bytes(b"v")?;
        o_prot.write_field_end()?;
        o_prot.write_field_stop()?;
        o_prot.write_struct_end()?;
        o_prot.flush()
    }

    #[test]
    fn nameless_identifiers_encode_as_named_ones_in_both_protocols() {
        let named_struct = |name: &'static str| TStructIdentifier::new(name);
        let named_field =
            |name: &'static str, ty: TType, id: i16| TFieldIdentifier::new(name, ty, id);
        for compact in [false, true] {
            let mut out = Vec::new();
            for nameless in [false, true] {
                let mut channel = TBufferChannel::with_capacity(0, 4096);
                let (s, f): (&StructHeader, &FieldHeader) = if nameless {
                    (&struct_header, &field_header)
                } else {
                    (&named_struct, &named_field)
                };
                let written = if compact {
                    write_headers(&mut TCompactOutputProtocol::new(&mut channel), s, f)
                } else {
                    write_headers(&mut TBinaryOutputProtocol::new(&mut channel, true), s, f)
                };
                assert!(written.is_ok());
                out.push(channel.write_bytes());
            }
            assert!(out[0].len() >= 10, "{:?}", out[0]);
            assert_eq!(out[0], out[1], "compact = {compact}");
        }
        assert_eq!(field_header("x", TType::I32, 7).name, None);
        assert_eq!(field_header("x", TType::I32, 7).id, Some(7));
        assert!(struct_header("X").name.is_empty());
    }

    #[test]
    fn skips_non_utf8_binary_and_nested_values_in_both_protocols() {
        for compact in [false, true] {
            let bytes = encoded(compact);
            assert_eq!(skip_then_marker(&bytes, compact).ok(), Some(0x5eed));
        }
    }

    #[test]
    fn stock_skip_rejects_the_same_non_utf8_binary() {
        let bytes = encoded(false);
        let mut channel = TBufferChannel::with_capacity(bytes.len(), 0);
        channel.set_readable_bytes(&bytes);
        let mut i_prot = TBinaryInputProtocol::new(channel, true);
        assert!(i_prot.skip(TType::Struct).is_err());
    }

    #[test]
    fn nesting_beyond_the_limit_is_a_depth_error() {
        // Binary encoding of list<list<list<...>>> one level deeper than allowed.
        let mut bytes = Vec::new();
        for _ in 0..=MAX_SKIP_DEPTH {
            bytes.push(15); // element type: list
            bytes.extend_from_slice(&1_i32.to_be_bytes());
        }
        let mut channel = TBufferChannel::with_capacity(bytes.len(), 0);
        channel.set_readable_bytes(&bytes);
        let mut i_prot = TBinaryInputProtocol::new(channel, true);
        match skip_value(&mut i_prot, TType::List) {
            Err(thrift::Error::Protocol(error)) => {
                assert_eq!(error.kind, ProtocolErrorKind::DepthLimit)
            }
            other => panic!("expected a depth error, got {other:?}"),
        }
    }

    #[test]
    fn unskippable_types_are_rejected() {
        let mut channel = TBufferChannel::with_capacity(0, 0);
        channel.set_readable_bytes(&[]);
        let mut i_prot = TBinaryInputProtocol::new(channel, true);
        for field_type in [
            TType::Stop,
            TType::Void,
            TType::Utf7,
            TType::Utf8,
            TType::Utf16,
        ] {
            assert!(skip_value(&mut i_prot, field_type).is_err());
        }
    }

    /// A struct with one optional field, read the way generated code reads
    /// it (unknown fields are rejected to keep the sample small).
    #[derive(Debug, PartialEq)]
    struct Sample {
        optional: Option<i32>,
    }

    impl TSerializable for Sample {
        fn read_from_in_protocol(i_prot: &mut dyn TInputProtocol) -> thrift::Result<Sample> {
            i_prot.read_struct_begin()?;
            let field = i_prot.read_field_begin()?;
            if field.field_type != TType::Stop {
                return Err(protocol_error(
                    ProtocolErrorKind::InvalidData,
                    "field".to_owned(),
                ));
            }
            i_prot.read_struct_end()?;
            Ok(Sample { optional: None })
        }

        fn write_to_out_protocol(&self, o_prot: &mut dyn TOutputProtocol) -> thrift::Result<()> {
            o_prot.write_struct_begin(&TStructIdentifier::new("Sample"))?;
            o_prot.write_field_stop()?;
            o_prot.write_struct_end()
        }
    }

    #[test]
    fn empty_struct_decodes_with_no_field_set() {
        assert_eq!(
            decode_empty_struct::<Sample>().ok(),
            Some(Sample { optional: None })
        );
    }

    #[test]
    fn union_without_known_field_is_invalid_data() {
        match union_without_known_field("TMutation") {
            thrift::Error::Protocol(error) => {
                assert_eq!(error.kind, ProtocolErrorKind::InvalidData);
                assert!(error.message.contains("TMutation"));
            }
            other => panic!("expected a protocol error, got {other:?}"),
        }
    }

    #[test]
    fn protocol_errors_become_protocol_error_application_errors() {
        let mapped = args_decode_error(protocol_error(
            ProtocolErrorKind::InvalidData,
            "bad".to_owned(),
        ));
        match mapped {
            thrift::Error::Application(error) => {
                assert_eq!(error.kind, ApplicationErrorKind::ProtocolError);
                assert_eq!(error.message, "bad");
            }
            other => panic!("expected an application error, got {other:?}"),
        }
        let transport = thrift::Error::Transport(thrift::TransportError::new(
            thrift::TransportErrorKind::EndOfFile,
            "eof",
        ));
        assert!(matches!(
            args_decode_error(transport),
            thrift::Error::Transport(_)
        ));
    }
}
