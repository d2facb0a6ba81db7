//! Read-only mode (HBase's `hbase.thrift.readonly`, the Thrift2 server's `-ro`):
//! a [`Backend`] that serves every read of the one it wraps and refuses every
//! change, data or schema, with the error HBase's read-only server answers.
//!
//! Owns: [`ReadOnlyBackend`] and the refusal's wording.
//! Must not: tell reads from writes by anything but the [`Backend`] method called
//! (every change goes through one of the refusing methods).

use std::sync::Arc;

use bytes::Bytes;
use tabula_regionserver::{ReadSpec, ScanSpec};
use tabula_storage::tablet::Condition;
use tabula_storage::{Cell, Durability, FamilySchema, RowMutation};

use crate::backend::{
    Backend, BackendError, BackendResult, LoggedCall, NamespaceInfo, Permission, RegionInfo,
    TableInfo, TableScanner,
};
use tabula_coordinator::tables::TableSettings;

/// What a refused call hears (HBase's DoNotRetryIOException message).
pub const READ_ONLY_MESSAGE: &str = "Thrift Server is in Read-only mode.";

fn refused<T>() -> BackendResult<T> {
    Err(BackendError::Io {
        message: READ_ONLY_MESSAGE.to_owned(),
        retry: false,
    })
}

/// Serves the reads of `inner` and refuses its changes.
pub struct ReadOnlyBackend {
    inner: Arc<dyn Backend>,
}

impl ReadOnlyBackend {
    pub fn new(inner: Arc<dyn Backend>) -> Self {
        ReadOnlyBackend { inner }
    }
}

impl Backend for ReadOnlyBackend {
    fn list_namespaces(&self) -> BackendResult<Vec<NamespaceInfo>> {
        self.inner.list_namespaces()
    }

    fn namespace(&self, name: &str) -> BackendResult<NamespaceInfo> {
        self.inner.namespace(name)
    }

    fn create_namespace(&self, _ns: NamespaceInfo) -> BackendResult<()> {
        refused()
    }

    fn modify_namespace(&self, _ns: NamespaceInfo) -> BackendResult<()> {
        refused()
    }

    fn delete_namespace(&self, _name: &str) -> BackendResult<()> {
        refused()
    }

    fn list_tables(&self) -> BackendResult<Vec<TableInfo>> {
        self.inner.list_tables()
    }

    fn list_system_tables(&self) -> BackendResult<Vec<TableInfo>> {
        self.inner.list_system_tables()
    }

    fn table(&self, name: &[u8]) -> BackendResult<TableInfo> {
        self.inner.table(name)
    }

    fn table_durability(&self, name: &[u8]) -> BackendResult<Durability> {
        self.inner.table_durability(name)
    }

    fn create_table(
        &self,
        _name: &[u8],
        _families: Vec<FamilySchema>,
        _split_keys: Vec<Bytes>,
        _settings: TableSettings,
    ) -> BackendResult<()> {
        refused()
    }

    fn delete_table(&self, _name: &[u8]) -> BackendResult<()> {
        refused()
    }

    fn truncate_table(&self, _name: &[u8], _preserve_splits: bool) -> BackendResult<()> {
        refused()
    }

    fn enable_table(&self, _name: &[u8]) -> BackendResult<()> {
        refused()
    }

    fn disable_table(&self, _name: &[u8]) -> BackendResult<()> {
        refused()
    }

    fn add_family(&self, _table: &[u8], _family: FamilySchema) -> BackendResult<()> {
        refused()
    }

    fn modify_family(&self, _table: &[u8], _family: FamilySchema) -> BackendResult<()> {
        refused()
    }

    fn delete_family(&self, _table: &[u8], _family: &[u8]) -> BackendResult<()> {
        refused()
    }

    fn modify_table(
        &self,
        _table: &[u8],
        _families: Vec<FamilySchema>,
        _settings: TableSettings,
    ) -> BackendResult<()> {
        refused()
    }

    /// A compaction changes no data a client can read, only how it is stored.
    fn compact(&self, table_or_region: &[u8], major: bool) -> BackendResult<()> {
        self.inner.compact(table_or_region, major)
    }

    fn regions(&self, table: &[u8]) -> BackendResult<Vec<RegionInfo>> {
        self.inner.regions(table)
    }

    fn region_for_row(&self, table: &[u8], row: &[u8]) -> BackendResult<RegionInfo> {
        self.inner.region_for_row(table, row)
    }

    fn cluster_id(&self) -> String {
        self.inner.cluster_id()
    }

    fn slow_calls(&self, server: &str) -> BackendResult<Vec<LoggedCall>> {
        self.inner.slow_calls(server)
    }

    fn clear_slow_calls(&self, server: &str) -> BackendResult<bool> {
        self.inner.clear_slow_calls(server)
    }

    fn grant(&self, _permission: Permission) -> BackendResult<()> {
        refused()
    }

    fn revoke(&self, _permission: Permission) -> BackendResult<()> {
        refused()
    }

    fn get(&self, table: &[u8], row: &Bytes, spec: &ReadSpec) -> BackendResult<Vec<Cell>> {
        self.inner.get(table, row, spec)
    }

    fn mutate(
        &self,
        _table: &[u8],
        _mutation: &RowMutation,
        _durability: Durability,
    ) -> BackendResult<()> {
        refused()
    }

    fn mutate_batch(
        &self,
        _table: &[u8],
        _mutations: &[RowMutation],
        _durability: Durability,
    ) -> BackendResult<Vec<BackendResult<()>>> {
        refused()
    }

    fn check_and_mutate(
        &self,
        _table: &[u8],
        _condition: &Condition,
        _mutation: &RowMutation,
        _durability: Durability,
    ) -> BackendResult<bool> {
        refused()
    }

    /// An increment by 0 of every column writes nothing and returns the counters
    /// (happybase's `counter_get`): a read, served.
    fn increment(
        &self,
        table: &[u8],
        row: &Bytes,
        columns: &[(Bytes, Bytes, i64)],
        durability: Durability,
    ) -> BackendResult<Vec<Cell>> {
        if columns.iter().all(|(_, _, amount)| *amount == 0) {
            return self.inner.increment(table, row, columns, durability);
        }
        refused()
    }

    fn append(
        &self,
        _table: &[u8],
        _row: &Bytes,
        _columns: &[(Bytes, Bytes, Bytes)],
        _durability: Durability,
    ) -> BackendResult<Vec<Cell>> {
        refused()
    }

    fn scan(&self, table: &[u8], spec: ScanSpec) -> BackendResult<Box<dyn TableScanner>> {
        self.inner.scan(table, spec)
    }
}
