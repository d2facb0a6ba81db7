//! The regionserver's RPC: [`TabletService`](crate::TabletService) between
//! processes, as gRPC over HTTP/2 (proto/tablet_service.proto).
//!
//! Owns: the generated messages ([`pb`]), their translation ([`convert`]), the
//! server that exposes any `TabletService` ([`server`]) and the client that is one
//! ([`client`]). Must not: change what a call means: a remote call and a direct
//! one answer alike, errors included.

pub mod client;
pub mod convert;
pub mod server;
pub mod tls;

/// The messages and service stubs generated from proto/tablet_service.proto.
#[allow(clippy::all, clippy::unwrap_used, clippy::expect_used, missing_docs)]
pub mod pb {
    tonic::include_proto!("tabula.tablet");
}

pub use client::RemoteTabletService;
pub use server::{
    incoming, serve, serve_guarded, server_builder, tablet_rpc, CallGuard, MAX_MESSAGE_BYTES,
};
pub use tls::{ClusterTls, ClusterTlsError};
