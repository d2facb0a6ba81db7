//! The cluster backend: [`Backend`] implemented by routing to regionservers and
//! asking the coordinator.
//!
//! Owns: checking a table's state before data calls, routing each row operation to
//! the tablet that holds the row (retrying with a fresh location when a tablet moved
//! or split), table-wide scans ([`scanner`]), and mapping coordinator and
//! regionserver errors onto [`BackendError`].
//! Must not: know Thrift, or implement storage semantics (regionservers do).

pub mod control;
pub mod remote;
pub mod retry;
pub mod router;
pub mod scanner;
pub mod unavailable;

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use tabula_coordinator::catalog::TabletLocation;
use tabula_coordinator::tables::{
    canonical_name, canonical_slice, NamespaceDescriptor, TableDescriptor,
};
use tabula_coordinator::{CoordError, Coordinator, ServerRef};

pub use control::Control;
use tabula_regionserver::{ReadSpec, RemoteFailure, RsError, RsResult, ScanSpec, TabletService};
use tabula_storage::tablet::Condition;
use tabula_storage::{Cell, Durability, FamilySchema, RowMutation};

use crate::backend::{
    Backend, BackendError, BackendResult, LoggedCall, NamespaceInfo, Permission, PermissionScope,
    RegionInfo, TableInfo, TableScanner,
};
use retry::{Backoff, Resend};
use router::Router;
use scanner::ClusterScanner;
use tabula_coordinator::tables::TableSettings;

/// The backend of one cluster.
pub struct ClusterBackend {
    coordinator: Arc<dyn Control>,
    router: Arc<Router>,
}

fn shown(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The region id of tablet `tablet` of a table created at `created_ms`: ids must
/// differ between regions, and the creation time plus the tablet id keeps
/// HBase's "creation ms" flavour and stays unique.
fn region_id(created_ms: i64, tablet: u64) -> i64 {
    created_ms.saturating_add(i64::try_from(tablet).unwrap_or(0))
}

/// Maps a regionserver error for table `table`.
/// Tablet groups of a batch gathered per regionserver (one call each).
type ServerBatches = Vec<(String, Vec<(Arc<TabletLocation>, Vec<usize>)>)>;

/// Gathers a batch's tablet groups by the server holding them, in first-seen order.
fn by_server(groups: Vec<(Arc<TabletLocation>, Vec<usize>)>) -> ServerBatches {
    let mut servers: ServerBatches = Vec::new();
    for (loc, rows) in groups {
        match servers.iter_mut().find(|(s, _)| *s == loc.server) {
            Some((_, tablets)) => tablets.push((loc, rows)),
            None => servers.push((loc.server.clone(), vec![(loc, rows)])),
        }
    }
    servers
}

/// Stores the outcome of row `i` of a batch.
fn set_result(results: &mut [Option<BackendResult<()>>], i: usize, r: BackendResult<()>) {
    if let Some(slot) = results.get_mut(i) {
        *slot = Some(r);
    }
}

/// Fails every row in `rows` with `e` (the first keeps it; the others get a copy
/// of its message, marked retryable as it was).
fn fail_rows(results: &mut [Option<BackendResult<()>>], rows: &[usize], e: BackendError) {
    let (message, retry) = (e.to_string(), is_retryable(&e));
    let mut first = Some(e);
    for &i in rows {
        let err = first.take().unwrap_or_else(|| BackendError::Io {
            message: message.clone(),
            retry,
        });
        set_result(results, i, Err(err));
    }
}

/// Whether `e` says a retry may succeed.
fn is_retryable(e: &BackendError) -> bool {
    matches!(e, BackendError::Io { retry: true, .. })
}

pub(crate) fn rs_error(table: &[u8], e: RsError) -> BackendError {
    use tabula_storage::Error as S;
    match e {
        RsError::BadFilter(f) => BackendError::BadFilter(f.to_string()),
        RsError::UnknownScanner { scanner } => BackendError::Io {
            message: format!("scanner {scanner} expired on its regionserver"),
            retry: false,
        },
        RsError::NotServing { tablet } => BackendError::Io {
            message: format!(
                "tablet {tablet} of table {} is not being served",
                shown(table)
            ),
            retry: true,
        },
        RsError::Unreachable { .. } => BackendError::Io {
            message: e.to_string(),
            retry: true,
        },
        // Only calls that must not go twice get here: whether it was carried out
        // is unknown, so the caller is not told a retry is safe.
        RsError::Interrupted { .. } => BackendError::Io {
            message: e.to_string(),
            retry: false,
        },
        RsError::Remote { kind, message } => match kind {
            RemoteFailure::BadFilter => BackendError::BadFilter(message),
            RemoteFailure::InvalidArgument => BackendError::InvalidArgument(message),
            RemoteFailure::Other { permanent } => BackendError::Io {
                message,
                retry: !permanent,
            },
        },
        RsError::Storage(s) => match s {
            S::UnknownFamily { family, .. } => BackendError::NoSuchFamily {
                table: shown(table),
                family,
            },
            S::EmptyRowKey
            | S::RowKeyTooLong { .. }
            | S::ValueTooLarge { .. }
            | S::InvalidTimestamp { .. }
            | S::InvalidArgument(_) => BackendError::InvalidArgument(s.to_string()),
            other => BackendError::Io {
                retry: !other.is_permanent(),
                message: other.to_string(),
            },
        },
    }
}

/// Maps a coordinator error.
fn coord_error(e: CoordError) -> BackendError {
    match e {
        CoordError::TableNotFound(t) => BackendError::TableNotFound(t),
        CoordError::TableExists(t) => BackendError::TableExists(t),
        CoordError::TableDisabled(t) => BackendError::TableDisabled(t),
        CoordError::TableNotDisabled(t) => BackendError::TableNotDisabled(t),
        CoordError::NamespaceNotFound(n) => BackendError::NamespaceNotFound(n),
        CoordError::NamespaceExists(n) => BackendError::NamespaceExists(n),
        CoordError::NamespaceNotEmpty(n) => BackendError::NamespaceNotEmpty(n),
        CoordError::NoSuchFamily { table, family } => BackendError::NoSuchFamily { table, family },
        CoordError::InvalidArgument(m) => BackendError::InvalidArgument(m),
        CoordError::Rs(e) => rs_error(b"", e),
        CoordError::Deposed(_) => BackendError::Io {
            message: e.to_string(),
            retry: false,
        },
        CoordError::Remote { message, retry } => BackendError::Io { message, retry },
        other => BackendError::Io {
            message: other.to_string(),
            retry: true,
        },
    }
}

/// Whether a data call reads rows or changes them (a read-only table refuses
/// changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
}

fn table_info(t: &TableDescriptor) -> TableInfo {
    TableInfo {
        name: t.name.clone(),
        families: t.families.clone(),
        enabled: t.enabled,
        durability: t.durability,
        attributes: t.attributes.clone(),
    }
}

impl ClusterBackend {
    /// A backend over the coordinator of this process (which also knows the
    /// regionservers).
    pub fn new(coordinator: Arc<Coordinator>) -> Self {
        Self::over(coordinator)
    }

    /// A backend over any control plane: the coordinator of this process, or the
    /// cluster a gateway of its own follows ([`remote::RemoteControl`]).
    pub fn over(control: Arc<dyn Control>) -> Self {
        ClusterBackend {
            router: Arc::new(Router::new(Arc::clone(&control))),
            coordinator: control,
        }
    }

    /// The router (location cache).
    pub fn router(&self) -> &Arc<Router> {
        &self.router
    }

    /// The canonical name of an enabled table (a part of `name`), or the error a
    /// data call must return (for a change to a read-only table too).
    fn enabled_table<'n>(&self, name: &'n [u8], access: Access) -> BackendResult<&'n [u8]> {
        let state = self
            .coordinator
            .table_state(name)
            .ok_or_else(|| BackendError::TableNotFound(shown(name)))?;
        let canonical = canonical_slice(name);
        if !state.enabled {
            return Err(BackendError::TableDisabled(shown(canonical)));
        }
        if access == Access::Write && state.read_only {
            return Err(BackendError::Io {
                message: format!("table {} is read only (READONLY => true)", shown(canonical)),
                retry: false,
            });
        }
        Ok(canonical)
    }

    /// The rows `todo` (indexes into `mutations`) grouped by the tablet now holding
    /// them, in row order within each group; rows whose tablet cannot be located
    /// for now go to `retry`, the others that cannot be located get their error in
    /// `results`.
    fn group_by_tablet(
        &self,
        table: &[u8],
        mutations: &[RowMutation],
        todo: &[usize],
        results: &mut [Option<BackendResult<()>>],
        retry: &mut Vec<usize>,
    ) -> Vec<(Arc<TabletLocation>, Vec<usize>)> {
        let mut groups: Vec<(Arc<TabletLocation>, Vec<usize>)> = Vec::new();
        for &i in todo {
            let Some(m) = mutations.get(i) else { continue };
            match self.router.locate(table, &m.row) {
                Ok(loc) => match groups
                    .iter_mut()
                    .find(|(l, _)| l.tablet_id == loc.tablet_id && l.server == loc.server)
                {
                    Some((_, rows)) => rows.push(i),
                    None => groups.push((loc, vec![i])),
                },
                Err(e) if retry::lookup_may_pass(&e) => retry.push(i),
                Err(e) => set_result(results, i, Err(e)),
            }
        }
        groups
    }

    /// Runs `f` on the tablet holding `row`, locating it again and resending
    /// while the tablet cannot be found for now or its regionserver answers that it
    /// does not serve it, cannot be reached, or (for calls `kind` allows to go
    /// twice) lost the connection under the call.
    fn on_row<T>(
        &self,
        table: &[u8],
        row: &[u8],
        (access, kind): (Access, Resend),
        f: impl Fn(&dyn TabletService, u64) -> RsResult<T>,
    ) -> BackendResult<T> {
        let t = self.enabled_table(table, access)?;
        if row.is_empty() {
            return Err(BackendError::InvalidArgument("row key is empty".into()));
        }
        let mut backoff = Backoff::new();
        loop {
            let (tablet, svc) = match self.router.route(t, row) {
                Ok(found) => found,
                Err(e) if retry::lookup_may_pass(&e) && backoff.wait() => continue,
                Err(e) => return Err(e),
            };
            if let ServerRef::Remote(_) = svc {
                crate::call_notes::waited_on_network();
            }
            match f(&*svc, tablet) {
                Ok(v) => return Ok(v),
                Err(e) if retry::resend(&e, kind) => {
                    self.router.invalidate_tablet(t, tablet);
                    if !backoff.wait() {
                        return Err(rs_error(t, e));
                    }
                }
                Err(e) => return Err(rs_error(t, e)),
            }
        }
    }

    fn region_info(&self, loc: &TabletLocation, created_ms: i64) -> RegionInfo {
        let (host, port) = match loc.server.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().unwrap_or(0)),
            None => (loc.server.clone(), 0),
        };
        let id = region_id(created_ms, loc.tablet_id);
        let mut name = loc.table.to_vec();
        name.push(b',');
        name.extend_from_slice(&loc.start_row);
        name.extend_from_slice(format!(",{id}.").as_bytes());
        RegionInfo {
            table: loc.table.clone(),
            start_key: loc.start_row.clone(),
            end_key: loc.end_row.clone(),
            id,
            name: Bytes::from(name),
            server_host: host,
            server_port: port,
            server_start_code: self
                .coordinator
                .server(&loc.server)
                .map_or(0, |s| s.start_code()),
        }
    }

    /// The regionserver named `server` (`host:port`, or a bare name).
    fn regionserver(&self, server: &str) -> BackendResult<Arc<dyn TabletService>> {
        self.coordinator
            .server(server)
            .ok_or_else(|| BackendError::Io {
                message: format!("{server} is not a regionserver of this cluster"),
                retry: false,
            })
    }

    /// The region names of `table`'s tablets by tablet id, as region locations
    /// give them, and the table's creation time (none for a missing table).
    fn region_names(&self, table: &str) -> (HashMap<u64, String>, Option<i64>) {
        let Some(t) = self.coordinator.table(table.as_bytes()) else {
            return (HashMap::new(), None);
        };
        let names = self
            .coordinator
            .table_tablets(&t.name)
            .unwrap_or_default()
            .iter()
            .map(|loc| {
                let name = shown(&self.region_info(loc, t.created_ms).name);
                (loc.tablet_id, name)
            })
            .collect();
        (names, Some(t.created_ms))
    }

    fn permission_key(p: &Permission) -> String {
        match &p.scope {
            PermissionScope::Table(t) => format!("table/{}/{}", shown(t), p.user),
            PermissionScope::Namespace(n) => format!("namespace/{n}/{}", p.user),
        }
    }
}

impl Backend for ClusterBackend {
    fn list_namespaces(&self) -> BackendResult<Vec<NamespaceInfo>> {
        Ok(self
            .coordinator
            .namespaces()
            .map_err(coord_error)?
            .into_iter()
            .map(|n| NamespaceInfo {
                name: n.name,
                configuration: n.configuration,
            })
            .collect())
    }

    fn namespace(&self, name: &str) -> BackendResult<NamespaceInfo> {
        let n = self.coordinator.namespace(name).map_err(coord_error)?;
        Ok(NamespaceInfo {
            name: n.name,
            configuration: n.configuration,
        })
    }

    fn create_namespace(&self, ns: NamespaceInfo) -> BackendResult<()> {
        self.coordinator
            .create_namespace(NamespaceDescriptor {
                name: ns.name,
                configuration: ns.configuration,
            })
            .map_err(coord_error)
    }

    fn modify_namespace(&self, ns: NamespaceInfo) -> BackendResult<()> {
        self.coordinator
            .modify_namespace(NamespaceDescriptor {
                name: ns.name,
                configuration: ns.configuration,
            })
            .map_err(coord_error)
    }

    fn delete_namespace(&self, name: &str) -> BackendResult<()> {
        self.coordinator.delete_namespace(name).map_err(coord_error)
    }

    fn list_tables(&self) -> BackendResult<Vec<TableInfo>> {
        Ok(self.coordinator.tables().iter().map(table_info).collect())
    }

    fn list_system_tables(&self) -> BackendResult<Vec<TableInfo>> {
        Ok(self
            .coordinator
            .system_tables()
            .iter()
            .map(table_info)
            .collect())
    }

    fn table(&self, name: &[u8]) -> BackendResult<TableInfo> {
        self.coordinator
            .table(name)
            .map(|t| table_info(&t))
            .ok_or_else(|| BackendError::TableNotFound(shown(name)))
    }

    fn table_durability(&self, name: &[u8]) -> BackendResult<Durability> {
        self.coordinator
            .table_durability(name)
            .map(Option::unwrap_or_default)
            .ok_or_else(|| BackendError::TableNotFound(shown(name)))
    }

    fn create_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        split_keys: Vec<Bytes>,
        settings: TableSettings,
    ) -> BackendResult<()> {
        self.coordinator
            .create_table(name, families, split_keys, settings)
            .map_err(coord_error)
    }

    fn delete_table(&self, name: &[u8]) -> BackendResult<()> {
        self.coordinator.delete_table(name).map_err(coord_error)?;
        self.router.forget_table(&canonical_name(name));
        Ok(())
    }

    fn truncate_table(&self, name: &[u8], preserve_splits: bool) -> BackendResult<()> {
        self.coordinator
            .truncate_table(name, preserve_splits)
            .map_err(coord_error)?;
        self.router.forget_table(&canonical_name(name));
        Ok(())
    }

    fn enable_table(&self, name: &[u8]) -> BackendResult<()> {
        self.coordinator.enable_table(name).map_err(coord_error)?;
        self.router.forget_table(&canonical_name(name));
        Ok(())
    }

    fn disable_table(&self, name: &[u8]) -> BackendResult<()> {
        self.coordinator.disable_table(name).map_err(coord_error)?;
        self.router.forget_table(&canonical_name(name));
        Ok(())
    }

    fn add_family(&self, table: &[u8], family: FamilySchema) -> BackendResult<()> {
        self.coordinator
            .add_family(table, family)
            .map_err(coord_error)
    }

    fn modify_family(&self, table: &[u8], family: FamilySchema) -> BackendResult<()> {
        self.coordinator
            .modify_family(table, family)
            .map_err(coord_error)
    }

    fn delete_family(&self, table: &[u8], family: &[u8]) -> BackendResult<()> {
        self.coordinator
            .delete_family(table, family)
            .map_err(coord_error)
    }

    fn modify_table(
        &self,
        table: &[u8],
        families: Vec<FamilySchema>,
        settings: TableSettings,
    ) -> BackendResult<()> {
        self.coordinator
            .modify_table(table, families, settings)
            .map_err(coord_error)
    }

    fn compact(&self, table_or_region: &[u8], major: bool) -> BackendResult<()> {
        if self.coordinator.table(table_or_region).is_some() {
            return self
                .coordinator
                .compact_table(table_or_region, major)
                .map_err(coord_error);
        }
        // A region name: `table,startKey,id.`
        for t in self.coordinator.tables() {
            if !table_or_region.starts_with(&t.name)
                || table_or_region.get(t.name.len()) != Some(&b',')
            {
                continue;
            }
            for loc in self
                .coordinator
                .table_tablets(&t.name)
                .map_err(coord_error)?
            {
                if self.region_info(&loc, t.created_ms).name.as_ref() == table_or_region {
                    return self
                        .coordinator
                        .compact_tablet(&loc, major)
                        .map_err(coord_error);
                }
            }
        }
        Err(BackendError::TableNotFound(shown(table_or_region)))
    }

    fn regions(&self, table: &[u8]) -> BackendResult<Vec<RegionInfo>> {
        let t = self
            .coordinator
            .table(table)
            .ok_or_else(|| BackendError::TableNotFound(shown(table)))?;
        let tablets = self
            .coordinator
            .table_tablets(&t.name)
            .map_err(coord_error)?;
        Ok(tablets
            .iter()
            .map(|l| self.region_info(l, t.created_ms))
            .collect())
    }

    fn region_for_row(&self, table: &[u8], row: &[u8]) -> BackendResult<RegionInfo> {
        let t = self
            .coordinator
            .table(table)
            .ok_or_else(|| BackendError::TableNotFound(shown(table)))?;
        let loc = self.router.locate(&t.name, row)?;
        Ok(self.region_info(&loc, t.created_ms))
    }

    fn cluster_id(&self) -> String {
        self.coordinator.cluster_id()
    }

    fn slow_calls(&self, server: &str) -> BackendResult<Vec<LoggedCall>> {
        let calls = self
            .regionserver(server)?
            .slow_calls()
            .map_err(|e| rs_error(b"", e))?;
        // Each table's regions read once, however many of its calls are logged.
        let mut tables: HashMap<String, (HashMap<u64, String>, Option<i64>)> = HashMap::new();
        Ok(calls
            .into_iter()
            .map(|call| {
                let (names, created) = tables
                    .entry(call.table.clone())
                    .or_insert_with(|| self.region_names(&call.table));
                // A tablet since split or dropped: its table and id, no start key.
                let region = names
                    .get(&call.tablet)
                    .cloned()
                    .unwrap_or_else(|| match created {
                        Some(c) => format!("{},,{}.", call.table, region_id(*c, call.tablet)),
                        None => format!("{},,{}.", call.table, call.tablet),
                    });
                LoggedCall { region, call }
            })
            .collect())
    }

    fn clear_slow_calls(&self, server: &str) -> BackendResult<bool> {
        self.regionserver(server)?
            .clear_slow_calls()
            .map_err(|e| rs_error(b"", e))
    }

    fn grant(&self, permission: Permission) -> BackendResult<()> {
        let key = Self::permission_key(&permission);
        let mut actions: Vec<char> = self
            .coordinator
            .permission(&key)
            .map_err(coord_error)?
            .unwrap_or_default()
            .chars()
            .collect();
        actions.extend(permission.actions.chars());
        actions.sort_unstable();
        actions.dedup();
        self.coordinator
            .put_permission(&key, &actions.into_iter().collect::<String>())
            .map_err(coord_error)
    }

    fn revoke(&self, permission: Permission) -> BackendResult<()> {
        let key = Self::permission_key(&permission);
        let current = self
            .coordinator
            .permission(&key)
            .map_err(coord_error)?
            .unwrap_or_default();
        let left: String = current
            .chars()
            .filter(|c| !permission.actions.contains(*c))
            .collect();
        if left.is_empty() {
            self.coordinator
                .remove_permission(&key)
                .map_err(coord_error)
        } else {
            self.coordinator
                .put_permission(&key, &left)
                .map_err(coord_error)
        }
    }

    fn get(&self, table: &[u8], row: &Bytes, spec: &ReadSpec) -> BackendResult<Vec<Cell>> {
        let read = (Access::Read, Resend::Safe);
        self.on_row(table, row, read, |s, t| s.get(t, row, spec))
    }

    fn mutate(
        &self,
        table: &[u8],
        mutation: &RowMutation,
        durability: Durability,
    ) -> BackendResult<()> {
        let write = (Access::Write, Resend::Safe);
        self.on_row(table, &mutation.row, write, |s, t| {
            s.mutate(t, mutation, durability)
        })
    }

    fn mutate_batch(
        &self,
        table: &[u8],
        mutations: &[RowMutation],
        durability: Durability,
    ) -> BackendResult<Vec<BackendResult<()>>> {
        let t = self.enabled_table(table, Access::Write)?;
        let mut results: Vec<Option<BackendResult<()>>> = mutations.iter().map(|_| None).collect();
        let mut todo = Vec::with_capacity(mutations.len());
        for (i, m) in mutations.iter().enumerate() {
            if m.row.is_empty() {
                let empty = BackendError::InvalidArgument("row key is empty".into());
                set_result(&mut results, i, Err(empty));
            } else {
                todo.push(i);
            }
        }
        let mut backoff = Backoff::new();
        loop {
            let mut again = Vec::new();
            let groups = self.group_by_tablet(t, mutations, &todo, &mut results, &mut again);
            for (server, tablets) in by_server(groups) {
                let svc = match self.router.server(&server) {
                    Ok(svc) => svc,
                    Err(e) => {
                        let rows: Vec<usize> = tablets
                            .iter()
                            .flat_map(|(_, r)| r.iter().copied())
                            .collect();
                        fail_rows(&mut results, &rows, e);
                        continue;
                    }
                };
                // Borrowed, not cloned: a row the tablet no longer serves is sent
                // again from `mutations` after the retry pause.
                let batches: Vec<(u64, Vec<&RowMutation>)> = tablets
                    .iter()
                    .map(|(loc, rows)| {
                        let batch = rows.iter().filter_map(|&i| mutations.get(i));
                        (loc.tablet_id, batch.collect())
                    })
                    .collect();
                let outcomes = svc.mutate_batch(&batches, durability);
                for ((loc, rows), outcome) in tablets.into_iter().zip(outcomes) {
                    match outcome {
                        Ok(per_row) => {
                            let mut moved = false;
                            for (&i, r) in rows.iter().zip(per_row) {
                                match r {
                                    Ok(()) => set_result(&mut results, i, Ok(())),
                                    Err(e) if retry::resend(&e, Resend::Safe) => {
                                        moved = true;
                                        again.push(i);
                                    }
                                    Err(e) => set_result(&mut results, i, Err(rs_error(t, e))),
                                }
                            }
                            if moved {
                                self.router.invalidate(t, &loc);
                            }
                        }
                        // Puts and deletes may go twice (as HBase's client resends
                        // them): a connection lost under the call is resent too.
                        Err(e) if retry::resend(&e, Resend::Safe) => {
                            self.router.invalidate(t, &loc);
                            again.extend(rows);
                        }
                        Err(e) => fail_rows(&mut results, &rows, rs_error(t, e)),
                    }
                }
            }
            if again.is_empty() {
                break;
            }
            if !backoff.wait() {
                let gone = rs_error(t, RsError::NotServing { tablet: 0 });
                fail_rows(&mut results, &again, gone);
                break;
            }
            again.sort_unstable();
            todo = again;
        }
        Ok(results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(BackendError::Io {
                        message: "row was not written".into(),
                        retry: true,
                    })
                })
            })
            .collect())
    }

    fn check_and_mutate(
        &self,
        table: &[u8],
        condition: &Condition,
        mutation: &RowMutation,
        durability: Durability,
    ) -> BackendResult<bool> {
        let write = (Access::Write, Resend::Unsafe);
        self.on_row(table, &mutation.row, write, |s, t| {
            s.check_and_mutate(t, condition, mutation, durability)
        })
    }

    fn increment(
        &self,
        table: &[u8],
        row: &Bytes,
        columns: &[(Bytes, Bytes, i64)],
        durability: Durability,
    ) -> BackendResult<Vec<Cell>> {
        // Increments by 0 write nothing (a counter read): a read-only table serves
        // them.
        let access = match columns.iter().all(|(_, _, amount)| *amount == 0) {
            true => Access::Read,
            false => Access::Write,
        };
        self.on_row(table, row, (access, Resend::Unsafe), |s, t| {
            s.increment(t, row, columns, durability)
        })
    }

    fn append(
        &self,
        table: &[u8],
        row: &Bytes,
        columns: &[(Bytes, Bytes, Bytes)],
        durability: Durability,
    ) -> BackendResult<Vec<Cell>> {
        let write = (Access::Write, Resend::Unsafe);
        self.on_row(table, row, write, |s, t| {
            s.append(t, row, columns, durability)
        })
    }

    fn scan(&self, table: &[u8], spec: ScanSpec) -> BackendResult<Box<dyn TableScanner>> {
        let t = self.enabled_table(table, Access::Read)?;
        if let Some(f) = &spec.read.filter {
            if !f.is_empty() {
                tabula_regionserver::filter::parse_filter(f)
                    .map_err(|e| BackendError::BadFilter(e.to_string()))?;
            }
        }
        Ok(Box::new(ClusterScanner::new(
            Arc::clone(&self.router),
            Bytes::copy_from_slice(t),
            spec,
        )))
    }
}
