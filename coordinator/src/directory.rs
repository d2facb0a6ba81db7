//! The cluster directory: the lock-service files every process of a cluster reads
//! to find its way, and how to read them.
//!
//! Owns: the paths of the coordinator's files (its lock, the root tablet's location,
//! table and namespace descriptors, the cluster id, permissions, regionserver
//! registrations), the value of the coordinator lock (where its RPC listens), and
//! read-only lookups over them for processes that are not the coordinator (a
//! gateway of its own). Must not: write anything: only the coordinator changes
//! these files, fenced by its lock.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::catalog::{TabletLocation, ROOT_TABLE, ROOT_TABLET_ID};
use crate::coordinator::{CoordError, CoordResult};
use crate::lock::LockService;
use crate::tables::{NamespaceDescriptor, TableDescriptor};

/// The lock the active coordinator holds.
pub const COORDINATOR_LOCK: &str = "/tabula/coordinator";
/// The root tablet's server.
pub const ROOT_FILE: &str = "/tabula/root";
/// One file per user table: its descriptor.
pub const TABLES_PREFIX: &str = "/tabula/tables/";
/// One file per table whose `createTable` or `truncateTable` has not finished:
/// the split keys of its new tablets.
pub const SPLIT_PLANS_PREFIX: &str = "/tabula/creating/";
/// One file per table whose `deleteTable` has not finished (empty).
pub const DELETING_PREFIX: &str = "/tabula/deleting/";
/// One file per namespace: its descriptor.
pub const NAMESPACES_PREFIX: &str = "/tabula/namespaces/";
/// The cluster's id.
pub const CLUSTER_ID_FILE: &str = "/tabula/cluster-id";
/// One file per access-control entry: its action letters.
pub const PERMISSIONS_PREFIX: &str = "/tabula/acl/";
/// Where regionservers of other processes register: `<prefix><name>` is a lock
/// held by the server's session, its value the server's RPC address.
pub const SERVERS_PREFIX: &str = "/tabula/servers/";

/// How other processes reach the active coordinator, as its lock's value says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorAddress {
    /// `host:port` of its RPC: the admin service, and the tablet service of the
    /// regionserver in its process.
    pub rpc: String,
    /// The name of the regionserver in its process.
    pub server: String,
}

impl CoordinatorAddress {
    /// The coordinator lock's value: `rpc=<host:port> server=<name>`.
    pub fn encode(&self) -> Vec<u8> {
        format!("rpc={} server={}", self.rpc, self.server).into_bytes()
    }

    /// Reads a coordinator lock's value; `None` for a coordinator without an RPC
    /// (one on the embedded lock service, which no other process can reach).
    pub fn decode(value: &[u8]) -> Option<CoordinatorAddress> {
        let text = std::str::from_utf8(value).ok()?;
        let (rpc, server) = text.strip_prefix("rpc=")?.split_once(" server=")?;
        (!rpc.is_empty() && !server.is_empty()).then(|| CoordinatorAddress {
            rpc: rpc.to_owned(),
            server: server.to_owned(),
        })
    }
}

/// Where the active coordinator listens; `None` while no coordinator holds the
/// lock (or the holder has no RPC).
pub fn coordinator_address(lock: &dyn LockService) -> CoordResult<Option<CoordinatorAddress>> {
    Ok(lock
        .lock_holder(COORDINATOR_LOCK)?
        .and_then(|holder| CoordinatorAddress::decode(&holder.info)))
}

/// Where the root tablet is.
pub fn root_location(lock: &dyn LockService) -> CoordResult<TabletLocation> {
    let v = lock.get(ROOT_FILE)?.ok_or(CoordError::Corrupt {
        what: ROOT_FILE.into(),
    })?;
    Ok(TabletLocation {
        table: Bytes::from_static(ROOT_TABLE.as_bytes()),
        start_row: Bytes::new(),
        end_row: Bytes::new(),
        tablet_id: ROOT_TABLET_ID,
        server: String::from_utf8_lossy(&v.value).into_owned(),
    })
}

/// Every stored user table, by canonical name.
pub fn tables(lock: &dyn LockService) -> CoordResult<BTreeMap<Bytes, TableDescriptor>> {
    let mut tables = BTreeMap::new();
    for (path, v) in lock.list(TABLES_PREFIX)?.files {
        let t = TableDescriptor::decode(&v.value).ok_or(CoordError::Corrupt { what: path })?;
        tables.insert(t.name.clone(), t);
    }
    Ok(tables)
}

/// Every stored namespace, by name.
pub fn namespaces(lock: &dyn LockService) -> CoordResult<BTreeMap<String, NamespaceDescriptor>> {
    let mut namespaces = BTreeMap::new();
    for (path, v) in lock.list(NAMESPACES_PREFIX)?.files {
        let ns = NamespaceDescriptor::decode(&v.value).ok_or(CoordError::Corrupt { what: path })?;
        namespaces.insert(ns.name.clone(), ns);
    }
    Ok(namespaces)
}

/// The cluster's id; `None` before a coordinator first started.
pub fn cluster_id(lock: &dyn LockService) -> CoordResult<Option<String>> {
    Ok(lock
        .get(CLUSTER_ID_FILE)?
        .map(|v| String::from_utf8_lossy(&v.value).into_owned()))
}

/// A stored permission entry's actions.
pub fn permission(lock: &dyn LockService, key: &str) -> CoordResult<Option<String>> {
    Ok(lock
        .get(&format!("{PERMISSIONS_PREFIX}{key}"))?
        .map(|v| String::from_utf8_lossy(&v.value).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinator_address_round_trips_and_refuses_other_values() {
        let a = CoordinatorAddress {
            rpc: "127.0.0.1:16000".into(),
            server: "127.0.0.1:9090".into(),
        };
        assert_eq!(CoordinatorAddress::decode(&a.encode()), Some(a));
        for bad in [
            &b"coordinator"[..],
            b"rpc=127.0.0.1:1",
            b"rpc= server=x",
            b"rpc=a server=",
            b"\xff\xfe",
        ] {
            assert_eq!(CoordinatorAddress::decode(bad), None, "{bad:?}");
        }
    }
}
