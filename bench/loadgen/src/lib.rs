//! `tabula bench`: a load generator that measures a Tabula (or any HBase Thrift1)
//! server the way its users would, over TCP with many connections.
//!
//! Modules: [`args`] (options), [`workload`] (the Bigtable paper's and YCSB's
//! workloads), [`keys`] (key formats and distributions), [`client`] (Thrift1 calls),
//! [`worker`] (one connection's operations), [`runner`] (threads, budgets, timing), [`sched`] (the client threads' scheduling policy),
//! [`stats`] (latency histograms), [`probe`] (server RSS and CPU), [`report`] (text,
//! JSON, CSV and PNG output).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod args;
pub mod client;
pub mod error;
pub mod keys;
pub mod probe;
pub mod report;
pub mod runner;
pub mod sched;
pub mod stats;
pub mod tls;
pub mod worker;
pub mod workload;

pub use args::BenchArgs;
pub use error::BenchError;
pub use runner::run;
