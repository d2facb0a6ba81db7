//! The gateway's view of the database: table-level operations the Thrift handlers
//! translate HBase calls into.
//!
//! Owns: the [`Backend`] trait, its data types and [`BackendError`]. The Thrift1 and
//! Thrift2 handlers depend only on this; [`crate::cluster`] implements it by routing
//! through the METADATA tablets to regionservers and by asking the coordinator.
//! Must not: know about Thrift types or wire formats.

use std::collections::BTreeMap;

use bytes::Bytes;
use tabula_coordinator::tables::TableSettings;
use tabula_regionserver::slow_log::SlowCall;
use tabula_regionserver::{ReadSpec, ScanSpec};
use tabula_storage::tablet::{Condition, RowResult};
use tabula_storage::{Cell, Durability, FamilySchema, RowMutation};

/// A table as clients see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    /// Name as clients spell it: `table` in the default namespace, else `ns:table`.
    pub name: Bytes,
    /// Column families, sorted by name.
    pub families: Vec<FamilySchema>,
    pub enabled: bool,
    /// The commit-log mode of writes that name none (HBase's table DURABILITY;
    /// `None`: USE_DEFAULT, a synced log).
    pub durability: Option<Durability>,
    /// HBase's table values (`MAX_FILESIZE`, ...), as the client set them.
    pub attributes: std::collections::BTreeMap<Bytes, Bytes>,
}

/// A call of a regionserver's slow-call log, with the name of the region it
/// served (`table,startKey,id.` as region locations name it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggedCall {
    pub call: SlowCall,
    pub region: String,
}

/// One region (tablet) of a table, as HBase's region APIs describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionInfo {
    pub table: Bytes,
    /// First row (inclusive); empty at the table start.
    pub start_key: Bytes,
    /// End row (exclusive); empty at the table end.
    pub end_key: Bytes,
    /// Region id (unique; HBase uses the creation time in ms).
    pub id: i64,
    /// Region name: `table,startKey,id.`
    pub name: Bytes,
    /// Host and port of the server holding it.
    pub server_host: String,
    pub server_port: i32,
    /// When that server started (ms since the epoch; 0 when unknown): HBase's
    /// start code.
    pub server_start_code: i64,
}

/// A namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamespaceInfo {
    pub name: String,
    pub configuration: BTreeMap<String, String>,
}

/// Scope of an access-control entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionScope {
    Table(Bytes),
    Namespace(String),
}

/// An access-control entry (grant/revoke).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permission {
    pub user: String,
    pub scope: PermissionScope,
    /// Action letters: R, W, X, C, A.
    pub actions: String,
}

/// The permission letters HBase knows: Read, Write, eXec, Create, Admin.
const ACTION_LETTERS: &str = "RWXCA";

impl Permission {
    /// A grant or revoke as both Thrift APIs describe it: `scope` is the
    /// TPermissionScope value (0 TABLE, needing `table`; 1 NAMESPACE, needing
    /// `namespace`) and `actions` letters of R, W, X, C, A (any case). The error
    /// says what to change.
    pub fn from_request(
        user: &str,
        scope: i32,
        table: Option<&[u8]>,
        namespace: Option<&str>,
        actions: &str,
    ) -> Result<Permission, String> {
        let scope = match scope {
            0 => match table {
                Some(t) if !t.is_empty() => PermissionScope::Table(Bytes::copy_from_slice(t)),
                _ => return Err("scope TABLE needs tableName".into()),
            },
            1 => match namespace {
                Some(n) if !n.is_empty() => PermissionScope::Namespace(n.to_string()),
                _ => return Err("scope NAMESPACE needs nsName".into()),
            },
            other => {
                return Err(format!(
                    "unknown permission scope {other}; expected TABLE (0) or NAMESPACE (1)"
                ))
            }
        };
        let actions = actions.to_ascii_uppercase();
        if let Some(bad) = actions.chars().find(|c| !ACTION_LETTERS.contains(*c)) {
            return Err(format!(
                "unknown permission action '{bad}'; actions are letters of R, W, X, C, A"
            ));
        }
        Ok(Permission {
            user: user.to_string(),
            scope,
            actions,
        })
    }
}

/// Why a backend call failed. The handlers map each variant to the HBase exception
/// clients expect.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("table {0} does not exist")]
    TableNotFound(String),
    #[error("table {0} already exists")]
    TableExists(String),
    #[error("table {0} is disabled")]
    TableDisabled(String),
    #[error("table {0} is enabled")]
    TableNotDisabled(String),
    #[error("namespace {0} does not exist")]
    NamespaceNotFound(String),
    #[error("namespace {0} already exists")]
    NamespaceExists(String),
    #[error("namespace {0} is not empty")]
    NamespaceNotEmpty(String),
    #[error("column family {family} does not exist in table {table}")]
    NoSuchFamily { table: String, family: String },
    /// A bad request: the message says what to change.
    #[error("{0}")]
    InvalidArgument(String),
    /// A filter string that does not parse or build.
    #[error("{0}")]
    BadFilter(String),
    /// A region name or row that matches no region.
    #[error("{0}")]
    RegionNotFound(String),
    /// Storage or cluster failure; `retry` says whether trying again may succeed.
    #[error("{message}")]
    Io { message: String, retry: bool },
}

impl BackendError {
    /// True when the same call may succeed later (HBase's canRetry).
    pub fn can_retry(&self) -> bool {
        matches!(self, BackendError::Io { retry: true, .. })
    }
}

/// Result type of backend calls.
pub type BackendResult<T> = std::result::Result<T, BackendError>;

/// A scan across the tablets of a table.
pub trait TableScanner: Send {
    /// Up to `n` results; an empty vector means the scan is over.
    fn next_rows(&mut self, n: usize) -> BackendResult<Vec<RowResult>>;
}

/// Applies `planned` rows through [`Backend::mutate_batch`], one batch per run of
/// consecutive rows with the same durability (so rows keep their order). The error
/// is table-level; otherwise one result per row, in order.
pub fn mutate_in_runs(
    backend: &dyn Backend,
    table: &[u8],
    planned: Vec<(RowMutation, Durability)>,
) -> BackendResult<Vec<BackendResult<()>>> {
    let mut results = Vec::with_capacity(planned.len());
    let mut run: Vec<RowMutation> = Vec::new();
    let mut run_durability = None;
    for (rm, durability) in planned {
        if let Some(d) = run_durability.filter(|&d| d != durability) {
            results.extend(backend.mutate_batch(table, &run, d)?);
            run.clear();
        }
        run_durability = Some(durability);
        run.push(rm);
    }
    if let Some(d) = run_durability {
        results.extend(backend.mutate_batch(table, &run, d)?);
    }
    Ok(results)
}

/// Everything the Thrift handlers need from the database.
pub trait Backend: Send + Sync {
    // ---- namespaces
    fn list_namespaces(&self) -> BackendResult<Vec<NamespaceInfo>>;
    fn namespace(&self, name: &str) -> BackendResult<NamespaceInfo>;
    fn create_namespace(&self, ns: NamespaceInfo) -> BackendResult<()>;
    fn modify_namespace(&self, ns: NamespaceInfo) -> BackendResult<()>;
    /// Fails unless the namespace is empty; `default` and `hbase` cannot be deleted.
    fn delete_namespace(&self, name: &str) -> BackendResult<()>;

    // ---- tables
    /// User tables (system tables excluded).
    fn list_tables(&self) -> BackendResult<Vec<TableInfo>>;
    /// System tables (`hbase:meta` and friends), for Thrift2's includeSysTables.
    fn list_system_tables(&self) -> BackendResult<Vec<TableInfo>>;
    fn table(&self, name: &[u8]) -> BackendResult<TableInfo>;
    /// The commit-log mode the table gives writes that name none (a Thrift2 write
    /// with no TDurability or USE_DEFAULT); a synced log unless the table says
    /// otherwise. On the write path: implementations must not copy the table.
    fn table_durability(&self, name: &[u8]) -> BackendResult<Durability>;
    /// Creates a table with one region per split key + 1 whose writes that name
    /// no durability get `durability` (`None`: a synced log).
    fn create_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        split_keys: Vec<Bytes>,
        settings: TableSettings,
    ) -> BackendResult<()>;
    /// The table must be disabled.
    fn delete_table(&self, name: &[u8]) -> BackendResult<()>;
    /// The table must be disabled; it comes back empty and enabled, with its old
    /// region boundaries if `preserve_splits`, as HBase's truncate does.
    fn truncate_table(&self, name: &[u8], preserve_splits: bool) -> BackendResult<()>;
    fn enable_table(&self, name: &[u8]) -> BackendResult<()>;
    fn disable_table(&self, name: &[u8]) -> BackendResult<()>;
    fn add_family(&self, table: &[u8], family: FamilySchema) -> BackendResult<()>;
    fn modify_family(&self, table: &[u8], family: FamilySchema) -> BackendResult<()>;
    fn delete_family(&self, table: &[u8], family: &[u8]) -> BackendResult<()>;
    /// Replaces the whole family list and the table's durability (Thrift2
    /// modifyTable).
    fn modify_table(
        &self,
        table: &[u8],
        families: Vec<FamilySchema>,
        settings: TableSettings,
    ) -> BackendResult<()>;
    /// Compacts a table, or one region when given a region name.
    fn compact(&self, table_or_region: &[u8], major: bool) -> BackendResult<()>;
    /// The table's regions in row order; a missing table gives NotFound.
    fn regions(&self, table: &[u8]) -> BackendResult<Vec<RegionInfo>>;
    /// The region holding `row`.
    fn region_for_row(&self, table: &[u8], row: &[u8]) -> BackendResult<RegionInfo>;
    /// An identifier of this cluster.
    fn cluster_id(&self) -> String;
    /// The slow-call log of regionserver `server` (`host:port`, as region
    /// locations name it), newest first, each call with its region's name.
    fn slow_calls(&self, server: &str) -> BackendResult<Vec<LoggedCall>>;
    /// Forgets the slow-call log of regionserver `server`; false when it keeps none.
    fn clear_slow_calls(&self, server: &str) -> BackendResult<bool>;
    /// Records a grant (Tabula does not authenticate clients, so grants are stored and
    /// reported but not enforced).
    fn grant(&self, permission: Permission) -> BackendResult<()>;
    fn revoke(&self, permission: Permission) -> BackendResult<()>;

    // ---- data
    fn get(&self, table: &[u8], row: &Bytes, spec: &ReadSpec) -> BackendResult<Vec<Cell>>;
    fn mutate(
        &self,
        table: &[u8],
        mutation: &RowMutation,
        durability: Durability,
    ) -> BackendResult<()>;
    /// Applies RowMutations of many rows (each atomic on its own row, the batch not
    /// atomic), sharing commit-log waits. The outer error is table-level (missing,
    /// disabled); otherwise one result per mutation, in order.
    fn mutate_batch(
        &self,
        table: &[u8],
        mutations: &[RowMutation],
        durability: Durability,
    ) -> BackendResult<Vec<BackendResult<()>>>;
    fn check_and_mutate(
        &self,
        table: &[u8],
        condition: &Condition,
        mutation: &RowMutation,
        durability: Durability,
    ) -> BackendResult<bool>;
    fn increment(
        &self,
        table: &[u8],
        row: &Bytes,
        columns: &[(Bytes, Bytes, i64)],
        durability: Durability,
    ) -> BackendResult<Vec<Cell>>;
    fn append(
        &self,
        table: &[u8],
        row: &Bytes,
        columns: &[(Bytes, Bytes, Bytes)],
        durability: Durability,
    ) -> BackendResult<Vec<Cell>>;
    /// Opens a scan over the table; `spec.batch` splits wide rows.
    fn scan(&self, table: &[u8], spec: ScanSpec) -> BackendResult<Box<dyn TableScanner>>;
}
