//! Test support: a schema-free Thrift value model that writes raw calls and
//! decodes raw replies, the three wire variants the gateway must serve, and
//! serving through both the stock input protocols and the hardened ones in
//! `tabula_thrift::input`. Owns nothing the library uses; only the processor
//! tests include it.

#![allow(dead_code)]

pub mod hbase2_handler;
pub mod hbase_handler;

use std::collections::BTreeMap;

use tabula_thrift::input::{binary_input, compact_input};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TFieldIdentifier, TInputProtocol, TListIdentifier, TMapIdentifier, TMessageIdentifier,
    TMessageType, TOutputProtocol, TSetIdentifier, TStructIdentifier, TType,
};
use thrift::server::TProcessor;

/// A Thrift value as it appears on the wire, without a schema.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    Double(f64),
    Bytes(Vec<u8>),
    Struct(BTreeMap<i16, Value>),
    List(TType, Vec<Value>),
    Set(TType, Vec<Value>),
    Map(TType, TType, Vec<(Value, Value)>),
}

impl Value {
    pub fn bytes(text: &[u8]) -> Value {
        Value::Bytes(text.to_vec())
    }

    pub fn structure(fields: Vec<(i16, Value)>) -> Value {
        Value::Struct(fields.into_iter().collect())
    }

    pub fn field(&self, id: i16) -> Option<&Value> {
        match self {
            Value::Struct(fields) => fields.get(&id),
            _ => None,
        }
    }

    pub fn field_ids(&self) -> Vec<i16> {
        match self {
            Value::Struct(fields) => fields.keys().copied().collect(),
            _ => Vec::new(),
        }
    }

    fn ttype(&self) -> TType {
        match self {
            Value::Bool(_) => TType::Bool,
            Value::I8(_) => TType::I08,
            Value::I16(_) => TType::I16,
            Value::I32(_) => TType::I32,
            Value::I64(_) => TType::I64,
            Value::Double(_) => TType::Double,
            Value::Bytes(_) => TType::String,
            Value::Struct(_) => TType::Struct,
            Value::List(..) => TType::List,
            Value::Set(..) => TType::Set,
            Value::Map(..) => TType::Map,
        }
    }
}

pub fn write_value(o_prot: &mut dyn TOutputProtocol, value: &Value) -> thrift::Result<()> {
    match value {
        Value::Bool(v) => o_prot.write_bool(*v),
        Value::I8(v) => o_prot.write_i8(*v),
        Value::I16(v) => o_prot.write_i16(*v),
        Value::I32(v) => o_prot.write_i32(*v),
        Value::I64(v) => o_prot.write_i64(*v),
        Value::Double(v) => o_prot.write_double(*v),
        Value::Bytes(v) => o_prot.write_bytes(v),
        Value::Struct(fields) => {
            o_prot.write_struct_begin(&TStructIdentifier::new("s"))?;
            for (id, field) in fields {
                o_prot.write_field_begin(&TFieldIdentifier::new("f", field.ttype(), *id))?;
                write_value(o_prot, field)?;
                o_prot.write_field_end()?;
            }
            o_prot.write_field_stop()?;
            o_prot.write_struct_end()
        }
        Value::List(element_type, items) => {
            let size = i32::try_from(items.len()).map_err(|_| "list too long".to_owned())?;
            o_prot.write_list_begin(&TListIdentifier::new(*element_type, size))?;
            for item in items {
                write_value(o_prot, item)?;
            }
            o_prot.write_list_end()
        }
        Value::Set(element_type, items) => {
            let size = i32::try_from(items.len()).map_err(|_| "set too long".to_owned())?;
            o_prot.write_set_begin(&TSetIdentifier::new(*element_type, size))?;
            for item in items {
                write_value(o_prot, item)?;
            }
            o_prot.write_set_end()
        }
        Value::Map(key_type, value_type, entries) => {
            let size = i32::try_from(entries.len()).map_err(|_| "map too long".to_owned())?;
            o_prot.write_map_begin(&TMapIdentifier::new(*key_type, *value_type, size))?;
            for (key, entry) in entries {
                write_value(o_prot, key)?;
                write_value(o_prot, entry)?;
            }
            o_prot.write_map_end()
        }
    }
}

pub fn read_value(i_prot: &mut dyn TInputProtocol, ttype: TType) -> thrift::Result<Value> {
    Ok(match ttype {
        TType::Bool => Value::Bool(i_prot.read_bool()?),
        TType::I08 => Value::I8(i_prot.read_i8()?),
        TType::I16 => Value::I16(i_prot.read_i16()?),
        TType::I32 => Value::I32(i_prot.read_i32()?),
        TType::I64 => Value::I64(i_prot.read_i64()?),
        TType::Double => Value::Double(i_prot.read_double()?),
        TType::String => Value::Bytes(i_prot.read_bytes()?),
        TType::Struct => {
            i_prot.read_struct_begin()?;
            let mut fields = BTreeMap::new();
            loop {
                let field = i_prot.read_field_begin()?;
                if field.field_type == TType::Stop {
                    break;
                }
                let id = field.id.ok_or_else(|| "field without id".to_owned())?;
                fields.insert(id, read_value(i_prot, field.field_type)?);
                i_prot.read_field_end()?;
            }
            i_prot.read_struct_end()?;
            Value::Struct(fields)
        }
        TType::List => {
            let list = i_prot.read_list_begin()?;
            let mut items = Vec::new();
            for _ in 0..list.size {
                items.push(read_value(i_prot, list.element_type)?);
            }
            i_prot.read_list_end()?;
            Value::List(list.element_type, items)
        }
        TType::Set => {
            let set = i_prot.read_set_begin()?;
            let mut items = Vec::new();
            for _ in 0..set.size {
                items.push(read_value(i_prot, set.element_type)?);
            }
            i_prot.read_set_end()?;
            Value::Set(set.element_type, items)
        }
        TType::Map => {
            let map = i_prot.read_map_begin()?;
            let key_type = map.key_type.unwrap_or(TType::Void);
            let value_type = map.value_type.unwrap_or(TType::Void);
            let mut entries = Vec::new();
            for _ in 0..map.size {
                let key = read_value(i_prot, key_type)?;
                entries.push((key, read_value(i_prot, value_type)?));
            }
            i_prot.read_map_end()?;
            Value::Map(key_type, value_type, entries)
        }
        other => return Err(format!("test decoder does not handle {other:?}").into()),
    })
}

/// How a client encodes its calls; replies are always read strictly, as
/// happybase and Java clients do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wire {
    /// Binary protocol, calls with the versioned (strict) header.
    BinaryStrict,
    /// Binary protocol, calls with the old unversioned header.
    BinaryNonStrict,
    /// Compact protocol.
    Compact,
}

pub const ALL_WIRES: [Wire; 3] = [Wire::BinaryStrict, Wire::BinaryNonStrict, Wire::Compact];

/// One call: method name, sequence id and the argument struct's fields.
pub struct Call {
    pub name: &'static str,
    pub seqid: i32,
    pub args: Vec<(i16, Value)>,
}

impl Call {
    pub fn new(name: &'static str, seqid: i32, args: Vec<(i16, Value)>) -> Call {
        Call { name, seqid, args }
    }
}

/// A decoded reply message.
#[derive(Debug)]
pub struct Reply {
    pub header: TMessageIdentifier,
    pub body: Value,
}

impl Reply {
    /// `(message, type)` of a TApplicationException body.
    pub fn application_error(&self) -> Option<(Vec<u8>, i32)> {
        match (self.body.field(1), self.body.field(2)) {
            (Some(Value::Bytes(message)), Some(Value::I32(kind))) => Some((message.clone(), *kind)),
            _ => None,
        }
    }
}

pub fn encode_calls(wire: Wire, calls: &[Call]) -> thrift::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    for call in calls {
        let header = TMessageIdentifier::new(call.name, TMessageType::Call, call.seqid);
        bytes.extend(encode_message(wire, &header, &call.args)?);
    }
    Ok(bytes)
}

/// One message of any type whose body is a struct with `fields`.
pub fn encode_message(
    wire: Wire,
    header: &TMessageIdentifier,
    fields: &[(i16, Value)],
) -> thrift::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    {
        let mut o_prot: Box<dyn TOutputProtocol + '_> = match wire {
            Wire::BinaryStrict => Box::new(TBinaryOutputProtocol::new(&mut bytes, true)),
            Wire::BinaryNonStrict => Box::new(TBinaryOutputProtocol::new(&mut bytes, false)),
            Wire::Compact => Box::new(TCompactOutputProtocol::new(&mut bytes)),
        };
        o_prot.write_message_begin(header)?;
        write_value(o_prot.as_mut(), &Value::structure(fields.to_vec()))?;
        o_prot.write_message_end()?;
        o_prot.flush()?;
    }
    Ok(bytes)
}

/// Feeds `input` to `processor` the way a gateway connection would (binary
/// input accepts both header forms, binary output is strict) and returns the
/// result of each `process` call plus everything written.
pub fn serve(
    processor: &dyn TProcessor,
    wire: Wire,
    input: &[u8],
    calls: usize,
) -> (Vec<thrift::Result<()>>, Vec<u8>) {
    let mut output = Vec::new();
    let mut results = Vec::new();
    {
        let mut reader = input;
        let (mut i_prot, mut o_prot): (
            Box<dyn TInputProtocol + '_>,
            Box<dyn TOutputProtocol + '_>,
        ) = match wire {
            Wire::BinaryStrict | Wire::BinaryNonStrict => (
                Box::new(TBinaryInputProtocol::new(&mut reader, false)),
                Box::new(TBinaryOutputProtocol::new(&mut output, true)),
            ),
            Wire::Compact => (
                Box::new(TCompactInputProtocol::new(&mut reader)),
                Box::new(TCompactOutputProtocol::new(&mut output)),
            ),
        };
        for _ in 0..calls {
            results.push(processor.process(i_prot.as_mut(), o_prot.as_mut()));
        }
    }
    (results, output)
}

/// What one `process` call over a hardened input protocol did.
pub struct SafeOutcome {
    pub result: thrift::Result<()>,
    /// Bytes of the message the processor consumed.
    pub consumed: usize,
    /// Everything the processor wrote.
    pub output: Vec<u8>,
}

/// Runs `processor` once over `message` the way the gateway does: the
/// hardened input protocol for `wire` over the buffered bytes, a strict
/// binary or a compact output protocol.
pub fn process_safely(processor: &dyn TProcessor, wire: Wire, message: &[u8]) -> SafeOutcome {
    let mut output = Vec::new();
    let (result, consumed) = match wire {
        Wire::BinaryStrict | Wire::BinaryNonStrict => {
            let mut i_prot = binary_input(message);
            let mut o_prot = TBinaryOutputProtocol::new(&mut output, true);
            let result = processor.process(&mut i_prot, &mut o_prot);
            (result, i_prot.position())
        }
        Wire::Compact => {
            let mut i_prot = compact_input(message);
            let mut o_prot = TCompactOutputProtocol::new(&mut output);
            let result = processor.process(&mut i_prot, &mut o_prot);
            (result, i_prot.position())
        }
    };
    SafeOutcome {
        result,
        consumed,
        output,
    }
}

/// Like [`serve`], through the hardened input protocols: each `process`
/// call gets a fresh protocol over the bytes the previous calls left.
pub fn serve_safe(
    processor: &dyn TProcessor,
    wire: Wire,
    input: &[u8],
    calls: usize,
) -> (Vec<thrift::Result<()>>, Vec<u8>) {
    let mut offset = 0;
    let mut output = Vec::new();
    let mut results = Vec::new();
    for _ in 0..calls {
        let rest = input.get(offset..).unwrap_or_default();
        let outcome = process_safely(processor, wire, rest);
        offset += outcome.consumed;
        output.extend_from_slice(&outcome.output);
        results.push(outcome.result);
    }
    (results, output)
}

/// Decodes every reply in `output`, reading binary headers strictly.
pub fn decode_replies(wire: Wire, output: &[u8]) -> thrift::Result<Vec<Reply>> {
    let mut reader = output;
    let mut replies = Vec::new();
    while !reader.is_empty() {
        let mut i_prot: Box<dyn TInputProtocol + '_> = match wire {
            Wire::BinaryStrict | Wire::BinaryNonStrict => {
                Box::new(TBinaryInputProtocol::new(&mut reader, true))
            }
            Wire::Compact => Box::new(TCompactInputProtocol::new(&mut reader)),
        };
        let header = i_prot.read_message_begin()?;
        let body = read_value(i_prot.as_mut(), TType::Struct)?;
        i_prot.read_message_end()?;
        replies.push(Reply { header, body });
    }
    Ok(replies)
}

/// Encodes `calls`, serves them one `process` call each through the
/// hardened input protocols (the way the gateway serves), asserts every
/// `process` call succeeded and the input was consumed exactly, and decodes
/// the replies.
pub fn round_trip(processor: &dyn TProcessor, wire: Wire, calls: &[Call]) -> Vec<Reply> {
    let input = match encode_calls(wire, calls) {
        Ok(input) => input,
        Err(error) => panic!("{wire:?}: cannot encode calls: {error}"),
    };
    // One extra `process` call must find no bytes left: proof that every
    // call was consumed exactly.
    let (results, output) = serve_safe(processor, wire, &input, calls.len() + 1);
    for (index, result) in results.iter().take(calls.len()).enumerate() {
        assert!(result.is_ok(), "{wire:?}: call {index} failed: {result:?}");
    }
    assert!(
        matches!(results.last(), Some(Err(thrift::Error::Protocol(_)))),
        "{wire:?}: input not consumed exactly: {:?}",
        results.last()
    );
    match decode_replies(wire, &output) {
        Ok(replies) => replies,
        Err(error) => panic!("{wire:?}: cannot decode replies: {error}"),
    }
}

/// Serves `calls` through the stock input protocols to `stock` and through
/// the hardened ones to `hardened` (two processors, so their handlers see
/// each call once), and asserts both wrote the same bytes. Returns them.
pub fn assert_stock_agrees(
    stock: &dyn TProcessor,
    hardened: &dyn TProcessor,
    wire: Wire,
    calls: &[Call],
) -> Vec<u8> {
    let input = match encode_calls(wire, calls) {
        Ok(input) => input,
        Err(error) => panic!("{wire:?}: cannot encode calls: {error}"),
    };
    let (stock_results, stock_output) = serve(stock, wire, &input, calls.len());
    let (results, output) = serve_safe(hardened, wire, &input, calls.len());
    assert_eq!(
        stock_results.iter().map(Result::is_ok).collect::<Vec<_>>(),
        results.iter().map(Result::is_ok).collect::<Vec<_>>(),
        "{wire:?}: outcomes differ"
    );
    assert_eq!(output, stock_output, "{wire:?}: replies differ");
    output
}

/// Asserts `reply` answers `name`/`seqid` with `message_type`.
pub fn assert_header(reply: &Reply, name: &str, seqid: i32, message_type: TMessageType) {
    assert_eq!(reply.header.name, name, "method name echoed");
    assert_eq!(reply.header.sequence_number, seqid, "sequence id echoed");
    assert_eq!(
        reply.header.message_type, message_type,
        "message type of {name}"
    );
}
