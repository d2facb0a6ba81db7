//! The cluster's control plane as the gateway uses it: table and namespace
//! descriptors, the root tablet's location, the regionservers by name, and the
//! admin calls that change the cluster.
//!
//! Owns: the [`Control`] trait and its implementation by a [`Coordinator`] in this
//! process (`tabula serve`); [`super::remote`] implements it for a gateway in a
//! process of its own. Must not: route rows or cache locations (the router does).

use std::sync::Arc;

use bytes::Bytes;
use tabula_coordinator::catalog::TabletLocation;
use tabula_coordinator::tables::{NamespaceDescriptor, TableDescriptor};
use tabula_coordinator::tables::{TableSettings, TableState};
use tabula_coordinator::{CoordResult, Coordinator, ServerRef};
use tabula_regionserver::TabletService;
use tabula_storage::{Durability, FamilySchema};

/// What the gateway reads and asks of the cluster's control plane. The reads come
/// first; the admin calls after them change the cluster and are the coordinator's
/// methods of the same names.
pub trait Control: Send + Sync {
    /// Whether user table `name` (any spelling) is enabled and whether it refuses
    /// changes; `None` when there is no such table. On the path of every data
    /// call: it must not copy or block.
    fn table_state(&self, name: &[u8]) -> Option<TableState>;
    /// The durability user table `name` gives writes that name none (`Some(None)`:
    /// USE_DEFAULT, a synced log); `None` when there is no such table. On the path
    /// of Thrift2 writes: it must not copy or block.
    fn table_durability(&self, name: &[u8]) -> Option<Option<Durability>>;
    /// A user table's descriptor (by any spelling of its name).
    fn table(&self, name: &[u8]) -> Option<TableDescriptor>;
    /// Every user table.
    fn tables(&self) -> Vec<TableDescriptor>;
    /// The system tables (the catalog), described like user tables.
    fn system_tables(&self) -> Vec<TableDescriptor>;
    /// Every namespace.
    fn namespaces(&self) -> CoordResult<Vec<NamespaceDescriptor>>;
    /// One namespace.
    fn namespace(&self, name: &str) -> CoordResult<NamespaceDescriptor>;
    /// The cluster's id.
    fn cluster_id(&self) -> String;
    /// A stored permission entry's actions.
    fn permission(&self, key: &str) -> CoordResult<Option<String>>;
    /// Where the root tablet is.
    fn root_location(&self) -> CoordResult<TabletLocation>;
    /// Every tablet of a user table, in row order.
    fn table_tablets(&self, name: &[u8]) -> CoordResult<Vec<TabletLocation>>;
    /// The regionserver named `name`, if known.
    fn server(&self, name: &str) -> Option<Arc<dyn TabletService>>;
    /// The regionserver named `name`, borrowed where it lives in this process (the
    /// per-call path takes no reference count then).
    fn server_ref(&self, name: &str) -> Option<ServerRef<'_>>;

    fn create_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()>;
    fn modify_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()>;
    fn delete_namespace(&self, name: &str) -> CoordResult<()>;
    fn create_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        split_keys: Vec<Bytes>,
        settings: TableSettings,
    ) -> CoordResult<()>;
    fn delete_table(&self, name: &[u8]) -> CoordResult<()>;
    fn truncate_table(&self, name: &[u8], preserve_splits: bool) -> CoordResult<()>;
    fn enable_table(&self, name: &[u8]) -> CoordResult<()>;
    fn disable_table(&self, name: &[u8]) -> CoordResult<()>;
    fn add_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()>;
    fn modify_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()>;
    fn delete_family(&self, name: &[u8], family: &[u8]) -> CoordResult<()>;
    fn modify_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        settings: TableSettings,
    ) -> CoordResult<()>;
    fn compact_table(&self, name: &[u8], major: bool) -> CoordResult<()>;
    fn compact_tablet(&self, loc: &TabletLocation, major: bool) -> CoordResult<()>;
    fn put_permission(&self, key: &str, actions: &str) -> CoordResult<()>;
    fn remove_permission(&self, key: &str) -> CoordResult<()>;
}

impl Control for Coordinator {
    fn table_state(&self, name: &[u8]) -> Option<TableState> {
        Coordinator::table_state(self, name)
    }
    fn table_durability(&self, name: &[u8]) -> Option<Option<Durability>> {
        Coordinator::table_durability(self, name)
    }
    fn table(&self, name: &[u8]) -> Option<TableDescriptor> {
        Coordinator::table(self, name)
    }
    fn tables(&self) -> Vec<TableDescriptor> {
        Coordinator::tables(self)
    }
    fn system_tables(&self) -> Vec<TableDescriptor> {
        Coordinator::system_tables(self)
    }
    fn namespaces(&self) -> CoordResult<Vec<NamespaceDescriptor>> {
        Ok(Coordinator::namespaces(self))
    }
    fn namespace(&self, name: &str) -> CoordResult<NamespaceDescriptor> {
        Coordinator::namespace(self, name)
    }
    fn cluster_id(&self) -> String {
        Coordinator::cluster_id(self).to_owned()
    }
    fn permission(&self, key: &str) -> CoordResult<Option<String>> {
        Coordinator::permission(self, key)
    }
    fn root_location(&self) -> CoordResult<TabletLocation> {
        Coordinator::root_location(self)
    }
    fn table_tablets(&self, name: &[u8]) -> CoordResult<Vec<TabletLocation>> {
        Coordinator::table_tablets(self, name)
    }
    fn server(&self, name: &str) -> Option<Arc<dyn TabletService>> {
        Coordinator::server(self, name)
    }
    fn server_ref(&self, name: &str) -> Option<ServerRef<'_>> {
        Coordinator::server_ref(self, name)
    }

    fn create_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()> {
        Coordinator::create_namespace(self, ns)
    }
    fn modify_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()> {
        Coordinator::modify_namespace(self, ns)
    }
    fn delete_namespace(&self, name: &str) -> CoordResult<()> {
        Coordinator::delete_namespace(self, name)
    }
    fn create_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        split_keys: Vec<Bytes>,
        settings: TableSettings,
    ) -> CoordResult<()> {
        Coordinator::create_table(self, name, families, split_keys, settings)
    }
    fn delete_table(&self, name: &[u8]) -> CoordResult<()> {
        Coordinator::delete_table(self, name)
    }
    fn truncate_table(&self, name: &[u8], preserve_splits: bool) -> CoordResult<()> {
        Coordinator::truncate_table(self, name, preserve_splits)
    }
    fn enable_table(&self, name: &[u8]) -> CoordResult<()> {
        Coordinator::enable_table(self, name)
    }
    fn disable_table(&self, name: &[u8]) -> CoordResult<()> {
        Coordinator::disable_table(self, name)
    }
    fn add_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()> {
        Coordinator::add_family(self, name, family)
    }
    fn modify_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()> {
        Coordinator::modify_family(self, name, family)
    }
    fn delete_family(&self, name: &[u8], family: &[u8]) -> CoordResult<()> {
        Coordinator::delete_family(self, name, family)
    }
    fn modify_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        settings: TableSettings,
    ) -> CoordResult<()> {
        Coordinator::modify_table(self, name, families, settings)
    }
    fn compact_table(&self, name: &[u8], major: bool) -> CoordResult<()> {
        Coordinator::compact_table(self, name, major)
    }
    fn compact_tablet(&self, loc: &TabletLocation, major: bool) -> CoordResult<()> {
        Coordinator::compact_tablet(self, loc, major)
    }
    fn put_permission(&self, key: &str, actions: &str) -> CoordResult<()> {
        Coordinator::put_permission(self, key, actions)
    }
    fn remove_permission(&self, key: &str) -> CoordResult<()> {
        Coordinator::remove_permission(self, key)
    }
}
