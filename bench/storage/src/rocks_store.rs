//! RocksDB's side of the benchmark, configured like Tabula.
//!
//! Owns: translating [`StoreSettings`] into RocksDB options (LRU block cache,
//! block size, bloom filter, memtable size and count, compression, WAL on), the
//! [`Store`] calls (`put_opt`, `get_pinned`, iterator seek + next), and the
//! modelled version dimension of [`VersionedStore`]: each version is its own key
//! `row|cf:q|!ts` (timestamp bit-inverted, big-endian, so newer sorts first) and an
//! as-of-T read is one seek.
//! Must not: use RocksDB features Tabula has no counterpart for in a workload.

use std::path::Path;

use bytes::Bytes;
use rocksdb::{BlockBasedOptions, Cache, DBCompressionType, Options, WriteOptions, DB};

use crate::error::BenchResult;
use crate::settings::{
    CompressionChoice, StoreSettings, BLOOM_BITS_PER_KEY, FAMILY, QUALIFIER, ZSTD_LEVEL,
};
use crate::store::{Store, VersionedStore, WriteMode};

/// Memtables (one active, the rest waiting for flush) before writes stall: Tabula
/// stalls at one active plus two frozen.
const MAX_WRITE_BUFFERS: i32 = 3;
/// Background flush and compaction threads (Tabula runs one of each).
const BACKGROUND_JOBS: i32 = 2;
/// zstd's default window for RocksDB's compression options.
const ZSTD_WINDOW_BITS: i32 = -14;

/// An open RocksDB database.
pub struct RocksStore {
    db: DB,
    logged: WriteOptions,
    synced: WriteOptions,
}

impl RocksStore {
    /// Opens (or reopens) the database in `dir`.
    pub fn open(dir: &Path, s: &StoreSettings) -> BenchResult<Self> {
        let cache = Cache::new_lru_cache(usize::try_from(s.cache_bytes).unwrap_or(usize::MAX));
        let mut table = BlockBasedOptions::default();
        table.set_block_size(s.block_size);
        table.set_block_cache(&cache);
        table.set_bloom_filter(f64::from(BLOOM_BITS_PER_KEY), false);

        let mut opts = Options::default();
        opts.create_if_missing(true);
        opts.set_block_based_table_factory(&table);
        opts.set_write_buffer_size(s.memtable_bytes);
        opts.set_max_write_buffer_number(MAX_WRITE_BUFFERS);
        opts.set_max_background_jobs(BACKGROUND_JOBS);
        match s.compression {
            CompressionChoice::None => opts.set_compression_type(DBCompressionType::None),
            CompressionChoice::Zstd => {
                opts.set_compression_type(DBCompressionType::Zstd);
                opts.set_compression_options(ZSTD_WINDOW_BITS, ZSTD_LEVEL, 0, 0);
            }
        }
        let db = DB::open(&opts, dir)?;
        let logged = WriteOptions::default();
        let mut synced = WriteOptions::default();
        synced.set_sync(true);
        Ok(RocksStore { db, logged, synced })
    }

    /// Flushes and closes the database.
    pub fn close(self) -> BenchResult<()> {
        self.db.flush()?;
        Ok(())
    }
}

impl Store for RocksStore {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn put(&self, key: &[u8], value: &Bytes, mode: WriteMode) -> BenchResult<()> {
        let opts = match mode {
            WriteMode::Logged => &self.logged,
            WriteMode::Synced => &self.synced,
        };
        self.db.put_opt(key, value, opts)?;
        Ok(())
    }

    fn get_len(&self, key: &[u8]) -> BenchResult<Option<usize>> {
        Ok(self.db.get_pinned(key)?.map(|v| v.len()))
    }

    fn scan(&self, start: &[u8], rows: usize) -> BenchResult<(usize, usize)> {
        let mut it = self.db.raw_iterator();
        it.seek(start);
        let (mut read, mut bytes) = (0, 0);
        while read < rows && it.valid() {
            bytes += it.value().map_or(0, <[u8]>::len);
            read += 1;
            it.next();
        }
        it.status()?;
        Ok((read, bytes))
    }

    fn settle(&self) -> BenchResult<()> {
        self.db.flush()?;
        self.db.compact_range::<&[u8], &[u8]>(None, None);
        Ok(())
    }
}

/// The key prefix of a row's `cf:q` cell in the version model: `row|cf:q|`.
pub fn version_prefix(row: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(row.len() + FAMILY.len() + QUALIFIER.len() + 3 + 8);
    k.extend_from_slice(row);
    k.push(b'|');
    k.extend_from_slice(FAMILY);
    k.push(b':');
    k.extend_from_slice(QUALIFIER);
    k.push(b'|');
    k
}

/// The key of one version: the prefix and the bit-inverted timestamp.
pub fn version_key(row: &[u8], timestamp: i64) -> Vec<u8> {
    let mut k = version_prefix(row);
    // Timestamps are non-negative; inverting makes newer versions sort first.
    k.extend_from_slice(&(!(timestamp as u64)).to_be_bytes());
    k
}

/// The timestamp in a version key with the given prefix, if it is one.
pub fn version_timestamp(key: &[u8], prefix: &[u8]) -> Option<i64> {
    let tail = key.strip_prefix(prefix)?;
    let bytes: [u8; 8] = tail.try_into().ok()?;
    i64::try_from(!u64::from_be_bytes(bytes)).ok()
}

impl RocksStore {
    fn first_version_from(&self, prefix: &[u8], target: &[u8]) -> BenchResult<Option<i64>> {
        let mut it = self.db.raw_iterator();
        it.seek(target);
        let found = if it.valid() {
            it.key().and_then(|k| version_timestamp(k, prefix))
        } else {
            None
        };
        it.status()?;
        Ok(found)
    }
}

impl VersionedStore for RocksStore {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn put_version(&self, row: &[u8], timestamp: i64, value: &Bytes) -> BenchResult<()> {
        self.db
            .put_opt(version_key(row, timestamp), value, &self.logged)?;
        Ok(())
    }

    fn read_as_of(&self, row: &[u8], before: i64) -> BenchResult<Option<i64>> {
        let Some(newest) = before.checked_sub(1).filter(|n| *n >= 0) else {
            return Ok(None);
        };
        let prefix = version_prefix(row);
        self.first_version_from(&prefix, &version_key(row, newest))
    }

    fn read_latest(&self, row: &[u8]) -> BenchResult<Option<i64>> {
        let prefix = version_prefix(row);
        self.first_version_from(&prefix, &prefix)
    }

    fn settle(&self) -> BenchResult<()> {
        Store::settle(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_keys_sort_newest_first() {
        let older = version_key(b"row", 10);
        let newer = version_key(b"row", 11);
        assert!(newer < older);
        assert!(version_key(b"row", i64::MAX) < version_key(b"row", 0));
    }

    #[test]
    fn version_key_round_trips() {
        let prefix = version_prefix(b"r1");
        assert_eq!(prefix, b"r1|cf:q|");
        for ts in [0, 1, 99_999, i64::MAX] {
            assert_eq!(
                version_timestamp(&version_key(b"r1", ts), &prefix),
                Some(ts)
            );
        }
        assert_eq!(version_timestamp(&version_key(b"r2", 5), &prefix), None);
        assert_eq!(version_timestamp(b"r1|cf:q|short", &prefix), None);
    }
}
