//! Tabula's HBase-compatible Thrift gateway.
//!
//! [`server`] accepts connections and speaks every Thrift transport and protocol HBase
//! offers on one port; [`filter`] implements the HBase filter language.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod filter;
pub mod server;
