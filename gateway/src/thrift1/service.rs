//! The generated `HbaseSyncHandler` trait implemented by [`Thrift1Handler`].
//!
//! Owns: binding each Thrift1 method name to its call module and turning its
//! [`Thrift1Error`](super::errors::Thrift1Error) into the reply HBase would send.
//! Operation attributes are accepted and ignored, as they change nothing here.
//! Must not: hold semantics of its own (they live in the call modules).

use std::collections::BTreeMap;

use tabula_storage::LATEST_TIMESTAMP;
use tabula_thrift::hbase::{
    BatchMutation, ColumnDescriptor, HbaseSyncHandler, Mutation, ScannerID, TAccessControlEntity,
    TAppend, TCell, TIncrement, TRegionInfo, TRowResult, TScan, TThriftServerType, Text,
};

use super::errors::Thrift1Result;
use super::scanner_calls::ScanRequest;
use super::Thrift1Handler;

type Attributes = BTreeMap<Text, Text>;

/// The reply of `method`: the value, or the error as HBase would send it.
fn answer<T>(method: &'static str, result: Thrift1Result<T>) -> thrift::Result<T> {
    result.map_err(|e| {
        tracing::debug!(method, error = %e, "Thrift1 call failed");
        e.into_thrift(method)
    })
}

impl HbaseSyncHandler for Thrift1Handler {
    fn handle_enable_table(&self, table_name: Text) -> thrift::Result<()> {
        answer("enableTable", self.enable_table(&table_name))
    }

    fn handle_disable_table(&self, table_name: Text) -> thrift::Result<()> {
        answer("disableTable", self.disable_table(&table_name))
    }

    fn handle_is_table_enabled(&self, table_name: Text) -> thrift::Result<bool> {
        answer("isTableEnabled", self.is_table_enabled(&table_name))
    }

    fn handle_compact(&self, table_name_or_region_name: Text) -> thrift::Result<()> {
        answer("compact", self.compact(&table_name_or_region_name, false))
    }

    fn handle_major_compact(&self, table_name_or_region_name: Text) -> thrift::Result<()> {
        answer(
            "majorCompact",
            self.compact(&table_name_or_region_name, true),
        )
    }

    fn handle_get_table_names(&self) -> thrift::Result<Vec<Text>> {
        answer("getTableNames", self.table_names())
    }

    fn handle_get_table_names_with_is_table_enabled(&self) -> thrift::Result<BTreeMap<Text, bool>> {
        answer(
            "getTableNamesWithIsTableEnabled",
            self.table_names_enabled(),
        )
    }

    fn handle_get_column_descriptors(
        &self,
        table_name: Text,
    ) -> thrift::Result<BTreeMap<Text, ColumnDescriptor>> {
        answer("getColumnDescriptors", self.column_descriptors(&table_name))
    }

    fn handle_get_table_regions(&self, table_name: Text) -> thrift::Result<Vec<TRegionInfo>> {
        answer("getTableRegions", self.table_regions(&table_name))
    }

    fn handle_create_table(
        &self,
        table_name: Text,
        column_families: Vec<ColumnDescriptor>,
    ) -> thrift::Result<()> {
        answer(
            "createTable",
            self.create_table(&table_name, &column_families),
        )
    }

    fn handle_delete_table(&self, table_name: Text) -> thrift::Result<()> {
        answer("deleteTable", self.delete_table(&table_name))
    }

    fn handle_get(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        _attributes: Attributes,
    ) -> thrift::Result<Vec<TCell>> {
        answer(
            "get",
            self.read_versions(&table_name, row, &column, LATEST_TIMESTAMP, 1),
        )
    }

    fn handle_get_ver(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        num_versions: i32,
        _attributes: Attributes,
    ) -> thrift::Result<Vec<TCell>> {
        answer(
            "getVer",
            self.read_versions(&table_name, row, &column, LATEST_TIMESTAMP, num_versions),
        )
    }

    fn handle_get_ver_ts(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        timestamp: i64,
        num_versions: i32,
        _attributes: Attributes,
    ) -> thrift::Result<Vec<TCell>> {
        answer(
            "getVerTs",
            self.read_versions(&table_name, row, &column, timestamp, num_versions),
        )
    }

    fn handle_get_row(
        &self,
        table_name: Text,
        row: Text,
        _attributes: Attributes,
    ) -> thrift::Result<Vec<TRowResult>> {
        answer(
            "getRow",
            self.read_row(&table_name, row, &[], LATEST_TIMESTAMP),
        )
    }

    fn handle_get_row_with_columns(
        &self,
        table_name: Text,
        row: Text,
        columns: Vec<Text>,
        _attributes: Attributes,
    ) -> thrift::Result<Vec<TRowResult>> {
        answer(
            "getRowWithColumns",
            self.read_row(&table_name, row, &columns, LATEST_TIMESTAMP),
        )
    }

    fn handle_get_row_ts(
        &self,
        table_name: Text,
        row: Text,
        timestamp: i64,
        _attributes: Attributes,
    ) -> thrift::Result<Vec<TRowResult>> {
        answer("getRowTs", self.read_row(&table_name, row, &[], timestamp))
    }

    fn handle_get_row_with_columns_ts(
        &self,
        table_name: Text,
        row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: Attributes,
    ) -> thrift::Result<Vec<TRowResult>> {
        answer(
            "getRowWithColumnsTs",
            self.read_row(&table_name, row, &columns, timestamp),
        )
    }

    fn handle_get_rows(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        _attributes: Attributes,
    ) -> thrift::Result<Vec<TRowResult>> {
        answer(
            "getRows",
            self.read_rows(&table_name, rows, &[], LATEST_TIMESTAMP),
        )
    }

    fn handle_get_rows_with_columns(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        columns: Vec<Text>,
        _attributes: Attributes,
    ) -> thrift::Result<Vec<TRowResult>> {
        answer(
            "getRowsWithColumns",
            self.read_rows(&table_name, rows, &columns, LATEST_TIMESTAMP),
        )
    }

    fn handle_get_rows_ts(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        timestamp: i64,
        _attributes: Attributes,
    ) -> thrift::Result<Vec<TRowResult>> {
        answer(
            "getRowsTs",
            self.read_rows(&table_name, rows, &[], timestamp),
        )
    }

    fn handle_get_rows_with_columns_ts(
        &self,
        table_name: Text,
        rows: Vec<Text>,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: Attributes,
    ) -> thrift::Result<Vec<TRowResult>> {
        answer(
            "getRowsWithColumnsTs",
            self.read_rows(&table_name, rows, &columns, timestamp),
        )
    }

    fn handle_mutate_row(
        &self,
        table_name: Text,
        row: Text,
        mutations: Vec<Mutation>,
        _attributes: Attributes,
    ) -> thrift::Result<()> {
        answer(
            "mutateRow",
            self.mutate_row(&table_name, row, mutations, LATEST_TIMESTAMP),
        )
    }

    fn handle_mutate_row_ts(
        &self,
        table_name: Text,
        row: Text,
        mutations: Vec<Mutation>,
        timestamp: i64,
        _attributes: Attributes,
    ) -> thrift::Result<()> {
        answer(
            "mutateRowTs",
            self.mutate_row(&table_name, row, mutations, timestamp),
        )
    }

    fn handle_mutate_rows(
        &self,
        table_name: Text,
        row_batches: Vec<BatchMutation>,
        _attributes: Attributes,
    ) -> thrift::Result<()> {
        answer(
            "mutateRows",
            self.mutate_rows(&table_name, row_batches, LATEST_TIMESTAMP),
        )
    }

    fn handle_mutate_rows_ts(
        &self,
        table_name: Text,
        row_batches: Vec<BatchMutation>,
        timestamp: i64,
        _attributes: Attributes,
    ) -> thrift::Result<()> {
        answer(
            "mutateRowsTs",
            self.mutate_rows(&table_name, row_batches, timestamp),
        )
    }

    fn handle_atomic_increment(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        value: i64,
    ) -> thrift::Result<i64> {
        answer(
            "atomicIncrement",
            self.atomic_increment(&table_name, row, &column, value),
        )
    }

    fn handle_delete_all(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        _attributes: Attributes,
    ) -> thrift::Result<()> {
        answer(
            "deleteAll",
            self.delete_all(&table_name, row, &column, LATEST_TIMESTAMP),
        )
    }

    fn handle_delete_all_ts(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        timestamp: i64,
        _attributes: Attributes,
    ) -> thrift::Result<()> {
        answer(
            "deleteAllTs",
            self.delete_all(&table_name, row, &column, timestamp),
        )
    }

    fn handle_delete_all_row(
        &self,
        table_name: Text,
        row: Text,
        _attributes: Attributes,
    ) -> thrift::Result<()> {
        answer(
            "deleteAllRow",
            self.delete_row(&table_name, row, LATEST_TIMESTAMP),
        )
    }

    fn handle_increment(&self, increment: TIncrement) -> thrift::Result<()> {
        answer("increment", Thrift1Handler::increment(self, &increment))
    }

    fn handle_increment_rows(&self, increments: Vec<TIncrement>) -> thrift::Result<()> {
        answer("incrementRows", self.increment_rows(&increments))
    }

    fn handle_delete_all_row_ts(
        &self,
        table_name: Text,
        row: Text,
        timestamp: i64,
        _attributes: Attributes,
    ) -> thrift::Result<()> {
        answer(
            "deleteAllRowTs",
            self.delete_row(&table_name, row, timestamp),
        )
    }

    fn handle_scanner_open_with_scan(
        &self,
        table_name: Text,
        scan: TScan,
        _attributes: Attributes,
    ) -> thrift::Result<ScannerID> {
        answer(
            "scannerOpenWithScan",
            self.open_scanner(&table_name, ScanRequest::from_tscan(scan)),
        )
    }

    fn handle_scanner_open(
        &self,
        table_name: Text,
        start_row: Text,
        columns: Vec<Text>,
        _attributes: Attributes,
    ) -> thrift::Result<ScannerID> {
        let request = ScanRequest {
            start_row,
            columns,
            ..ScanRequest::default()
        };
        answer("scannerOpen", self.open_scanner(&table_name, request))
    }

    fn handle_scanner_open_with_stop(
        &self,
        table_name: Text,
        start_row: Text,
        stop_row: Text,
        columns: Vec<Text>,
        _attributes: Attributes,
    ) -> thrift::Result<ScannerID> {
        let request = ScanRequest {
            start_row,
            stop_row,
            columns,
            ..ScanRequest::default()
        };
        answer(
            "scannerOpenWithStop",
            self.open_scanner(&table_name, request),
        )
    }

    fn handle_scanner_open_with_prefix(
        &self,
        table_name: Text,
        start_and_prefix: Text,
        columns: Vec<Text>,
        _attributes: Attributes,
    ) -> thrift::Result<ScannerID> {
        answer(
            "scannerOpenWithPrefix",
            self.open_prefix_scanner(&table_name, start_and_prefix, columns),
        )
    }

    fn handle_scanner_open_ts(
        &self,
        table_name: Text,
        start_row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: Attributes,
    ) -> thrift::Result<ScannerID> {
        let request = ScanRequest {
            start_row,
            columns,
            timestamp: Some(timestamp),
            ..ScanRequest::default()
        };
        answer("scannerOpenTs", self.open_scanner(&table_name, request))
    }

    fn handle_scanner_open_with_stop_ts(
        &self,
        table_name: Text,
        start_row: Text,
        stop_row: Text,
        columns: Vec<Text>,
        timestamp: i64,
        _attributes: Attributes,
    ) -> thrift::Result<ScannerID> {
        let request = ScanRequest {
            start_row,
            stop_row,
            columns,
            timestamp: Some(timestamp),
            ..ScanRequest::default()
        };
        answer(
            "scannerOpenWithStopTs",
            self.open_scanner(&table_name, request),
        )
    }

    fn handle_scanner_get(&self, id: ScannerID) -> thrift::Result<Vec<TRowResult>> {
        answer("scannerGet", self.scanner_get_list(id, 1))
    }

    fn handle_scanner_get_list(
        &self,
        id: ScannerID,
        nb_rows: i32,
    ) -> thrift::Result<Vec<TRowResult>> {
        answer("scannerGetList", self.scanner_get_list(id, nb_rows))
    }

    fn handle_scanner_close(&self, id: ScannerID) -> thrift::Result<()> {
        answer("scannerClose", self.scanner_close(id))
    }

    fn handle_get_row_or_before(
        &self,
        table_name: Text,
        row: Text,
        family: Text,
    ) -> thrift::Result<Vec<TCell>> {
        answer(
            "getRowOrBefore",
            self.row_or_before(&table_name, row, &family),
        )
    }

    fn handle_get_region_info(&self, row: Text) -> thrift::Result<TRegionInfo> {
        answer("getRegionInfo", self.region_info(&row))
    }

    fn handle_append(&self, append: TAppend) -> thrift::Result<Vec<TCell>> {
        answer("append", Thrift1Handler::append(self, &append))
    }

    fn handle_check_and_put(
        &self,
        table_name: Text,
        row: Text,
        column: Text,
        value: Text,
        mput: Mutation,
        _attributes: Attributes,
    ) -> thrift::Result<bool> {
        answer(
            "checkAndPut",
            self.check_and_put(&table_name, row, &column, value, &mput),
        )
    }

    fn handle_get_thrift_server_type(&self) -> thrift::Result<TThriftServerType> {
        Ok(TThriftServerType::ONE)
    }

    fn handle_get_cluster_id(&self) -> thrift::Result<String> {
        Ok(self.cluster_id())
    }

    fn handle_grant(&self, info: TAccessControlEntity) -> thrift::Result<bool> {
        answer("grant", self.change_permission(&info, true))
    }

    fn handle_revoke(&self, info: TAccessControlEntity) -> thrift::Result<bool> {
        answer("revoke", self.change_permission(&info, false))
    }
}
