//! The block cache shared by every SSTable reader of an engine.
//!
//! Owns: [`BlockCache`], decoded data blocks keyed by `(file_id, block_offset)`,
//! bounded in bytes (each block weighs its decoded size plus a fixed overhead), and
//! its hit/miss counters.
//! Must not: read files or decide which families use it (readers opened without a
//! cache bypass it; index and bloom blocks never live here).

use std::fmt;
use std::sync::Arc;

use crate::sstable::Block;
use crate::striped::StripedCounter;

/// Bytes charged per cached block on top of its data (key, handle, bookkeeping).
const ENTRY_OVERHEAD: usize = 96;

/// Counters and occupancy of a [`BlockCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Lookups that found their block.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Blocks held (approximate until pending maintenance has run).
    pub entries: u64,
    /// Bytes charged for the blocks held (approximate likewise).
    pub weighted_bytes: u64,
    /// The byte bound.
    pub capacity_bytes: u64,
}

/// A concurrent cache of decoded blocks, bounded in bytes.
pub struct BlockCache {
    /// Keys are two small integers: a fast non-cryptographic hash is enough (the
    /// default SipHash showed up in read profiles).
    blocks: moka::sync::Cache<(u64, u64), Arc<Block>, rustc_hash::FxBuildHasher>,
    hits: StripedCounter,
    misses: StripedCounter,
    capacity_bytes: u64,
}

impl BlockCache {
    /// A cache holding at most `capacity_bytes` of blocks (0 caches nothing).
    pub fn new(capacity_bytes: u64) -> Self {
        let blocks = moka::sync::Cache::builder()
            .max_capacity(capacity_bytes)
            .weigher(|_key: &(u64, u64), block: &Arc<Block>| -> u32 {
                u32::try_from(block.size().saturating_add(ENTRY_OVERHEAD)).unwrap_or(u32::MAX)
            })
            .build_with_hasher(rustc_hash::FxBuildHasher);
        BlockCache {
            blocks,
            hits: StripedCounter::default(),
            misses: StripedCounter::default(),
            capacity_bytes,
        }
    }

    /// The cached block at `block_offset` of file `file_id`, counting a hit or miss.
    pub fn get(&self, file_id: u64, block_offset: u64) -> Option<Arc<Block>> {
        let found = self.blocks.get(&(file_id, block_offset));
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.add_one();
        found
    }

    /// Counts a hit served without a lookup (a reader's weak handle to a block
    /// this cache holds).
    pub fn count_hit(&self) {
        self.hits.add_one();
    }

    /// True when the block at `block_offset` of file `file_id` is cached. Counts
    /// neither a hit nor a miss and does not touch the eviction policy.
    pub fn contains(&self, file_id: u64, block_offset: u64) -> bool {
        self.blocks.contains_key(&(file_id, block_offset))
    }

    /// Drops the block at `block_offset` of file `file_id`, if cached.
    pub fn remove(&self, file_id: u64, block_offset: u64) {
        self.blocks.invalidate(&(file_id, block_offset));
    }

    /// Caches a block. The cache may decline it (admission policy or size).
    pub fn insert(&self, file_id: u64, block_offset: u64, block: Arc<Block>) {
        self.blocks.insert((file_id, block_offset), block);
    }

    /// The byte bound given at creation.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Runs the cache's deferred maintenance (evictions, size accounting) now.
    pub fn run_pending_tasks(&self) {
        self.blocks.run_pending_tasks();
    }

    /// Current counters and occupancy.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.sum(),
            misses: self.misses.sum(),
            entries: self.blocks.entry_count(),
            weighted_bytes: self.blocks.weighted_size(),
            capacity_bytes: self.capacity_bytes,
        }
    }
}

impl fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockCache")
            .field("stats", &self.stats())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sstable::block::BlockBuilder;

    /// A valid block holding one entry whose value has `size` bytes.
    fn block_of(size: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(16);
        b.add(b"k", &vec![7u8; size]);
        Arc::new(Block::parse(b.finish().to_vec()).unwrap())
    }

    #[test]
    fn counts_hits_and_misses() {
        let cache = BlockCache::new(1 << 20);
        assert!(cache.get(1, 0).is_none());
        cache.insert(1, 0, block_of(100));
        assert!(cache.get(1, 0).is_some());
        assert!(cache.get(2, 0).is_none(), "file id is part of the key");
        assert!(cache.get(1, 8).is_none(), "offset is part of the key");
        let s = cache.stats();
        assert_eq!((s.hits, s.misses), (1, 3));
        assert_eq!(s.capacity_bytes, 1 << 20);
    }

    #[test]
    fn stays_within_its_byte_bound() {
        let capacity = 64 * 1024;
        let cache = BlockCache::new(capacity);
        for i in 0..200u64 {
            cache.insert(7, i * 4096, block_of(4000));
            cache.get(7, i * 4096);
        }
        cache.run_pending_tasks();
        let s = cache.stats();
        assert!(s.weighted_bytes <= capacity, "{s:?}");
        assert!(s.entries > 0 && s.entries <= capacity / 4000, "{s:?}");
    }

    #[test]
    fn zero_capacity_caches_nothing() {
        let cache = BlockCache::new(0);
        cache.insert(1, 0, block_of(10));
        cache.run_pending_tasks();
        assert!(cache.get(1, 0).is_none());
        assert_eq!(cache.stats().weighted_bytes, 0);
    }
}
