//! Weak handles to one SSTable's cached data blocks, by block number.
//!
//! Owns: [`BlockSlots`], one slot per data block of a reader holding a weak
//! reference to the block the shared block cache holds, and the per-thread
//! sampling that decides when a hit found here is still taken through the cache.
//! Must not: keep a block alive (the block cache alone decides which blocks stay
//! and bounds their bytes; a slot only reaches a block something else still holds)
//! or read files.
//!
//! Why: a hit in the block cache costs a hash lookup over its buckets, an entry
//! to check and a read recorded for its eviction policy (a tenth of the server's
//! CPU on a random get of cached data). A reader finds its block by number, so a
//! slot reaches the same block with a short lock of its own and a reference-count
//! upgrade. One hit in [`CACHE_VISIT_EVERY`] per thread still goes through the
//! cache, which keeps its recency and frequency counts proportional to the real
//! accesses: hot blocks stay, and a block the cache evicts dies with its last
//! user, after which its slot no longer upgrades and the next read is a cache
//! miss as before.
//!
//! Memory: 16 bytes per data block of a cached reader, and, for a block that
//! died and was not looked up since, its header (about 120 bytes, under 0.2% of
//! the 64 KiB block it stood for) until the slot is next read, refilled or
//! cleared.

use std::cell::Cell;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use super::Block;

/// One hit in this many (per thread) is looked up in the block cache instead of
/// through the slot, so the cache's eviction policy keeps seeing the accesses.
pub(crate) const CACHE_VISIT_EVERY: u32 = 32;

thread_local! {
    /// Slot hits on this thread since its last cache visit.
    static HITS_SINCE_VISIT: Cell<u32> = const { Cell::new(0) };
}

/// Weak handles to a reader's data blocks.
pub(crate) struct BlockSlots {
    slots: Box<[Mutex<Weak<Block>>]>,
}

impl BlockSlots {
    /// Empty slots for `blocks` data blocks.
    pub(crate) fn new(blocks: usize) -> Self {
        BlockSlots {
            slots: (0..blocks).map(|_| Mutex::new(Weak::new())).collect(),
        }
    }

    /// Block `i`, when a block is still alive in its slot and this hit is not one
    /// the block cache must see (see [`CACHE_VISIT_EVERY`]).
    pub(crate) fn get(&self, i: usize) -> Option<Arc<Block>> {
        let block = {
            let mut held = self.slots.get(i)?.lock();
            let block = held.upgrade();
            if block.is_none() {
                // The block died: let go of its header now.
                *held = Weak::new();
            }
            block?
        };
        let due = HITS_SINCE_VISIT.with(|hits| {
            let n = hits.get() + 1;
            if n >= CACHE_VISIT_EVERY {
                hits.set(0);
                true
            } else {
                hits.set(n);
                false
            }
        });
        (!due).then_some(block)
    }

    /// Points slot `i` at `block`.
    pub(crate) fn set(&self, i: usize, block: &Arc<Block>) {
        if let Some(slot) = self.slots.get(i) {
            let mut held = slot.lock();
            if !std::ptr::eq(held.as_ptr(), Arc::as_ptr(block)) {
                *held = Arc::downgrade(block);
            }
        }
    }

    /// Empties slot `i` (its block left the cache for good).
    pub(crate) fn clear(&self, i: usize) {
        if let Some(slot) = self.slots.get(i) {
            *slot.lock() = Weak::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sstable::block::BlockBuilder;

    fn block() -> Arc<Block> {
        let mut b = BlockBuilder::new(16);
        b.add(b"k", b"v");
        Arc::new(Block::parse(b.finish().to_vec()).unwrap())
    }

    /// Slot hits on this thread out of `n` lookups of slot 0.
    fn hits(slots: &BlockSlots, n: u32) -> u32 {
        (0..n).filter(|_| slots.get(0).is_some()).count() as u32
    }

    #[test]
    fn reaches_a_block_only_while_something_holds_it() {
        let slots = BlockSlots::new(2);
        assert!(slots.get(0).is_none(), "empty slot");
        let b = block();
        slots.set(0, &b);
        assert!(hits(&slots, 100) > 0);
        assert!(slots.get(1).is_none(), "other slot untouched");
        assert!(slots.get(2).is_none(), "past the end");
        drop(b);
        assert_eq!(hits(&slots, 100), 0, "a dead block is never handed out");
    }

    #[test]
    fn sends_one_hit_in_every_few_to_the_cache() {
        let slots = BlockSlots::new(1);
        let b = block();
        slots.set(0, &b);
        let n = CACHE_VISIT_EVERY * 50;
        assert_eq!(hits(&slots, n), n - 50);
    }

    #[test]
    fn clear_and_replace() {
        let slots = BlockSlots::new(1);
        let first = block();
        slots.set(0, &first);
        slots.clear(0);
        assert_eq!(hits(&slots, 20), 0);
        let second = block();
        slots.set(0, &second);
        let got = (0..20).find_map(|_| slots.get(0)).unwrap();
        assert!(Arc::ptr_eq(&got, &second));
    }
}
