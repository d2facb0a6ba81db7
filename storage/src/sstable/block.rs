//! The decoded block format: prefix-compressed sorted entries with restart points.
//!
//! Owns: [`BlockBuilder`] (encodes entries into one uncompressed block), [`Block`]
//! (a decoded block, validated just enough that every later read is bounds-checked)
//! and [`BlockIter`] (a cursor that reuses one key buffer and hands out values as
//! slices of the block). Used for data blocks and for the index block.
//! Must not: know about compression, checksums, files or what keys mean.
//!
//! Layout (see docs/format-sstable.md):
//!
//! ```text
//! entry*  restart_offset:u32le*  restart_count:u32le
//! entry = varint shared, varint unshared, varint value_len, key[shared..], value
//! ```

use std::cmp::Ordering;
use std::sync::Arc;

use bytes::Bytes;

use super::coding::{get_varint, put_varint};

/// Bytes of the restart count at the end of a block.
const RESTART_COUNT_LEN: usize = 4;
/// Bytes of one restart offset.
const RESTART_OFFSET_LEN: usize = 4;

/// Why a decoded block's bytes cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BlockDefect {
    #[error("block is shorter than its restart count")]
    TooShort,
    #[error("restart array does not fit in the block")]
    RestartArrayOverflow,
    #[error("restart offsets are not ascending from zero inside the entry area")]
    BadRestartOffsets,
    #[error("entry header is truncated or malformed")]
    BadEntryHeader,
    #[error("entry shares more bytes than the previous key has")]
    BadSharedPrefix,
    #[error("entry runs past the end of the entry area")]
    EntryOverflow,
    #[error("restart point entry shares a prefix with an earlier key")]
    RestartNotStandalone,
}

/// Encodes entries (given in ascending key order) into one block.
#[derive(Debug)]
pub(crate) struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    since_restart: usize,
    last_key: Vec<u8>,
    entries: usize,
}

/// Entry bytes after which a restart point is placed even before
/// `restart_interval` entries: with large values a seek then binary-searches
/// restart keys instead of stepping over many cache lines of values.
pub(crate) const RESTART_BYTES: usize = 4096;

impl BlockBuilder {
    /// A builder placing a restart point every `restart_interval` entries (min 1),
    /// or sooner once [`RESTART_BYTES`] of entries follow the last one.
    pub(crate) fn new(restart_interval: usize) -> Self {
        BlockBuilder {
            buf: Vec::new(),
            restarts: Vec::new(),
            restart_interval: restart_interval.max(1),
            since_restart: 0,
            last_key: Vec::new(),
            entries: 0,
        }
    }

    /// Appends an entry. Keys must ascend; the caller checks. The block's entry
    /// area must stay below 4 GiB; the writer's entry and block limits ensure it.
    pub(crate) fn add(&mut self, key: &[u8], value: &[u8]) {
        let since_bytes = self
            .restarts
            .last()
            .map_or(0, |&r| self.buf.len() - r as usize);
        let shared = if self.since_restart == 0
            || self.since_restart >= self.restart_interval
            || since_bytes >= RESTART_BYTES
        {
            self.restarts.push(self.buf.len() as u32);
            self.since_restart = 0;
            0
        } else {
            common_prefix_len(&self.last_key, key)
        };
        let suffix = key.get(shared..).unwrap_or_default();
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, suffix.len() as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(suffix);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(suffix);
        self.since_restart += 1;
        self.entries += 1;
    }

    /// Size of the block if it were finished now.
    pub(crate) fn estimated_size(&self) -> usize {
        self.buf.len() + RESTART_OFFSET_LEN * self.restarts.len() + RESTART_COUNT_LEN
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Appends the restart array and returns the finished block. Call [`reset`]
    /// before adding again.
    ///
    /// [`reset`]: BlockBuilder::reset
    pub(crate) fn finish(&mut self) -> &[u8] {
        for r in &self.restarts {
            self.buf.extend_from_slice(&r.to_le_bytes());
        }
        self.buf
            .extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        &self.buf
    }

    /// Empties the builder, keeping its allocations.
    pub(crate) fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.since_restart = 0;
        self.last_key.clear();
        self.entries = 0;
    }
}

fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// A decoded (uncompressed, checksum-verified) block.
///
/// Besides the bytes it keeps a copy of its restart keys side by side: a seek's
/// binary search then reads a few adjacent cache lines instead of one line per
/// probe scattered over 64 KiB, which is what a seek into a block not yet in the
/// CPU caches paid most for.
#[derive(Debug)]
pub struct Block {
    data: Bytes,
    /// Offset of the restart array = end of the entry area.
    restarts_start: usize,
    restart_count: usize,
    /// The keys of the restart entries, concatenated.
    restart_keys: Vec<u8>,
    /// One per restart point, in order.
    restart_points: Vec<RestartPoint>,
}

/// Where a restart entry starts in the block, where its key ends in
/// `Block::restart_keys` (it starts where the previous one ends) and where its
/// value lies: a seek can position a cursor on a restart entry from this table
/// alone, without touching the entry's cache lines before the value is read.
#[derive(Debug, Clone, Copy)]
struct RestartPoint {
    entry: u32,
    key_end: u32,
    value_start: u32,
    value_end: u32,
}

/// Restart tables (points, keys) of at most this many cache lines are prefetched
/// whole before a seek's binary search.
const RESTART_TABLE_PREFETCH_LINES: usize = 24;

/// Bytes a block charges per restart point for its restart table.
const RESTART_POINT_SIZE: usize = std::mem::size_of::<RestartPoint>();

impl Block {
    /// Checks the restart array and every restart entry's header, copies the
    /// restart keys and wraps the bytes.
    pub(crate) fn parse(data: Vec<u8>) -> Result<Block, BlockDefect> {
        let count_start = data
            .len()
            .checked_sub(RESTART_COUNT_LEN)
            .ok_or(BlockDefect::TooShort)?;
        let count_bytes: [u8; 4] = data
            .get(count_start..)
            .and_then(|b| b.try_into().ok())
            .ok_or(BlockDefect::TooShort)?;
        let restart_count = usize::try_from(u32::from_le_bytes(count_bytes))
            .map_err(|_| BlockDefect::RestartArrayOverflow)?;
        let restarts_start = restart_count
            .checked_mul(RESTART_OFFSET_LEN)
            .and_then(|len| count_start.checked_sub(len))
            .ok_or(BlockDefect::RestartArrayOverflow)?;
        let mut block = Block {
            data: Bytes::from(data),
            restarts_start,
            restart_count,
            restart_keys: Vec::new(),
            restart_points: Vec::with_capacity(restart_count),
        };
        if restart_count == 0 && restarts_start != 0 {
            return Err(BlockDefect::BadRestartOffsets);
        }
        let mut previous: Option<usize> = None;
        for i in 0..restart_count {
            let off = block
                .stored_restart_offset(i)
                .ok_or(BlockDefect::BadRestartOffsets)?;
            let ok = match previous {
                None => off == 0,
                Some(p) => off > p,
            };
            if !ok || off >= restarts_start {
                return Err(BlockDefect::BadRestartOffsets);
            }
            previous = Some(off);
            let h = block.entry_header(off)?;
            if h.shared != 0 {
                return Err(BlockDefect::RestartNotStandalone);
            }
            let key = block
                .data
                .get(h.suffix_start..h.value_start)
                .ok_or(BlockDefect::EntryOverflow)?;
            if i == 0 {
                // Restart keys of a block are mostly alike in length: one
                // allocation for all of them, usually.
                block
                    .restart_keys
                    .reserve(key.len().saturating_add(8).saturating_mul(restart_count));
            }
            block.restart_keys.extend_from_slice(key);
            let offset = |at: usize| u32::try_from(at).map_err(|_| BlockDefect::EntryOverflow);
            let point = RestartPoint {
                entry: offset(off)?,
                key_end: offset(block.restart_keys.len())?,
                value_start: offset(h.value_start)?,
                value_end: offset(h.value_end)?,
            };
            block.restart_points.push(point);
        }
        if block.restart_keys.capacity() > block.restart_keys.len() * 2 {
            block.restart_keys.shrink_to_fit();
        }
        Ok(block)
    }

    /// Bytes held by the decoded block, its restart table included.
    pub fn size(&self) -> usize {
        self.data.len() + self.restart_keys.capacity() + RESTART_POINT_SIZE * self.restart_count
    }

    /// True when the block holds no entries.
    pub fn is_empty(&self) -> bool {
        self.restart_count == 0
    }

    /// Restart offset `i` as stored in the block's restart array.
    #[inline]
    fn stored_restart_offset(&self, i: usize) -> Option<usize> {
        let at = self
            .restarts_start
            .checked_add(i.checked_mul(RESTART_OFFSET_LEN)?)?;
        let bytes: [u8; 4] = self.data.get(at..at.checked_add(4)?)?.try_into().ok()?;
        usize::try_from(u32::from_le_bytes(bytes)).ok()
    }

    /// True when restart entry `i` is the only entry before the next restart point
    /// (or the end of the entries): blocks of large values restart at every entry.
    #[inline]
    fn restart_stands_alone(&self, i: usize) -> bool {
        let next = self
            .restart_points
            .get(i + 1)
            .map_or(self.restarts_start, |p| p.entry as usize);
        self.restart_points
            .get(i)
            .is_some_and(|p| p.value_end as usize == next)
    }

    /// Decodes the header of the entry at `offset`.
    #[inline]
    fn entry_header(&self, offset: usize) -> Result<EntryHeader, BlockDefect> {
        let entries = self
            .data
            .get(..self.restarts_start)
            .ok_or(BlockDefect::EntryOverflow)?;
        let mut pos = offset;
        let mut field = || -> Result<usize, BlockDefect> {
            get_varint(entries, &mut pos)
                .and_then(|v| usize::try_from(v).ok())
                .ok_or(BlockDefect::BadEntryHeader)
        };
        let shared = field()?;
        let unshared = field()?;
        let value_len = field()?;
        let suffix_start = pos;
        let value_start = suffix_start
            .checked_add(unshared)
            .ok_or(BlockDefect::EntryOverflow)?;
        let value_end = value_start
            .checked_add(value_len)
            .ok_or(BlockDefect::EntryOverflow)?;
        if value_end > self.restarts_start {
            return Err(BlockDefect::EntryOverflow);
        }
        Ok(EntryHeader {
            shared,
            suffix_start,
            value_start,
            value_end,
        })
    }

    /// The full key stored at restart point `i`, from the restart table.
    #[inline]
    fn restart_key(&self, i: usize) -> Result<&[u8], BlockDefect> {
        let end = self
            .restart_points
            .get(i)
            .ok_or(BlockDefect::BadRestartOffsets)?
            .key_end as usize;
        let start = match i.checked_sub(1) {
            Some(p) => self
                .restart_points
                .get(p)
                .map_or(0, |prev| prev.key_end as usize),
            None => 0,
        };
        self.restart_keys
            .get(start..end)
            .ok_or(BlockDefect::EntryOverflow)
    }
}

#[derive(Debug, Clone, Copy)]
struct EntryHeader {
    shared: usize,
    suffix_start: usize,
    value_start: usize,
    value_end: usize,
}

/// A cursor over one block. The current key lives in a reusable buffer; the value
/// is a slice of the block.
#[derive(Debug)]
pub(crate) struct BlockIter {
    block: Arc<Block>,
    key: Vec<u8>,
    /// Offset of the current entry; `restarts_start` when not positioned.
    current: usize,
    /// Offset of the entry after the current one.
    next: usize,
    value_start: usize,
    value_end: usize,
}

impl BlockIter {
    /// An unpositioned cursor over `block`.
    pub(crate) fn new(block: Arc<Block>) -> Self {
        let end = block.restarts_start;
        BlockIter {
            block,
            key: Vec::new(),
            current: end,
            next: end,
            value_start: 0,
            value_end: 0,
        }
    }

    /// Moves the cursor to another block (unpositioned), keeping the key buffer.
    pub(crate) fn reset(&mut self, block: Arc<Block>) {
        self.block = block;
        self.invalidate();
    }

    /// Leaves the cursor unpositioned.
    pub(crate) fn invalidate(&mut self) {
        self.current = self.block.restarts_start;
        self.next = self.block.restarts_start;
        self.key.clear();
    }

    #[inline]
    pub(crate) fn valid(&self) -> bool {
        self.current < self.block.restarts_start
    }

    #[inline]
    pub(crate) fn key(&self) -> &[u8] {
        &self.key
    }

    #[inline]
    pub(crate) fn value(&self) -> &[u8] {
        self.block
            .data
            .get(self.value_start..self.value_end)
            .unwrap_or_default()
    }

    /// The current value as owned bytes: a copy in a buffer of its own, never a
    /// slice of the block. A read's values are copied once more at most, into the
    /// reply: the gateway takes over a buffer nothing else references, while a
    /// slice would cost two atomic updates of the block's reference count (a
    /// likely cache miss each) and still be copied into the Thrift value. A copy
    /// also never keeps a whole block alive.
    pub(crate) fn value_bytes(&self) -> Bytes {
        Bytes::from(self.value().to_vec())
    }

    /// Decodes the entry at `self.next` into the cursor, or leaves it unpositioned
    /// at the end of the entry area.
    #[inline]
    fn step(&mut self) -> Result<(), BlockDefect> {
        if self.next >= self.block.restarts_start {
            self.invalidate();
            return Ok(());
        }
        let at = self.next;
        let h = match self.block.entry_header(at) {
            Ok(h) => h,
            Err(e) => {
                self.invalidate();
                return Err(e);
            }
        };
        if h.shared > self.key.len() {
            self.invalidate();
            return Err(BlockDefect::BadSharedPrefix);
        }
        let suffix = self
            .block
            .data
            .get(h.suffix_start..h.value_start)
            .unwrap_or_default();
        self.key.truncate(h.shared);
        self.key.extend_from_slice(suffix);
        self.current = at;
        self.next = h.value_end;
        self.value_start = h.value_start;
        self.value_end = h.value_end;
        // The next entry's header and key are what the following step reads; with
        // large values they are on lines of their own (the key may start on the
        // line after the header's).
        crate::prefetch::prefetch(&self.block.data, h.value_end);
        crate::prefetch::prefetch(&self.block.data, h.value_end.saturating_add(64));
        Ok(())
    }

    /// Positions at restart entry `i` from the restart table (key and value bounds
    /// checked at parse), prefetching the value and the next entry's header.
    fn position_at_restart(&mut self, i: usize) -> Result<(), BlockDefect> {
        let p = *self
            .block
            .restart_points
            .get(i)
            .ok_or(BlockDefect::BadRestartOffsets)?;
        let key = self.block.restart_key(i)?;
        self.key.clear();
        self.key.extend_from_slice(key);
        self.current = p.entry as usize;
        self.next = p.value_end as usize;
        self.value_start = p.value_start as usize;
        self.value_end = p.value_end as usize;
        crate::prefetch::prefetch(&self.block.data, self.value_start);
        crate::prefetch::prefetch(&self.block.data, self.value_end);
        Ok(())
    }

    /// Index of the last restart point whose key is < `target` (0 if none is).
    fn last_restart_below(&self, target: &[u8]) -> Result<usize, BlockDefect> {
        // The probes land on a few scattered lines of both restart tables, and the
        // seek then needs the block's other fields: when the block is not in the
        // CPU caches, asking for all of those lines first turns one wait per probe
        // into about one wait.
        crate::prefetch::prefetch_all(std::slice::from_ref(self.block.as_ref()), 4);
        crate::prefetch::prefetch_all(&self.block.restart_points, RESTART_TABLE_PREFETCH_LINES);
        crate::prefetch::prefetch_all(&self.block.restart_keys, RESTART_TABLE_PREFETCH_LINES);
        let mut lo = 0;
        let mut hi = self.block.restart_count.saturating_sub(1);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.block.restart_key(mid)? < target {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Ok(lo)
    }

    pub(crate) fn seek_to_first(&mut self) -> Result<(), BlockDefect> {
        if self.block.restart_count == 0 {
            self.invalidate();
            return Ok(());
        }
        self.position_at_restart(0)
    }

    pub(crate) fn seek_to_last(&mut self) -> Result<(), BlockDefect> {
        let Some(last) = self.block.restart_count.checked_sub(1) else {
            self.invalidate();
            return Ok(());
        };
        self.position_at_restart(last)?;
        while self.valid() && self.next < self.block.restarts_start {
            self.step()?;
        }
        Ok(())
    }

    /// Positions at the first entry with key >= `target` (unpositioned if none).
    pub(crate) fn seek(&mut self, target: &[u8]) -> Result<(), BlockDefect> {
        if self.block.restart_count == 0 {
            self.invalidate();
            return Ok(());
        }
        let r = self.last_restart_below(target)?;
        // Restart r's key is below the target (or r is 0). When r is alone in its
        // run, the entry sought is the next restart entry, positioned from the
        // restart table without decoding r.
        if self.block.restart_stands_alone(r) && self.block.restart_key(r)? < target {
            if r + 1 >= self.block.restart_count {
                self.invalidate();
                return Ok(());
            }
            return self.position_at_restart(r + 1);
        }
        self.position_at_restart(r)?;
        while self.valid() && self.key.as_slice() < target {
            self.step()?;
        }
        Ok(())
    }

    /// Positions at the last entry with key < `target` (unpositioned if none).
    pub(crate) fn seek_for_prev(&mut self, target: &[u8]) -> Result<(), BlockDefect> {
        if self.block.restart_count == 0 || self.block.restart_key(0)? >= target {
            self.invalidate();
            return Ok(());
        }
        let r = self.last_restart_below(target)?;
        self.position_at_restart(r)?;
        while self.valid() && self.next < self.block.restarts_start {
            let h = self.block.entry_header(self.next)?;
            let prefix = self
                .key
                .get(..h.shared)
                .ok_or(BlockDefect::BadSharedPrefix)?;
            let suffix = self
                .block
                .data
                .get(h.suffix_start..h.value_start)
                .unwrap_or_default();
            if cmp_concat(prefix, suffix, target) != Ordering::Less {
                break;
            }
            self.step()?;
        }
        Ok(())
    }

    /// Moves to the next entry (unpositioned past the last one).
    pub(crate) fn next(&mut self) -> Result<(), BlockDefect> {
        if !self.valid() {
            return Ok(());
        }
        self.step()
    }
}

/// Compares the key `prefix ++ suffix` with `target` without building it.
fn cmp_concat(prefix: &[u8], suffix: &[u8], target: &[u8]) -> Ordering {
    let n = prefix.len().min(target.len());
    let (target_head, target_rest) = target.split_at(n);
    match prefix.get(..n).unwrap_or_default().cmp(target_head) {
        Ordering::Equal if prefix.len() > n => Ordering::Greater,
        Ordering::Equal => suffix.cmp(target_rest),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn build(entries: &BTreeMap<Vec<u8>, Vec<u8>>, restart_interval: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(restart_interval);
        for (k, v) in entries {
            b.add(k, v);
        }
        let bytes = b.finish().to_vec();
        Arc::new(Block::parse(bytes).unwrap())
    }

    fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![Just(0u8), Just(b'a'), Just(b'b'), Just(255u8)],
            0..6,
        )
    }

    proptest! {
        #[test]
        fn cursor_matches_btreemap(
            entries in proptest::collection::btree_map(key_strategy(), proptest::collection::vec(any::<u8>(), 0..4), 0..80),
            targets in proptest::collection::vec(key_strategy(), 1..12),
            restart_interval in 1usize..5,
        ) {
            let block = build(&entries, restart_interval);
            let mut it = BlockIter::new(block);
            it.seek_to_first().unwrap();
            let mut got = Vec::new();
            while it.valid() {
                got.push((it.key().to_vec(), it.value().to_vec()));
                it.next().unwrap();
            }
            let all: Vec<_> = entries.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            prop_assert_eq!(&got, &all);

            it.seek_to_last().unwrap();
            prop_assert_eq!(it.valid().then(|| it.key().to_vec()), entries.keys().next_back().cloned());

            for t in &targets {
                it.seek(t).unwrap();
                let expect = entries.range(t.clone()..).next().map(|(k, v)| (k.clone(), v.clone()));
                prop_assert_eq!(it.valid().then(|| (it.key().to_vec(), it.value().to_vec())), expect);

                it.seek_for_prev(t).unwrap();
                let expect = entries.range(..t.clone()).next_back().map(|(k, v)| (k.clone(), v.clone()));
                prop_assert_eq!(it.valid().then(|| (it.key().to_vec(), it.value().to_vec())), expect);
                if it.valid() {
                    it.next().unwrap();
                    let after = entries.range(t.clone()..).next().map(|(k, _)| k.clone());
                    prop_assert_eq!(it.valid().then(|| it.key().to_vec()), after);
                }
            }
        }

        #[test]
        fn cursor_over_large_values_matches_btreemap(
            entries in proptest::collection::btree_map(key_strategy(), 0usize..3000, 0..40),
            targets in proptest::collection::vec(key_strategy(), 1..12),
            restart_interval in 1usize..20,
        ) {
            // Values of kilobytes: restart points placed by bytes, restart entries
            // alone in their runs, restart tables of a few entries.
            let entries: BTreeMap<Vec<u8>, Vec<u8>> = entries
                .into_iter()
                .map(|(k, len)| (k, vec![len as u8; len]))
                .collect();
            let block = build(&entries, restart_interval);
            let mut it = BlockIter::new(block);
            for t in &targets {
                it.seek(t).unwrap();
                let expect = entries.range(t.clone()..).next().map(|(k, v)| (k.clone(), v.clone()));
                prop_assert_eq!(it.valid().then(|| (it.key().to_vec(), it.value().to_vec())), expect);
                it.seek_for_prev(t).unwrap();
                let expect = entries.range(..t.clone()).next_back().map(|(k, _)| k.clone());
                prop_assert_eq!(it.valid().then(|| it.key().to_vec()), expect);
            }
            it.seek_to_last().unwrap();
            prop_assert_eq!(it.valid().then(|| it.key().to_vec()), entries.keys().next_back().cloned());
        }

        #[test]
        fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64), target in key_strategy()) {
            if let Ok(block) = Block::parse(bytes) {
                let mut it = BlockIter::new(Arc::new(block));
                let mut steps = 0;
                if it.seek_to_first().is_ok() {
                    while it.valid() && steps < 100 {
                        if it.next().is_err() { break; }
                        steps += 1;
                    }
                }
                let _ = it.seek(&target);
                let _ = it.seek_for_prev(&target);
                let _ = it.seek_to_last();
                prop_assert!(steps <= 100);
            }
        }
    }

    #[test]
    fn prefix_compression_shrinks_shared_keys() {
        let mut entries = BTreeMap::new();
        for i in 0..32u8 {
            entries.insert(
                [b"a-long-common-prefix-".as_slice(), &[i]].concat(),
                vec![i],
            );
        }
        let block = build(&entries, 16);
        let raw: usize = entries.iter().map(|(k, v)| k.len() + v.len()).sum();
        assert!(block.size() < raw, "{} >= {}", block.size(), raw);
        assert_eq!(block.restart_count, 2);
    }

    #[test]
    fn malformed_blocks_are_rejected() {
        assert_eq!(Block::parse(vec![1, 2]).err(), Some(BlockDefect::TooShort));
        // Claims 9 restarts in a 4-byte block.
        assert_eq!(
            Block::parse(vec![9, 0, 0, 0]).err(),
            Some(BlockDefect::RestartArrayOverflow)
        );
        // One restart that does not start at zero.
        let mut bad = vec![0u8; 4];
        bad.extend_from_slice(&2u32.to_le_bytes());
        bad.extend_from_slice(&1u32.to_le_bytes());
        assert_eq!(
            Block::parse(bad).err(),
            Some(BlockDefect::BadRestartOffsets)
        );
        // A restart entry whose value runs past the entry area: caught at parse,
        // where the restart keys are copied.
        let mut overflow = vec![0u8, 1, 200, b'k'];
        overflow.extend_from_slice(&0u32.to_le_bytes());
        overflow.extend_from_slice(&1u32.to_le_bytes());
        assert_eq!(
            Block::parse(overflow).err(),
            Some(BlockDefect::EntryOverflow)
        );
        // A later (non-restart) entry that overflows fails when the cursor reaches
        // it, and leaves the cursor unpositioned.
        let mut later = vec![0u8, 1, 1, b'k', b'v', 0, 1, 200, b'l'];
        later.extend_from_slice(&0u32.to_le_bytes());
        later.extend_from_slice(&1u32.to_le_bytes());
        let mut it = BlockIter::new(Arc::new(Block::parse(later).unwrap()));
        assert_eq!(it.seek_to_first(), Ok(()));
        assert_eq!(it.key(), b"k");
        assert_eq!(it.next(), Err(BlockDefect::EntryOverflow));
        assert!(!it.valid());
        // A restart entry that claims to share a prefix.
        let mut shared = vec![1u8, 1, 0, b'k'];
        shared.extend_from_slice(&0u32.to_le_bytes());
        shared.extend_from_slice(&1u32.to_le_bytes());
        assert_eq!(
            Block::parse(shared).err(),
            Some(BlockDefect::RestartNotStandalone)
        );
    }

    #[test]
    fn empty_block_has_no_entries() {
        let mut b = BlockBuilder::new(16);
        let block = Arc::new(Block::parse(b.finish().to_vec()).unwrap());
        assert!(block.is_empty());
        let mut it = BlockIter::new(block);
        it.seek_to_first().unwrap();
        assert!(!it.valid());
        it.seek(b"x").unwrap();
        assert!(!it.valid());
        it.seek_for_prev(b"x").unwrap();
        assert!(!it.valid());
    }

    #[test]
    fn values_are_handed_out_in_buffers_of_their_own() {
        let mut b = BlockBuilder::new(16);
        b.add(b"a", &[7u8; 1000]);
        b.add(b"b", b"small");
        let block = Arc::new(Block::parse(b.finish().to_vec()).unwrap());
        let mut it = BlockIter::new(Arc::clone(&block));
        it.seek(b"a").unwrap();
        let value = it.value_bytes();
        assert_eq!(value.as_ref(), &[7u8; 1000][..]);
        // Not a slice of the block: the block's bytes do not contain its address...
        let block_range = block.data.as_ptr_range();
        assert!(!block_range.contains(&value.as_ptr()));
        // ...and the reply takes the buffer over without copying it.
        let at = value.as_ptr();
        let owned = Vec::from(value);
        assert_eq!(owned.as_ptr(), at);
        it.next().unwrap();
        assert_eq!(it.value_bytes().as_ref(), b"small");
    }

    #[test]
    fn concat_comparison_matches_building_the_key() {
        let cases: [(&[u8], &[u8], &[u8]); 6] = [
            (b"ab", b"c", b"abc"),
            (b"ab", b"c", b"abd"),
            (b"ab", b"", b"a"),
            (b"", b"b", b"ab"),
            (b"abc", b"", b"abc"),
            (b"a", b"bc", b"abcd"),
        ];
        for (p, s, t) in cases {
            let built = [p, s].concat();
            assert_eq!(
                cmp_concat(p, s, t),
                built.as_slice().cmp(t),
                "{p:?} {s:?} {t:?}"
            );
        }
    }
}
