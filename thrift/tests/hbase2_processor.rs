//! Round trips through the generated Thrift2 `THBaseServiceSyncProcessor`
//! over in-memory transports, for binary strict, binary non-strict and
//! compact calls: success replies, TIOError and TIllegalArgument inside REPLY
//! messages, unknown methods, absent arguments (IDL defaults) and missing
//! `required` arguments.

mod common;

use common::hbase2_handler::TestHandler;
use common::{
    assert_header, decode_replies, encode_calls, round_trip, serve, Call, Value, ALL_WIRES,
};
use tabula_thrift::hbase2::THBaseServiceSyncProcessor;
use thrift::protocol::{TMessageType, TType};

const UNKNOWN_METHOD: i32 = 1;
const PROTOCOL_ERROR: i32 = 7;

fn get_args(table: &[u8], row: &[u8]) -> Vec<(i16, Value)> {
    vec![
        (1, Value::bytes(table)),
        (2, Value::structure(vec![(1, Value::bytes(row))])),
    ]
}

#[test]
fn success_declared_errors_and_unknown_method_on_every_wire() {
    for wire in ALL_WIRES {
        let handler = TestHandler::default();
        let processor = THBaseServiceSyncProcessor::new(&handler);
        let replies = round_trip(
            &processor,
            wire,
            &[
                Call::new("get", 0, get_args(b"t", b"r1")),
                Call::new("get", 0, get_args(b"nope", b"r1")),
                Call::new(
                    "getScannerRows",
                    41,
                    vec![(1, Value::I32(99)), (2, Value::I32(10))],
                ),
                // A Thrift1 call on a Thrift2 port, with a non-UTF-8 row key.
                Call::new(
                    "scannerOpenWithScan",
                    42,
                    vec![
                        (1, Value::bytes(b"t")),
                        (
                            2,
                            Value::structure(vec![(1, Value::Bytes(vec![0x80, 0xff]))]),
                        ),
                        (3, Value::Map(TType::String, TType::String, Vec::new())),
                    ],
                ),
                Call::new("getThriftServerType", 43, Vec::new()),
            ],
        );
        assert_eq!(replies.len(), 5, "{wire:?}");

        // Success, sequence id 0 as thriftpy2 sends it.
        assert_header(&replies[0], "get", 0, TMessageType::Reply);
        assert_eq!(replies[0].body.field_ids(), vec![0]);
        let cell = Value::structure(vec![
            (1, Value::bytes(b"cf")),
            (2, Value::bytes(b"q")),
            (3, Value::bytes(b"v")),
            (4, Value::I64(9)),
            (6, Value::I8(4)),
        ]);
        assert_eq!(
            replies[0].body.field(0),
            Some(&Value::structure(vec![
                (1, Value::bytes(b"r1")),
                (2, Value::List(TType::Struct, vec![cell])),
            ]))
        );

        // TIOError in field 1, canRetry included.
        assert_header(&replies[1], "get", 0, TMessageType::Reply);
        assert_eq!(
            replies[1].body.field(1),
            Some(&Value::structure(vec![
                (1, Value::bytes(b"table nope not found")),
                (2, Value::Bool(false)),
            ]))
        );
        assert_eq!(replies[1].body.field_ids(), vec![1]);

        // TIllegalArgument in field 2.
        assert_header(&replies[2], "getScannerRows", 41, TMessageType::Reply);
        assert_eq!(
            replies[2].body.field(2),
            Some(&Value::structure(vec![(
                1,
                Value::bytes(b"Invalid scanner Id")
            )]))
        );

        // Unknown method, then the connection goes on.
        assert_header(
            &replies[3],
            "scannerOpenWithScan",
            42,
            TMessageType::Exception,
        );
        assert_eq!(
            replies[3].application_error(),
            Some((
                b"Invalid method name: 'scannerOpenWithScan'".to_vec(),
                UNKNOWN_METHOD
            ))
        );
        assert_header(&replies[4], "getThriftServerType", 43, TMessageType::Reply);
        assert_eq!(replies[4].body.field(0), Some(&Value::I32(2)));
        assert_eq!(
            handler.log(),
            vec![
                "get t r1 max_versions=None",
                "get nope r1 max_versions=None",
                "getScannerRows 99 num_rows=10",
            ]
        );
    }
}

#[test]
fn absent_arguments_take_idl_defaults_or_empty_values() {
    for wire in ALL_WIRES {
        let handler = TestHandler::default();
        let processor = THBaseServiceSyncProcessor::new(&handler);
        let put = Value::structure(vec![
            (1, Value::bytes(b"r")),
            (2, Value::List(TType::Struct, Vec::new())),
        ]);
        let replies = round_trip(
            &processor,
            wire,
            &[
                // numRows omitted: the IDL default 1.
                Call::new("getScannerRows", 51, vec![(1, Value::I32(1))]),
                // value omitted: check for absence.
                Call::new(
                    "checkAndPut",
                    52,
                    vec![
                        (1, Value::bytes(b"t")),
                        (2, Value::bytes(b"r")),
                        (3, Value::bytes(b"cf")),
                        (4, Value::bytes(b"q")),
                        (6, put),
                    ],
                ),
                // regex omitted.
                Call::new("getTableNamesByPattern", 53, vec![(2, Value::Bool(true))]),
            ],
        );
        assert_header(&replies[0], "getScannerRows", 51, TMessageType::Reply);
        assert_eq!(
            replies[0].body.field(0),
            Some(&Value::List(TType::Struct, Vec::new()))
        );
        assert_header(&replies[1], "checkAndPut", 52, TMessageType::Reply);
        assert_eq!(replies[1].body.field(0), Some(&Value::Bool(false)));
        assert_header(
            &replies[2],
            "getTableNamesByPattern",
            53,
            TMessageType::Reply,
        );
        assert_eq!(
            replies[2].body.field(0),
            Some(&Value::List(
                TType::Struct,
                vec![Value::structure(vec![
                    (1, Value::bytes(b"default")),
                    (2, Value::bytes(b"t"))
                ])]
            ))
        );
        assert_eq!(
            handler.log(),
            vec![
                "getScannerRows 1 num_rows=1",
                "checkAndPut value_len=0 cells=0",
                "getTableNamesByPattern regex=\"\" sys=true",
            ]
        );
    }
}

#[test]
fn missing_required_arguments_get_protocol_error() {
    for wire in ALL_WIRES {
        let handler = TestHandler::default();
        let processor = THBaseServiceSyncProcessor::new(&handler);
        let replies = round_trip(
            &processor,
            wire,
            &[
                // `table` (required) missing.
                Call::new(
                    "get",
                    61,
                    vec![(2, Value::structure(vec![(1, Value::bytes(b"r"))]))],
                ),
                // tableExists' argument is not `required`, but an absent one
                // decodes as an empty TTableName, whose qualifier is required.
                Call::new("tableExists", 62, Vec::new()),
                Call::new("get", 63, get_args(b"t", b"r2")),
            ],
        );
        for (reply, (name, seqid)) in replies.iter().zip([("get", 61), ("tableExists", 62)]) {
            assert_header(reply, name, seqid, TMessageType::Exception);
            assert_eq!(
                reply.application_error().map(|(_, kind)| kind),
                Some(PROTOCOL_ERROR)
            );
        }
        assert_header(&replies[2], "get", 63, TMessageType::Reply);
        assert_eq!(handler.log(), vec!["get t r2 max_versions=None"]);
    }
}

/// A `required` field missing inside a nested struct (TGet.row) is reported
/// as PROTOCOL_ERROR, but decoding stops inside the argument struct, so the
/// rest of the message stays unread and the next read on that connection
/// fails: a server must close the connection after such an error.
#[test]
fn missing_nested_required_field_leaves_the_message_unfinished() {
    for wire in ALL_WIRES {
        let handler = TestHandler::default();
        let processor = THBaseServiceSyncProcessor::new(&handler);
        let call = Call::new(
            "get",
            71,
            vec![(1, Value::bytes(b"t")), (2, Value::structure(Vec::new()))],
        );
        let input = encode_calls(wire, &[call]).unwrap();
        let (results, output) = serve(&processor, wire, &input, 2);
        assert!(results[0].is_ok(), "{wire:?}: {:?}", results[0]);
        assert!(
            results[1].is_err(),
            "{wire:?}: the unread STOP byte must not parse as a call"
        );
        let replies = decode_replies(wire, &output).unwrap();
        assert_eq!(replies.len(), 1, "{wire:?}");
        assert_header(&replies[0], "get", 71, TMessageType::Exception);
        assert_eq!(
            replies[0].application_error().map(|(_, kind)| kind),
            Some(PROTOCOL_ERROR)
        );
        assert!(handler.log().is_empty());
    }
}
