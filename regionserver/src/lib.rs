//! Tabula's regionserver: serves tablets on the storage engine.
//!
//! [`api`] is the interface every caller uses ([`api::TabletService`]); [`server`]
//! implements it over one [`tabula_storage::Engine`]; [`filter`] is the HBase filter
//! language, compiled here because filters run server-side during reads; [`rpc`]
//! carries the interface between processes (gRPC); [`slow_log`] keeps the calls
//! that ran too long or answered too much.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod api;
pub mod filter;
pub mod rpc;
pub mod server;
pub mod slow_log;

pub use api::{
    ReadSpec, RemoteFailure, RsError, RsResult, ScanBatch, ScanSpec, SplitOutcome, TabletReport,
    TabletService,
};
pub use server::{RegionServer, RegionServerOptions};
