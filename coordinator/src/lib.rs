//! Tabula's coordinator: the process that decides which regionserver serves which
//! tablet, and the lock service every process coordinates through.
//!
//! [`lock`] is the coordination substrate (Chubby's role in Bigtable): sessions with
//! leases, small versioned files, exclusive locks fenced by revisions, and watches.
//! The coordinator elects itself by holding a lock, tracks live regionservers by their
//! locks under `/servers/`, and keeps the root tablet's location, table schemas and
//! other small records in lock-service files. [`catalog`] is the root/METADATA row
//! format and lookups; [`tables`] the stored table and namespace descriptors;
//! [`coordinator`] the coordinator itself, which moves tablets as `balance`
//! decides.
#![deny(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod balance;
pub mod catalog;
pub mod coordinator;
pub mod directory;
pub mod lock;
pub mod rpc;
pub mod tables;

pub use balance::HotSplitRule;
pub use coordinator::{
    CoordError, CoordResult, Coordinator, CoordinatorOptions, DeposedHook, ServerRef,
};
pub use directory::{CoordinatorAddress, SERVERS_PREFIX};
