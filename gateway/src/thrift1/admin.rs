//! Thrift1 administration and metadata calls: table lifecycle, column
//! descriptors, regions, compactions, cluster identity, grants.
//!
//! Owns: translating these calls onto [`Backend`](crate::backend::Backend) and
//! HBase's answers for their edge cases (AlreadyExists on createTable, `[]` from
//! getTableRegions for a missing table, meta-key parsing in getRegionInfo).
//! Must not: touch table data.

use std::collections::BTreeMap;

use tabula_thrift::hbase::{ColumnDescriptor, TAccessControlEntity, TRegionInfo};

use super::convert::{descriptor_from_family, family_from_descriptor, tregion};
use super::errors::{Thrift1Error, Thrift1Result};
use super::Thrift1Handler;
use crate::backend::{BackendError, Permission};

/// Splits an `hbase:meta` row key (`table,row,regionId...`) into table and row.
/// The row is everything between the first `,` and the last one (row keys may hold
/// commas); with a single `,` it is everything after it.
pub fn parse_meta_key(key: &[u8]) -> Option<(&[u8], &[u8])> {
    let first = key.iter().position(|&b| b == b',')?;
    let table = key.get(..first)?;
    let rest = key.get(first + 1..)?;
    let row = match rest.iter().rposition(|&b| b == b',') {
        Some(last) => rest.get(..last)?,
        None => rest,
    };
    Some((table, row))
}

impl Thrift1Handler {
    /// getTableNames: user tables.
    pub fn table_names(&self) -> Thrift1Result<Vec<Vec<u8>>> {
        Ok(self
            .backend
            .list_tables()?
            .into_iter()
            .map(|t| t.name.to_vec())
            .collect())
    }

    /// getTableNamesWithIsTableEnabled.
    pub fn table_names_enabled(&self) -> Thrift1Result<BTreeMap<Vec<u8>, bool>> {
        Ok(self
            .backend
            .list_tables()?
            .into_iter()
            .map(|t| (t.name.to_vec(), t.enabled))
            .collect())
    }

    /// isTableEnabled.
    pub fn is_table_enabled(&self, table: &[u8]) -> Thrift1Result<bool> {
        Ok(self.backend.table(table)?.enabled)
    }

    /// enableTable.
    pub fn enable_table(&self, table: &[u8]) -> Thrift1Result<()> {
        Ok(self.backend.enable_table(table)?)
    }

    /// disableTable.
    pub fn disable_table(&self, table: &[u8]) -> Thrift1Result<()> {
        Ok(self.backend.disable_table(table)?)
    }

    /// createTable: AlreadyExists when the name is taken; descriptors validated as
    /// HBase does (IllegalArgument); no families is an IOError.
    pub fn create_table(
        &self,
        table: &[u8],
        descriptors: &[ColumnDescriptor],
    ) -> Thrift1Result<()> {
        match self.backend.table(table) {
            Ok(_) => return Err(Thrift1Error::AlreadyExists),
            Err(BackendError::TableNotFound(_)) => {}
            Err(other) => return Err(other.into()),
        }
        let mut families = Vec::with_capacity(descriptors.len());
        for cd in descriptors {
            let f = family_from_descriptor(cd)?;
            if families
                .iter()
                .any(|g: &tabula_storage::FamilySchema| g.name == f.name)
            {
                return Err(Thrift1Error::IllegalArgument(format!(
                    "java.lang.IllegalArgumentException: Family '{}' already exists so cannot be added",
                    String::from_utf8_lossy(&f.name)
                )));
            }
            families.push(f);
        }
        if families.is_empty() {
            return Err(Thrift1Error::DoNotRetry(format!(
                "Table {} should have at least one column family",
                String::from_utf8_lossy(table)
            )));
        }
        match self
            .backend
            .create_table(table, families, Vec::new(), Default::default())
        {
            Ok(()) => Ok(()),
            Err(BackendError::TableExists(_)) => Err(Thrift1Error::AlreadyExists),
            Err(BackendError::InvalidArgument(m)) => Err(Thrift1Error::IllegalArgument(format!(
                "java.lang.IllegalArgumentException: {m}"
            ))),
            Err(other) => Err(other.into()),
        }
    }

    /// deleteTable: the table must exist and be disabled.
    pub fn delete_table(&self, table: &[u8]) -> Thrift1Result<()> {
        match self.backend.delete_table(table) {
            Ok(()) => Ok(()),
            Err(BackendError::TableNotFound(t)) => {
                Err(Thrift1Error::Io(format!("table does not exist: {t}")))
            }
            Err(other) => Err(other.into()),
        }
    }

    /// getColumnDescriptors: keyed `family:`.
    pub fn column_descriptors(
        &self,
        table: &[u8],
    ) -> Thrift1Result<BTreeMap<Vec<u8>, ColumnDescriptor>> {
        let info = self.backend.table(table)?;
        Ok(info
            .families
            .iter()
            .map(descriptor_from_family)
            .filter_map(|cd| cd.name.clone().map(|n| (n, cd)))
            .collect())
    }

    /// getTableRegions: `[]` for a missing table.
    pub fn table_regions(&self, table: &[u8]) -> Thrift1Result<Vec<TRegionInfo>> {
        match self.backend.regions(table) {
            Ok(regions) => Ok(regions.iter().map(tregion).collect()),
            Err(BackendError::TableNotFound(_)) => Ok(Vec::new()),
            Err(other) => Err(other.into()),
        }
    }

    /// getRegionInfo: the region holding the row named by an `hbase:meta` key.
    pub fn region_info(&self, meta_key: &[u8]) -> Thrift1Result<TRegionInfo> {
        let not_found = |why: &str| {
            Thrift1Error::Io(format!(
                "Cannot find row in hbase:meta, row={} ({why}; expected 'table,row,...')",
                String::from_utf8_lossy(meta_key)
            ))
        };
        let (table, row) =
            parse_meta_key(meta_key).ok_or_else(|| not_found("no ',' after the table name"))?;
        match self.backend.region_for_row(table, row) {
            Ok(r) => Ok(tregion(&r)),
            Err(BackendError::TableNotFound(t)) => {
                Err(not_found(&format!("table {t} does not exist")))
            }
            Err(BackendError::RegionNotFound(m)) => Err(not_found(&m)),
            Err(other) => Err(other.into()),
        }
    }

    /// compact / majorCompact: a region name, else a table name.
    pub fn compact(&self, table_or_region: &[u8], major: bool) -> Thrift1Result<()> {
        Ok(self.backend.compact(table_or_region, major)?)
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
    ) -> Thrift1Result<bool> {
        let permission = Permission::from_request(
            &info.username,
            info.scope.0,
            info.table_name.as_deref(),
            info.ns_name.as_deref(),
            &info.actions,
        )
        .map_err(Thrift1Error::DoNotRetry)?;
        if grant {
            self.backend.grant(permission)?;
        } else {
            self.backend.revoke(permission)?;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_keys_split_at_the_first_and_last_comma() {
        assert_eq!(
            parse_meta_key(b"t,row,99999999999999"),
            Some((&b"t"[..], &b"row"[..]))
        );
        assert_eq!(parse_meta_key(b"t,a,b,1."), Some((&b"t"[..], &b"a,b"[..])));
        assert_eq!(parse_meta_key(b"t,row"), Some((&b"t"[..], &b"row"[..])));
        assert_eq!(parse_meta_key(b"t,,1"), Some((&b"t"[..], &b""[..])));
        assert_eq!(parse_meta_key(b"norow"), None);
    }
}
