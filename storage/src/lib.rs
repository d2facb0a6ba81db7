//! Tabula's storage engine: the LSM every tablet runs on.
//!
//! A tablet's data is a sorted multi-version map `(row, family:qualifier, timestamp) ->
//! bytes`. Writes go to the server's shared [`log`] and then to the tablet's
//! [`memtable`]; full memtables are flushed into immutable [`sstable`] files (one per
//! column family); [`compaction`] merges files to bound read amplification and drops
//! dead data. The [`manifest`] records each tablet's live files crash-safely.
//! [`tablet`] ties these together and implements HBase's read and write semantics;
//! [`engine`] owns what tablets share (commit log, block cache, background work).
#![deny(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod activity;
mod aligned;
mod allocator;
pub mod cache;
pub mod check;
pub mod coding;
pub mod deferred;
pub mod dir_lock;
pub mod engine;
pub mod entry;
pub mod error;
pub mod filter;
mod intern;
pub mod iter;
pub mod key;
pub mod log;
pub mod manifest;
pub mod memory;
pub mod memtable;
pub mod merge;
pub mod mvcc;
mod pread;
mod prefetch;
pub mod read;
mod readers;
pub mod recovery;
pub mod schema;
pub mod sstable;
pub mod striped;
pub mod tablet;
pub mod types;

pub use engine::{Engine, EngineOptions};
pub use error::{Error, Result};
pub use filter::{CellVerdict, ColumnHint, Filter, RowVerdict, SkipHint};
pub use read::ReadOptions;
pub use schema::{
    BloomType, Compression, CompressionName, FamilyExtras, FamilySchema, KeepDeleted, SplitRule,
    TableSchema,
};
pub use tablet::{
    CompareOp, Condition, LoadSplit, RowResult, ScanRequest, Tablet, TabletDescriptor,
    TabletScanner,
};
pub use types::{
    Cell, ColumnSelector, Durability, Mutation, RowMutation, TimeRange, LATEST_TIMESTAMP,
    MAX_ROW_KEY_LEN,
};
