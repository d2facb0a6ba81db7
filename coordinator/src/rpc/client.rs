//! The admin client: the active coordinator of another process, called with the
//! same methods (and the same errors) as a [`Coordinator`](crate::Coordinator) in
//! this one.
//!
//! Owns: one HTTP/2 connection to the coordinator's RPC address (reconnected by the
//! channel when it drops), a small runtime of its own so the synchronous methods can
//! be called from any thread, and the deadline of each call. Must not: retry or
//! follow a new coordinator (the caller looks up the address again and makes a new
//! client).

use std::sync::mpsc;
use std::time::Duration;

use bytes::Bytes;
use tabula_regionserver::rpc::tls::{endpoint, ClusterTls};
use tabula_storage::FamilySchema;
use tokio::runtime::{Handle, Runtime};
use tonic::transport::Channel;

use super::failure::error_of;
use super::pb;
use super::pb::admin_call::Call;
use super::pb::coordinator_admin_client::CoordinatorAdminClient;
use crate::catalog::TabletLocation;
use crate::coordinator::{CoordError, CoordResult};
use crate::tables::{NamespaceDescriptor, TableDescriptor, TableSettings};

/// How long an admin call may take: creating a table with many split keys, or a
/// major compaction the call waits for.
const CALL_TIMEOUT: Duration = Duration::from_secs(30 * 60);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The coordinator at one RPC address.
pub struct RemoteCoordinator {
    address: String,
    client: CoordinatorAdminClient<Channel>,
    handle: Handle,
    /// Shut down without waiting on drop (drop may happen on a tokio thread).
    runtime: Option<Runtime>,
}

impl Drop for RemoteCoordinator {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn unreachable(address: &str, why: impl std::fmt::Display, retry: bool) -> CoordError {
    CoordError::Remote {
        message: format!("coordinator at {address}: {why}"),
        retry,
    }
}

/// A family change's wire form: a descriptor of `table` holding `family` only.
fn family_change(table: &[u8], family: FamilySchema) -> pb::FamilyChange {
    pb::FamilyChange {
        descriptor: descriptor(table, vec![family], TableSettings::default())
            .encode()
            .into(),
    }
}

fn descriptor(
    table: &[u8],
    families: Vec<FamilySchema>,
    settings: TableSettings,
) -> TableDescriptor {
    TableDescriptor {
        name: Bytes::copy_from_slice(table),
        families,
        enabled: true,
        created_ms: 0,
        durability: settings.durability,
        attributes: settings.attributes,
    }
}

impl RemoteCoordinator {
    /// A client of the coordinator at `address` (`host:port`), over the cluster's
    /// mutual TLS when `tls` is given; it connects at the first call.
    pub fn new(address: &str, tls: Option<&ClusterTls>) -> CoordResult<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("tabula-admin-client")
            .enable_all()
            .build()
            .map_err(|e| unreachable(address, format!("cannot start a runtime: {e}"), true))?;
        let handle = runtime.handle().clone();
        let endpoint = endpoint(address, tls)
            .map_err(|e| unreachable(address, e, false))?
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true);
        let channel = {
            let _entered = handle.enter();
            endpoint.connect_lazy()
        };
        Ok(RemoteCoordinator {
            address: address.to_owned(),
            client: CoordinatorAdminClient::new(channel),
            handle,
            runtime: Some(runtime),
        })
    }

    /// The address this client calls.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Runs `call` and waits for its answer.
    fn run(&self, call: Call) -> CoordResult<()> {
        let mut client = self.client.clone();
        let (sender, receiver) = mpsc::sync_channel(1);
        self.handle.spawn(async move {
            let request = pb::AdminCall { call: Some(call) };
            let outcome = tokio::time::timeout(CALL_TIMEOUT, client.run(request)).await;
            // The caller waits for this; if it is gone there is no one to tell.
            let _ = sender.send(outcome);
        });
        match receiver.recv() {
            Ok(Ok(Ok(reply))) => match reply.into_inner().failure {
                None => Ok(()),
                Some(failure) => Err(error_of(failure)),
            },
            Ok(Ok(Err(status))) => {
                // A call that never reached the coordinator may be sent again.
                let never_sent = status.code() == tonic::Code::Unavailable;
                Err(unreachable(&self.address, status.message(), never_sent))
            }
            Ok(Err(_)) => Err(unreachable(
                &self.address,
                format!("no answer within {CALL_TIMEOUT:?}; the outcome is unknown"),
                false,
            )),
            Err(_) => Err(unreachable(
                &self.address,
                "the client's runtime stopped",
                false,
            )),
        }
    }

    // Each call below is the `Coordinator` method of the same name, run by the
    // remote coordinator.

    pub fn create_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()> {
        self.run(Call::CreateNamespace(ns.encode().into()))
    }

    pub fn modify_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()> {
        self.run(Call::ModifyNamespace(ns.encode().into()))
    }

    pub fn delete_namespace(&self, name: &str) -> CoordResult<()> {
        self.run(Call::DeleteNamespace(name.to_owned()))
    }

    pub fn create_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        split_keys: Vec<Bytes>,
        settings: TableSettings,
    ) -> CoordResult<()> {
        self.run(Call::CreateTable(pb::CreateTable {
            descriptor: descriptor(name, families, settings).encode().into(),
            split_keys,
        }))
    }

    pub fn delete_table(&self, name: &[u8]) -> CoordResult<()> {
        self.run(Call::DeleteTable(Bytes::copy_from_slice(name)))
    }

    pub fn truncate_table(&self, name: &[u8], preserve_splits: bool) -> CoordResult<()> {
        self.run(Call::TruncateTable(pb::TruncateTable {
            table: Bytes::copy_from_slice(name),
            preserve_splits,
        }))
    }

    pub fn enable_table(&self, name: &[u8]) -> CoordResult<()> {
        self.run(Call::EnableTable(Bytes::copy_from_slice(name)))
    }

    pub fn disable_table(&self, name: &[u8]) -> CoordResult<()> {
        self.run(Call::DisableTable(Bytes::copy_from_slice(name)))
    }

    pub fn add_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()> {
        self.run(Call::AddFamily(family_change(name, family)))
    }

    pub fn modify_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()> {
        self.run(Call::ModifyFamily(family_change(name, family)))
    }

    pub fn delete_family(&self, name: &[u8], family: &[u8]) -> CoordResult<()> {
        self.run(Call::DeleteFamily(pb::DeleteFamily {
            table: Bytes::copy_from_slice(name),
            family: Bytes::copy_from_slice(family),
        }))
    }

    pub fn modify_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        settings: TableSettings,
    ) -> CoordResult<()> {
        self.run(Call::ModifyTable(
            descriptor(name, families, settings).encode().into(),
        ))
    }

    pub fn compact_table(&self, name: &[u8], major: bool) -> CoordResult<()> {
        self.run(Call::CompactTable(pb::CompactTable {
            table: Bytes::copy_from_slice(name),
            major,
        }))
    }

    pub fn compact_tablet(&self, loc: &TabletLocation, major: bool) -> CoordResult<()> {
        self.run(Call::CompactTablet(pb::CompactTablet {
            table: loc.table.clone(),
            start_row: loc.start_row.clone(),
            end_row: loc.end_row.clone(),
            tablet_id: loc.tablet_id,
            server: loc.server.clone(),
            major,
        }))
    }

    pub fn put_permission(&self, key: &str, actions: &str) -> CoordResult<()> {
        self.run(Call::PutPermission(pb::PutPermission {
            key: key.to_owned(),
            actions: actions.to_owned(),
        }))
    }

    pub fn remove_permission(&self, key: &str) -> CoordResult<()> {
        self.run(Call::RemovePermission(key.to_owned()))
    }
}
