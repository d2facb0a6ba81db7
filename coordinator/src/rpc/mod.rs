//! The coordinator's admin RPC: the table and namespace changes a gateway in another
//! process asks the active coordinator for, as gRPC (proto/admin_service.proto).
//!
//! Owns: the generated messages ([`pb`]), the translation of the coordinator's
//! errors to and from the wire ([`failure`]), the service that runs calls on a
//! [`Coordinator`](crate::Coordinator) ([`server`]) and the client a gateway calls
//! ([`client`]). Must not: carry reads: a gateway reads tables, namespaces and
//! locations from the lock service and the catalog, never through the coordinator.

pub mod client;
pub mod failure;
pub mod server;

/// The messages and service stubs generated from proto/admin_service.proto.
#[allow(clippy::all, clippy::unwrap_used, clippy::expect_used, missing_docs)]
pub mod pb {
    tonic::include_proto!("tabula.admin");
}

pub use client::RemoteCoordinator;
pub use server::admin_service;
