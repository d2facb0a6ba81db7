//! The knobs both engines are configured with, identically.
//!
//! Owns: [`StoreSettings`] (block cache, memtable, block size, compression,
//! versions kept) and the names of the column family and qualifier used.
//! Must not: translate settings into engine options (each store does that).

use bytes::Bytes;

/// The one column family of the benchmark table.
pub const FAMILY: &[u8] = b"cf";
/// The one qualifier written.
pub const QUALIFIER: &[u8] = b"q";
/// zstd level for both engines when compression is on (RocksDB's default level).
pub const ZSTD_LEVEL: i32 = 3;
/// Bloom filter bits per key for both engines (Tabula's default).
pub const BLOOM_BITS_PER_KEY: u32 = 10;

/// The family name as shared bytes.
pub fn family() -> Bytes {
    Bytes::from_static(FAMILY)
}

/// The qualifier as shared bytes.
pub fn qualifier() -> Bytes {
    Bytes::from_static(QUALIFIER)
}

/// Block compression, the same for both engines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompressionChoice {
    /// No compression.
    None,
    /// zstd at level 3.
    Zstd,
}

/// What one store is opened with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreSettings {
    /// Block cache capacity in bytes.
    pub cache_bytes: u64,
    /// Memtable size at which it is frozen and flushed.
    pub memtable_bytes: usize,
    /// Target data block size.
    pub block_size: usize,
    pub compression: CompressionChoice,
    /// Versions of a cell kept (Tabula family setting; RocksDB keeps one per key).
    pub max_versions: u32,
}
