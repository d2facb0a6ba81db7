//! Test support: the `hbase` test handler shared by the processor tests. A
//! few methods give real answers and record what they were called with;
//! every other method fails the way an unhandled server error does. Owns
//! nothing the library uses.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Mutex;

use tabula_thrift::hbase::*;
use thrift::{ApplicationError, ApplicationErrorKind};

/// A handler with a few real answers; every other method fails the way an
/// unhandled server error does.
#[derive(Default)]
pub struct TestHandler {
    log: Mutex<Vec<String>>,
}

impl TestHandler {
    fn record(&self, entry: String) {
        self.log.lock().unwrap().push(entry);
    }

    /// What the handler was asked, in order.
    pub fn log(&self) -> Vec<String> {
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
        let cells = BTreeMap::from([(
            b"cf:a".to_vec(),
            TCell::new(bytes::Bytes::from_static(b"v"), 42),
        )]);
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
