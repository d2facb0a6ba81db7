//! The control plane of a gateway in a process of its own (`tabula gateway`): it
//! follows the cluster through the lock service and asks the active coordinator,
//! over its admin RPC, to change it.
//!
//! Owns: [`RemoteControl`]: the table descriptors (kept in memory for the per-call
//! check, refreshed on every change under `/tabula/` and at least every second),
//! clients of the regionservers (the registered ones and the one in the
//! coordinator's process), and the admin client of whichever coordinator holds the
//! coordinator lock. After an admin call it reads the tables again, so the client
//! that made the change sees it on its next call.
//! Must not: change the lock service (only the coordinator does) or decide
//! anything about tablets.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use bytes::Bytes;
use parking_lot::Mutex;
use tabula_coordinator::catalog::{self, TabletLocation};
use tabula_coordinator::directory::{self, CoordinatorAddress};
use tabula_coordinator::lock::{follow_changes, LockService};
use tabula_coordinator::rpc::RemoteCoordinator;
use tabula_coordinator::tables::{
    canonical_name, canonical_slice, NamespaceDescriptor, TableDescriptor,
};
use tabula_coordinator::{CoordError, CoordResult, ServerRef};
use tabula_regionserver::rpc::client::RemoteOptions;
use tabula_regionserver::TabletService;
use tabula_storage::{Durability, FamilySchema};

use super::control::Control;
use crate::membership;
use tabula_coordinator::tables::{TableSettings, TableState};

/// How often the cluster is read again without a change notice.
const RECHECK: Duration = Duration::from_secs(1);
/// Everything the coordinator writes lives under this prefix.
const CLUSTER_PREFIX: &str = "/tabula/";

/// A regionserver client and the address it calls.
struct Server {
    address: String,
    client: Arc<dyn TabletService>,
}

/// The cluster as a gateway of its own sees it.
pub struct RemoteControl {
    lock: Arc<dyn LockService>,
    cluster_id: String,
    /// Read on every data call without a lock; replaced whole by each refresh.
    tables: ArcSwap<BTreeMap<Bytes, TableDescriptor>>,
    servers: ArcSwap<BTreeMap<String, Server>>,
    /// The admin client of the coordinator holding the lock, when one does.
    coordinator: Mutex<Option<(CoordinatorAddress, Arc<RemoteCoordinator>)>>,
    /// Serializes refreshes (each connects the servers it has not seen yet).
    refreshing: Mutex<()>,
    /// How regionservers and the coordinator are called (deadlines, TLS).
    remote: RemoteOptions,
}

fn no_coordinator() -> CoordError {
    CoordError::Remote {
        message: "no coordinator is running: the coordinator lock is free".into(),
        retry: true,
    }
}

impl RemoteControl {
    /// Reads the cluster from `lock` and starts following it (a thread that ends
    /// when the returned control plane is dropped). Fails when no coordinator has
    /// ever started this cluster.
    pub fn follow(
        lock: Arc<dyn LockService>,
        remote: RemoteOptions,
    ) -> CoordResult<Arc<RemoteControl>> {
        let cluster_id = directory::cluster_id(&*lock)?.ok_or_else(|| CoordError::Remote {
            message:
                "no coordinator has started this cluster yet (no cluster id in the lock service)"
                    .into(),
            retry: true,
        })?;
        let control = Arc::new(RemoteControl {
            lock,
            cluster_id,
            tables: ArcSwap::from_pointee(BTreeMap::new()),
            servers: ArcSwap::from_pointee(BTreeMap::new()),
            coordinator: Mutex::new(None),
            refreshing: Mutex::new(()),
            remote,
        });
        control.refresh()?;
        let weak = Arc::downgrade(&control);
        let lock = Arc::clone(&control.lock);
        std::thread::Builder::new()
            .name("tabula-gateway-follow".into())
            .spawn(move || follow(lock, weak))
            .map_err(|e| CoordError::Remote {
                message: format!("cannot start the thread following the cluster: {e}"),
                retry: false,
            })?;
        Ok(control)
    }

    /// Reads tables, regionservers and the coordinator's address again.
    pub fn refresh(&self) -> CoordResult<()> {
        let _one = self.refreshing.lock();
        self.tables.store(Arc::new(directory::tables(&*self.lock)?));
        let coordinator = directory::coordinator_address(&*self.lock)?;
        let mut wanted = membership::registered(&*self.lock)?;
        if let Some(c) = &coordinator {
            wanted.insert(c.server.clone(), c.rpc.clone());
        }
        let current = self.servers.load_full();
        if wanted.len() != current.len()
            || wanted
                .iter()
                .any(|(name, addr)| current.get(name).is_none_or(|s| s.address != *addr))
        {
            let mut next = BTreeMap::new();
            for (name, address) in wanted {
                let known = current.get(&name).filter(|s| s.address == address);
                let client = match known {
                    Some(s) => Arc::clone(&s.client),
                    None => match membership::connect(&name, &address, &self.remote) {
                        Some(client) => client,
                        None => continue,
                    },
                };
                next.insert(name, Server { address, client });
            }
            self.servers.store(Arc::new(next));
        }
        let mut held = self.coordinator.lock();
        match coordinator {
            None => *held = None,
            Some(address) => {
                if held.as_ref().is_none_or(|(a, _)| *a != address) {
                    let client = RemoteCoordinator::new(&address.rpc, self.remote.tls.as_ref())?;
                    tracing::info!(coordinator = %address.rpc, "following the active coordinator");
                    *held = Some((address, Arc::new(client)));
                }
            }
        }
        Ok(())
    }

    /// Runs an admin call on the active coordinator, then reads the tables again.
    /// A call the coordinator never received (it moved or is restarting) is sent
    /// once more to the coordinator holding the lock after a refresh.
    fn admin(&self, call: impl Fn(&RemoteCoordinator) -> CoordResult<()>) -> CoordResult<()> {
        let mut outcome = Err(no_coordinator());
        for attempt in 0..2 {
            if attempt > 0 || self.coordinator.lock().is_none() {
                self.refresh()?;
            }
            let client = self.coordinator.lock().as_ref().map(|(_, c)| Arc::clone(c));
            let Some(client) = client else {
                outcome = Err(no_coordinator());
                continue;
            };
            outcome = call(&client);
            match &outcome {
                Err(CoordError::Remote { retry: true, .. }) => continue,
                _ => break,
            }
        }
        if let Err(e) = self.refresh() {
            tracing::warn!(error = %e, "reading the cluster after an admin call failed");
        }
        outcome
    }
}

/// Follows the cluster until the control plane is dropped: a refresh on every
/// change under `/tabula/`, and every [`RECHECK`] anyway.
fn follow(lock: Arc<dyn LockService>, control: Weak<RemoteControl>) {
    follow_changes(&*lock, CLUSTER_PREFIX, RECHECK, || {
        let Some(c) = control.upgrade() else {
            return false;
        };
        if let Err(e) = c.refresh() {
            tracing::warn!(error = %e, "cannot read the cluster from the lock service");
        }
        true
    });
}

impl Control for RemoteControl {
    fn table_state(&self, name: &[u8]) -> Option<TableState> {
        self.tables
            .load()
            .get(canonical_slice(name))
            .map(|t| t.state())
    }
    fn table_durability(&self, name: &[u8]) -> Option<Option<Durability>> {
        self.tables
            .load()
            .get(canonical_slice(name))
            .map(|t| t.durability)
    }
    fn table(&self, name: &[u8]) -> Option<TableDescriptor> {
        self.tables.load().get(canonical_slice(name)).cloned()
    }
    fn tables(&self) -> Vec<TableDescriptor> {
        self.tables.load().values().cloned().collect()
    }
    fn system_tables(&self) -> Vec<TableDescriptor> {
        catalog::system_tables()
    }
    fn namespaces(&self) -> CoordResult<Vec<NamespaceDescriptor>> {
        Ok(directory::namespaces(&*self.lock)?.into_values().collect())
    }
    fn namespace(&self, name: &str) -> CoordResult<NamespaceDescriptor> {
        directory::namespaces(&*self.lock)?
            .remove(name)
            .ok_or_else(|| CoordError::NamespaceNotFound(name.into()))
    }
    fn cluster_id(&self) -> String {
        self.cluster_id.clone()
    }
    fn permission(&self, key: &str) -> CoordResult<Option<String>> {
        directory::permission(&*self.lock, key)
    }
    fn root_location(&self) -> CoordResult<TabletLocation> {
        directory::root_location(&*self.lock)
    }
    fn table_tablets(&self, name: &[u8]) -> CoordResult<Vec<TabletLocation>> {
        let root = self.root_location()?;
        Ok(catalog::table_tablets(
            &root,
            &|server| Control::server(self, server),
            &canonical_name(name),
        )?)
    }
    fn server(&self, name: &str) -> Option<Arc<dyn TabletService>> {
        self.servers.load().get(name).map(|s| Arc::clone(&s.client))
    }
    fn server_ref(&self, name: &str) -> Option<ServerRef<'_>> {
        Control::server(self, name).map(ServerRef::Remote)
    }

    fn create_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()> {
        self.admin(|c| c.create_namespace(ns.clone()))
    }
    fn modify_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()> {
        self.admin(|c| c.modify_namespace(ns.clone()))
    }
    fn delete_namespace(&self, name: &str) -> CoordResult<()> {
        self.admin(|c| c.delete_namespace(name))
    }
    fn create_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        split_keys: Vec<Bytes>,
        settings: TableSettings,
    ) -> CoordResult<()> {
        self.admin(|c| c.create_table(name, families.clone(), split_keys.clone(), settings.clone()))
    }
    fn delete_table(&self, name: &[u8]) -> CoordResult<()> {
        self.admin(|c| c.delete_table(name))
    }
    fn truncate_table(&self, name: &[u8], preserve_splits: bool) -> CoordResult<()> {
        self.admin(|c| c.truncate_table(name, preserve_splits))
    }
    fn enable_table(&self, name: &[u8]) -> CoordResult<()> {
        self.admin(|c| c.enable_table(name))
    }
    fn disable_table(&self, name: &[u8]) -> CoordResult<()> {
        self.admin(|c| c.disable_table(name))
    }
    fn add_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()> {
        self.admin(|c| c.add_family(name, family.clone()))
    }
    fn modify_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()> {
        self.admin(|c| c.modify_family(name, family.clone()))
    }
    fn delete_family(&self, name: &[u8], family: &[u8]) -> CoordResult<()> {
        self.admin(|c| c.delete_family(name, family))
    }
    fn modify_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        settings: TableSettings,
    ) -> CoordResult<()> {
        self.admin(|c| c.modify_table(name, families.clone(), settings.clone()))
    }
    fn compact_table(&self, name: &[u8], major: bool) -> CoordResult<()> {
        self.admin(|c| c.compact_table(name, major))
    }
    fn compact_tablet(&self, loc: &TabletLocation, major: bool) -> CoordResult<()> {
        self.admin(|c| c.compact_tablet(loc, major))
    }
    fn put_permission(&self, key: &str, actions: &str) -> CoordResult<()> {
        self.admin(|c| c.put_permission(key, actions))
    }
    fn remove_permission(&self, key: &str) -> CoordResult<()> {
        self.admin(|c| c.remove_permission(key))
    }
}
