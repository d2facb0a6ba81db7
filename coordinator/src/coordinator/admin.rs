//! Table, namespace and permission administration: what HBase's Admin calls do,
//! each under the coordinator's admin lock, its descriptor stored in the lock
//! service and its tablets created, opened, closed or dropped.
//!
//! Owns: namespaces, create/delete/truncate/enable/disable of tables, family and
//! table schema changes, compactions on request, stored permissions.
//! Must not: place tablets on servers by itself (`assignment` does) or move them.

use std::collections::BTreeMap;

use bytes::Bytes;
use tabula_storage::tablet::TabletDescriptor;
use tabula_storage::{FamilySchema, TableSchema};

use crate::catalog::{self, TabletLocation};
use crate::directory::{self, NAMESPACES_PREFIX, PERMISSIONS_PREFIX};
use crate::lock::Txn;
use crate::tables::{
    canonical_name, encode_split_plan, split_name, validate_attributes, validate_namespace,
    validate_table_name, NamespaceDescriptor, TableDescriptor, TableSettings, DEFAULT_NAMESPACE,
    SYSTEM_NAMESPACE,
};

use super::{
    deleting_path, now_ms, plan_path, shown, table_path, CoordError, CoordResult, Coordinator,
    Placement,
};

/// Times compact_table lists a table's tablets again after some split or moved.
const COMPACT_TABLE_ROUNDS: usize = 10;

/// First wait before listing a table's tablets again during a compaction; it
/// doubles each round, up to 64 times (about 3 s over all rounds).
const COMPACT_TABLE_BACKOFF: std::time::Duration = std::time::Duration::from_millis(10);

impl Coordinator {
    /// Every namespace.
    pub fn namespaces(&self) -> Vec<NamespaceDescriptor> {
        self.namespaces.read().values().cloned().collect()
    }

    /// One namespace.
    pub fn namespace(&self, name: &str) -> CoordResult<NamespaceDescriptor> {
        self.namespaces
            .read()
            .get(name)
            .cloned()
            .ok_or_else(|| CoordError::NamespaceNotFound(name.into()))
    }

    /// Creates a namespace.
    pub fn create_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()> {
        validate_namespace(&ns.name).map_err(CoordError::InvalidArgument)?;
        let _g = self.admin.lock();
        if self.namespaces.read().contains_key(&ns.name) {
            return Err(CoordError::NamespaceExists(ns.name));
        }
        self.fenced(Txn::new().put(format!("{NAMESPACES_PREFIX}{}", ns.name), ns.encode()))?;
        self.namespaces.write().insert(ns.name.clone(), ns);
        Ok(())
    }

    /// Replaces a namespace's configuration.
    pub fn modify_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()> {
        let _g = self.admin.lock();
        if !self.namespaces.read().contains_key(&ns.name) {
            return Err(CoordError::NamespaceNotFound(ns.name));
        }
        self.fenced(Txn::new().put(format!("{NAMESPACES_PREFIX}{}", ns.name), ns.encode()))?;
        self.namespaces.write().insert(ns.name.clone(), ns);
        Ok(())
    }

    /// Deletes an empty namespace (never `default` or `hbase`).
    pub fn delete_namespace(&self, name: &str) -> CoordResult<()> {
        let _g = self.admin.lock();
        if name == DEFAULT_NAMESPACE || name == SYSTEM_NAMESPACE {
            return Err(CoordError::InvalidArgument(format!(
                "namespace {name} cannot be deleted"
            )));
        }
        if !self.namespaces.read().contains_key(name) {
            return Err(CoordError::NamespaceNotFound(name.into()));
        }
        let used = self
            .tables
            .load()
            .keys()
            .any(|t| split_name(t).0 == name.as_bytes());
        if used {
            return Err(CoordError::NamespaceNotEmpty(name.into()));
        }
        self.fenced(Txn::new().delete(format!("{NAMESPACES_PREFIX}{name}")))?;
        self.namespaces.write().remove(name);
        Ok(())
    }

    // ------------------------------------------------------------ tables

    /// Creates a table with one tablet per split key + 1, enabled, with
    /// `settings` (its writes that name no durability get the settings' durability,
    /// `None`: a synced log).
    pub fn create_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        mut split_keys: Vec<Bytes>,
        settings: TableSettings,
    ) -> CoordResult<()> {
        validate_table_name(name).map_err(CoordError::InvalidArgument)?;
        validate_attributes(&settings.attributes).map_err(CoordError::InvalidArgument)?;
        let name = canonical_name(name);
        let (ns, _) = split_name(&name);
        let ns = shown(ns);
        if ns == SYSTEM_NAMESPACE {
            return Err(CoordError::InvalidArgument(format!(
                "tables cannot be created in the {SYSTEM_NAMESPACE} namespace"
            )));
        }
        if families.is_empty() {
            return Err(CoordError::InvalidArgument(format!(
                "table {} must have at least one column family",
                shown(&name)
            )));
        }
        let families = TableSchema::new(shown(&name), families)
            .map_err(|e| CoordError::InvalidArgument(e.to_string()))?
            .families()
            .to_vec();
        split_keys.sort();
        split_keys.dedup();
        if split_keys.iter().any(|k| k.is_empty()) {
            return Err(CoordError::InvalidArgument(
                "split keys must not be empty".into(),
            ));
        }
        let _g = self.admin.lock();
        if !self.namespaces.read().contains_key(&ns) {
            return Err(CoordError::NamespaceNotFound(ns));
        }
        if self.tables.load().contains_key(&name) {
            return Err(CoordError::TableExists(shown(&name)));
        }
        let desc = TableDescriptor {
            name: name.clone(),
            families,
            enabled: true,
            created_ms: now_ms(),
            durability: settings.durability,
            attributes: settings.attributes,
        };
        // The tablets' schema carries what the attributes set (flush size,
        // compactions).
        let schema = desc
            .schema()
            .map_err(|e| CoordError::InvalidArgument(e.to_string()))?;
        // The descriptor and the plan of its first tablets in one write: a restart
        // after a crash midway finishes the plan (see `repair_catalog`).
        let plan = Txn::new().put(plan_path(&name), encode_split_plan(&split_keys));
        self.store_table_with(&desc, plan)?;
        fail::fail_point!("create-table-descriptor-stored");
        self.create_tablets(&desc, &schema, &split_keys)?;
        self.fenced(Txn::new().delete(plan_path(&name)))?;
        Ok(())
    }

    fn create_tablets(
        &self,
        desc: &TableDescriptor,
        schema: &TableSchema,
        split_keys: &[Bytes],
    ) -> CoordResult<()> {
        let n = split_keys.len() as u64 + 1;
        let first_id = self.allocate_ids(n)?;
        let mut bounds = Vec::with_capacity(split_keys.len() + 2);
        bounds.push(Bytes::new());
        bounds.extend(split_keys.iter().cloned());
        bounds.push(Bytes::new());
        let mut placement = Placement::new();
        for (i, w) in bounds.windows(2).enumerate() {
            let (start, end) = match w {
                [s, e] => (s.clone(), e.clone()),
                _ => continue,
            };
            let server = placement.pick(self)?;
            let id = first_id + i as u64;
            server.open_tablet(&TabletDescriptor {
                id,
                schema: schema.clone(),
                start_row: start.clone(),
                end_row: end.clone(),
            })?;
            self.write_catalog(&TabletLocation {
                table: desc.name.clone(),
                start_row: start,
                end_row: end,
                tablet_id: id,
                server: server.name(),
            })?;
            fail::fail_point!("create-table-tablet-written");
        }
        Ok(())
    }

    /// Deletes a disabled table: its catalog rows, files and descriptor. The intent
    /// is stored first: a coordinator that restarts before the delete is done
    /// finishes it.
    pub fn delete_table(&self, name: &[u8]) -> CoordResult<()> {
        let _g = self.admin.lock();
        let t = self.table_or_err(name)?;
        if t.enabled {
            return Err(CoordError::TableNotDisabled(shown(&t.name)));
        }
        self.fenced(Txn::new().put(deleting_path(&t.name), Vec::new()))?;
        self.finish_delete(&t)
    }

    /// The rest of a delete whose intent is stored: drops the table's tablets,
    /// then its descriptor, any plan and the intent in one write.
    pub(super) fn finish_delete(&self, t: &TableDescriptor) -> CoordResult<()> {
        self.drop_tablets(&t.name)?;
        self.fenced(
            Txn::new()
                .delete(table_path(&t.name))
                .delete(plan_path(&t.name))
                .delete(deleting_path(&t.name)),
        )?;
        self.tables.rcu(|tables| {
            let mut tables = BTreeMap::clone(tables);
            tables.remove(&t.name);
            tables
        });
        Ok(())
    }

    /// Removes every tablet of a (disabled) table.
    fn drop_tablets(&self, name: &Bytes) -> CoordResult<()> {
        let tablets = self.table_tablets(name)?;
        // Any live server may delete a directory of the shared storage: the
        // tablet's own where it is live, else the first (no server is asked for
        // its tablets).
        let any = self
            .servers()
            .into_iter()
            .next()
            .ok_or(CoordError::NoServers)?;
        for loc in &tablets {
            let own = self.server(&loc.server);
            if let Some(s) = &own {
                s.close_tablet(loc.tablet_id)?;
            }
            let delete = catalog::delete_mutation(name, &loc.end_row, self.catalog_timestamp());
            self.apply_catalog(&delete)?;
            own.as_ref().unwrap_or(&any).destroy_tablet(loc.tablet_id)?;
            fail::fail_point!("drop-tablets-tablet-dropped");
        }
        Ok(())
    }

    /// Empties a disabled table; it comes back enabled. The split keys its new
    /// tablets get (the old ones, or none) are stored first: a coordinator that
    /// restarts before the truncate is done finishes it with them.
    pub fn truncate_table(&self, name: &[u8], preserve_splits: bool) -> CoordResult<()> {
        let _g = self.admin.lock();
        let t = self.table_or_err(name)?;
        if t.enabled {
            return Err(CoordError::TableNotDisabled(shown(&t.name)));
        }
        let keys: Vec<Bytes> = if preserve_splits {
            let mut ends: Vec<Bytes> = self
                .table_tablets(&t.name)?
                .into_iter()
                .map(|l| l.end_row)
                .filter(|e| !e.is_empty())
                .collect();
            ends.sort();
            ends.dedup();
            ends
        } else {
            Vec::new()
        };
        self.fenced(Txn::new().put(plan_path(&t.name), encode_split_plan(&keys)))?;
        self.finish_truncate(t, &keys)
    }

    /// The rest of a truncate whose split keys are stored: drops the table's
    /// tablets, enables it, makes its new tablets, forgets the plan.
    pub(super) fn finish_truncate(
        &self,
        mut t: TableDescriptor,
        keys: &[Bytes],
    ) -> CoordResult<()> {
        self.drop_tablets(&t.name)?;
        let schema = t
            .schema()
            .map_err(|e| CoordError::InvalidArgument(e.to_string()))?;
        t.enabled = true;
        self.store_table(&t)?;
        self.create_tablets(&t, &schema, keys)?;
        self.fenced(Txn::new().delete(plan_path(&t.name)))
    }

    /// Enables a disabled table (opens its tablets).
    pub fn enable_table(&self, name: &[u8]) -> CoordResult<()> {
        let _g = self.admin.lock();
        let mut t = self.table_or_err(name)?;
        if t.enabled {
            return Err(CoordError::TableNotDisabled(shown(&t.name)));
        }
        self.open_table_tablets(&t)?;
        t.enabled = true;
        self.store_table(&t)
    }

    /// Disables an enabled table (closes its tablets after flushing them).
    pub fn disable_table(&self, name: &[u8]) -> CoordResult<()> {
        let _g = self.admin.lock();
        let mut t = self.table_or_err(name)?;
        if !t.enabled {
            return Err(CoordError::TableDisabled(shown(&t.name)));
        }
        t.enabled = false;
        self.store_table(&t)?;
        self.close_table_tablets(&t.name)?;
        Ok(())
    }

    /// Applies a new family list to a table and its open tablets.
    fn change_families(
        &self,
        name: &[u8],
        edit: impl FnOnce(&mut TableDescriptor, &str) -> CoordResult<()>,
    ) -> CoordResult<()> {
        let _g = self.admin.lock();
        let mut t = self.table_or_err(name)?;
        let table = shown(&t.name);
        edit(&mut t, &table)?;
        if t.families.is_empty() {
            return Err(CoordError::InvalidArgument(format!(
                "table {table} must keep at least one column family"
            )));
        }
        let schema = t
            .schema()
            .map_err(|e| CoordError::InvalidArgument(e.to_string()))?;
        t.families = schema.families().to_vec();
        self.store_table(&t)?;
        if t.enabled {
            for loc in self.table_tablets(&t.name)? {
                if let Some(s) = self.server(&loc.server) {
                    s.update_schema(loc.tablet_id, &schema)?;
                }
            }
        }
        Ok(())
    }

    /// Adds a column family.
    pub fn add_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()> {
        self.change_families(name, |t, table| {
            let fams = &mut t.families;
            if fams.iter().any(|f| f.name == family.name) {
                return Err(CoordError::InvalidArgument(format!(
                    "column family {} already exists in table {table}",
                    shown(&family.name)
                )));
            }
            fams.push(family);
            Ok(())
        })
    }

    /// Changes a column family's settings.
    pub fn modify_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()> {
        self.change_families(name, |t, table| {
            let slot = t
                .families
                .iter_mut()
                .find(|f| f.name == family.name)
                .ok_or_else(|| CoordError::NoSuchFamily {
                    table: table.into(),
                    family: shown(&family.name),
                })?;
            *slot = family;
            Ok(())
        })
    }

    /// Removes a column family (its data becomes unreadable and is dropped by the
    /// next major compaction).
    pub fn delete_family(&self, name: &[u8], family: &[u8]) -> CoordResult<()> {
        self.change_families(name, |t, table| {
            let fams = &mut t.families;
            let before = fams.len();
            fams.retain(|f| f.name.as_ref() != family);
            if fams.len() == before {
                return Err(CoordError::NoSuchFamily {
                    table: table.into(),
                    family: shown(family),
                });
            }
            Ok(())
        })
    }

    /// Replaces the family list, the durability of writes that name none and the
    /// attributes.
    pub fn modify_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        settings: TableSettings,
    ) -> CoordResult<()> {
        validate_attributes(&settings.attributes).map_err(CoordError::InvalidArgument)?;
        self.change_families(name, |t, _| {
            t.families = families;
            t.durability = settings.durability;
            t.attributes = settings.attributes;
            Ok(())
        })
    }

    /// Compacts every tablet of a table.
    pub fn compact_table(&self, name: &[u8], major: bool) -> CoordResult<()> {
        let t = self.table_or_err(name)?;
        if !t.enabled {
            return Err(CoordError::TableDisabled(shown(&t.name)));
        }
        // A tablet split (or moved) while this runs answers "not serving": the
        // table's tablets are listed again and the new ones compacted.
        let mut done = std::collections::HashSet::new();
        let mut last_not_serving = None;
        for round in 0..COMPACT_TABLE_ROUNDS {
            if round > 0 {
                // A split answers "not serving" from the moment its parent closes
                // until its children are in the METADATA table: give it time.
                std::thread::sleep(COMPACT_TABLE_BACKOFF * (1 << round.min(6)));
            }
            let mut changed = false;
            for loc in self.table_tablets(&t.name)? {
                if done.contains(&loc.tablet_id) {
                    continue;
                }
                match self
                    .server_or_err(&loc.server)?
                    .compact_tablet(loc.tablet_id, major)
                {
                    Ok(()) => {
                        done.insert(loc.tablet_id);
                    }
                    Err(e) if e.is_not_serving() => {
                        changed = true;
                        last_not_serving = Some(e);
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            if !changed {
                return Ok(());
            }
        }
        // The tablets kept changing: report the last "not serving" (retryable).
        match last_not_serving {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Compacts one tablet.
    pub fn compact_tablet(&self, loc: &TabletLocation, major: bool) -> CoordResult<()> {
        Ok(self
            .server_or_err(&loc.server)?
            .compact_tablet(loc.tablet_id, major)?)
    }

    // ------------------------------------------------------------ permissions

    /// Stores a permission entry (user, scope, actions).
    pub fn put_permission(&self, key: &str, actions: &str) -> CoordResult<()> {
        self.fenced(Txn::new().put(format!("{PERMISSIONS_PREFIX}{key}"), actions.as_bytes()))?;
        Ok(())
    }

    /// Removes a permission entry.
    pub fn remove_permission(&self, key: &str) -> CoordResult<()> {
        self.fenced(Txn::new().delete(format!("{PERMISSIONS_PREFIX}{key}")))?;
        Ok(())
    }

    /// A stored permission entry's actions.
    pub fn permission(&self, key: &str) -> CoordResult<Option<String>> {
        directory::permission(&*self.lock, key)
    }

    // ------------------------------------------------------------ maintenance
}
