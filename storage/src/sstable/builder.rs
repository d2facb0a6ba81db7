//! The SSTable writer.
//!
//! Owns: [`SstOptions`] and [`SstWriter`], which turns an ascending stream of
//! `(internal key, value)` into an immutable file: data blocks, bloom block, meta
//! block, index block, footer, then fsync.
//! Must not: choose file names, register files anywhere, or make the directory entry
//! durable (the caller fsyncs the directory and records the file).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::block::{Block, BlockBuilder};
use super::bloom::BloomCollector;
use super::envelope::{seal_uncompressed, BlockSealer, BLOCK_TRAILER_LEN};
use super::footer::{BlockHandle, Footer, FORMAT_VERSION};
use super::index::separator;
use super::meta::{MetaCollector, SstMeta};
use super::sink::FileSink;
use crate::cache::BlockCache;
use crate::error::{Error, Result};
use crate::key::{self, KeyKind};
use crate::schema::{BloomType, Compression, FamilySchema};

/// Largest `block_size` accepted.
pub const MAX_BLOCK_SIZE: usize = 256 << 20;
/// Largest key + value of one entry.
pub const MAX_ENTRY_BYTES: usize = 512 << 20;

/// How a file is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SstOptions {
    /// A data block is cut once its uncompressed size reaches this many bytes.
    pub block_size: usize,
    /// Entries between restart points inside a block.
    pub restart_interval: usize,
    /// Compression of data blocks.
    pub compression: Compression,
    /// Which bloom filters to build.
    pub bloom: BloomType,
    /// Bloom filter bits per distinct key.
    pub bloom_bits_per_key: u32,
}

impl Default for SstOptions {
    fn default() -> Self {
        SstOptions {
            block_size: 64 * 1024,
            restart_interval: 16,
            compression: Compression::None,
            bloom: BloomType::Row,
            bloom_bits_per_key: 10,
        }
    }
}

impl SstOptions {
    /// Defaults with the family's compression and bloom settings.
    pub fn for_family(family: &FamilySchema) -> Self {
        SstOptions {
            compression: family.compression,
            bloom: family.bloom,
            ..SstOptions::default()
        }
    }

    fn validate(&self) -> Result<()> {
        if self.block_size == 0 || self.block_size > MAX_BLOCK_SIZE {
            return Err(Error::InvalidArgument(format!(
                "block size {} is outside 1..={MAX_BLOCK_SIZE}",
                self.block_size
            )));
        }
        if self.restart_interval == 0 || self.restart_interval > 1024 {
            return Err(Error::InvalidArgument(format!(
                "restart interval {} is outside 1..=1024",
                self.restart_interval
            )));
        }
        if !(1..=64).contains(&self.bloom_bits_per_key) {
            return Err(Error::InvalidArgument(format!(
                "bloom bits per key {} is outside 1..=64",
                self.bloom_bits_per_key
            )));
        }
        if let Compression::Zstd(level) = self.compression {
            if !(1..=22).contains(&level) {
                return Err(Error::InvalidArgument(format!(
                    "zstd level {level} is outside 1..=22"
                )));
            }
        }
        Ok(())
    }
}

/// Writes one SSTable. Entries must be added in strictly ascending key order.
///
/// Dropping a writer without [`finish`](SstWriter::finish) leaves an incomplete
/// file that readers reject; [`abandon`](SstWriter::abandon) removes it.
pub struct SstWriter {
    path: PathBuf,
    out: FileSink,
    opts: SstOptions,
    sealer: BlockSealer,
    /// Bytes handed to `out` so far.
    offset: u64,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    /// The last finished data block, waiting for the next key to pick its separator.
    pending_index: Option<BlockHandle>,
    last_key: Vec<u8>,
    /// Kind of `last_key`; `None` before the first entry.
    last_kind: Option<KeyKind>,
    separator: Vec<u8>,
    handle_bytes: Vec<u8>,
    blocks: u64,
    bloom: BloomCollector,
    meta: MetaCollector,
    /// Set after a failed write: the file is unusable.
    failed: bool,
    /// Where each data block goes once written, and the file id it is cached
    /// under (see [`SstWriter::cache_blocks`]).
    cache_to: Option<(Arc<BlockCache>, u64)>,
}

impl std::fmt::Debug for SstWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SstWriter")
            .field("path", &self.path)
            .field("entries", &self.meta.entry_count())
            .field("offset", &self.offset)
            .finish()
    }
}

impl SstWriter {
    /// Creates (or truncates) the file at `path`, written through the page cache.
    pub fn create(path: &Path, opts: SstOptions) -> Result<SstWriter> {
        Self::create_with(path, opts, false)
    }

    /// Creates (or truncates) the file at `path`, written straight to the device
    /// where the file system allows: for a file whose blocks the caller puts into
    /// the block cache as they are written ([`SstWriter::cache_blocks`]), so the
    /// page cache would only hold a second copy of them.
    pub fn create_direct(path: &Path, opts: SstOptions) -> Result<SstWriter> {
        Self::create_with(path, opts, true)
    }

    fn create_with(path: &Path, opts: SstOptions, direct: bool) -> Result<SstWriter> {
        opts.validate()?;
        let out = FileSink::create(path, direct)
            .map_err(|e| Error::io(format!("creating SSTable {}", path.display()), e))?;
        Ok(SstWriter {
            path: path.to_path_buf(),
            out,
            opts,
            sealer: BlockSealer::new(opts.compression)?,
            offset: 0,
            data_block: BlockBuilder::new(opts.restart_interval),
            index_block: BlockBuilder::new(opts.restart_interval),
            pending_index: None,
            last_key: Vec::new(),
            last_kind: None,
            separator: Vec::new(),
            handle_bytes: Vec::new(),
            blocks: 0,
            bloom: BloomCollector::new(opts.bloom, opts.bloom_bits_per_key),
            meta: MetaCollector::default(),
            failed: false,
            cache_to: None,
        })
    }

    /// Puts every data block written from now on into `cache`, as the reader of the
    /// finished file opened with `file_id` would after reading it, so that the file
    /// is read from the cache from its first read on.
    pub fn cache_blocks(&mut self, cache: Arc<BlockCache>, file_id: u64) {
        self.cache_to = Some((cache, file_id));
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Entries added so far.
    pub fn entry_count(&self) -> u64 {
        self.meta.entry_count()
    }

    /// Bytes the file would have if finished now, without the bloom, meta and
    /// index blocks (for callers that cut output files at a target size).
    pub fn estimated_file_size(&self) -> u64 {
        self.offset + self.data_block.estimated_size() as u64
    }

    /// Uncompressed bytes of keys and values added so far.
    pub fn raw_bytes(&self) -> u64 {
        self.meta.raw_bytes()
    }

    /// Appends an entry. `key` must be a well-formed internal key greater than the
    /// previous one.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.check_usable()?;
        if self.meta.entry_count() > 0 && key <= self.last_key.as_slice() {
            return Err(Error::InvalidArgument(format!(
                "SSTable keys must be strictly ascending ({})",
                self.path.display()
            )));
        }
        if key.len().saturating_add(value.len()) > MAX_ENTRY_BYTES {
            return Err(Error::InvalidArgument(format!(
                "entry of {} bytes exceeds the SSTable limit of {MAX_ENTRY_BYTES}",
                key.len().saturating_add(value.len())
            )));
        }
        let tail = key::tail(key).ok_or_else(malformed_key)?;
        // Versions of one column share every hash with their predecessor, and a
        // key whose coordinates were fully decoded before needs only its tail
        // checked (its kind must belong to the same class as the previous one's).
        let same_coordinates = self.last_kind.is_some_and(|prev| {
            kind_class(prev) == kind_class(tail.kind)
                && key::coordinates(key) == key::coordinates(&self.last_key)
        });
        if !same_coordinates {
            let (row_hash, column_hash) = key::bloom_hashes(key).ok_or_else(malformed_key)?;
            self.bloom.add(row_hash, column_hash);
        }

        if let Some(handle) = self.pending_index.take() {
            separator(&self.last_key, key, &mut self.separator);
            self.add_index_entry(handle);
        }
        self.data_block.add(key, value);
        self.meta.add(key, value.len(), tail);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.last_kind = Some(tail.kind);
        if self.data_block.estimated_size() >= self.opts.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Writes the remaining blocks and the footer, fsyncs the file and returns its
    /// summary.
    pub fn finish(mut self) -> Result<SstMeta> {
        self.check_usable()?;
        if !self.data_block.is_empty() {
            self.flush_data_block()?;
        }
        if let Some(handle) = self.pending_index.take() {
            self.separator.clear();
            self.separator.extend_from_slice(&self.last_key);
            self.add_index_entry(handle);
        }
        let bloom_payload =
            std::mem::replace(&mut self.bloom, BloomCollector::new(BloomType::None, 1))
                .finish()
                .encode();
        let bloom = self.write_uncompressed(&bloom_payload)?;

        let collector = std::mem::take(&mut self.meta);
        let mut meta = collector.finish(FORMAT_VERSION, self.blocks, &self.last_key);
        let meta_handle = self.write_uncompressed(&meta.encode())?;

        let index_payload = self.index_block.finish().to_vec();
        let index = self.write_uncompressed(&index_payload)?;

        let footer = Footer {
            index,
            bloom,
            meta: meta_handle,
            format_version: FORMAT_VERSION,
        };
        self.write(&footer.encode())?;
        let context = || format!("syncing SSTable {}", self.path.display());
        self.out.finish().map_err(|e| Error::io(context(), e))?;
        meta.file_size = self.offset;
        Ok(meta)
    }

    /// Gives up on the file and deletes it.
    pub fn abandon(self) -> Result<()> {
        let path = self.path.clone();
        drop(self);
        std::fs::remove_file(&path)
            .map_err(|e| Error::io(format!("removing abandoned SSTable {}", path.display()), e))
    }

    fn check_usable(&self) -> Result<()> {
        if self.failed {
            return Err(Error::InvalidArgument(format!(
                "SSTable writer for {} failed earlier",
                self.path.display()
            )));
        }
        Ok(())
    }

    fn add_index_entry(&mut self, handle: BlockHandle) {
        self.handle_bytes.clear();
        handle.encode_varint(&mut self.handle_bytes);
        self.index_block.add(&self.separator, &self.handle_bytes);
    }

    fn flush_data_block(&mut self) -> Result<()> {
        let raw = self.data_block.finish();
        let for_cache = self.cache_to.is_some().then(|| raw.to_vec());
        let stored = match self.sealer.seal(raw) {
            Ok(s) => s,
            Err(e) => {
                self.failed = true;
                return Err(e);
            }
        };
        let handle = BlockHandle {
            offset: self.offset,
            size: (stored.len() - BLOCK_TRAILER_LEN) as u64,
        };
        if let Err(e) = self.out.write_all(stored) {
            self.failed = true;
            return Err(Error::io(
                format!("writing SSTable {}", self.path.display()),
                e,
            ));
        }
        self.offset += stored.len() as u64;
        if let (Some((cache, file_id)), Some(bytes)) = (&self.cache_to, for_cache) {
            // The bytes a reader would decode; a block that does not parse (it
            // always does: the builder wrote it) is simply not cached.
            if let Ok(block) = Block::parse(bytes) {
                cache.insert(*file_id, handle.offset, Arc::new(block));
            }
        }
        self.data_block.reset();
        self.pending_index = Some(handle);
        self.blocks += 1;
        Ok(())
    }

    fn write_uncompressed(&mut self, payload: &[u8]) -> Result<BlockHandle> {
        let handle = BlockHandle {
            offset: self.offset,
            size: payload.len() as u64,
        };
        self.write(&seal_uncompressed(payload))?;
        Ok(handle)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        if let Err(e) = self.out.write_all(bytes) {
            self.failed = true;
            return Err(Error::io(
                format!("writing SSTable {}", self.path.display()),
                e,
            ));
        }
        self.offset += bytes.len() as u64;
        Ok(())
    }
}

/// Kinds that share a key layout: family markers, column markers, puts.
fn kind_class(kind: KeyKind) -> (bool, bool) {
    (kind.is_family_scope(), kind == KeyKind::Put)
}

fn malformed_key() -> Error {
    Error::InvalidArgument("SSTable key is not a well-formed internal key".into())
}
