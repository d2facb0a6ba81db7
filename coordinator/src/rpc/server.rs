//! The admin service: runs each [`AdminCall`](pb::AdminCall) on the coordinator of
//! this process.
//!
//! Owns: decoding a call's arguments (a malformed descriptor is refused as an
//! invalid argument), running it on a blocking thread (admin calls wait on the lock
//! service and on regionservers) and answering with its outcome. Must not: change
//! what a call means: a remote call and a direct one answer alike.

use std::sync::Arc;

use bytes::Bytes;
use tonic::{Request, Response, Status};

use super::failure::failure_of;
use super::pb;
use super::pb::admin_call::Call;
use super::pb::coordinator_admin_server::{CoordinatorAdmin, CoordinatorAdminServer};
use crate::catalog::TabletLocation;
use crate::coordinator::{CoordError, CoordResult, Coordinator};
use crate::tables::{NamespaceDescriptor, TableDescriptor};

/// The admin service over `coordinator`, to add to a gRPC server.
pub fn admin_service(
    coordinator: Arc<Coordinator>,
) -> CoordinatorAdminServer<impl CoordinatorAdmin> {
    CoordinatorAdminServer::new(Admin { coordinator })
}

struct Admin {
    coordinator: Arc<Coordinator>,
}

fn malformed(what: &str) -> CoordError {
    CoordError::InvalidArgument(format!("the admin call's {what} is malformed"))
}

fn table_descriptor(encoded: &[u8]) -> CoordResult<TableDescriptor> {
    TableDescriptor::decode(encoded).ok_or_else(|| malformed("table descriptor"))
}

fn namespace_descriptor(encoded: &[u8]) -> CoordResult<NamespaceDescriptor> {
    NamespaceDescriptor::decode(encoded).ok_or_else(|| malformed("namespace descriptor"))
}

/// The one family of a family change.
fn changed_family(change: &pb::FamilyChange) -> CoordResult<(Bytes, tabula_storage::FamilySchema)> {
    let t = table_descriptor(&change.descriptor)?;
    match <[_; 1]>::try_from(t.families) {
        Ok([family]) => Ok((t.name, family)),
        Err(_) => Err(malformed("family change (it must name one family)")),
    }
}

/// Runs `call` on `c`.
fn run(c: &Coordinator, call: Call) -> CoordResult<()> {
    match call {
        Call::CreateNamespace(ns) => c.create_namespace(namespace_descriptor(&ns)?),
        Call::ModifyNamespace(ns) => c.modify_namespace(namespace_descriptor(&ns)?),
        Call::DeleteNamespace(name) => c.delete_namespace(&name),
        Call::CreateTable(create) => {
            let t = table_descriptor(&create.descriptor)?;
            let settings = t.settings();
            c.create_table(&t.name, t.families, create.split_keys, settings)
        }
        Call::DeleteTable(name) => c.delete_table(&name),
        Call::TruncateTable(t) => c.truncate_table(&t.table, t.preserve_splits),
        Call::EnableTable(name) => c.enable_table(&name),
        Call::DisableTable(name) => c.disable_table(&name),
        Call::AddFamily(change) => {
            let (table, family) = changed_family(&change)?;
            c.add_family(&table, family)
        }
        Call::ModifyFamily(change) => {
            let (table, family) = changed_family(&change)?;
            c.modify_family(&table, family)
        }
        Call::DeleteFamily(d) => c.delete_family(&d.table, &d.family),
        Call::ModifyTable(descriptor) => {
            let t = table_descriptor(&descriptor)?;
            let settings = t.settings();
            c.modify_table(&t.name, t.families, settings)
        }
        Call::CompactTable(t) => c.compact_table(&t.table, t.major),
        Call::CompactTablet(t) => c.compact_tablet(
            &TabletLocation {
                table: t.table,
                start_row: t.start_row,
                end_row: t.end_row,
                tablet_id: t.tablet_id,
                server: t.server,
            },
            t.major,
        ),
        Call::PutPermission(p) => c.put_permission(&p.key, &p.actions),
        Call::RemovePermission(key) => c.remove_permission(&key),
    }
}

#[tonic::async_trait]
impl CoordinatorAdmin for Admin {
    async fn run(
        &self,
        request: Request<pb::AdminCall>,
    ) -> Result<Response<pb::AdminReply>, Status> {
        let Some(call) = request.into_inner().call else {
            let refused = CoordError::InvalidArgument("the admin call names no operation".into());
            return Ok(Response::new(pb::AdminReply {
                failure: Some(failure_of(&refused)),
            }));
        };
        let coordinator = Arc::clone(&self.coordinator);
        match tokio::task::spawn_blocking(move || run(&coordinator, call)).await {
            Ok(outcome) => Ok(Response::new(pb::AdminReply {
                failure: outcome.err().map(|e| {
                    tracing::debug!(error = %e, "an admin call was refused");
                    failure_of(&e)
                }),
            })),
            Err(failed) => {
                tracing::error!(error = %failed, "an admin call failed");
                Err(Status::internal(format!("the admin call failed: {failed}")))
            }
        }
    }
}
