//! Round trips through the generated Thrift1 `HbaseSyncProcessor` over
//! in-memory transports, for binary strict, binary non-strict and compact
//! calls: success replies, declared exceptions inside REPLY messages, unknown
//! methods answered with UNKNOWN_METHOD without breaking the connection,
//! absent arguments, and the exception kinds of the other failure paths.

mod common;

use std::collections::BTreeMap;
use std::sync::Mutex;

use common::{assert_header, round_trip, Call, Value, Wire, ALL_WIRES};
use proptest::prelude::*;
use tabula_thrift::hbase::*;
use thrift::protocol::{TMessageType, TType};
use thrift::{ApplicationError, ApplicationErrorKind};

const UNKNOWN: i32 = 0;
const UNKNOWN_METHOD: i32 = 1;
const INTERNAL_ERROR: i32 = 6;
const PROTOCOL_ERROR: i32 = 7;

/// A handler with a few real answers; every other method fails the way an
/// unhandled server error does.
#[derive(Default)]
struct TestHandler {
    log: Mutex<Vec<String>>,
}

impl TestHandler {
    fn record(&self, entry: String) {
        self.log.lock().unwrap().push(entry);
    }

    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

fn internal_error<T>(method: &str) -> thrift::Result<T> {
    Err(ApplicationError::new(
        ApplicationErrorKind::InternalError,
        format!("Internal error processing {method}"),
    )
    .into())
}

impl HbaseSyncHandler for &TestHandler {
    fn handle_enable_table(&self, _table_name: Bytes) -> thrift::Result<()> {
        internal_error("enableTable")
    }
    fn handle_disable_table(&self, _table_name: Bytes) -> thrift::Result<()> {
        internal_error("disableTable")
    }
    fn handle_is_table_enabled(&self, table_name: Bytes) -> thrift::Result<bool> {
        self.record(format!(
            "isTableEnabled {}",
            String::from_utf8_lossy(&table_name)
        ));
        match table_name.as_slice() {
            b"t" => Ok(true),
            b"disabled" => Ok(false),
            _ => Err(IOError::new(
                format!(
                    "org.apache.hadoop.hbase.TableNotFoundException: {}",
                    String::from_utf8_lossy(&table_name)
                ),
                false,
            )
            .into()),
        }
    }
    fn handle_compact(&self, _table_name_or_region_name: Bytes) -> thrift::Result<()> {
        internal_error("compact")
    }
    fn handle_major_compact(&self, _table_name_or_region_name: Bytes) -> thrift::Result<()> {
        internal_error("majorCompact")
    }
    fn handle_get_table_names(&self) -> thrift::Result<Vec<Text>> {
        // IllegalArgument is not declared by getTableNames.
        Err(IllegalArgument::new("not declared here".to_owned()).into())
    }
    fn handle_get_table_names_with_is_table_enabled(&self) -> thrift::Result<BTreeMap<Text, bool>> {
        internal_error("getTableNamesWithIsTableEnabled")
    }
    fn handle_get_column_descriptors(
        &self,
        _table_name: Text,
    ) -> thrift::Result<BTreeMap<Text, ColumnDescriptor>> {
        internal_error("getColumnDescriptors")
    }
    fn handle_get_table_regions(&self, _table_name: Text) -> thrift::Result<Vec<TRegionInfo>> {
        internal_error("getTableRegions")
    }
    fn handle_create_table(
        &self,
        _table_name: Text,
        _column_families: Vec<ColumnDescriptor>,
    ) -> thrift::Result<()> {
        internal_error("createTable")
    }
    fn handle_delete_table(&self, table_name: Text) -> thrift::Result<()> {
        self.record(format!(
            "deleteTable {}",
            String::from_utf8_lossy(&table_name)
        ));
        Ok(())
    }
    fn handle_get(
        &self,
        _table_name: Text,
        _row: Text,
        _column: Text,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<Vec<TCell>> {
        internal_error("get")
    }
    fn handle_get_ver(
        &self,
        _table_name: Text,
        _row: Text,
        _column: Text,
        _num_versions: i32,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<Vec<TCell>> {
        internal_error("getVer")
    }
    fn handle_get_ver_ts(
        &self,
        _table_name: Text,
        _row: Text,
        _column: Text,
        _timestamp: i64,
        _num_versions: i32,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<Vec<TCell>> {
        internal_error("getVerTs")
    }
    fn handle_get_row(
        &self,
        _table_name: Text,
        _row: Text,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<Vec<TRowResult>> {
        internal_error("getRow")
    }
    fn handle_get_row_with_columns(
        &self,
        table_name: Text,
        row: Text,
        columns: Vec<Text>,
        attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<Vec<TRowResult>> {
        self.record(format!(
            "getRowWithColumns {} {} columns={} attributes={}",
            String::from_utf8_lossy(&table_name),
            String::from_utf8_lossy(&row),
            columns.len(),
            attributes.len()
        ));
        let cells = BTreeMap::from([(b"cf:a".to_vec(), TCell::new(b"v".to_vec(), 42))]);
        Ok(vec![TRowResult::new(row, cells, None)])
    }
    fn handle_get_row_ts(
        &self,
        _table_name: Text,
        _row: Text,
        _timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<Vec<TRowResult>> {
        internal_error("getRowTs")
    }
    fn handle_get_row_with_columns_ts(
        &self,
        _table_name: Text,
        _row: Text,
        _columns: Vec<Text>,
        _timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<Vec<TRowResult>> {
        internal_error("getRowWithColumnsTs")
    }
    fn handle_get_rows(
        &self,
        _table_name: Text,
        _rows: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<Vec<TRowResult>> {
        internal_error("getRows")
    }
    fn handle_get_rows_with_columns(
        &self,
        _table_name: Text,
        _rows: Vec<Text>,
        _columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<Vec<TRowResult>> {
        internal_error("getRowsWithColumns")
    }
    fn handle_get_rows_ts(
        &self,
        _table_name: Text,
        _rows: Vec<Text>,
        _timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<Vec<TRowResult>> {
        internal_error("getRowsTs")
    }
    fn handle_get_rows_with_columns_ts(
        &self,
        _table_name: Text,
        _rows: Vec<Text>,
        _columns: Vec<Text>,
        _timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<Vec<TRowResult>> {
        internal_error("getRowsWithColumnsTs")
    }
    fn handle_mutate_row(
        &self,
        _table_name: Text,
        _row: Text,
        _mutations: Vec<Mutation>,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<()> {
        internal_error("mutateRow")
    }
    fn handle_mutate_row_ts(
        &self,
        _table_name: Text,
        _row: Text,
        _mutations: Vec<Mutation>,
        _timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<()> {
        internal_error("mutateRowTs")
    }
    fn handle_mutate_rows(
        &self,
        _table_name: Text,
        _row_batches: Vec<BatchMutation>,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<()> {
        internal_error("mutateRows")
    }
    fn handle_mutate_rows_ts(
        &self,
        _table_name: Text,
        _row_batches: Vec<BatchMutation>,
        _timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<()> {
        internal_error("mutateRowsTs")
    }
    fn handle_atomic_increment(
        &self,
        _table_name: Text,
        _row: Text,
        _column: Text,
        _value: i64,
    ) -> thrift::Result<i64> {
        internal_error("atomicIncrement")
    }
    fn handle_delete_all(
        &self,
        _table_name: Text,
        _row: Text,
        _column: Text,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<()> {
        internal_error("deleteAll")
    }
    fn handle_delete_all_ts(
        &self,
        _table_name: Text,
        _row: Text,
        _column: Text,
        _timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<()> {
        internal_error("deleteAllTs")
    }
    fn handle_delete_all_row(
        &self,
        _table_name: Text,
        _row: Text,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<()> {
        internal_error("deleteAllRow")
    }
    fn handle_increment(&self, _increment: TIncrement) -> thrift::Result<()> {
        internal_error("increment")
    }
    fn handle_increment_rows(&self, _increments: Vec<TIncrement>) -> thrift::Result<()> {
        internal_error("incrementRows")
    }
    fn handle_delete_all_row_ts(
        &self,
        _table_name: Text,
        _row: Text,
        _timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<()> {
        internal_error("deleteAllRowTs")
    }
    fn handle_scanner_open_with_scan(
        &self,
        table_name: Text,
        scan: TScan,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<ScannerID> {
        self.record(format!(
            "scannerOpenWithScan {} start={:?} timestamp={:?} caching={:?}",
            String::from_utf8_lossy(&table_name),
            scan.start_row,
            scan.timestamp,
            scan.caching
        ));
        Ok(5)
    }
    fn handle_scanner_open(
        &self,
        _table_name: Text,
        _start_row: Text,
        _columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<ScannerID> {
        internal_error("scannerOpen")
    }
    fn handle_scanner_open_with_stop(
        &self,
        _table_name: Text,
        _start_row: Text,
        _stop_row: Text,
        _columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<ScannerID> {
        internal_error("scannerOpenWithStop")
    }
    fn handle_scanner_open_with_prefix(
        &self,
        _table_name: Text,
        _start_and_prefix: Text,
        _columns: Vec<Text>,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<ScannerID> {
        internal_error("scannerOpenWithPrefix")
    }
    fn handle_scanner_open_ts(
        &self,
        _table_name: Text,
        _start_row: Text,
        _columns: Vec<Text>,
        _timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<ScannerID> {
        internal_error("scannerOpenTs")
    }
    fn handle_scanner_open_with_stop_ts(
        &self,
        _table_name: Text,
        _start_row: Text,
        _stop_row: Text,
        _columns: Vec<Text>,
        _timestamp: i64,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<ScannerID> {
        internal_error("scannerOpenWithStopTs")
    }
    fn handle_scanner_get(&self, id: ScannerID) -> thrift::Result<Vec<TRowResult>> {
        if id == 1 {
            Ok(Vec::new())
        } else {
            Err(IllegalArgument::new("scanner ID is invalid".to_owned()).into())
        }
    }
    fn handle_scanner_get_list(
        &self,
        _id: ScannerID,
        _nb_rows: i32,
    ) -> thrift::Result<Vec<TRowResult>> {
        internal_error("scannerGetList")
    }
    fn handle_scanner_close(&self, _id: ScannerID) -> thrift::Result<()> {
        internal_error("scannerClose")
    }
    fn handle_get_row_or_before(
        &self,
        _table_name: Text,
        _row: Text,
        _family: Text,
    ) -> thrift::Result<Vec<TCell>> {
        internal_error("getRowOrBefore")
    }
    fn handle_get_region_info(&self, _row: Text) -> thrift::Result<TRegionInfo> {
        internal_error("getRegionInfo")
    }
    fn handle_append(&self, _append: TAppend) -> thrift::Result<Vec<TCell>> {
        internal_error("append")
    }
    fn handle_check_and_put(
        &self,
        _table_name: Text,
        _row: Text,
        column: Text,
        value: Text,
        mput: Mutation,
        _attributes: BTreeMap<Text, Text>,
    ) -> thrift::Result<bool> {
        self.record(format!(
            "checkAndPut {} value_len={} write_to_wal={:?}",
            String::from_utf8_lossy(&column),
            value.len(),
            mput.write_to_w_a_l
        ));
        Ok(true)
    }
    fn handle_get_thrift_server_type(&self) -> thrift::Result<TThriftServerType> {
        internal_error("getThriftServerType")
    }
    fn handle_get_cluster_id(&self) -> thrift::Result<String> {
        Ok("tabula-test-cluster".to_owned())
    }
    fn handle_grant(&self, info: TAccessControlEntity) -> thrift::Result<bool> {
        self.record(format!("grant {}", info.username));
        Ok(true)
    }
    fn handle_revoke(&self, _info: TAccessControlEntity) -> thrift::Result<bool> {
        internal_error("revoke")
    }
}

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
