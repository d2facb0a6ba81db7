//! The SSTable reader and its cursor.
//!
//! Owns: [`SstReader`] (opens a file, verifies footer, index, bloom and meta
//! blocks, keeps them resident, and reads data blocks by `pread` through the
//! optional block cache) and [`SstIter`], its [`KvIter`].
//! Must not: write files, or interpret entries beyond key order (the read path
//! resolves versions and deletes).

use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::block::{Block, BlockIter};
use super::block_slots::BlockSlots;
use super::bloom::FileBlooms;
use super::envelope::unseal;
use super::footer::{BlockHandle, Footer, FOOTER_LEN};
use super::index::BlockIndex;
use super::meta::SstMeta;
use crate::cache::BlockCache;
use crate::error::{Error, Result};
use crate::iter::KvIter;
use crate::key;

/// An open SSTable. Share it with `Arc`; every method takes `&self`.
pub struct SstReader {
    path: PathBuf,
    file: File,
    /// Device and inode of the file opened, so that a reader found by path can be
    /// told from a reader of an earlier file at the same path.
    identity: (u64, u64),
    file_id: u64,
    file_size: u64,
    index: BlockIndex,
    blooms: FileBlooms,
    meta: SstMeta,
    cache: Option<Arc<BlockCache>>,
    /// Weak handles to the cached data blocks, by block number: most cache hits
    /// go through them instead of the cache's lookup.
    slots: BlockSlots,
}

impl std::fmt::Debug for SstReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SstReader")
            .field("path", &self.path)
            .field("file_id", &self.file_id)
            .field("file_size", &self.file_size)
            .field("blocks", &self.index.len())
            .field("cached", &self.cache.is_some())
            .finish()
    }
}

impl SstReader {
    /// Opens and verifies the file. `file_id` names it in the block cache and must
    /// be unique among files sharing `cache`; `None` bypasses the cache.
    pub fn open(
        path: &Path,
        file_id: u64,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<Arc<SstReader>> {
        let file = File::open(path)
            .map_err(|e| Error::io(format!("opening SSTable {}", path.display()), e))?;
        let stat = file
            .metadata()
            .map_err(|e| Error::io(format!("reading the size of SSTable {}", path.display()), e))?;
        let file_size = stat.len();
        let identity = (stat.dev(), stat.ino());
        let footer_start = file_size.checked_sub(FOOTER_LEN as u64).ok_or_else(|| {
            Error::corruption(
                path,
                format!("file is {file_size} bytes, shorter than the {FOOTER_LEN}-byte footer"),
            )
        })?;
        let mut footer_bytes = vec![0u8; FOOTER_LEN];
        read_exact_at(&file, path, &mut footer_bytes, footer_start)?;
        let footer = Footer::decode(&footer_bytes).map_err(|d| {
            Error::corruption(path, format!("footer at offset {footer_start}: {d}"))
        })?;

        // The three metadata blocks must sit, in this order, between the data
        // blocks and the footer, with no gap: every byte of the file is covered
        // by exactly one checksum.
        let check_next = |what: &str, handle: BlockHandle, expected_end: u64| -> Result<u64> {
            if handle.end() != Some(expected_end) {
                return Err(Error::corruption(
                    path,
                    format!(
                        "{what} block handle (offset {}, size {}) does not end at offset {expected_end}",
                        handle.offset, handle.size
                    ),
                ));
            }
            Ok(handle.offset)
        };
        let index_start = check_next("index", footer.index, footer_start)?;
        let meta_start = check_next("meta", footer.meta, index_start)?;
        let data_end = check_next("bloom", footer.bloom, meta_start)?;

        let index_block = Block::parse(read_block(&file, path, footer.index, "index")?)
            .map_err(|d| block_corruption(path, "index", footer.index, d))?;
        let index = BlockIndex::parse(index_block, data_end)
            .map_err(|d| block_corruption(path, "index", footer.index, d))?;
        let blooms = FileBlooms::decode(&read_block(&file, path, footer.bloom, "bloom")?)
            .map_err(|d| block_corruption(path, "bloom", footer.bloom, d))?;
        let mut meta = SstMeta::decode(&read_block(&file, path, footer.meta, "meta")?)
            .map_err(|d| block_corruption(path, "meta", footer.meta, d))?;
        if meta.format_version != footer.format_version {
            return Err(Error::corruption(
                path,
                format!(
                    "meta block says format version {}, footer says {}",
                    meta.format_version, footer.format_version
                ),
            ));
        }
        if meta.block_count != index.len() as u64 {
            return Err(Error::corruption(
                path,
                format!(
                    "meta block counts {} data blocks, the index holds {}",
                    meta.block_count,
                    index.len()
                ),
            ));
        }
        meta.file_size = file_size;
        let slots = BlockSlots::new(if cache.is_some() { index.len() } else { 0 });
        Ok(Arc::new(SstReader {
            path: path.to_path_buf(),
            file,
            identity,
            file_id,
            file_size,
            index,
            blooms,
            meta,
            cache,
            slots,
        }))
    }

    /// The file's summary.
    pub fn meta(&self) -> &SstMeta {
        &self.meta
    }

    /// Length of the file in bytes.
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// Where the file lives.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The id the file was opened under.
    pub fn file_id(&self) -> u64 {
        self.file_id
    }

    /// Bytes the reader keeps resident (index and bloom filters).
    pub fn resident_memory(&self) -> usize {
        self.index.memory() + self.blooms.memory()
    }

    /// False only when no entry of `row` is in the file (true without a row filter).
    pub fn may_contain_row(&self, row: &[u8]) -> bool {
        self.may_contain_row_hash(key::bloom_row_hash(row))
    }

    /// As [`may_contain_row`](SstReader::may_contain_row), given
    /// `key::bloom_row_hash(row)` (so one hash serves many files).
    pub fn may_contain_row_hash(&self, row_hash: u64) -> bool {
        self.blooms
            .row
            .as_ref()
            .is_none_or(|f| f.may_contain(row_hash))
    }

    /// False only when no entry of column `qualifier` of `row` is in the file
    /// (true without a row+qualifier filter).
    pub fn may_contain_column(&self, row: &[u8], qualifier: &[u8]) -> bool {
        self.may_contain_column_hash(key::bloom_column_hash(row, qualifier))
    }

    /// As [`may_contain_column`](SstReader::may_contain_column), given
    /// `key::bloom_column_hash(row, qualifier)`.
    pub fn may_contain_column_hash(&self, column_hash: u64) -> bool {
        self.blooms
            .column
            .as_ref()
            .is_none_or(|f| f.may_contain(column_hash))
    }

    /// The data blocks that can hold internal keys in `[lo, hi)` (`hi` None: to the
    /// end of the file; `lo` empty: from its start).
    fn blocks_between(&self, lo: &[u8], hi: Option<&[u8]>) -> &[BlockHandle] {
        self.index
            .handles()
            .get(self.block_numbers_between(lo, hi))
            .unwrap_or_default()
    }

    /// The numbers of the data blocks [`SstReader::blocks_between`] returns.
    fn block_numbers_between(&self, lo: &[u8], hi: Option<&[u8]>) -> std::ops::Range<usize> {
        let first = self.index.find(lo);
        let end = hi.map_or(self.index.len(), |hi| {
            self.index.find(hi).saturating_add(1).min(self.index.len())
        });
        first..end
    }

    /// Of the data blocks that can hold keys in `[lo, hi)` (as for
    /// [`SstReader::evict_cached_blocks_between`]): how many are in the block cache
    /// now, and how many there are (no cache: none of them).
    pub fn cached_blocks_between(&self, lo: &[u8], hi: Option<&[u8]>) -> (usize, usize) {
        let handles = self.blocks_between(lo, hi);
        let Some(cache) = &self.cache else {
            return (0, handles.len());
        };
        let cached = handles
            .iter()
            .filter(|h| cache.contains(self.file_id, h.offset))
            .count();
        (cached, handles.len())
    }

    /// Drops from the block cache the data blocks that can hold internal keys in
    /// `[lo, hi)` (`hi` None: to the end; empty `lo` and no `hi`: the whole file,
    /// once it is compacted away). A tablet reading a key range of a shared file
    /// drops the blocks of its range; the block straddling a bound goes too, and a
    /// sibling still reading it (or a cursor still reading the file) reads it from
    /// the file again.
    pub fn evict_cached_blocks_between(&self, lo: &[u8], hi: Option<&[u8]>) {
        let Some(cache) = &self.cache else {
            return;
        };
        for i in self.block_numbers_between(lo, hi) {
            self.slots.clear(i);
            if let Some(h) = self.index.handle(i) {
                cache.remove(self.file_id, h.offset);
            }
        }
    }

    /// Whether `path` still names the file this reader opened (same device, inode
    /// and size), and the reader uses a block cache exactly when `cached`.
    pub fn reads_file_at(&self, path: &Path, cached: bool) -> bool {
        self.cache.is_some() == cached
            && std::fs::metadata(path)
                .is_ok_and(|m| (m.dev(), m.ino()) == self.identity && m.len() == self.file_size)
    }

    /// A cursor over the file; blocks it reads are added to the cache.
    pub fn iter(self: &Arc<Self>) -> SstIter {
        SstIter::new(Arc::clone(self), true)
    }

    /// A cursor that uses cached blocks but does not add the blocks it reads
    /// (for compactions and other one-pass scans).
    pub fn iter_without_cache_fill(self: &Arc<Self>) -> SstIter {
        SstIter::new(Arc::clone(self), false)
    }

    /// [`SstReader::iter`] when `fill_cache`, else
    /// [`SstReader::iter_without_cache_fill`].
    pub fn iter_filling_cache(self: &Arc<Self>, fill_cache: bool) -> SstIter {
        SstIter::new(Arc::clone(self), fill_cache)
    }

    /// The first key of the middle data block: a split point that divides the
    /// file's bytes roughly in half. `None` for an empty file.
    pub fn middle_key(&self) -> Result<Option<Vec<u8>>> {
        let n = self.index.len();
        if n == 0 {
            return Ok(None);
        }
        let i = n / 2;
        let block = self.data_block(i, false)?;
        let mut it = BlockIter::new(block);
        it.seek_to_first().map_err(|d| self.data_corruption(i, d))?;
        Ok(it.valid().then(|| it.key().to_vec()))
    }

    /// Handles of every data block, in order.
    #[cfg(test)]
    pub(crate) fn data_block_handles(&self) -> Vec<BlockHandle> {
        self.index.handles().to_vec()
    }

    /// Data block `i`, from the cache or the file.
    fn data_block(&self, i: usize, fill_cache: bool) -> Result<Arc<Block>> {
        if let Some(cache) = &self.cache {
            if let Some(block) = self.slots.get(i) {
                cache.count_hit();
                return Ok(block);
            }
        }
        let handle = self.index.handle(i).ok_or_else(|| {
            Error::corruption(&self.path, format!("data block {i} is not in the index"))
        })?;
        if let Some(cache) = &self.cache {
            if let Some(block) = cache.get(self.file_id, handle.offset) {
                self.slots.set(i, &block);
                return Ok(block);
            }
        }
        let bytes = read_block(&self.file, &self.path, handle, "data")?;
        let block =
            Block::parse(bytes).map_err(|d| block_corruption(&self.path, "data", handle, d))?;
        if block.is_empty() {
            return Err(block_corruption(
                &self.path,
                "data",
                handle,
                "block holds no entries",
            ));
        }
        let block = Arc::new(block);
        if fill_cache {
            if let Some(cache) = &self.cache {
                cache.insert(self.file_id, handle.offset, Arc::clone(&block));
                self.slots.set(i, &block);
            }
        }
        Ok(block)
    }

    fn data_corruption(&self, i: usize, detail: impl std::fmt::Display) -> Error {
        let handle = self.index.handle(i).unwrap_or_default();
        block_corruption(&self.path, "data", handle, detail)
    }
}

fn block_corruption(
    path: &Path,
    what: &str,
    handle: BlockHandle,
    detail: impl std::fmt::Display,
) -> Error {
    Error::corruption(
        path,
        format!(
            "{what} block at offset {} (size {}): {detail}",
            handle.offset, handle.size
        ),
    )
}

/// Reads `buf.len()` bytes at `offset`; a short file is corruption.
fn read_exact_at(file: &File, path: &Path, buf: &mut [u8], offset: u64) -> Result<()> {
    file.read_exact_at(buf, offset)
        .map_err(|e| read_error(path, buf.len(), offset, e))
}

/// The error of a read of `len` bytes at `offset` that failed with `e`: a file that
/// ends inside the range is corrupt.
fn read_error(path: &Path, len: usize, offset: u64, e: std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        Error::corruption(
            path,
            format!("file ends inside the {len} bytes at offset {offset}"),
        )
    } else {
        Error::io(
            format!("reading SSTable {} at offset {offset}", path.display()),
            e,
        )
    }
}

/// Reads a stored block, verifies its checksum and decompresses it.
fn read_block(file: &File, path: &Path, handle: BlockHandle, what: &str) -> Result<Vec<u8>> {
    let len = handle
        .stored_len()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| block_corruption(path, what, handle, "size does not fit in memory"))?;
    // Read into fresh capacity, not a zero-filled buffer: the kernel overwrites it
    // all. (Not `vec![0; len]` either: jemalloc serves zeroed memory for a reused
    // large extent by handing its pages back to the kernel, and every block read
    // then page-faults its 64 KiB in anew.)
    let stored = crate::pread::read_exact_at_uninit(file, len, handle.offset)
        .map_err(|e| read_error(path, len, handle.offset, e))?;
    unseal(stored).map_err(|d| block_corruption(path, what, handle, d))
}

/// A cursor over one SSTable, holding the reader alive.
pub struct SstIter {
    reader: Arc<SstReader>,
    fill_cache: bool,
    /// Index of the block `block` is over.
    block_index: usize,
    /// `None` until the first block is loaded.
    block: Option<BlockIter>,
}

impl std::fmt::Debug for SstIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SstIter")
            .field("path", &self.reader.path)
            .field("block_index", &self.block_index)
            .field("valid", &self.valid())
            .finish()
    }
}

impl SstIter {
    fn new(reader: Arc<SstReader>, fill_cache: bool) -> Self {
        SstIter {
            reader,
            fill_cache,
            block_index: 0,
            block: None,
        }
    }

    /// The reader this cursor reads.
    pub fn reader(&self) -> &Arc<SstReader> {
        &self.reader
    }

    fn invalidate(&mut self) {
        if let Some(b) = self.block.as_mut() {
            b.invalidate();
        }
    }

    /// Points the block cursor (unpositioned) at data block `i`.
    fn load(&mut self, i: usize) -> Result<()> {
        if self.block_index == i {
            if let Some(it) = self.block.as_mut() {
                // Seeks landing in the block already held skip the cache lookup.
                it.invalidate();
                return Ok(());
            }
        }
        let block = match self.reader.data_block(i, self.fill_cache) {
            Ok(b) => b,
            Err(e) => {
                self.invalidate();
                return Err(e);
            }
        };
        self.block_index = i;
        match self.block.as_mut() {
            Some(it) => it.reset(block),
            None => self.block = Some(BlockIter::new(block)),
        }
        Ok(())
    }

    /// Runs a block-cursor operation, turning a defect into a corruption error.
    fn in_block(
        &mut self,
        op: impl FnOnce(&mut BlockIter) -> Result<(), super::block::BlockDefect>,
    ) -> Result<()> {
        let Some(it) = self.block.as_mut() else {
            return Ok(());
        };
        op(it).map_err(|d| {
            it.invalidate();
            self.reader.data_corruption(self.block_index, d)
        })
    }

    /// After the current block ran out: the first entry of the following blocks.
    fn skip_forward(&mut self) -> Result<()> {
        while !self.valid() {
            let next = self.block_index + 1;
            if next >= self.reader.index.len() {
                self.invalidate();
                return Ok(());
            }
            self.load(next)?;
            self.in_block(BlockIter::seek_to_first)?;
        }
        Ok(())
    }
}

impl KvIter for SstIter {
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        let i = self.reader.index.find(target);
        if i >= self.reader.index.len() {
            self.invalidate();
            return Ok(());
        }
        self.load(i)?;
        self.in_block(|b| b.seek(target))?;
        // Every key of block i may be below the separator yet below `target`.
        self.skip_forward()
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        let n = self.reader.index.len();
        if n == 0 {
            self.invalidate();
            return Ok(());
        }
        // Blocks after `i` hold only keys above its separator, which is >= target.
        let mut i = self.reader.index.find(target).min(n - 1);
        self.load(i)?;
        self.in_block(|b| b.seek_for_prev(target))?;
        // Every key of block i-1 is <= its separator < target.
        while !self.valid() && i > 0 {
            i -= 1;
            self.load(i)?;
            self.in_block(BlockIter::seek_to_last)?;
        }
        Ok(())
    }

    fn seek_to_first(&mut self) -> Result<()> {
        if self.reader.index.len() == 0 {
            self.invalidate();
            return Ok(());
        }
        self.load(0)?;
        self.in_block(BlockIter::seek_to_first)?;
        self.skip_forward()
    }

    fn next(&mut self) -> Result<()> {
        if !self.valid() {
            return Ok(());
        }
        self.in_block(BlockIter::next)?;
        self.skip_forward()
    }

    fn valid(&self) -> bool {
        self.block.as_ref().is_some_and(BlockIter::valid)
    }

    fn key(&self) -> &[u8] {
        self.block.as_ref().map(BlockIter::key).unwrap_or_default()
    }

    fn value(&self) -> &[u8] {
        self.block
            .as_ref()
            .map(BlockIter::value)
            .unwrap_or_default()
    }

    fn value_bytes(&self) -> bytes::Bytes {
        self.block
            .as_ref()
            .map(BlockIter::value_bytes)
            .unwrap_or_default()
    }
}
