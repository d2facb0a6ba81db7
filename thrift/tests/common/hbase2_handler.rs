//! Test support: the `hbase2` test handler shared by the processor tests. A
//! few methods give real answers and record what they were called with;
//! every other method fails the way an unhandled server error does. Owns
//! nothing the library uses.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::sync::Mutex;

use tabula_thrift::hbase2::*;
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
        let cell = TColumnValue::new(
            b"cf".to_vec(),
            b"q".to_vec(),
            bytes::Bytes::from_static(b"v"),
            9,
            None,
            4,
        );
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
        table: Vec<u8>,
        trow_mutations: TRowMutations,
    ) -> thrift::Result<()> {
        let kinds: Vec<&str> = trow_mutations
            .mutations
            .iter()
            .map(|mutation| match mutation {
                TMutation::Put(_) => "put",
                TMutation::DeleteSingle(_) => "delete",
            })
            .collect();
        self.record(format!(
            "mutateRow {} {:?}",
            String::from_utf8_lossy(&table),
            kinds
        ));
        Ok(())
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
