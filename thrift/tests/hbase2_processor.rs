//! Round trips through the generated Thrift2 `THBaseServiceSyncProcessor`
//! over in-memory transports, for binary strict, binary non-strict and
//! compact calls: success replies, TIOError and TIllegalArgument inside REPLY
//! messages, unknown methods, absent arguments (IDL defaults) and missing
//! `required` arguments.

mod common;

use std::collections::BTreeSet;
use std::sync::Mutex;

use common::{
    assert_header, decode_replies, encode_calls, round_trip, serve, Call, Value, ALL_WIRES,
};
use tabula_thrift::hbase2::*;
use thrift::protocol::{TMessageType, TType};
use thrift::{ApplicationError, ApplicationErrorKind};

const UNKNOWN_METHOD: i32 = 1;
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

impl THBaseServiceSyncHandler for &TestHandler {
    fn handle_exists(&self, _table: Vec<u8>, _tget: TGet) -> thrift::Result<bool> {
        internal_error("exists")
    }
    fn handle_exists_all(&self, _table: Vec<u8>, _tgets: Vec<TGet>) -> thrift::Result<Vec<bool>> {
        internal_error("existsAll")
    }
    fn handle_get(&self, table: Vec<u8>, tget: TGet) -> thrift::Result<TResult> {
        self.record(format!(
            "get {} {} max_versions={:?}",
            String::from_utf8_lossy(&table),
            String::from_utf8_lossy(&tget.row),
            tget.max_versions
        ));
        if table != b"t" {
            return Err(TIOError::new(
                format!("table {} not found", String::from_utf8_lossy(&table)),
                false,
            )
            .into());
        }
        let cell = TColumnValue::new(b"cf".to_vec(), b"q".to_vec(), b"v".to_vec(), 9, None, 4);
        Ok(TResult::new(tget.row, vec![cell], None, None))
    }
    fn handle_get_multiple(
        &self,
        _table: Vec<u8>,
        _tgets: Vec<TGet>,
    ) -> thrift::Result<Vec<TResult>> {
        internal_error("getMultiple")
    }
    fn handle_put(&self, _table: Vec<u8>, _tput: TPut) -> thrift::Result<()> {
        internal_error("put")
    }
    fn handle_check_and_put(
        &self,
        _table: Vec<u8>,
        _row: Vec<u8>,
        _family: Vec<u8>,
        _qualifier: Vec<u8>,
        value: Vec<u8>,
        tput: TPut,
    ) -> thrift::Result<bool> {
        self.record(format!(
            "checkAndPut value_len={} cells={}",
            value.len(),
            tput.column_values.len()
        ));
        Ok(false)
    }
    fn handle_put_multiple(&self, _table: Vec<u8>, _tputs: Vec<TPut>) -> thrift::Result<()> {
        internal_error("putMultiple")
    }
    fn handle_delete_single(&self, _table: Vec<u8>, _tdelete: TDelete) -> thrift::Result<()> {
        internal_error("deleteSingle")
    }
    fn handle_delete_multiple(
        &self,
        _table: Vec<u8>,
        _tdeletes: Vec<TDelete>,
    ) -> thrift::Result<Vec<TDelete>> {
        internal_error("deleteMultiple")
    }
    fn handle_check_and_delete(
        &self,
        _table: Vec<u8>,
        _row: Vec<u8>,
        _family: Vec<u8>,
        _qualifier: Vec<u8>,
        _value: Vec<u8>,
        _tdelete: TDelete,
    ) -> thrift::Result<bool> {
        internal_error("checkAndDelete")
    }
    fn handle_increment(
        &self,
        _table: Vec<u8>,
        _tincrement: TIncrement,
    ) -> thrift::Result<TResult> {
        internal_error("increment")
    }
    fn handle_append(&self, _table: Vec<u8>, _tappend: TAppend) -> thrift::Result<TResult> {
        internal_error("append")
    }
    fn handle_open_scanner(&self, _table: Vec<u8>, _tscan: TScan) -> thrift::Result<i32> {
        internal_error("openScanner")
    }
    fn handle_get_scanner_rows(
        &self,
        scanner_id: i32,
        num_rows: i32,
    ) -> thrift::Result<Vec<TResult>> {
        self.record(format!("getScannerRows {scanner_id} num_rows={num_rows}"));
        if scanner_id == 1 {
            Ok(Vec::new())
        } else {
            Err(TIllegalArgument::new("Invalid scanner Id".to_owned()).into())
        }
    }
    fn handle_close_scanner(&self, _scanner_id: i32) -> thrift::Result<()> {
        internal_error("closeScanner")
    }
    fn handle_mutate_row(
        &self,
        _table: Vec<u8>,
        _trow_mutations: TRowMutations,
    ) -> thrift::Result<()> {
        internal_error("mutateRow")
    }
    fn handle_get_scanner_results(
        &self,
        _table: Vec<u8>,
        _tscan: TScan,
        _num_rows: i32,
    ) -> thrift::Result<Vec<TResult>> {
        internal_error("getScannerResults")
    }
    fn handle_get_region_location(
        &self,
        _table: Vec<u8>,
        _row: Vec<u8>,
        _reload: bool,
    ) -> thrift::Result<THRegionLocation> {
        internal_error("getRegionLocation")
    }
    fn handle_get_all_region_locations(
        &self,
        _table: Vec<u8>,
    ) -> thrift::Result<Vec<THRegionLocation>> {
        internal_error("getAllRegionLocations")
    }
    fn handle_check_and_mutate(
        &self,
        _table: Vec<u8>,
        _row: Vec<u8>,
        _family: Vec<u8>,
        _qualifier: Vec<u8>,
        _compare_operator: TCompareOperator,
        _value: Vec<u8>,
        _row_mutations: TRowMutations,
    ) -> thrift::Result<bool> {
        internal_error("checkAndMutate")
    }
    fn handle_get_table_descriptor(&self, _table: TTableName) -> thrift::Result<TTableDescriptor> {
        internal_error("getTableDescriptor")
    }
    fn handle_get_table_descriptors(
        &self,
        _tables: Vec<TTableName>,
    ) -> thrift::Result<Vec<TTableDescriptor>> {
        internal_error("getTableDescriptors")
    }
    fn handle_table_exists(&self, _table_name: TTableName) -> thrift::Result<bool> {
        internal_error("tableExists")
    }
    fn handle_get_table_descriptors_by_pattern(
        &self,
        _regex: String,
        _include_sys_tables: bool,
    ) -> thrift::Result<Vec<TTableDescriptor>> {
        internal_error("getTableDescriptorsByPattern")
    }
    fn handle_get_table_descriptors_by_namespace(
        &self,
        _name: String,
    ) -> thrift::Result<Vec<TTableDescriptor>> {
        internal_error("getTableDescriptorsByNamespace")
    }
    fn handle_get_table_names_by_pattern(
        &self,
        regex: String,
        include_sys_tables: bool,
    ) -> thrift::Result<Vec<TTableName>> {
        self.record(format!(
            "getTableNamesByPattern regex={regex:?} sys={include_sys_tables}"
        ));
        Ok(vec![TTableName::new(b"default".to_vec(), b"t".to_vec())])
    }
    fn handle_get_table_names_by_namespace(
        &self,
        _name: String,
    ) -> thrift::Result<Vec<TTableName>> {
        internal_error("getTableNamesByNamespace")
    }
    fn handle_create_table(
        &self,
        _desc: TTableDescriptor,
        _split_keys: Vec<Vec<u8>>,
    ) -> thrift::Result<()> {
        internal_error("createTable")
    }
    fn handle_delete_table(&self, _table_name: TTableName) -> thrift::Result<()> {
        internal_error("deleteTable")
    }
    fn handle_truncate_table(
        &self,
        _table_name: TTableName,
        _preserve_splits: bool,
    ) -> thrift::Result<()> {
        internal_error("truncateTable")
    }
    fn handle_enable_table(&self, _table_name: TTableName) -> thrift::Result<()> {
        internal_error("enableTable")
    }
    fn handle_disable_table(&self, _table_name: TTableName) -> thrift::Result<()> {
        internal_error("disableTable")
    }
    fn handle_is_table_enabled(&self, _table_name: TTableName) -> thrift::Result<bool> {
        internal_error("isTableEnabled")
    }
    fn handle_is_table_disabled(&self, _table_name: TTableName) -> thrift::Result<bool> {
        internal_error("isTableDisabled")
    }
    fn handle_is_table_available(&self, _table_name: TTableName) -> thrift::Result<bool> {
        internal_error("isTableAvailable")
    }
    fn handle_is_table_available_with_split(
        &self,
        _table_name: TTableName,
        _split_keys: Vec<Vec<u8>>,
    ) -> thrift::Result<bool> {
        internal_error("isTableAvailableWithSplit")
    }
    fn handle_add_column_family(
        &self,
        _table_name: TTableName,
        _column: TColumnFamilyDescriptor,
    ) -> thrift::Result<()> {
        internal_error("addColumnFamily")
    }
    fn handle_delete_column_family(
        &self,
        _table_name: TTableName,
        _column: Vec<u8>,
    ) -> thrift::Result<()> {
        internal_error("deleteColumnFamily")
    }
    fn handle_modify_column_family(
        &self,
        _table_name: TTableName,
        _column: TColumnFamilyDescriptor,
    ) -> thrift::Result<()> {
        internal_error("modifyColumnFamily")
    }
    fn handle_modify_table(&self, _desc: TTableDescriptor) -> thrift::Result<()> {
        internal_error("modifyTable")
    }
    fn handle_create_namespace(&self, _namespace_desc: TNamespaceDescriptor) -> thrift::Result<()> {
        internal_error("createNamespace")
    }
    fn handle_modify_namespace(&self, _namespace_desc: TNamespaceDescriptor) -> thrift::Result<()> {
        internal_error("modifyNamespace")
    }
    fn handle_delete_namespace(&self, _name: String) -> thrift::Result<()> {
        internal_error("deleteNamespace")
    }
    fn handle_get_namespace_descriptor(
        &self,
        _name: String,
    ) -> thrift::Result<TNamespaceDescriptor> {
        internal_error("getNamespaceDescriptor")
    }
    fn handle_list_namespace_descriptors(&self) -> thrift::Result<Vec<TNamespaceDescriptor>> {
        internal_error("listNamespaceDescriptors")
    }
    fn handle_list_namespaces(&self) -> thrift::Result<Vec<String>> {
        internal_error("listNamespaces")
    }
    fn handle_get_thrift_server_type(&self) -> thrift::Result<TThriftServerType> {
        Ok(TThriftServerType::TWO)
    }
    fn handle_get_cluster_id(&self) -> thrift::Result<String> {
        internal_error("getClusterId")
    }
    fn handle_get_slow_log_responses(
        &self,
        _server_names: BTreeSet<TServerName>,
        _log_query_filter: TLogQueryFilter,
    ) -> thrift::Result<Vec<TOnlineLogRecord>> {
        internal_error("getSlowLogResponses")
    }
    fn handle_clear_slow_log_responses(
        &self,
        _server_names: BTreeSet<TServerName>,
    ) -> thrift::Result<Vec<bool>> {
        internal_error("clearSlowLogResponses")
    }
    fn handle_grant(&self, _info: TAccessControlEntity) -> thrift::Result<bool> {
        internal_error("grant")
    }
    fn handle_revoke(&self, _info: TAccessControlEntity) -> thrift::Result<bool> {
        internal_error("revoke")
    }
}

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
