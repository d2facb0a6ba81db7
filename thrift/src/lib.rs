//! Tabula's Thrift interfaces, wire-compatible with Apache HBase's Thrift
//! servers: [`hbase`] is the Thrift1 service `Hbase`, [`hbase2`] the Thrift2
//! service `THBaseService`.
//!
//! Both modules are generated from `idl/*.thrift` by `regen.sh` and committed;
//! building this crate needs no Thrift compiler. Never edit them by hand:
//! change the IDL or `codegen/patch_generated.py` and regenerate. [`wire`] and
//! [`containers`] hold the hand-written helpers the generated code calls, and
//! [`input`] the hardened input protocols a server must decode requests with.
//! This crate owns the interface types and their decoding only; serving them
//! belongs to the gateway.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod containers;
pub mod input;
pub mod wire;

/// Thrift1: service `Hbase` (`HbaseSyncHandler`, `HbaseSyncProcessor`,
/// `HbaseSyncClient`) and its structs, enums and exceptions.
///
/// Generated code: its `unwrap`/`expect` calls follow presence checks.
#[rustfmt::skip]
#[allow(
    clippy::all,
    clippy::unwrap_used,
    clippy::expect_used,
    dead_code,
    unused_imports,
    unused_extern_crates,
    non_camel_case_types,
    non_snake_case
)]
pub mod hbase;

/// Thrift2: service `THBaseService` (`THBaseServiceSyncHandler`,
/// `THBaseServiceSyncProcessor`, `THBaseServiceSyncClient`) and its structs,
/// enums and exceptions.
///
/// Generated code: its `unwrap`/`expect` calls follow presence checks.
#[rustfmt::skip]
#[allow(
    clippy::all,
    clippy::unwrap_used,
    clippy::expect_used,
    dead_code,
    unused_imports,
    unused_extern_crates,
    non_camel_case_types,
    non_snake_case
)]
pub mod hbase2;
