//! The block index: one entry per data block, resident in the reader.
//!
//! Owns: choosing the short separator keys written into the index block, and
//! [`BlockIndex`], the index decoded at open into flat arrays (one key buffer, key
//! boundaries, handles) so a lookup is one binary search with no allocation.
//! Must not: read files or decode data blocks.

use std::sync::Arc;

use super::block::{Block, BlockDefect, BlockIter};
use super::footer::BlockHandle;

/// Writes into `out` a key `s` with `last <= s < next`, usually much shorter than
/// either. Requires `last < next`.
pub(crate) fn separator(last: &[u8], next: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let common = last.iter().zip(next).take_while(|(a, b)| a == b).count();
    let (Some(&l), Some(&n)) = (last.get(common), next.get(common)) else {
        // `last` is a prefix of `next`: nothing shorter than `last` works.
        out.extend_from_slice(last);
        return;
    };
    // `last[..common] + (l + 1)` is above `last`, and below `next` when it is
    // smaller at `common` or a proper prefix of it.
    if l < 0xFF && (l + 1 < n || (l + 1 == n && next.len() > common + 1)) {
        out.extend_from_slice(last.get(..common).unwrap_or_default());
        out.push(l + 1);
        return;
    }
    // `last` and `next` differ by one at `common`; keep `last[..=common]` (below
    // `next`) and bump the first later byte of `last` that can be bumped.
    let bump = last
        .iter()
        .enumerate()
        .skip(common + 1)
        .find(|(_, &b)| b < 0xFF);
    match bump {
        Some((j, &b)) => {
            out.extend_from_slice(last.get(..j).unwrap_or_default());
            out.push(b + 1);
        }
        None => out.extend_from_slice(last),
    }
}

/// Why the index block was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexDefect {
    #[error("{0}")]
    Block(#[from] BlockDefect),
    #[error("index entry {0} has a malformed block handle")]
    BadHandle(usize),
    #[error("index keys are not strictly ascending at entry {0}")]
    KeysNotAscending(usize),
    #[error("data block {entry} is at offset {offset}, expected {expected}")]
    NotContiguous {
        entry: usize,
        offset: u64,
        expected: u64,
    },
    #[error("data blocks end at {actual}, expected {expected}")]
    WrongDataEnd { actual: u64, expected: u64 },
}

/// The decoded index.
#[derive(Debug, Default)]
pub(crate) struct BlockIndex {
    keys: Vec<u8>,
    /// `keys[key_ends[i-1]..key_ends[i]]` is entry i's key.
    key_ends: Vec<usize>,
    handles: Vec<BlockHandle>,
}

impl BlockIndex {
    /// Decodes the index block and checks that its blocks tile `[0, data_end)`
    /// exactly, in order, with ascending keys.
    pub(crate) fn parse(block: Block, data_end: u64) -> Result<BlockIndex, IndexDefect> {
        let mut index = BlockIndex::default();
        let mut it = BlockIter::new(Arc::new(block));
        it.seek_to_first()?;
        let mut expected_offset = 0u64;
        while it.valid() {
            let entry = index.handles.len();
            let handle =
                BlockHandle::decode_varint(it.value()).ok_or(IndexDefect::BadHandle(entry))?;
            if handle.offset != expected_offset {
                return Err(IndexDefect::NotContiguous {
                    entry,
                    offset: handle.offset,
                    expected: expected_offset,
                });
            }
            expected_offset = handle.end().ok_or(IndexDefect::BadHandle(entry))?;
            if let Some(prev) = index.key(entry.wrapping_sub(1)) {
                if prev >= it.key() {
                    return Err(IndexDefect::KeysNotAscending(entry));
                }
            }
            index.keys.extend_from_slice(it.key());
            index.key_ends.push(index.keys.len());
            index.handles.push(handle);
            it.next()?;
        }
        if expected_offset != data_end {
            return Err(IndexDefect::WrongDataEnd {
                actual: expected_offset,
                expected: data_end,
            });
        }
        index.keys.shrink_to_fit();
        Ok(index)
    }

    /// Number of data blocks.
    pub(crate) fn len(&self) -> usize {
        self.handles.len()
    }

    /// Every data block's handle, in file order.
    pub(crate) fn handles(&self) -> &[BlockHandle] {
        &self.handles
    }

    pub(crate) fn handle(&self, i: usize) -> Option<BlockHandle> {
        self.handles.get(i).copied()
    }

    /// Entry i's key: >= every key of block i and < every key of block i+1.
    pub(crate) fn key(&self, i: usize) -> Option<&[u8]> {
        let end = *self.key_ends.get(i)?;
        let start = match i.checked_sub(1) {
            Some(p) => *self.key_ends.get(p)?,
            None => 0,
        };
        self.keys.get(start..end)
    }

    /// The first block that can hold a key >= `target` (`len()` if none can).
    pub(crate) fn find(&self, target: &[u8]) -> usize {
        let mut lo = 0;
        let mut hi = self.len();
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.key(mid).is_some_and(|k| k < target) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Bytes held in memory.
    pub(crate) fn memory(&self) -> usize {
        self.keys.capacity()
            + self.key_ends.capacity() * std::mem::size_of::<usize>()
            + self.handles.capacity() * std::mem::size_of::<BlockHandle>()
    }
}

#[cfg(test)]
mod tests {
    use super::super::block::BlockBuilder;
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn separator_lies_between(
            a in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xFEu8), Just(0xFFu8), any::<u8>()], 0..8),
            b in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xFEu8), Just(0xFFu8), any::<u8>()], 0..8),
        ) {
            let (lo, hi) = if a < b { (a, b) } else { (b, a) };
            prop_assume!(lo < hi);
            let mut s = Vec::new();
            separator(&lo, &hi, &mut s);
            prop_assert!(lo.as_slice() <= s.as_slice());
            prop_assert!(s.as_slice() < hi.as_slice());
            prop_assert!(s.len() <= lo.len().max(1));
        }
    }

    #[test]
    fn separator_is_short_for_distinct_rows() {
        let mut s = Vec::new();
        separator(b"apple\x00\x01fam-and-more", b"banana\x00\x01", &mut s);
        assert_eq!(s, b"b");
        separator(b"row1-zzz", b"row2", &mut s);
        assert_eq!(s, b"row1.");
        separator(b"ab", b"abc", &mut s);
        assert_eq!(s, b"ab");
    }

    fn index_block(entries: &[(&[u8], BlockHandle)]) -> Block {
        let mut b = BlockBuilder::new(2);
        let mut v = Vec::new();
        for (k, h) in entries {
            v.clear();
            h.encode_varint(&mut v);
            b.add(k, &v);
        }
        Block::parse(b.finish().to_vec()).unwrap()
    }

    #[test]
    fn parses_and_finds() {
        let h = |offset, size| BlockHandle { offset, size };
        let block = index_block(&[(b"b", h(0, 10)), (b"d", h(15, 3)), (b"f", h(23, 7))]);
        let index = BlockIndex::parse(block, 35).unwrap();
        assert_eq!(index.len(), 3);
        assert_eq!(index.find(b"a"), 0);
        assert_eq!(index.find(b"b"), 0);
        assert_eq!(index.find(b"c"), 1);
        assert_eq!(index.find(b"f"), 2);
        assert_eq!(index.find(b"g"), 3);
        assert_eq!(index.key(1), Some(b"d".as_slice()));
        assert_eq!(index.handle(2), Some(h(23, 7)));
        assert!(index.memory() > 0);
    }

    #[test]
    fn layout_errors_are_caught() {
        let h = |offset, size| BlockHandle { offset, size };
        let gap = index_block(&[(b"b", h(0, 10)), (b"d", h(16, 3))]);
        assert!(matches!(
            BlockIndex::parse(gap, 24),
            Err(IndexDefect::NotContiguous { entry: 1, .. })
        ));
        let short = index_block(&[(b"b", h(0, 10))]);
        assert!(matches!(
            BlockIndex::parse(short, 16),
            Err(IndexDefect::WrongDataEnd { .. })
        ));
        let unordered = index_block(&[(b"d", h(0, 10)), (b"b", h(15, 3))]);
        assert_eq!(
            BlockIndex::parse(unordered, 23).err(),
            Some(IndexDefect::KeysNotAscending(1))
        );
        let mut b = BlockBuilder::new(2);
        b.add(b"k", &[0x80]);
        let bad_handle = Block::parse(b.finish().to_vec()).unwrap();
        assert_eq!(
            BlockIndex::parse(bad_handle, 0).err(),
            Some(IndexDefect::BadHandle(0))
        );
    }
}
