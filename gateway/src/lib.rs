//! Tabula's HBase-compatible Thrift gateway.
//!
//! [`server`] accepts connections and speaks every Thrift transport and protocol HBase
//! offers on one port.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod backend;
pub mod call_notes;
pub mod cluster;
pub mod config;
pub mod crash_points;
pub mod gateway_process;
pub mod membership;
pub mod metrics;
pub mod null_backend;
pub mod read_only;
pub mod regionserver_process;
pub mod rpc_security;
pub mod serve;
pub mod server;
pub mod thrift1;
pub mod thrift2;
