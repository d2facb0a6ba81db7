//! Thrift2 administration calls: tables, column families, namespaces, regions,
//! grants, cluster identity, the slow-call log.
//!
//! Owns: translating these calls onto [`Backend`](crate::backend::Backend) with
//! HBase 2.x's answers (pattern calls match whole names, a missing namespace fails
//! the by-namespace calls, getTableDescriptors skips missing tables,
//! isTableAvailable is false for a missing or disabled table).
//! Must not: touch table data.

use std::collections::BTreeMap;

use bytes::Bytes;
use fancy_regex::Regex;
use tabula_thrift::hbase2::{
    TAccessControlEntity, TColumnFamilyDescriptor, THRegionLocation, TNamespaceDescriptor,
    TTableDescriptor, TTableName,
};

use super::convert::{
    family_from_descriptor, namespace_of, region_location, table_descriptor, table_name,
    table_settings, ttable_name, DEFAULT_NAMESPACE,
};
use super::errors::{Thrift2Error, Thrift2Result};
use super::Thrift2Handler;
use crate::backend::{BackendError, NamespaceInfo, Permission, TableInfo};

/// A Java-style `matches()` pattern (look-around and back-references allowed): the
/// whole name must match. A pattern that does not compile is an INTERNAL_ERROR, as
/// Java's unchecked PatternSyntaxException is in HBase.
fn whole_name_pattern(regex: &str) -> Thrift2Result<Option<Regex>> {
    if regex.is_empty() {
        return Ok(None);
    }
    Regex::new(&format!("^(?:{regex})$"))
        .map(Some)
        .map_err(|e| Thrift2Error::Internal(format!("bad table name pattern {regex:?}: {e}")))
}

/// Whether `pattern` matches the table `name`; a default-namespace table also
/// matches as `default:name`, as in HBase.
fn name_matches(pattern: &Regex, name: &[u8]) -> bool {
    let name = String::from_utf8_lossy(name);
    if pattern.is_match(&name).unwrap_or(false) {
        return true;
    }
    !name.contains(':')
        && pattern
            .is_match(&format!("{DEFAULT_NAMESPACE}:{name}"))
            .unwrap_or(false)
}

impl Thrift2Handler {
    fn tables_matching(&self, regex: &str, include_sys: bool) -> Thrift2Result<Vec<TableInfo>> {
        let pattern = whole_name_pattern(regex)?;
        let mut tables = self.backend.list_tables()?;
        if include_sys {
            tables.extend(self.backend.list_system_tables()?);
        }
        Ok(tables
            .into_iter()
            .filter(|t| pattern.as_ref().is_none_or(|p| name_matches(p, &t.name)))
            .collect())
    }

    fn tables_in_namespace(&self, ns: &str) -> Thrift2Result<Vec<TableInfo>> {
        self.backend.namespace(ns)?;
        Ok(self
            .backend
            .list_tables()?
            .into_iter()
            .filter(|t| namespace_of(&t.name) == ns)
            .collect())
    }

    /// getTableDescriptor.
    pub fn table_descriptor(&self, name: &TTableName) -> Thrift2Result<TTableDescriptor> {
        let info = self.backend.table(&table_name(name)?)?;
        Ok(table_descriptor(&info))
    }

    /// getTableDescriptors: the tables that exist, in the order asked.
    pub fn table_descriptors(&self, names: &[TTableName]) -> Thrift2Result<Vec<TTableDescriptor>> {
        let mut out = Vec::with_capacity(names.len());
        for n in names {
            match self.backend.table(&table_name(n)?) {
                Ok(info) => out.push(table_descriptor(&info)),
                Err(BackendError::TableNotFound(_)) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(out)
    }

    /// tableExists.
    pub fn table_exists(&self, name: &TTableName) -> Thrift2Result<bool> {
        match self.backend.table(&table_name(name)?) {
            Ok(_) => Ok(true),
            Err(BackendError::TableNotFound(_)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// getTableDescriptorsByPattern: an empty pattern matches every table.
    pub fn table_descriptors_by_pattern(
        &self,
        regex: &str,
        include_sys: bool,
    ) -> Thrift2Result<Vec<TTableDescriptor>> {
        Ok(self
            .tables_matching(regex, include_sys)?
            .iter()
            .map(table_descriptor)
            .collect())
    }

    /// getTableNamesByPattern.
    pub fn table_names_by_pattern(
        &self,
        regex: &str,
        include_sys: bool,
    ) -> Thrift2Result<Vec<TTableName>> {
        Ok(self
            .tables_matching(regex, include_sys)?
            .iter()
            .map(|t| ttable_name(&t.name))
            .collect())
    }

    /// getTableDescriptorsByNamespace.
    pub fn table_descriptors_by_namespace(&self, ns: &str) -> Thrift2Result<Vec<TTableDescriptor>> {
        Ok(self
            .tables_in_namespace(ns)?
            .iter()
            .map(table_descriptor)
            .collect())
    }

    /// getTableNamesByNamespace.
    pub fn table_names_by_namespace(&self, ns: &str) -> Thrift2Result<Vec<TTableName>> {
        Ok(self
            .tables_in_namespace(ns)?
            .iter()
            .map(|t| ttable_name(&t.name))
            .collect())
    }

    /// createTable: at least one family; `split_keys` give n+1 regions.
    pub fn create_table(
        &self,
        desc: &TTableDescriptor,
        split_keys: Vec<Vec<u8>>,
    ) -> Thrift2Result<()> {
        let name = table_name(&desc.table_name)?;
        let mut families = Vec::new();
        for d in desc.columns.as_deref().unwrap_or_default() {
            let f = family_from_descriptor(d)?;
            if families
                .iter()
                .any(|g: &tabula_storage::FamilySchema| g.name == f.name)
            {
                return Err(Thrift2Error::Invalid(format!(
                    "Family '{}' already exists so cannot be added",
                    String::from_utf8_lossy(&f.name)
                )));
            }
            families.push(f);
        }
        if families.is_empty() {
            return Err(Thrift2Error::Invalid(format!(
                "Table {} should have at least one column family",
                String::from_utf8_lossy(&name)
            )));
        }
        let splits = split_keys.into_iter().map(Bytes::from).collect();
        Ok(self
            .backend
            .create_table(&name, families, splits, table_settings(desc))?)
    }

    /// deleteTable: the table must be disabled.
    pub fn delete_table(&self, name: &TTableName) -> Thrift2Result<()> {
        Ok(self.backend.delete_table(&table_name(name)?)?)
    }

    /// truncateTable: the table must be disabled; it comes back empty and enabled.
    pub fn truncate_table(&self, name: &TTableName, preserve_splits: bool) -> Thrift2Result<()> {
        Ok(self
            .backend
            .truncate_table(&table_name(name)?, preserve_splits)?)
    }

    /// enableTable.
    pub fn enable_table(&self, name: &TTableName) -> Thrift2Result<()> {
        Ok(self.backend.enable_table(&table_name(name)?)?)
    }

    /// disableTable.
    pub fn disable_table(&self, name: &TTableName) -> Thrift2Result<()> {
        Ok(self.backend.disable_table(&table_name(name)?)?)
    }

    /// isTableEnabled (a missing table is an error).
    pub fn is_table_enabled(&self, name: &TTableName) -> Thrift2Result<bool> {
        Ok(self.backend.table(&table_name(name)?)?.enabled)
    }

    /// isTableDisabled (a missing table is an error).
    pub fn is_table_disabled(&self, name: &TTableName) -> Thrift2Result<bool> {
        Ok(!self.backend.table(&table_name(name)?)?.enabled)
    }

    /// isTableAvailable: enabled with every region served; false when missing.
    pub fn is_table_available(&self, name: &TTableName) -> Thrift2Result<bool> {
        let name = table_name(name)?;
        match self.backend.table(&name) {
            Ok(info) if info.enabled => Ok(!self.backend.regions(&name)?.is_empty()),
            Ok(_) | Err(BackendError::TableNotFound(_)) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// isTableAvailableWithSplit: available, and every split key starts a region.
    pub fn is_table_available_with_split(
        &self,
        name: &TTableName,
        split_keys: &[Vec<u8>],
    ) -> Thrift2Result<bool> {
        if !self.is_table_available(name)? {
            return Ok(false);
        }
        let regions = self.backend.regions(&table_name(name)?)?;
        Ok(split_keys
            .iter()
            .all(|k| regions.iter().any(|r| r.start_key.as_ref() == k.as_slice())))
    }

    /// addColumnFamily.
    pub fn add_family(
        &self,
        name: &TTableName,
        column: &TColumnFamilyDescriptor,
    ) -> Thrift2Result<()> {
        let f = family_from_descriptor(column)?;
        Ok(self.backend.add_family(&table_name(name)?, f)?)
    }

    /// modifyColumnFamily.
    pub fn modify_family(
        &self,
        name: &TTableName,
        column: &TColumnFamilyDescriptor,
    ) -> Thrift2Result<()> {
        let f = family_from_descriptor(column)?;
        Ok(self.backend.modify_family(&table_name(name)?, f)?)
    }

    /// deleteColumnFamily.
    pub fn delete_family(&self, name: &TTableName, family: &[u8]) -> Thrift2Result<()> {
        Ok(self.backend.delete_family(&table_name(name)?, family)?)
    }

    /// modifyTable: the descriptor's families, durability and attributes replace the table's
    /// (an unset durability is USE_DEFAULT, as HBase's whole new descriptor).
    pub fn modify_table(&self, desc: &TTableDescriptor) -> Thrift2Result<()> {
        let name = table_name(&desc.table_name)?;
        let families = desc
            .columns
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(family_from_descriptor)
            .collect::<Thrift2Result<Vec<_>>>()?;
        if families.is_empty() {
            return Err(Thrift2Error::Invalid(format!(
                "Table {} should have at least one column family",
                String::from_utf8_lossy(&name)
            )));
        }
        Ok(self
            .backend
            .modify_table(&name, families, table_settings(desc))?)
    }

    /// getRegionLocation: the region holding `row` and its server.
    pub fn region_location(&self, table: &[u8], row: &[u8]) -> Thrift2Result<THRegionLocation> {
        Ok(region_location(&self.backend.region_for_row(table, row)?))
    }

    /// getAllRegionLocations, in row order.
    pub fn all_region_locations(&self, table: &[u8]) -> Thrift2Result<Vec<THRegionLocation>> {
        Ok(self
            .backend
            .regions(table)?
            .iter()
            .map(region_location)
            .collect())
    }

    /// createNamespace.
    pub fn create_namespace(&self, desc: TNamespaceDescriptor) -> Thrift2Result<()> {
        Ok(self.backend.create_namespace(namespace_info(desc)?)?)
    }

    /// modifyNamespace.
    pub fn modify_namespace(&self, desc: TNamespaceDescriptor) -> Thrift2Result<()> {
        Ok(self.backend.modify_namespace(namespace_info(desc)?)?)
    }

    /// deleteNamespace: only an empty one; `default` and `hbase` stay.
    pub fn delete_namespace(&self, name: &str) -> Thrift2Result<()> {
        Ok(self.backend.delete_namespace(name)?)
    }

    /// getNamespaceDescriptor.
    pub fn namespace_descriptor(&self, name: &str) -> Thrift2Result<TNamespaceDescriptor> {
        Ok(tnamespace(self.backend.namespace(name)?))
    }

    /// listNamespaceDescriptors.
    pub fn namespace_descriptors(&self) -> Thrift2Result<Vec<TNamespaceDescriptor>> {
        Ok(self
            .backend
            .list_namespaces()?
            .into_iter()
            .map(tnamespace)
            .collect())
    }

    /// listNamespaces.
    pub fn namespace_names(&self) -> Thrift2Result<Vec<String>> {
        Ok(self
            .backend
            .list_namespaces()?
            .into_iter()
            .map(|n| n.name)
            .collect())
    }

    /// getClusterId.
    pub fn cluster_id(&self) -> String {
        self.backend.cluster_id()
    }

    /// grant / revoke: scope TABLE needs tableName, NAMESPACE needs nsName; actions
    /// are letters of R, W, X, C, A.
    pub fn change_permission(
        &self,
        info: &TAccessControlEntity,
        grant: bool,
    ) -> Thrift2Result<bool> {
        let permission = Permission::from_request(
            &info.username,
            info.scope.0,
            info.table_name.as_deref().map(str::as_bytes),
            info.ns_name.as_deref(),
            &info.actions,
        )
        .map_err(Thrift2Error::Invalid)?;
        if grant {
            self.backend.grant(permission)?;
        } else {
            self.backend.revoke(permission)?;
        }
        Ok(true)
    }
}

fn namespace_info(desc: TNamespaceDescriptor) -> Thrift2Result<NamespaceInfo> {
    if desc.name.is_empty() {
        return Err(Thrift2Error::Invalid("namespace name is empty".into()));
    }
    Ok(NamespaceInfo {
        name: desc.name,
        configuration: desc.configuration.unwrap_or_default(),
    })
}

fn tnamespace(n: NamespaceInfo) -> TNamespaceDescriptor {
    TNamespaceDescriptor::new(n.name, BTreeMap::from_iter(n.configuration))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_names() {
        let p = whole_name_pattern("t.*").unwrap().unwrap();
        assert!(name_matches(&p, b"t1"));
        assert!(!name_matches(&p, b"xt1"));
        let d = whole_name_pattern("default:t1").unwrap().unwrap();
        assert!(name_matches(&d, b"t1"));
        assert!(!name_matches(&d, b"ns:t1"));
        let ahead = whole_name_pattern("a_(?!skip).*").unwrap().unwrap();
        assert!(name_matches(&ahead, b"a_keep"));
        assert!(!name_matches(&ahead, b"a_skip"));
        assert!(whole_name_pattern("").unwrap().is_none());
        assert!(matches!(
            whole_name_pattern("("),
            Err(Thrift2Error::Internal(_))
        ));
    }
}
