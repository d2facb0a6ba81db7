//! Hostile requests through both generated processors (`HbaseSyncProcessor`,
//! `THBaseServiceSyncProcessor`) over the hardened input protocols of
//! `tabula_thrift::input`, on every wire: fields and container elements of the
//! wrong wire type are skipped; negative or oversized string lengths and
//! container sizes, and nesting past the limit, get PROTOCOL_ERROR; random
//! and mutated messages only ever produce one well-formed REPLY or EXCEPTION
//! echoing the call, or an error with nothing written. A global allocator
//! records the largest single allocation made while each message is
//! processed, which must stay small.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::hbase2_handler::TestHandler as Hbase2Handler;
use common::hbase_handler::TestHandler as HbaseHandler;
use common::{
    decode_replies, encode_calls, encode_message, process_safely, Call, Value, Wire, ALL_WIRES,
};
use proptest::prelude::*;
use tabula_thrift::hbase::{HbaseSyncClient, HbaseSyncProcessor, THbaseSyncClient};
use tabula_thrift::hbase2::THBaseServiceSyncProcessor;
use tabula_thrift::input::{binary_input, compact_input, MAX_NESTING_DEPTH};
use thrift::protocol::{
    TBinaryOutputProtocol, TCompactOutputProtocol, TInputProtocol, TMessageIdentifier,
    TMessageType, TType,
};
use thrift::server::TProcessor;
use thrift::ApplicationErrorKind;

const UNKNOWN_METHOD: i32 = 1;
const PROTOCOL_ERROR: i32 = 7;

/// Largest single allocation allowed while one test message is processed;
/// every message here is a few hundred bytes at most.
const ALLOCATION_LIMIT: usize = 64 * 1024;

// ---------------------------------------------------------------------------
// Allocation measurement

/// The system allocator, noting the largest request made on each thread.
struct LargestAllocation;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note_allocation(size: usize) {
    // A thread being torn down has no slot left; its allocations are not ours.
    let _ = LARGEST.try_with(|largest| largest.set(largest.get().max(size)));
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the bookkeeping touches a const-initialised
// thread-local cell and never allocates.
unsafe impl GlobalAlloc for LargestAllocation {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation(new_size);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: LargestAllocation = LargestAllocation;

/// Runs `work`, returning its result and the largest single allocation it
/// made on this thread.
fn largest_allocation_in<R>(work: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|largest| largest.set(0));
    let result = work();
    (result, LARGEST.with(Cell::get))
}

#[test]
fn allocation_measurement_sees_a_large_allocation() {
    let (buffer, largest) = largest_allocation_in(|| std::hint::black_box(vec![1_u8; 1 << 20]));
    assert_eq!(buffer.len(), 1 << 20);
    assert!(largest >= 1 << 20, "largest allocation seen: {largest}");
    let ((), small) = largest_allocation_in(|| ());
    assert!(small < ALLOCATION_LIMIT);
}

// ---------------------------------------------------------------------------
// Serving one message and checking the answer

/// What one message produced.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    /// `process` failed and wrote nothing.
    Refused(String),
    /// One REPLY message with this body.
    Reply(Value),
    /// One EXCEPTION message: its text and TApplicationException type.
    Exception(String, i32),
}

impl Answer {
    fn exception_kind(&self) -> Option<i32> {
        match self {
            Answer::Exception(_, kind) => Some(*kind),
            _ => None,
        }
    }
}

struct Served {
    answer: Answer,
    /// Bytes of the message the processor read.
    consumed: usize,
}

fn request_header(wire: Wire, message: &[u8]) -> Option<TMessageIdentifier> {
    match wire {
        Wire::BinaryStrict | Wire::BinaryNonStrict => {
            binary_input(message).read_message_begin().ok()
        }
        Wire::Compact => compact_input(message).read_message_begin().ok(),
    }
}

/// Serves `message` through the hardened input and checks what every answer
/// must satisfy: no large allocation, and either an error with nothing
/// written or exactly one REPLY/EXCEPTION echoing the call's name and
/// sequence id.
fn check_one(processor: &dyn TProcessor, wire: Wire, message: &[u8]) -> Result<Served, String> {
    let (outcome, largest) = largest_allocation_in(|| process_safely(processor, wire, message));
    if largest > ALLOCATION_LIMIT {
        return Err(format!("an allocation of {largest} bytes"));
    }
    if outcome.consumed > message.len() {
        return Err(format!(
            "consumed {} of {} bytes",
            outcome.consumed,
            message.len()
        ));
    }
    let answer = match outcome.result {
        Err(error) if outcome.output.is_empty() => Answer::Refused(error.to_string()),
        Err(error) => return Err(format!("wrote a reply, then failed: {error}")),
        Ok(()) => {
            let replies = decode_replies(wire, &outcome.output)
                .map_err(|error| format!("the reply does not decode: {error}"))?;
            let [reply] = replies.as_slice() else {
                return Err(format!("{} replies to one message", replies.len()));
            };
            let request = request_header(wire, message)
                .ok_or("answered a message whose header does not parse")?;
            if (&reply.header.name, reply.header.sequence_number)
                != (&request.name, request.sequence_number)
            {
                return Err(format!("{:?} answers {request:?}", reply.header));
            }
            match reply.header.message_type {
                TMessageType::Reply => Answer::Reply(reply.body.clone()),
                TMessageType::Exception => {
                    let (text, kind) = reply
                        .application_error()
                        .ok_or("an EXCEPTION without message and type")?;
                    Answer::Exception(String::from_utf8_lossy(&text).into_owned(), kind)
                }
                other => return Err(format!("a reply of type {other:?}")),
            }
        }
    };
    Ok(Served {
        answer,
        consumed: outcome.consumed,
    })
}

fn serve_one(processor: &dyn TProcessor, wire: Wire, message: &[u8]) -> Served {
    match check_one(processor, wire, message) {
        Ok(served) => served,
        Err(problem) => panic!("{wire:?}: {problem}; message {message:02x?}"),
    }
}

fn call_bytes(wire: Wire, name: &'static str, fields: Vec<(i16, Value)>) -> Vec<u8> {
    match encode_calls(wire, &[Call::new(name, 17, fields)]) {
        Ok(bytes) => bytes,
        Err(error) => panic!("{wire:?}: cannot encode {name}: {error}"),
    }
}

/// Serves one well-encoded call whose arguments decode to the end of the
/// message (failing checks, if any, come after the last field).
fn serve_call(
    processor: &dyn TProcessor,
    wire: Wire,
    name: &'static str,
    fields: Vec<(i16, Value)>,
) -> Answer {
    let message = call_bytes(wire, name, fields);
    let served = serve_one(processor, wire, &message);
    assert_eq!(
        served.consumed,
        message.len(),
        "{wire:?} {name}: message not read to its end"
    );
    served.answer
}

/// Serves one well-encoded call whose decoding may stop early (inside a
/// nested struct); the gateway discards the rest of the buffered message.
fn serve_call_partly(
    processor: &dyn TProcessor,
    wire: Wire,
    name: &'static str,
    fields: Vec<(i16, Value)>,
) -> Answer {
    serve_one(processor, wire, &call_bytes(wire, name, fields)).answer
}

// ---------------------------------------------------------------------------
// Hand-built encodings, for what no well-behaved writer produces

mod raw {
    use super::Wire;
    use thrift::protocol::TType;

    fn binary_code(value_type: TType) -> u8 {
        match value_type {
            TType::Bool => 0x02,
            TType::I08 => 0x03,
            TType::Double => 0x04,
            TType::I16 => 0x06,
            TType::I32 => 0x08,
            TType::I64 => 0x0A,
            TType::String => 0x0B,
            TType::Struct => 0x0C,
            TType::Map => 0x0D,
            TType::Set => 0x0E,
            TType::List => 0x0F,
            other => panic!("no binary code for {other:?} in these tests"),
        }
    }

    fn compact_code(value_type: TType) -> u8 {
        match value_type {
            TType::Bool => 0x01,
            TType::I08 => 0x03,
            TType::I16 => 0x04,
            TType::I32 => 0x05,
            TType::I64 => 0x06,
            TType::Double => 0x07,
            TType::String => 0x08,
            TType::List => 0x09,
            TType::Set => 0x0A,
            TType::Map => 0x0B,
            TType::Struct => 0x0C,
            other => panic!("no compact code for {other:?} in these tests"),
        }
    }

    fn varint(mut value: u32) -> Vec<u8> {
        let mut bytes = Vec::new();
        while value >= 0x80 {
            bytes.push((value as u8 & 0x7f) | 0x80);
            value >>= 7;
        }
        bytes.push(value as u8);
        bytes
    }

    fn is_binary(wire: Wire) -> bool {
        wire != Wire::Compact
    }

    /// A CALL message: header, then `args` (raw field bytes) and STOP.
    pub fn call(wire: Wire, name: &str, seqid: i32, args: &[u8]) -> Vec<u8> {
        let mut bytes = Vec::new();
        let name_len = name.len() as i32;
        match wire {
            Wire::BinaryStrict => {
                bytes.extend_from_slice(&[0x80, 0x01, 0x00, 0x01]);
                bytes.extend_from_slice(&name_len.to_be_bytes());
                bytes.extend_from_slice(name.as_bytes());
                bytes.extend_from_slice(&seqid.to_be_bytes());
            }
            Wire::BinaryNonStrict => {
                bytes.extend_from_slice(&name_len.to_be_bytes());
                bytes.extend_from_slice(name.as_bytes());
                bytes.push(0x01);
                bytes.extend_from_slice(&seqid.to_be_bytes());
            }
            Wire::Compact => {
                bytes.extend_from_slice(&[0x82, 0x21]);
                bytes.extend(varint(seqid as u32));
                bytes.extend(varint(name.len() as u32));
                bytes.extend_from_slice(name.as_bytes());
            }
        }
        bytes.extend_from_slice(args);
        bytes.push(0);
        bytes
    }

    /// A field header (compact: the long form with an explicit id). Not for
    /// compact bools, whose value travels in the header.
    pub fn field(wire: Wire, field_type: TType, id: i16) -> Vec<u8> {
        if is_binary(wire) {
            let mut bytes = vec![binary_code(field_type)];
            bytes.extend_from_slice(&id.to_be_bytes());
            bytes
        } else {
            let mut bytes = vec![compact_code(field_type)];
            bytes.extend(varint(((id << 1) ^ (id >> 15)) as u16 as u32));
            bytes
        }
    }

    pub fn stop() -> Vec<u8> {
        vec![0]
    }

    /// A string's length prefix. Compact sends the 32 bits as an unsigned
    /// varint, so -1 there is 2^32 - 1.
    pub fn string_length(wire: Wire, length: i32) -> Vec<u8> {
        if is_binary(wire) {
            length.to_be_bytes().to_vec()
        } else {
            varint(length as u32)
        }
    }

    pub fn string(wire: Wire, text: &[u8]) -> Vec<u8> {
        let mut bytes = string_length(wire, text.len() as i32);
        bytes.extend_from_slice(text);
        bytes
    }

    /// A list or set header (compact: the long size form).
    pub fn list_header(wire: Wire, element_type: TType, size: i32) -> Vec<u8> {
        if is_binary(wire) {
            let mut bytes = vec![binary_code(element_type)];
            bytes.extend_from_slice(&size.to_be_bytes());
            bytes
        } else {
            let mut bytes = vec![0xf0 | compact_code(element_type)];
            bytes.extend(varint(size as u32));
            bytes
        }
    }

    pub fn map_header(wire: Wire, key_type: TType, value_type: TType, size: i32) -> Vec<u8> {
        if is_binary(wire) {
            let mut bytes = vec![binary_code(key_type), binary_code(value_type)];
            bytes.extend_from_slice(&size.to_be_bytes());
            bytes
        } else {
            let mut bytes = varint(size as u32);
            bytes.push((compact_code(key_type) << 4) | compact_code(value_type));
            bytes
        }
    }
}

fn concat(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.concat()
}

// ---------------------------------------------------------------------------
// Lengths and sizes from the wire

const HOSTILE_SIZES: [i32; 5] = [-1, i32::MIN, i32::MAX, 1 << 20, 100];

#[test]
fn negative_and_oversized_string_lengths_get_protocol_error() {
    for wire in ALL_WIRES {
        let handler = HbaseHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        for length in HOSTILE_SIZES {
            // Known argument, then an unknown field that would be skipped.
            for id in [1, 9] {
                let args = concat(&[
                    raw::field(wire, TType::String, id),
                    raw::string_length(wire, length),
                    b"abc".to_vec(),
                ]);
                let message = raw::call(wire, "isTableEnabled", 3, &args);
                let answer = serve_one(&processor, wire, &message).answer;
                assert_eq!(
                    answer.exception_kind(),
                    Some(PROTOCOL_ERROR),
                    "{wire:?} length {length} field {id}: {answer:?}"
                );
            }
        }
        assert!(handler.log().is_empty(), "{wire:?}: {:?}", handler.log());
    }
}

#[test]
fn negative_and_huge_container_sizes_get_protocol_error() {
    for wire in ALL_WIRES {
        let handler = HbaseHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        let leading = concat(&[
            raw::field(wire, TType::String, 1),
            raw::string(wire, b"t"),
            raw::field(wire, TType::String, 2),
            raw::string(wire, b"r"),
        ]);
        for size in HOSTILE_SIZES {
            let containers = [
                // columns: list<binary>, as declared.
                concat(&[
                    raw::field(wire, TType::List, 3),
                    raw::list_header(wire, TType::String, size),
                ]),
                // columns with another element type: skipped element by element.
                concat(&[
                    raw::field(wire, TType::List, 3),
                    raw::list_header(wire, TType::I64, size),
                ]),
                // attributes: map<binary, binary>, as declared.
                concat(&[
                    raw::field(wire, TType::Map, 4),
                    raw::map_header(wire, TType::String, TType::String, size),
                ]),
                // attributes with another value type.
                concat(&[
                    raw::field(wire, TType::Map, 4),
                    raw::map_header(wire, TType::String, TType::Struct, size),
                ]),
                // An unknown set of structs.
                concat(&[
                    raw::field(wire, TType::Set, 30),
                    raw::list_header(wire, TType::Struct, size),
                ]),
            ];
            for container in containers {
                let args = concat(&[leading.clone(), container, vec![0; 8]]);
                let message = raw::call(wire, "getRowWithColumns", 4, &args);
                let answer = serve_one(&processor, wire, &message).answer;
                assert_eq!(
                    answer.exception_kind(),
                    Some(PROTOCOL_ERROR),
                    "{wire:?} size {size}: {answer:?}"
                );
            }
        }
        assert!(handler.log().is_empty(), "{wire:?}: {:?}", handler.log());
    }
}

#[test]
fn container_sizes_in_nested_structs_are_checked_too() {
    for wire in ALL_WIRES {
        let handler = Hbase2Handler::default();
        let processor = THBaseServiceSyncProcessor::new(&handler);
        for size in [i32::MAX, -1] {
            // put(table, TPut { row, columnValues: list<TColumnValue> of `size` })
            let args = concat(&[
                raw::field(wire, TType::String, 1),
                raw::string(wire, b"t"),
                raw::field(wire, TType::Struct, 2),
                raw::field(wire, TType::String, 1),
                raw::string(wire, b"r"),
                raw::field(wire, TType::List, 2),
                raw::list_header(wire, TType::Struct, size),
                raw::stop(),
                raw::stop(),
            ]);
            let message = raw::call(wire, "put", 5, &args);
            let answer = serve_one(&processor, wire, &message).answer;
            assert_eq!(
                answer.exception_kind(),
                Some(PROTOCOL_ERROR),
                "{wire:?}: {answer:?}"
            );
        }
        assert!(handler.log().is_empty());
    }
}

// ---------------------------------------------------------------------------
// Wrong wire types

#[test]
fn known_arguments_of_the_wrong_type_are_skipped() {
    for wire in ALL_WIRES {
        let handler = HbaseHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        // tableName sent as an i32: skipped, so the handler sees "" (not
        // found) instead of bytes read from the integer.
        let answer = serve_call(
            &processor,
            wire,
            "isTableEnabled",
            vec![(1, Value::I32(0x74))],
        );
        let Answer::Reply(body) = answer else {
            panic!("{wire:?}: {answer:?}")
        };
        assert_eq!(body.field_ids(), vec![1], "{wire:?}: IOError expected");

        // Wrong scalar type, wrong list element type, wrong map value type;
        // the well-typed tableName after them still decodes.
        let answer = serve_call(
            &processor,
            wire,
            "getRowWithColumns",
            vec![
                (2, Value::I64(7)),
                (
                    3,
                    Value::List(TType::I32, vec![Value::I32(1), Value::I32(2)]),
                ),
                (
                    4,
                    Value::Map(
                        TType::String,
                        TType::I32,
                        vec![(Value::bytes(b"k"), Value::I32(1))],
                    ),
                ),
                (1, Value::bytes(b"t")),
            ],
        );
        assert!(matches!(answer, Answer::Reply(_)), "{wire:?}: {answer:?}");
        // The same call, well typed.
        let answer = serve_call(
            &processor,
            wire,
            "getRowWithColumns",
            vec![
                (1, Value::bytes(b"t")),
                (2, Value::bytes(b"r")),
                (3, Value::List(TType::String, vec![Value::bytes(b"cf:a")])),
                (
                    4,
                    Value::Map(
                        TType::String,
                        TType::String,
                        vec![(Value::bytes(b"k"), Value::bytes(b"v"))],
                    ),
                ),
            ],
        );
        assert!(matches!(answer, Answer::Reply(_)), "{wire:?}: {answer:?}");

        // A required struct argument sent as a string: skipped, then
        // missing, so PROTOCOL_ERROR - with the message read to its end.
        let answer = serve_call(&processor, wire, "grant", vec![(1, Value::bytes(b"x"))]);
        assert_eq!(answer.exception_kind(), Some(PROTOCOL_ERROR), "{wire:?}");

        assert_eq!(
            handler.log(),
            vec![
                "isTableEnabled ",
                "getRowWithColumns t  columns=0 attributes=0",
                "getRowWithColumns t r columns=1 attributes=1",
            ],
            "{wire:?}"
        );
    }
}

#[test]
fn struct_fields_of_the_wrong_type_are_skipped() {
    for wire in ALL_WIRES {
        let handler = HbaseHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        let check_and_put = |write_to_wal: Value| {
            vec![
                (1, Value::bytes(b"t")),
                (2, Value::bytes(b"r")),
                (3, Value::bytes(b"cf:q")),
                (
                    6,
                    Value::structure(vec![
                        (2, Value::bytes(b"cf:q")),
                        (3, Value::bytes(b"v")),
                        (4, write_to_wal),
                    ]),
                ),
            ]
        };
        for write_to_wal in [Value::I32(1), Value::bytes(&[1]), Value::Bool(true)] {
            let answer = serve_call(&processor, wire, "checkAndPut", check_and_put(write_to_wal));
            assert!(matches!(answer, Answer::Reply(_)), "{wire:?}: {answer:?}");
        }
        assert_eq!(
            handler.log(),
            vec![
                "checkAndPut cf:q value_len=0 write_to_wal=Some(false)",
                "checkAndPut cf:q value_len=0 write_to_wal=Some(false)",
                "checkAndPut cf:q value_len=0 write_to_wal=Some(true)",
            ],
            "{wire:?}"
        );

        let handler = Hbase2Handler::default();
        let processor = THBaseServiceSyncProcessor::new(&handler);
        let get = |max_versions: Value| {
            vec![
                (1, Value::bytes(b"t")),
                (
                    2,
                    Value::structure(vec![(1, Value::bytes(b"r")), (5, max_versions)]),
                ),
            ]
        };
        for max_versions in [
            Value::bytes(b"\x00\x00\x00\x03"),
            Value::I64(3),
            Value::I32(3),
        ] {
            let answer = serve_call(&processor, wire, "get", get(max_versions));
            assert!(matches!(answer, Answer::Reply(_)), "{wire:?}: {answer:?}");
        }
        // TGet.row is required: sent as an i64 it is skipped, then missing.
        let answer = serve_call_partly(
            &processor,
            wire,
            "get",
            vec![
                (1, Value::bytes(b"t")),
                (2, Value::structure(vec![(1, Value::I64(1))])),
            ],
        );
        assert_eq!(answer.exception_kind(), Some(PROTOCOL_ERROR), "{wire:?}");
        assert_eq!(
            handler.log(),
            vec![
                "get t r max_versions=None",
                "get t r max_versions=None",
                "get t r max_versions=Some(3)",
            ],
            "{wire:?}"
        );
    }
}

/// In the compact protocol a bool field carries its value in the type code
/// (1 true, 2 false); both must be skipped as one header byte when the field
/// is declared with another type.
#[test]
fn bool_fields_where_another_type_is_declared_are_skipped() {
    for wire in ALL_WIRES {
        let handler = HbaseHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        for flag in [true, false] {
            let answer = serve_call(
                &processor,
                wire,
                "getRowWithColumns",
                vec![
                    (1, Value::Bool(flag)),
                    (2, Value::bytes(b"r")),
                    (3, Value::List(TType::Bool, vec![Value::Bool(flag); 3])),
                    (4, Value::Bool(!flag)),
                ],
            );
            assert!(matches!(answer, Answer::Reply(_)), "{wire:?}: {answer:?}");
        }
        assert_eq!(
            handler.log(),
            vec!["getRowWithColumns  r columns=0 attributes=0"; 2],
            "{wire:?}"
        );
    }
}

#[test]
fn union_without_a_known_field_is_a_protocol_error() {
    let put = Value::structure(vec![
        (1, Value::bytes(b"r")),
        (2, Value::List(TType::Struct, Vec::new())),
    ]);
    let row_mutations = |mutation: Value| {
        vec![
            (1, Value::bytes(b"t")),
            (
                2,
                Value::structure(vec![
                    (1, Value::bytes(b"r")),
                    (2, Value::List(TType::Struct, vec![mutation])),
                ]),
            ),
        ]
    };
    for wire in ALL_WIRES {
        let handler = Hbase2Handler::default();
        let processor = THBaseServiceSyncProcessor::new(&handler);
        let answer = serve_call(
            &processor,
            wire,
            "mutateRow",
            row_mutations(Value::structure(vec![(1, put.clone())])),
        );
        assert_eq!(
            answer,
            Answer::Reply(Value::structure(Vec::new())),
            "{wire:?}"
        );
        // Only an unknown field, only a wrongly typed `put`, or nothing.
        for mutation in [
            Value::structure(vec![(9, Value::I32(1))]),
            Value::structure(vec![(1, Value::I32(1))]),
            Value::structure(Vec::new()),
        ] {
            let answer = serve_call_partly(&processor, wire, "mutateRow", row_mutations(mutation));
            assert_eq!(
                answer.exception_kind(),
                Some(PROTOCOL_ERROR),
                "{wire:?}: {answer:?}"
            );
        }
        assert_eq!(handler.log(), vec!["mutateRow t [\"put\"]"], "{wire:?}");
    }
}

/// Result readers (used by the generated clients) skip a result of the wrong
/// type instead of decoding it: the call fails with MISSING_RESULT.
#[test]
fn client_skips_a_result_of_the_wrong_type() {
    fn is_table_enabled(wire: Wire, result: Value) -> thrift::Result<bool> {
        let header = TMessageIdentifier::new("isTableEnabled", TMessageType::Reply, 1);
        let reply = encode_message(wire, &header, &[(0, result)])?;
        match wire {
            Wire::BinaryStrict | Wire::BinaryNonStrict => {
                let output = TBinaryOutputProtocol::new(Vec::new(), true);
                HbaseSyncClient::new(binary_input(&reply), output).is_table_enabled(b"t".to_vec())
            }
            Wire::Compact => {
                let output = TCompactOutputProtocol::new(Vec::new());
                HbaseSyncClient::new(compact_input(&reply), output).is_table_enabled(b"t".to_vec())
            }
        }
    }
    for wire in ALL_WIRES {
        assert_eq!(is_table_enabled(wire, Value::Bool(true)).ok(), Some(true));
        for wrong in [
            Value::I32(1),
            Value::bytes(&[1]),
            Value::structure(Vec::new()),
        ] {
            match is_table_enabled(wire, wrong) {
                Err(thrift::Error::Application(error)) => {
                    assert_eq!(error.kind, ApplicationErrorKind::MissingResult, "{wire:?}")
                }
                other => panic!("{wire:?}: expected MISSING_RESULT, got {other:?}"),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Nesting

/// An unknown field 99 holding `levels` nested lists, after tableName "t".
fn nested_lists(wire: Wire, levels: usize) -> Vec<u8> {
    let mut args = concat(&[
        raw::field(wire, TType::String, 1),
        raw::string(wire, b"t"),
        raw::field(wire, TType::List, 99),
    ]);
    for _ in 1..levels {
        args.extend(raw::list_header(wire, TType::List, 1));
    }
    args.extend(raw::list_header(wire, TType::I32, 0));
    raw::call(wire, "isTableEnabled", 8, &args)
}

/// An unknown field 99 holding `levels` nested structs, after tableName "t".
fn nested_structs(wire: Wire, levels: usize) -> Vec<u8> {
    let mut args = concat(&[
        raw::field(wire, TType::String, 1),
        raw::string(wire, b"t"),
        raw::field(wire, TType::Struct, 99),
    ]);
    for _ in 1..levels {
        args.extend(raw::field(wire, TType::Struct, 1));
    }
    for _ in 0..levels {
        args.extend(raw::stop());
    }
    raw::call(wire, "isTableEnabled", 8, &args)
}

#[test]
fn nesting_is_bounded_at_the_limit() {
    for wire in ALL_WIRES {
        let handler = HbaseHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        for build in [nested_lists, nested_structs] {
            // The argument struct is level 1, so the field may nest 63 more.
            let deepest = build(wire, MAX_NESTING_DEPTH - 1);
            let served = serve_one(&processor, wire, &deepest);
            assert_eq!(served.consumed, deepest.len(), "{wire:?}");
            let Answer::Reply(body) = served.answer else {
                panic!("{wire:?}: {:?}", served.answer)
            };
            assert_eq!(body.field(0), Some(&Value::Bool(true)), "{wire:?}");

            for levels in [MAX_NESTING_DEPTH, 10_000] {
                let message = build(wire, levels);
                match serve_one(&processor, wire, &message).answer {
                    Answer::Exception(text, PROTOCOL_ERROR) => {
                        assert!(text.contains("nested deeper than 64 levels"), "{text}")
                    }
                    other => panic!("{wire:?} {levels} levels: {other:?}"),
                }
            }
        }
        assert_eq!(handler.log(), vec!["isTableEnabled t"; 2], "{wire:?}");
    }
}

// ---------------------------------------------------------------------------
// Every method, and random and mutated messages

/// The method names of the service in `idl`: each declaration is the last
/// word before the first `(` on a line of the service body that is not a
/// comment, an argument or a `throws` clause.
fn method_names(idl: &str) -> Vec<String> {
    let Some((_, body)) = idl.split_once("\nservice ") else {
        return Vec::new();
    };
    body.lines()
        .map(str::trim)
        .filter(|line| {
            !(line.starts_with('/')
                || line.starts_with('*')
                || line.starts_with(')')
                || line.starts_with("throws")
                || line.starts_with(|c: char| c.is_ascii_digit()))
        })
        .filter_map(|line| line.split_once('(').map(|(head, _)| head))
        .filter_map(|head| head.split_whitespace().last())
        .map(str::to_owned)
        .collect()
}

fn hbase_methods() -> Vec<String> {
    method_names(include_str!("../idl/hbase.thrift"))
}

fn hbase2_methods() -> Vec<String> {
    method_names(include_str!("../idl/hbase2.thrift"))
}

/// Every IDL method is known to its processor and answers a call with no
/// arguments with a REPLY or an EXCEPTION other than UNKNOWN_METHOD.
#[test]
fn every_method_answers_a_call_without_arguments() {
    let hbase = HbaseHandler::default();
    let hbase2 = Hbase2Handler::default();
    let services: [(&dyn TProcessor, Vec<String>); 2] = [
        (&HbaseSyncProcessor::new(&hbase), hbase_methods()),
        (&THBaseServiceSyncProcessor::new(&hbase2), hbase2_methods()),
    ];
    for (processor, methods) in services {
        assert!(methods.len() > 40, "parsed {} methods", methods.len());
        for wire in ALL_WIRES {
            for method in &methods {
                let message = raw::call(wire, method, 1, &[]);
                let served = serve_one(processor, wire, &message);
                assert_eq!(served.consumed, message.len(), "{wire:?} {method}");
                match served.answer {
                    Answer::Reply(_) => {}
                    Answer::Exception(text, kind) => {
                        assert_ne!(kind, UNKNOWN_METHOD, "{wire:?} {method}: {text}")
                    }
                    Answer::Refused(error) => panic!("{wire:?} {method}: {error}"),
                }
            }
        }
    }
}

fn wire() -> impl Strategy<Value = Wire> {
    prop_oneof![
        Just(Wire::BinaryStrict),
        Just(Wire::BinaryNonStrict),
        Just(Wire::Compact)
    ]
}

/// Runs `message` through both processors (fresh handlers).
fn check_both(wire: Wire, message: &[u8]) -> Result<(), TestCaseError> {
    let hbase = HbaseHandler::default();
    let hbase2 = Hbase2Handler::default();
    let processors: [&dyn TProcessor; 2] = [
        &HbaseSyncProcessor::new(&hbase),
        &THBaseServiceSyncProcessor::new(&hbase2),
    ];
    for processor in processors {
        check_one(processor, wire, message).map_err(TestCaseError::fail)?;
    }
    Ok(())
}

/// Which processor a seed call is meant for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Service {
    Thrift1,
    Thrift2,
}

/// Valid calls with nested structs, lists, maps, sets and a union, for both
/// services; the seeds the mutation test corrupts.
fn seed_calls() -> Vec<(Service, Call)> {
    let column_value = Value::structure(vec![
        (1, Value::bytes(b"cf")),
        (2, Value::bytes(b"q")),
        (3, Value::bytes(b"value")),
        (4, Value::I64(1_700_000_000_000)),
        (6, Value::I8(4)),
    ]);
    let put = Value::structure(vec![
        (1, Value::bytes(b"row")),
        (
            2,
            Value::List(TType::Struct, vec![column_value.clone(), column_value]),
        ),
        (3, Value::I64(5)),
        (
            5,
            Value::Map(
                TType::String,
                TType::String,
                vec![(Value::bytes(b"k"), Value::bytes(b"v"))],
            ),
        ),
        (6, Value::I32(1)),
    ]);
    let tget = Value::structure(vec![
        (1, Value::bytes(b"row")),
        (
            2,
            Value::List(
                TType::Struct,
                vec![Value::structure(vec![(1, Value::bytes(b"cf"))])],
            ),
        ),
        (
            4,
            Value::structure(vec![(1, Value::I64(0)), (2, Value::I64(i64::MAX))]),
        ),
        (5, Value::I32(3)),
        (11, Value::Bool(true)),
    ]);
    let mutation = Value::structure(vec![
        (1, Value::Bool(false)),
        (2, Value::bytes(b"cf:q")),
        (3, Value::bytes(b"v")),
        (4, Value::Bool(true)),
    ]);
    let attributes = || {
        Value::Map(
            TType::String,
            TType::String,
            vec![
                (Value::bytes(b"a"), Value::bytes(b"1")),
                (Value::bytes(b"b"), Value::bytes(b"2")),
            ],
        )
    };
    vec![
        // Thrift1.
        (
            Service::Thrift1,
            Call::new(
                "mutateRows",
                1,
                vec![
                    (1, Value::bytes(b"t")),
                    (
                        2,
                        Value::List(
                            TType::Struct,
                            vec![Value::structure(vec![
                                (1, Value::bytes(b"r")),
                                (2, Value::List(TType::Struct, vec![mutation.clone()])),
                            ])],
                        ),
                    ),
                    (3, attributes()),
                ],
            ),
        ),
        (
            Service::Thrift1,
            Call::new(
                "scannerOpenWithScan",
                2,
                vec![
                    (1, Value::bytes(b"t")),
                    (
                        2,
                        Value::structure(vec![
                            (1, Value::bytes(b"a")),
                            (4, Value::List(TType::String, vec![Value::bytes(b"cf")])),
                            (5, Value::I32(100)),
                            (9, Value::Bool(true)),
                        ]),
                    ),
                    (3, attributes()),
                ],
            ),
        ),
        (
            Service::Thrift1,
            Call::new(
                "getRowWithColumns",
                3,
                vec![
                    (1, Value::bytes(b"t")),
                    (2, Value::bytes(b"r")),
                    (3, Value::List(TType::String, vec![Value::bytes(b"cf:a")])),
                    (4, attributes()),
                ],
            ),
        ),
        (
            Service::Thrift1,
            Call::new(
                "checkAndPut",
                4,
                vec![
                    (1, Value::bytes(b"t")),
                    (2, Value::bytes(b"r")),
                    (3, Value::bytes(b"cf:q")),
                    (5, Value::bytes(b"old")),
                    (6, mutation),
                ],
            ),
        ),
        // Thrift2.
        (
            Service::Thrift2,
            Call::new("put", 5, vec![(1, Value::bytes(b"t")), (2, put.clone())]),
        ),
        (
            Service::Thrift2,
            Call::new(
                "mutateRow",
                6,
                vec![
                    (1, Value::bytes(b"t")),
                    (
                        2,
                        Value::structure(vec![
                            (1, Value::bytes(b"row")),
                            (
                                2,
                                Value::List(TType::Struct, vec![Value::structure(vec![(1, put)])]),
                            ),
                        ]),
                    ),
                ],
            ),
        ),
        (
            Service::Thrift2,
            Call::new(
                "getMultiple",
                7,
                vec![
                    (1, Value::bytes(b"t")),
                    (
                        2,
                        Value::List(TType::Struct, vec![tget.clone(), tget.clone()]),
                    ),
                ],
            ),
        ),
        (
            Service::Thrift2,
            Call::new("get", 8, vec![(1, Value::bytes(b"t")), (2, tget)]),
        ),
        (
            Service::Thrift2,
            Call::new(
                "getSlowLogResponses",
                9,
                vec![
                    (
                        1,
                        Value::Set(
                            TType::Struct,
                            vec![Value::structure(vec![
                                (1, Value::bytes(b"host")),
                                (2, Value::I32(16020)),
                                (3, Value::I64(1)),
                            ])],
                        ),
                    ),
                    (2, Value::structure(vec![(5, Value::I32(10))])),
                ],
            ),
        ),
    ]
}

/// One way to corrupt a message; positions are taken modulo its length.
#[derive(Clone, Debug)]
enum Mutation {
    SetByte(usize, u8),
    FlipBit(usize, u8),
    /// Writes four bytes: a hostile i32 in big-endian or a long varint.
    Overwrite(usize, [u8; 4]),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
}

fn hostile_word() -> impl Strategy<Value = [u8; 4]> {
    prop_oneof![
        Just((-1_i32).to_be_bytes()),
        Just(i32::MIN.to_be_bytes()),
        Just(i32::MAX.to_be_bytes()),
        Just(0x0001_0000_i32.to_be_bytes()),
        Just([0xff, 0xff, 0xff, 0x0f]),
        Just([0xff, 0xff, 0xff, 0xff]),
        any::<[u8; 4]>(),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let special = prop_oneof![
        Just(0x00_u8),
        Just(0x7f),
        Just(0x80),
        Just(0xff),
        Just(0x0f),
        Just(0xf0),
        any::<u8>()
    ];
    prop_oneof![
        (any::<usize>(), special).prop_map(|(at, byte)| Mutation::SetByte(at, byte)),
        (any::<usize>(), 0_u8..8).prop_map(|(at, bit)| Mutation::FlipBit(at, bit)),
        (any::<usize>(), hostile_word()).prop_map(|(at, word)| Mutation::Overwrite(at, word)),
        (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..8))
            .prop_map(|(at, bytes)| Mutation::Insert(at, bytes)),
        (any::<usize>(), 1_usize..8).prop_map(|(at, len)| Mutation::Delete(at, len)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn apply(message: &mut Vec<u8>, mutation: &Mutation) {
    let len = message.len().max(1);
    match mutation {
        Mutation::SetByte(at, byte) => {
            if let Some(slot) = message.get_mut(at % len) {
                *slot = *byte;
            }
        }
        Mutation::FlipBit(at, bit) => {
            if let Some(slot) = message.get_mut(at % len) {
                *slot ^= 1 << bit;
            }
        }
        Mutation::Overwrite(at, word) => {
            for (offset, byte) in word.iter().enumerate() {
                if let Some(slot) = message.get_mut(at % len + offset) {
                    *slot = *byte;
                }
            }
        }
        Mutation::Insert(at, bytes) => {
            let at = at % (message.len() + 1);
            message.splice(at..at, bytes.iter().copied());
        }
        Mutation::Delete(at, count) => {
            let at = at % len;
            let end = (at + count).min(message.len());
            if at < end {
                message.drain(at..end);
            }
        }
        Mutation::Truncate(at) => message.truncate(at % len),
    }
}

proptest! {
    /// Arbitrary bytes: never a panic or a large allocation, and any answer
    /// is one well-formed reply to the call.
    #[test]
    fn random_bytes_are_answered_or_refused(
        wire in wire(),
        bytes in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        check_both(wire, &bytes)?;
    }

    /// A valid call header for a real method, then arbitrary argument bytes.
    #[test]
    fn random_arguments_to_real_methods_are_answered_or_refused(
        wire in wire(),
        pick in any::<usize>(),
        seqid in any::<i32>(),
        args in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let methods: Vec<String> = hbase_methods().into_iter().chain(hbase2_methods()).collect();
        let method = &methods[pick % methods.len()];
        let mut message = raw::call(wire, method, seqid, &args);
        // `raw::call` closes the struct; random arguments may close it earlier.
        message.pop();
        check_both(wire, &message)?;
    }

    /// Valid calls with a few corruptions each.
    #[test]
    fn mutated_valid_calls_are_answered_or_refused(
        wire in wire(),
        pick in any::<usize>(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let seeds = seed_calls();
        let (_, seed) = &seeds[pick % seeds.len()];
        let mut message = encode_calls(wire, std::slice::from_ref(seed))
            .map_err(|error| TestCaseError::fail(error.to_string()))?;
        for mutation in &mutations {
            apply(&mut message, mutation);
        }
        check_both(wire, &message)?;
    }
}

/// The seeds themselves are valid: each gets a REPLY or a handler's
/// EXCEPTION from its service, never PROTOCOL_ERROR.
#[test]
fn seed_calls_are_well_formed() {
    let hbase = HbaseHandler::default();
    let hbase2 = Hbase2Handler::default();
    let thrift1 = HbaseSyncProcessor::new(&hbase);
    let thrift2 = THBaseServiceSyncProcessor::new(&hbase2);
    for wire in ALL_WIRES {
        for (service, seed) in seed_calls() {
            let processor: &dyn TProcessor = match service {
                Service::Thrift1 => &thrift1,
                Service::Thrift2 => &thrift2,
            };
            let answer = serve_call(processor, wire, seed.name, seed.args.clone());
            assert_ne!(
                answer.exception_kind(),
                Some(PROTOCOL_ERROR),
                "{wire:?} {}",
                seed.name
            );
            assert_ne!(
                answer.exception_kind(),
                Some(UNKNOWN_METHOD),
                "{wire:?} {}",
                seed.name
            );
            assert!(
                !matches!(answer, Answer::Refused(_)),
                "{wire:?} {}",
                seed.name
            );
        }
    }
    assert_eq!(
        hbase.log().len(),
        3 * 3,
        "Thrift1 seeds reaching recording methods"
    );
    // Of the Thrift2 seeds, mutateRow and get reach recording handlers.
    assert_eq!(
        hbase2.log().len(),
        2 * 3,
        "Thrift2 seeds reaching recording methods: {:?}",
        hbase2.log()
    );
}
