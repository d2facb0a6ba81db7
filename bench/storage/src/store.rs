//! What a workload asks of an engine, so that one measurement loop serves both.
//!
//! Owns: the [`Store`] trait (put, point read, range scan, settle) and the
//! [`VersionedStore`] trait (as-of-T reads of a many-versioned cell).
//! Must not: measure time or pick keys (see `workloads` and `versions`).

use bytes::Bytes;

use crate::error::BenchResult;

/// How a write is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Logged, not fsynced per write (Tabula Async, RocksDB sync=false).
    Logged,
    /// Logged and fsynced, shared by a commit group (Tabula Sync, RocksDB sync=true).
    Synced,
}

/// A key-value view of one table with one column `cf:q`.
pub trait Store: Sync {
    /// The engine's name in reports.
    fn name(&self) -> &'static str;
    /// Writes `value` as the cell of row `key`.
    fn put(&self, key: &[u8], value: &Bytes, mode: WriteMode) -> BenchResult<()>;
    /// Reads the newest value of row `key`; returns its length.
    fn get_len(&self, key: &[u8]) -> BenchResult<Option<usize>>;
    /// Reads up to `rows` rows from `start` on; returns the rows read and the
    /// bytes of their values.
    fn scan(&self, start: &[u8], rows: usize) -> BenchResult<(usize, usize)>;
    /// Flushes memtables and compacts everything, so reads hit SSTables only.
    fn settle(&self) -> BenchResult<()>;
}

/// A store that can keep many timestamped versions of one cell.
pub trait VersionedStore: Sync {
    /// The engine's name in reports.
    fn name(&self) -> &'static str;
    /// Writes the version of `row`'s cell at `timestamp`.
    fn put_version(&self, row: &[u8], timestamp: i64, value: &Bytes) -> BenchResult<()>;
    /// The timestamp of the newest version of `row`'s cell older than `before`.
    fn read_as_of(&self, row: &[u8], before: i64) -> BenchResult<Option<i64>>;
    /// The timestamp of the newest version of `row`'s cell.
    fn read_latest(&self, row: &[u8]) -> BenchResult<Option<i64>>;
    /// Flushes memtables and compacts everything.
    fn settle(&self) -> BenchResult<()>;
}
