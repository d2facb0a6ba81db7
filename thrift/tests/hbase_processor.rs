//! Round trips through the generated Thrift1 `HbaseSyncProcessor` over
//! in-memory transports, for binary strict, binary non-strict and compact
//! calls: success replies, declared exceptions inside REPLY messages, unknown
//! methods answered with UNKNOWN_METHOD without breaking the connection,
//! absent arguments, and the exception kinds of the other failure paths.

mod common;

use common::hbase_handler::TestHandler;
use common::{assert_header, round_trip, Call, Value, Wire, ALL_WIRES};
use proptest::prelude::*;
use tabula_thrift::hbase::HbaseSyncProcessor;
use thrift::protocol::{TMessageType, TType};

const UNKNOWN: i32 = 0;
const UNKNOWN_METHOD: i32 = 1;
const INTERNAL_ERROR: i32 = 6;
const PROTOCOL_ERROR: i32 = 7;

fn table_arg(name: &[u8]) -> Vec<(i16, Value)> {
    vec![(1, Value::bytes(name))]
}

/// Arguments of a call to a method the service does not have: a non-UTF-8
/// binary, a list of structs and a map, all of which must be skipped.
fn foreign_args() -> Vec<(i16, Value)> {
    vec![
        (1, Value::Bytes(vec![0xff, 0xfe, 0x00, 0xc3])),
        (
            2,
            Value::List(
                TType::Struct,
                vec![Value::structure(vec![
                    (1, Value::I64(-1)),
                    (2, Value::Bool(true)),
                ])],
            ),
        ),
        (
            3,
            Value::Map(
                TType::String,
                TType::String,
                vec![(Value::bytes(b"k"), Value::bytes(b"v"))],
            ),
        ),
    ]
}

#[test]
fn success_declared_error_and_unknown_method_on_every_wire() {
    for wire in ALL_WIRES {
        let handler = TestHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        let replies = round_trip(
            &processor,
            wire,
            &[
                Call::new("isTableEnabled", 7, table_arg(b"t")),
                Call::new("isTableEnabled", 8, table_arg(b"missing")),
                Call::new("getRowOrAfter", 9, foreign_args()),
                Call::new("isTableEnabled", 10, table_arg(b"disabled")),
            ],
        );
        assert_eq!(replies.len(), 4, "{wire:?}");

        // (1) Success: REPLY with the result in field 0 only.
        assert_header(&replies[0], "isTableEnabled", 7, TMessageType::Reply);
        assert_eq!(replies[0].body.field_ids(), vec![0]);
        assert_eq!(replies[0].body.field(0), Some(&Value::Bool(true)));

        // (2) Declared IOError: REPLY with the exception in field 1 only.
        assert_header(&replies[1], "isTableEnabled", 8, TMessageType::Reply);
        assert_eq!(replies[1].body.field_ids(), vec![1]);
        let io_error = replies[1].body.field(1).cloned();
        assert_eq!(
            io_error,
            Some(Value::structure(vec![
                (
                    1,
                    Value::bytes(b"org.apache.hadoop.hbase.TableNotFoundException: missing")
                ),
                (2, Value::Bool(false)),
            ]))
        );

        // (3) Unknown method: EXCEPTION UNKNOWN_METHOD with HBase's text, the
        // name and sequence id echoed ...
        assert_header(&replies[2], "getRowOrAfter", 9, TMessageType::Exception);
        assert_eq!(
            replies[2].application_error(),
            Some((
                b"Invalid method name: 'getRowOrAfter'".to_vec(),
                UNKNOWN_METHOD
            ))
        );

        // ... and the connection still serves the next call; `false` is a
        // result too, so field 0 is set.
        assert_header(&replies[3], "isTableEnabled", 10, TMessageType::Reply);
        assert_eq!(replies[3].body.field(0), Some(&Value::Bool(false)));
        assert_eq!(
            handler.log(),
            vec![
                "isTableEnabled t",
                "isTableEnabled missing",
                "isTableEnabled disabled"
            ]
        );
    }
}

#[test]
fn void_success_reply_is_an_empty_result_struct() {
    for wire in ALL_WIRES {
        let handler = TestHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        let replies = round_trip(
            &processor,
            wire,
            &[Call::new("deleteTable", 1, table_arg(b"t"))],
        );
        assert_header(&replies[0], "deleteTable", 1, TMessageType::Reply);
        assert_eq!(replies[0].body, Value::structure(Vec::new()));
        assert_eq!(handler.log(), vec!["deleteTable t"]);
    }
}

#[test]
fn absent_arguments_reach_the_handler_as_empty_values() {
    for wire in ALL_WIRES {
        let handler = TestHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        // happybase's `Table.row(key)` sends getRowWithColumns without
        // `columns` (None) - only arguments 1, 2 and 4 are present here, and
        // then only 1 and 2.
        let mput = Value::structure(vec![
            (1, Value::Bool(false)),
            (2, Value::bytes(b"cf:q")),
            (3, Value::bytes(b"new")),
        ]);
        let replies = round_trip(
            &processor,
            wire,
            &[
                Call::new(
                    "getRowWithColumns",
                    3,
                    vec![
                        (1, Value::bytes(b"t")),
                        (2, Value::bytes(b"r1")),
                        (4, Value::Map(TType::String, TType::String, Vec::new())),
                    ],
                ),
                Call::new(
                    "getRowWithColumns",
                    4,
                    vec![(1, Value::bytes(b"t")), (2, Value::bytes(b"r2"))],
                ),
                // scannerOpenWithScan without `scan`: an empty TScan.
                Call::new("scannerOpenWithScan", 6, vec![(1, Value::bytes(b"t"))]),
                // checkAndPut without `value` (argument 5).
                Call::new(
                    "checkAndPut",
                    5,
                    vec![
                        (1, Value::bytes(b"t")),
                        (2, Value::bytes(b"r")),
                        (3, Value::bytes(b"cf:q")),
                        (6, mput),
                    ],
                ),
            ],
        );
        assert_header(&replies[0], "getRowWithColumns", 3, TMessageType::Reply);
        assert_header(&replies[1], "getRowWithColumns", 4, TMessageType::Reply);
        let expected_row = |row: &[u8]| {
            Value::List(
                TType::Struct,
                vec![Value::structure(vec![
                    (1, Value::bytes(row)),
                    (
                        2,
                        Value::Map(
                            TType::String,
                            TType::Struct,
                            vec![(
                                Value::bytes(b"cf:a"),
                                Value::structure(vec![
                                    (1, Value::bytes(b"v")),
                                    (2, Value::I64(42)),
                                ]),
                            )],
                        ),
                    ),
                ])],
            )
        };
        assert_eq!(replies[0].body.field(0), Some(&expected_row(b"r1")));
        assert_eq!(replies[1].body.field(0), Some(&expected_row(b"r2")));
        assert_header(&replies[2], "scannerOpenWithScan", 6, TMessageType::Reply);
        assert_eq!(replies[2].body.field(0), Some(&Value::I32(5)));
        assert_header(&replies[3], "checkAndPut", 5, TMessageType::Reply);
        assert_eq!(replies[3].body.field(0), Some(&Value::Bool(true)));
        // Mutation.writeToWAL was absent: the generated reader yields
        // Some(false), not the IDL default `true`.
        assert_eq!(
            handler.log(),
            vec![
                "getRowWithColumns t r1 columns=0 attributes=0",
                "getRowWithColumns t r2 columns=0 attributes=0",
                "scannerOpenWithScan t start=None timestamp=None caching=None",
                "checkAndPut cf:q value_len=0 write_to_wal=Some(false)",
            ]
        );
    }
}

#[test]
fn declared_illegal_argument_travels_in_field_2() {
    for wire in ALL_WIRES {
        let handler = TestHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        let replies = round_trip(
            &processor,
            wire,
            &[
                Call::new("scannerGet", 21, vec![(1, Value::I32(99))]),
                Call::new("scannerGet", 22, vec![(1, Value::I32(1))]),
            ],
        );
        assert_header(&replies[0], "scannerGet", 21, TMessageType::Reply);
        assert_eq!(replies[0].body.field_ids(), vec![2]);
        assert_eq!(
            replies[0].body.field(2),
            Some(&Value::structure(vec![(
                1,
                Value::bytes(b"scanner ID is invalid")
            )]))
        );
        // An exhausted scanner: an empty list, still in field 0.
        assert_eq!(
            replies[1].body.field(0),
            Some(&Value::List(TType::Struct, Vec::new()))
        );
    }
}

#[test]
fn other_failures_become_application_exceptions() {
    for wire in ALL_WIRES {
        let handler = TestHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        let replies = round_trip(
            &processor,
            wire,
            &[
                // A user error the method does not declare.
                Call::new("getTableNames", 31, Vec::new()),
                // An application error chosen by the handler.
                Call::new("getRegionInfo", 32, vec![(1, Value::bytes(b"t,,1"))]),
                // A missing `required` argument: the struct is consumed, the
                // connection stays in sync.
                Call::new("grant", 33, Vec::new()),
                Call::new("getClusterId", 34, Vec::new()),
            ],
        );
        assert_header(&replies[0], "getTableNames", 31, TMessageType::Exception);
        assert_eq!(
            replies[0].application_error(),
            Some((b"remote service threw IllegalArgument".to_vec(), UNKNOWN))
        );
        assert_header(&replies[1], "getRegionInfo", 32, TMessageType::Exception);
        assert_eq!(
            replies[1].application_error(),
            Some((
                b"Internal error processing getRegionInfo".to_vec(),
                INTERNAL_ERROR
            ))
        );
        assert_header(&replies[2], "grant", 33, TMessageType::Exception);
        assert_eq!(
            replies[2].application_error().map(|(_, kind)| kind),
            Some(PROTOCOL_ERROR)
        );
        assert_header(&replies[3], "getClusterId", 34, TMessageType::Reply);
        assert_eq!(
            replies[3].body.field(0),
            Some(&Value::bytes(b"tabula-test-cluster"))
        );
        assert!(handler.log().is_empty());
    }
}

/// One step of the connection model used by the property test.
#[derive(Clone, Debug)]
enum Step {
    Enabled,
    Missing,
    Unknown(Vec<u8>),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        Just(Step::Enabled),
        Just(Step::Missing),
        proptest::collection::vec(any::<u8>(), 0..24).prop_map(Step::Unknown),
    ]
}

fn wire() -> impl Strategy<Value = Wire> {
    prop_oneof![
        Just(Wire::BinaryStrict),
        Just(Wire::BinaryNonStrict),
        Just(Wire::Compact)
    ]
}

proptest! {
    /// Any mix of successful calls, declared errors and unknown methods with
    /// arbitrary binary arguments yields exactly one reply per call, in
    /// order, with the call's name and sequence id.
    #[test]
    fn every_call_gets_one_reply_in_order(
        wire in wire(),
        steps in proptest::collection::vec(step(), 1..12),
        first_seqid in any::<i32>(),
    ) {
        let handler = TestHandler::default();
        let processor = HbaseSyncProcessor::new(&handler);
        let calls: Vec<Call> = steps
            .iter()
            .enumerate()
            .map(|(index, step)| {
                let seqid = first_seqid.wrapping_add(index as i32);
                match step {
                    Step::Enabled => Call::new("isTableEnabled", seqid, table_arg(b"t")),
                    Step::Missing => Call::new("isTableEnabled", seqid, table_arg(b"nope")),
                    Step::Unknown(payload) => Call::new(
                        "noSuchMethod",
                        seqid,
                        vec![(1, Value::Bytes(payload.clone())), (5, Value::I64(payload.len() as i64))],
                    ),
                }
            })
            .collect();
        let replies = round_trip(&processor, wire, &calls);
        prop_assert_eq!(replies.len(), calls.len());
        for ((step, call), reply) in steps.iter().zip(&calls).zip(&replies) {
            prop_assert_eq!(&reply.header.name, call.name);
            prop_assert_eq!(reply.header.sequence_number, call.seqid);
            match step {
                Step::Enabled => {
                    prop_assert_eq!(reply.header.message_type, TMessageType::Reply);
                    prop_assert_eq!(reply.body.field(0), Some(&Value::Bool(true)));
                }
                Step::Missing => {
                    prop_assert_eq!(reply.header.message_type, TMessageType::Reply);
                    prop_assert_eq!(reply.body.field_ids(), vec![1]);
                }
                Step::Unknown(_) => {
                    prop_assert_eq!(reply.header.message_type, TMessageType::Exception);
                    prop_assert_eq!(reply.application_error().map(|(_, kind)| kind), Some(UNKNOWN_METHOD));
                }
            }
        }
    }
}
