//! The generated `THBaseServiceSyncHandler` trait implemented by [`Thrift2Handler`].
//!
//! Owns: binding each Thrift2 method name to its call module and turning its
//! [`Thrift2Error`](super::errors::Thrift2Error) into the reply HBase would send.
//! Attributes, authorizations, cell visibility and consistency settings are
//! accepted and ignored, as they change nothing here.
//! Must not: hold semantics of its own (they live in the call modules).

use std::collections::BTreeSet;

use tabula_thrift::hbase2::{
    TAccessControlEntity, TAppend, TColumnFamilyDescriptor, TCompareOperator, TDelete, TGet,
    THBaseServiceSyncHandler, THRegionLocation, TIncrement, TLogQueryFilter, TNamespaceDescriptor,
    TOnlineLogRecord, TPut, TResult, TRowMutations, TScan, TServerName, TTableDescriptor,
    TTableName, TThriftServerType,
};

use super::errors::Thrift2Result;
use super::Thrift2Handler;

/// The reply of `method`: the value, or the error as HBase would send it.
fn answer<T>(method: &'static str, result: Thrift2Result<T>) -> thrift::Result<T> {
    result.map_err(|e| {
        tracing::debug!(method, error = %e, "Thrift2 call failed");
        e.into_thrift(method)
    })
}

impl THBaseServiceSyncHandler for Thrift2Handler {
    fn handle_exists(&self, table: Vec<u8>, tget: TGet) -> thrift::Result<bool> {
        answer("exists", self.exists(&table, tget))
    }

    fn handle_exists_all(&self, table: Vec<u8>, tgets: Vec<TGet>) -> thrift::Result<Vec<bool>> {
        answer("existsAll", self.exists_all(&table, tgets))
    }

    fn handle_get(&self, table: Vec<u8>, tget: TGet) -> thrift::Result<TResult> {
        answer("get", self.get(&table, tget))
    }

    fn handle_get_multiple(
        &self,
        table: Vec<u8>,
        tgets: Vec<TGet>,
    ) -> thrift::Result<Vec<TResult>> {
        answer("getMultiple", self.get_multiple(&table, tgets))
    }

    fn handle_put(&self, table: Vec<u8>, tput: TPut) -> thrift::Result<()> {
        answer("put", self.put(&table, tput))
    }

    fn handle_check_and_put(
        &self,
        table: Vec<u8>,
        row: Vec<u8>,
        family: Vec<u8>,
        qualifier: Vec<u8>,
        value: Vec<u8>,
        tput: TPut,
    ) -> thrift::Result<bool> {
        answer(
            "checkAndPut",
            self.check_and_put(&table, row, family, qualifier, value, tput),
        )
    }

    fn handle_put_multiple(&self, table: Vec<u8>, tputs: Vec<TPut>) -> thrift::Result<()> {
        answer("putMultiple", self.put_multiple(&table, tputs))
    }

    fn handle_delete_single(&self, table: Vec<u8>, tdelete: TDelete) -> thrift::Result<()> {
        answer("deleteSingle", self.delete_single(&table, tdelete))
    }

    fn handle_delete_multiple(
        &self,
        table: Vec<u8>,
        tdeletes: Vec<TDelete>,
    ) -> thrift::Result<Vec<TDelete>> {
        answer("deleteMultiple", self.delete_multiple(&table, tdeletes))
    }

    fn handle_check_and_delete(
        &self,
        table: Vec<u8>,
        row: Vec<u8>,
        family: Vec<u8>,
        qualifier: Vec<u8>,
        value: Vec<u8>,
        tdelete: TDelete,
    ) -> thrift::Result<bool> {
        answer(
            "checkAndDelete",
            self.check_and_delete(&table, row, family, qualifier, value, tdelete),
        )
    }

    fn handle_increment(&self, table: Vec<u8>, tincrement: TIncrement) -> thrift::Result<TResult> {
        answer("increment", self.increment(&table, tincrement))
    }

    fn handle_append(&self, table: Vec<u8>, tappend: TAppend) -> thrift::Result<TResult> {
        answer("append", self.append(&table, tappend))
    }

    fn handle_open_scanner(&self, table: Vec<u8>, tscan: TScan) -> thrift::Result<i32> {
        answer("openScanner", self.open_scanner(&table, tscan))
    }

    fn handle_get_scanner_rows(
        &self,
        scanner_id: i32,
        num_rows: i32,
    ) -> thrift::Result<Vec<TResult>> {
        answer(
            "getScannerRows",
            self.get_scanner_rows(scanner_id, num_rows),
        )
    }

    fn handle_close_scanner(&self, scanner_id: i32) -> thrift::Result<()> {
        answer("closeScanner", self.close_scanner(scanner_id))
    }

    fn handle_mutate_row(
        &self,
        table: Vec<u8>,
        trow_mutations: TRowMutations,
    ) -> thrift::Result<()> {
        answer("mutateRow", self.mutate_row(&table, trow_mutations))
    }

    fn handle_get_scanner_results(
        &self,
        table: Vec<u8>,
        tscan: TScan,
        num_rows: i32,
    ) -> thrift::Result<Vec<TResult>> {
        answer(
            "getScannerResults",
            self.get_scanner_results(&table, tscan, num_rows),
        )
    }

    fn handle_get_region_location(
        &self,
        table: Vec<u8>,
        row: Vec<u8>,
        _reload: bool,
    ) -> thrift::Result<THRegionLocation> {
        answer("getRegionLocation", self.region_location(&table, &row))
    }

    fn handle_get_all_region_locations(
        &self,
        table: Vec<u8>,
    ) -> thrift::Result<Vec<THRegionLocation>> {
        answer("getAllRegionLocations", self.all_region_locations(&table))
    }

    fn handle_check_and_mutate(
        &self,
        table: Vec<u8>,
        row: Vec<u8>,
        family: Vec<u8>,
        qualifier: Vec<u8>,
        compare_operator: TCompareOperator,
        value: Vec<u8>,
        row_mutations: TRowMutations,
    ) -> thrift::Result<bool> {
        answer(
            "checkAndMutate",
            self.check_and_mutate(
                &table,
                row,
                family,
                qualifier,
                compare_operator,
                value,
                row_mutations,
            ),
        )
    }

    fn handle_get_table_descriptor(&self, table: TTableName) -> thrift::Result<TTableDescriptor> {
        answer("getTableDescriptor", self.table_descriptor(&table))
    }

    fn handle_get_table_descriptors(
        &self,
        tables: Vec<TTableName>,
    ) -> thrift::Result<Vec<TTableDescriptor>> {
        answer("getTableDescriptors", self.table_descriptors(&tables))
    }

    fn handle_table_exists(&self, table_name: TTableName) -> thrift::Result<bool> {
        answer("tableExists", self.table_exists(&table_name))
    }

    fn handle_get_table_descriptors_by_pattern(
        &self,
        regex: String,
        include_sys_tables: bool,
    ) -> thrift::Result<Vec<TTableDescriptor>> {
        answer(
            "getTableDescriptorsByPattern",
            self.table_descriptors_by_pattern(&regex, include_sys_tables),
        )
    }

    fn handle_get_table_descriptors_by_namespace(
        &self,
        name: String,
    ) -> thrift::Result<Vec<TTableDescriptor>> {
        answer(
            "getTableDescriptorsByNamespace",
            self.table_descriptors_by_namespace(&name),
        )
    }

    fn handle_get_table_names_by_pattern(
        &self,
        regex: String,
        include_sys_tables: bool,
    ) -> thrift::Result<Vec<TTableName>> {
        answer(
            "getTableNamesByPattern",
            self.table_names_by_pattern(&regex, include_sys_tables),
        )
    }

    fn handle_get_table_names_by_namespace(&self, name: String) -> thrift::Result<Vec<TTableName>> {
        answer(
            "getTableNamesByNamespace",
            self.table_names_by_namespace(&name),
        )
    }

    fn handle_create_table(
        &self,
        desc: TTableDescriptor,
        split_keys: Vec<Vec<u8>>,
    ) -> thrift::Result<()> {
        answer("createTable", self.create_table(&desc, split_keys))
    }

    fn handle_delete_table(&self, table_name: TTableName) -> thrift::Result<()> {
        answer("deleteTable", self.delete_table(&table_name))
    }

    fn handle_truncate_table(
        &self,
        table_name: TTableName,
        preserve_splits: bool,
    ) -> thrift::Result<()> {
        answer(
            "truncateTable",
            self.truncate_table(&table_name, preserve_splits),
        )
    }

    fn handle_enable_table(&self, table_name: TTableName) -> thrift::Result<()> {
        answer("enableTable", self.enable_table(&table_name))
    }

    fn handle_disable_table(&self, table_name: TTableName) -> thrift::Result<()> {
        answer("disableTable", self.disable_table(&table_name))
    }

    fn handle_is_table_enabled(&self, table_name: TTableName) -> thrift::Result<bool> {
        answer("isTableEnabled", self.is_table_enabled(&table_name))
    }

    fn handle_is_table_disabled(&self, table_name: TTableName) -> thrift::Result<bool> {
        answer("isTableDisabled", self.is_table_disabled(&table_name))
    }

    fn handle_is_table_available(&self, table_name: TTableName) -> thrift::Result<bool> {
        answer("isTableAvailable", self.is_table_available(&table_name))
    }

    fn handle_is_table_available_with_split(
        &self,
        table_name: TTableName,
        split_keys: Vec<Vec<u8>>,
    ) -> thrift::Result<bool> {
        answer(
            "isTableAvailableWithSplit",
            self.is_table_available_with_split(&table_name, &split_keys),
        )
    }

    fn handle_add_column_family(
        &self,
        table_name: TTableName,
        column: TColumnFamilyDescriptor,
    ) -> thrift::Result<()> {
        answer("addColumnFamily", self.add_family(&table_name, &column))
    }

    fn handle_delete_column_family(
        &self,
        table_name: TTableName,
        column: Vec<u8>,
    ) -> thrift::Result<()> {
        answer(
            "deleteColumnFamily",
            self.delete_family(&table_name, &column),
        )
    }

    fn handle_modify_column_family(
        &self,
        table_name: TTableName,
        column: TColumnFamilyDescriptor,
    ) -> thrift::Result<()> {
        answer(
            "modifyColumnFamily",
            self.modify_family(&table_name, &column),
        )
    }

    fn handle_modify_table(&self, desc: TTableDescriptor) -> thrift::Result<()> {
        answer("modifyTable", self.modify_table(&desc))
    }

    fn handle_create_namespace(&self, namespace_desc: TNamespaceDescriptor) -> thrift::Result<()> {
        answer("createNamespace", self.create_namespace(namespace_desc))
    }

    fn handle_modify_namespace(&self, namespace_desc: TNamespaceDescriptor) -> thrift::Result<()> {
        answer("modifyNamespace", self.modify_namespace(namespace_desc))
    }

    fn handle_delete_namespace(&self, name: String) -> thrift::Result<()> {
        answer("deleteNamespace", self.delete_namespace(&name))
    }

    fn handle_get_namespace_descriptor(
        &self,
        name: String,
    ) -> thrift::Result<TNamespaceDescriptor> {
        answer("getNamespaceDescriptor", self.namespace_descriptor(&name))
    }

    fn handle_list_namespace_descriptors(&self) -> thrift::Result<Vec<TNamespaceDescriptor>> {
        answer("listNamespaceDescriptors", self.namespace_descriptors())
    }

    fn handle_list_namespaces(&self) -> thrift::Result<Vec<String>> {
        answer("listNamespaces", self.namespace_names())
    }

    fn handle_get_thrift_server_type(&self) -> thrift::Result<TThriftServerType> {
        Ok(TThriftServerType::TWO)
    }

    fn handle_get_cluster_id(&self) -> thrift::Result<String> {
        Ok(self.cluster_id())
    }

    fn handle_get_slow_log_responses(
        &self,
        server_names: BTreeSet<TServerName>,
        log_query_filter: TLogQueryFilter,
    ) -> thrift::Result<Vec<TOnlineLogRecord>> {
        answer(
            "getSlowLogResponses",
            self.slow_log_responses(&server_names, &log_query_filter),
        )
    }

    fn handle_clear_slow_log_responses(
        &self,
        server_names: BTreeSet<TServerName>,
    ) -> thrift::Result<Vec<bool>> {
        answer("clearSlowLogResponses", self.clear_slow_logs(&server_names))
    }

    fn handle_grant(&self, info: TAccessControlEntity) -> thrift::Result<bool> {
        answer("grant", self.change_permission(&info, true))
    }

    fn handle_revoke(&self, info: TAccessControlEntity) -> thrift::Result<bool> {
        answer("revoke", self.change_permission(&info, false))
    }
}
