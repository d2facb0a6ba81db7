//! A [`Backend`] that does no storage work: the ceiling the benchmarks compare
//! Tabula's point operations against (`tabula serve --null-backend`).
//!
//! Owns: [`NullBackend`]. It keeps a table and namespace catalog in memory, so clients
//! can create, list and drop tables as usual, and answers data calls without storing
//! anything: writes succeed and are forgotten, each requested column of a get comes
//! back as one cell holding a fixed value of the configured size, and scans end at
//! once. Everything above it (connection layer, Thrift decoding, the HBase handlers)
//! is the same code `tabula serve` runs, so the gap between this mode and the real
//! one is the cost of the storage path.
//! Must not: be used for anything but measurement; it keeps no data.

use std::collections::BTreeMap;

use bytes::Bytes;
use parking_lot::Mutex;
use tabula_regionserver::{ReadSpec, ScanSpec};
use tabula_storage::tablet::{Condition, RowResult};
use tabula_storage::{Cell, ColumnSelector, Durability, FamilySchema, RowMutation};

use crate::backend::{
    Backend, BackendError, BackendResult, LoggedCall, NamespaceInfo, Permission, RegionInfo,
    TableInfo, TableScanner,
};
use tabula_coordinator::tables::TableSettings;

/// Namespaces that always exist.
const BUILT_IN_NAMESPACES: [&str; 2] = ["default", "hbase"];

/// The do-nothing backend.
pub struct NullBackend {
    tables: Mutex<BTreeMap<Bytes, TableInfo>>,
    namespaces: Mutex<BTreeMap<String, NamespaceInfo>>,
    /// The value every read returns.
    value: Bytes,
}

impl NullBackend {
    /// A backend whose reads return `value_size`-byte values.
    pub fn new(value_size: usize) -> NullBackend {
        let namespaces = BUILT_IN_NAMESPACES
            .iter()
            .map(|n| {
                (
                    n.to_string(),
                    NamespaceInfo {
                        name: n.to_string(),
                        configuration: BTreeMap::new(),
                    },
                )
            })
            .collect();
        NullBackend {
            tables: Mutex::new(BTreeMap::new()),
            namespaces: Mutex::new(namespaces),
            value: Bytes::from(vec![b'v'; value_size]),
        }
    }

    fn display(name: &[u8]) -> String {
        String::from_utf8_lossy(name).into_owned()
    }

    /// Runs `f` on the named table's entry.
    fn with_table<T>(
        &self,
        name: &[u8],
        f: impl FnOnce(&mut TableInfo) -> BackendResult<T>,
    ) -> BackendResult<T> {
        let mut tables = self.tables.lock();
        match tables.get_mut(name) {
            Some(t) => f(t),
            None => Err(BackendError::TableNotFound(Self::display(name))),
        }
    }

    /// Fails unless the table exists and is enabled.
    fn serving(&self, name: &[u8]) -> BackendResult<()> {
        self.with_table(name, |t| {
            if t.enabled {
                Ok(())
            } else {
                Err(BackendError::TableDisabled(Self::display(name)))
            }
        })
    }

    fn region(&self, table: &[u8]) -> RegionInfo {
        let mut name = table.to_vec();
        name.extend_from_slice(b",,1.");
        RegionInfo {
            table: Bytes::copy_from_slice(table),
            start_key: Bytes::new(),
            end_key: Bytes::new(),
            id: 1,
            name: Bytes::from(name),
            server_host: "localhost".into(),
            server_port: 0,
            server_start_code: 0,
        }
    }

    fn cell(&self, row: &Bytes, family: &Bytes, qualifier: &Bytes) -> Cell {
        Cell {
            row: row.clone(),
            family: family.clone(),
            qualifier: qualifier.clone(),
            timestamp: 1,
            value: self.value.clone(),
        }
    }
}

impl Backend for NullBackend {
    fn list_namespaces(&self) -> BackendResult<Vec<NamespaceInfo>> {
        Ok(self.namespaces.lock().values().cloned().collect())
    }

    fn namespace(&self, name: &str) -> BackendResult<NamespaceInfo> {
        self.namespaces
            .lock()
            .get(name)
            .cloned()
            .ok_or_else(|| BackendError::NamespaceNotFound(name.to_string()))
    }

    fn create_namespace(&self, ns: NamespaceInfo) -> BackendResult<()> {
        let mut all = self.namespaces.lock();
        if all.contains_key(&ns.name) {
            return Err(BackendError::NamespaceExists(ns.name));
        }
        all.insert(ns.name.clone(), ns);
        Ok(())
    }

    fn modify_namespace(&self, ns: NamespaceInfo) -> BackendResult<()> {
        let mut all = self.namespaces.lock();
        match all.get_mut(&ns.name) {
            Some(entry) => {
                *entry = ns;
                Ok(())
            }
            None => Err(BackendError::NamespaceNotFound(ns.name)),
        }
    }

    fn delete_namespace(&self, name: &str) -> BackendResult<()> {
        if BUILT_IN_NAMESPACES.contains(&name) {
            return Err(BackendError::InvalidArgument(format!(
                "namespace {name} cannot be deleted"
            )));
        }
        let prefix = format!("{name}:");
        if self
            .tables
            .lock()
            .keys()
            .any(|t| t.starts_with(prefix.as_bytes()))
        {
            return Err(BackendError::NamespaceNotEmpty(name.to_string()));
        }
        match self.namespaces.lock().remove(name) {
            Some(_) => Ok(()),
            None => Err(BackendError::NamespaceNotFound(name.to_string())),
        }
    }

    fn list_tables(&self) -> BackendResult<Vec<TableInfo>> {
        Ok(self.tables.lock().values().cloned().collect())
    }

    fn list_system_tables(&self) -> BackendResult<Vec<TableInfo>> {
        Ok(Vec::new())
    }

    fn table(&self, name: &[u8]) -> BackendResult<TableInfo> {
        self.with_table(name, |t| Ok(t.clone()))
    }

    fn table_durability(&self, name: &[u8]) -> BackendResult<Durability> {
        self.with_table(name, |t| Ok(t.durability.unwrap_or_default()))
    }

    fn create_table(
        &self,
        name: &[u8],
        mut families: Vec<FamilySchema>,
        _split_keys: Vec<Bytes>,
        settings: TableSettings,
    ) -> BackendResult<()> {
        let mut tables = self.tables.lock();
        if tables.contains_key(name) {
            return Err(BackendError::TableExists(Self::display(name)));
        }
        families.sort_by(|a, b| a.name.cmp(&b.name));
        let name = Bytes::copy_from_slice(name);
        tables.insert(
            name.clone(),
            TableInfo {
                name,
                families,
                enabled: true,
                durability: settings.durability,
                attributes: settings.attributes,
            },
        );
        Ok(())
    }

    fn delete_table(&self, name: &[u8]) -> BackendResult<()> {
        let mut tables = self.tables.lock();
        match tables.get(name) {
            None => Err(BackendError::TableNotFound(Self::display(name))),
            Some(t) if t.enabled => Err(BackendError::TableNotDisabled(Self::display(name))),
            Some(_) => {
                tables.remove(name);
                Ok(())
            }
        }
    }

    fn truncate_table(&self, name: &[u8], _preserve_splits: bool) -> BackendResult<()> {
        self.with_table(name, |t| {
            if t.enabled {
                return Err(BackendError::TableNotDisabled(Self::display(name)));
            }
            t.enabled = true;
            Ok(())
        })
    }

    fn enable_table(&self, name: &[u8]) -> BackendResult<()> {
        self.with_table(name, |t| {
            t.enabled = true;
            Ok(())
        })
    }

    fn disable_table(&self, name: &[u8]) -> BackendResult<()> {
        self.with_table(name, |t| {
            t.enabled = false;
            Ok(())
        })
    }

    fn add_family(&self, table: &[u8], family: FamilySchema) -> BackendResult<()> {
        self.with_table(table, |t| {
            if t.families.iter().any(|f| f.name == family.name) {
                return Err(BackendError::InvalidArgument(format!(
                    "column family {} already exists",
                    Self::display(&family.name)
                )));
            }
            t.families.push(family);
            t.families.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(())
        })
    }

    fn modify_family(&self, table: &[u8], family: FamilySchema) -> BackendResult<()> {
        self.with_table(table, |t| {
            match t.families.iter_mut().find(|f| f.name == family.name) {
                Some(f) => {
                    *f = family;
                    Ok(())
                }
                None => Err(BackendError::NoSuchFamily {
                    table: Self::display(table),
                    family: Self::display(&family.name),
                }),
            }
        })
    }

    fn delete_family(&self, table: &[u8], family: &[u8]) -> BackendResult<()> {
        self.with_table(table, |t| {
            let before = t.families.len();
            t.families.retain(|f| f.name.as_ref() != family);
            if t.families.len() == before {
                return Err(BackendError::NoSuchFamily {
                    table: Self::display(table),
                    family: Self::display(family),
                });
            }
            Ok(())
        })
    }

    fn modify_table(
        &self,
        table: &[u8],
        mut families: Vec<FamilySchema>,
        settings: TableSettings,
    ) -> BackendResult<()> {
        self.with_table(table, |t| {
            families.sort_by(|a, b| a.name.cmp(&b.name));
            t.families = families;
            t.durability = settings.durability;
            t.attributes = settings.attributes;
            Ok(())
        })
    }

    fn compact(&self, table_or_region: &[u8], _major: bool) -> BackendResult<()> {
        let table = table_or_region
            .split(|b| *b == b',')
            .next()
            .unwrap_or(table_or_region);
        self.with_table(table, |_| Ok(()))
    }

    fn regions(&self, table: &[u8]) -> BackendResult<Vec<RegionInfo>> {
        self.with_table(table, |_| Ok(()))?;
        Ok(vec![self.region(table)])
    }

    fn region_for_row(&self, table: &[u8], _row: &[u8]) -> BackendResult<RegionInfo> {
        self.with_table(table, |_| Ok(()))?;
        Ok(self.region(table))
    }

    fn cluster_id(&self) -> String {
        "tabula-null-backend".into()
    }

    fn slow_calls(&self, _server: &str) -> BackendResult<Vec<LoggedCall>> {
        // No storage work, so no tablet call to log.
        Ok(Vec::new())
    }

    fn clear_slow_calls(&self, _server: &str) -> BackendResult<bool> {
        Ok(false)
    }

    fn grant(&self, _permission: Permission) -> BackendResult<()> {
        Ok(())
    }

    fn revoke(&self, _permission: Permission) -> BackendResult<()> {
        Ok(())
    }

    fn get(&self, table: &[u8], row: &Bytes, spec: &ReadSpec) -> BackendResult<Vec<Cell>> {
        self.serving(table)?;
        if spec.columns.is_empty() {
            let families = self.with_table(table, |t| {
                Ok(t.families
                    .iter()
                    .map(|f| f.name.clone())
                    .collect::<Vec<_>>())
            })?;
            return Ok(families
                .iter()
                .map(|f| self.cell(row, f, &Bytes::new()))
                .collect());
        }
        Ok(spec
            .columns
            .iter()
            .map(|c| match c {
                ColumnSelector::Column(f, q) => self.cell(row, f, q),
                ColumnSelector::Family(f) => self.cell(row, f, &Bytes::new()),
            })
            .collect())
    }

    fn mutate(
        &self,
        table: &[u8],
        _mutation: &RowMutation,
        _durability: Durability,
    ) -> BackendResult<()> {
        self.serving(table)
    }

    fn mutate_batch(
        &self,
        table: &[u8],
        mutations: &[RowMutation],
        _durability: Durability,
    ) -> BackendResult<Vec<BackendResult<()>>> {
        self.serving(table)?;
        Ok(mutations.iter().map(|_| Ok(())).collect())
    }

    fn check_and_mutate(
        &self,
        table: &[u8],
        _condition: &Condition,
        _mutation: &RowMutation,
        _durability: Durability,
    ) -> BackendResult<bool> {
        self.serving(table)?;
        Ok(true)
    }

    fn increment(
        &self,
        table: &[u8],
        row: &Bytes,
        columns: &[(Bytes, Bytes, i64)],
        _durability: Durability,
    ) -> BackendResult<Vec<Cell>> {
        self.serving(table)?;
        Ok(columns
            .iter()
            .map(|(f, q, by)| Cell {
                value: Bytes::copy_from_slice(&by.to_be_bytes()),
                ..self.cell(row, f, q)
            })
            .collect())
    }

    fn append(
        &self,
        table: &[u8],
        row: &Bytes,
        columns: &[(Bytes, Bytes, Bytes)],
        _durability: Durability,
    ) -> BackendResult<Vec<Cell>> {
        self.serving(table)?;
        Ok(columns
            .iter()
            .map(|(f, q, v)| Cell {
                value: v.clone(),
                ..self.cell(row, f, q)
            })
            .collect())
    }

    fn scan(&self, table: &[u8], _spec: ScanSpec) -> BackendResult<Box<dyn TableScanner>> {
        self.serving(table)?;
        Ok(Box::new(EmptyScanner))
    }
}

/// A scan that has nothing to return.
struct EmptyScanner;

impl TableScanner for EmptyScanner {
    fn next_rows(&mut self, _n: usize) -> BackendResult<Vec<RowResult>> {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn family(name: &'static str) -> FamilySchema {
        FamilySchema::new(Bytes::from_static(name.as_bytes()))
    }

    #[test]
    fn tables_can_be_created_listed_and_dropped() {
        let b = NullBackend::new(10);
        b.create_table(b"t", vec![family("cf")], vec![], Default::default())
            .unwrap();
        assert!(matches!(
            b.create_table(b"t", vec![family("cf")], vec![], Default::default()),
            Err(BackendError::TableExists(_))
        ));
        assert_eq!(b.list_tables().unwrap().len(), 1);
        assert!(matches!(
            b.delete_table(b"t"),
            Err(BackendError::TableNotDisabled(_))
        ));
        b.disable_table(b"t").unwrap();
        assert!(matches!(
            b.mutate(
                b"t",
                &RowMutation::new(Bytes::from_static(b"r")),
                Durability::Sync
            ),
            Err(BackendError::TableDisabled(_))
        ));
        b.delete_table(b"t").unwrap();
        assert!(b.list_tables().unwrap().is_empty());
    }

    #[test]
    fn gets_return_one_fixed_size_cell_per_column() {
        let b = NullBackend::new(1000);
        b.create_table(
            b"t",
            vec![family("a"), family("b")],
            vec![],
            Default::default(),
        )
        .unwrap();
        let row = Bytes::from_static(b"r");
        let spec = ReadSpec {
            columns: vec![ColumnSelector::Column(
                Bytes::from_static(b"a"),
                Bytes::from_static(b"q"),
            )],
            ..ReadSpec::default()
        };
        let cells = b.get(b"t", &row, &spec).unwrap();
        assert_eq!(cells.len(), 1);
        assert_eq!(cells[0].value.len(), 1000);
        assert_eq!(cells[0].qualifier.as_ref(), b"q");
        let all = b.get(b"t", &row, &ReadSpec::default()).unwrap();
        assert_eq!(all.len(), 2);
        assert!(matches!(
            b.get(b"missing", &row, &spec),
            Err(BackendError::TableNotFound(_))
        ));
    }
}
