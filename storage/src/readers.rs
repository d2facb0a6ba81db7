//! The engine's open SSTable readers, found by path.
//!
//! Owns: [`ReaderRegistry`], which hands a tablet opening a file the reader another
//! tablet already holds for it. Split children read their parent's files: with one
//! reader per file they hold its index and Bloom filters once, and its blocks keep
//! their block-cache entries (the cache keys blocks by reader, so a second reader of
//! the same file would start cold while the first one's blocks sat unused).
//! Must not: keep readers alive (it holds weak references, so a reader lives as long
//! as some tablet or cursor uses it) or decide which files a tablet reads.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::cache::BlockCache;
use crate::error::Result;
use crate::sstable::SstReader;

/// Entries the map holds before its first sweep of dead readers.
const FIRST_SWEEP_AT: usize = 256;

#[derive(Default)]
struct Registered {
    by_path: HashMap<PathBuf, Weak<SstReader>>,
    /// The map's size that triggers the next sweep of dead entries.
    sweep_at: usize,
}

/// Open SSTable readers by path (weakly held).
#[derive(Default)]
pub(crate) struct ReaderRegistry {
    readers: Mutex<Registered>,
}

impl ReaderRegistry {
    /// The live reader of the file at `path` if there is one (same file on disk,
    /// same use of the cache), else a new reader opened under the block-cache id
    /// `new_id()`.
    pub(crate) fn open_shared(
        &self,
        path: &Path,
        cache: Option<Arc<BlockCache>>,
        new_id: impl FnOnce() -> u64,
    ) -> Result<Arc<SstReader>> {
        let cached = cache.is_some();
        if let Some(r) = self.live(path, cached) {
            return Ok(r);
        }
        let opened = SstReader::open(path, new_id(), cache)?;
        let mut reg = self.readers.lock();
        // Another tablet may have opened the file meanwhile: keep one reader.
        if let Some(r) = reg.by_path.get(path).and_then(Weak::upgrade) {
            if r.reads_file_at(path, cached) {
                return Ok(r);
            }
        }
        reg.insert(path, &opened);
        Ok(opened)
    }

    /// Opens a file just written (its writer may have cached blocks under
    /// `file_id`) and registers its reader in place of any earlier one at `path`.
    pub(crate) fn open_new(
        &self,
        path: &Path,
        file_id: u64,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<Arc<SstReader>> {
        let opened = SstReader::open(path, file_id, cache)?;
        self.readers.lock().insert(path, &opened);
        Ok(opened)
    }

    fn live(&self, path: &Path, cached: bool) -> Option<Arc<SstReader>> {
        let found = self
            .readers
            .lock()
            .by_path
            .get(path)
            .and_then(Weak::upgrade)?;
        // A file deleted and written again at the same path is a different file.
        found.reads_file_at(path, cached).then_some(found)
    }

    #[cfg(test)]
    fn entries(&self) -> usize {
        self.readers.lock().by_path.len()
    }
}

impl Registered {
    fn insert(&mut self, path: &Path, reader: &Arc<SstReader>) {
        self.by_path
            .insert(path.to_path_buf(), Arc::downgrade(reader));
        if self.by_path.len() >= self.sweep_at.max(FIRST_SWEEP_AT) {
            self.by_path.retain(|_, r| r.strong_count() > 0);
            self.sweep_at = self.by_path.len() * 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{self, KeyKind};
    use crate::sstable::{SstOptions, SstWriter};

    fn write_file(path: &Path, rows: u32) {
        let mut w = SstWriter::create(path, SstOptions::default()).unwrap();
        for r in 0..rows {
            let row = format!("row{r:05}").into_bytes();
            w.add(&key::encode(&row, b"f", b"q", KeyKind::Put, 1, 1), b"v")
                .unwrap();
        }
        w.finish().unwrap();
    }

    #[test]
    fn a_file_open_twice_is_one_reader_with_one_cache_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.sst");
        write_file(&path, 10);
        let cache = Arc::new(BlockCache::new(1 << 20));
        let reg = ReaderRegistry::default();
        let mut ids = 1..;
        let mut next = || ids.next().unwrap();
        let first = reg
            .open_shared(&path, Some(Arc::clone(&cache)), &mut next)
            .unwrap();
        let second = reg
            .open_shared(&path, Some(Arc::clone(&cache)), &mut next)
            .unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(first.file_id(), second.file_id());
        // A reader without the cache is a different reader.
        let uncached = reg.open_shared(&path, None, &mut next).unwrap();
        assert!(!Arc::ptr_eq(&first, &uncached));
    }

    #[test]
    fn a_dropped_reader_or_a_rewritten_file_is_opened_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.sst");
        write_file(&path, 10);
        let reg = ReaderRegistry::default();
        let mut ids = 1..;
        let mut next = || ids.next().unwrap();
        let first = reg.open_shared(&path, None, &mut next).unwrap();
        let first_id = first.file_id();
        drop(first);
        let reopened = reg.open_shared(&path, None, &mut next).unwrap();
        assert_ne!(reopened.file_id(), first_id, "a dead reader is not reused");

        // The path now names another file while the old reader lives on.
        std::fs::remove_file(&path).unwrap();
        write_file(&path, 20);
        let fresh = reg.open_shared(&path, None, &mut next).unwrap();
        assert!(!Arc::ptr_eq(&fresh, &reopened));
        assert_eq!(fresh.meta().entry_count, 20);
    }

    #[test]
    fn dead_entries_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let reg = ReaderRegistry::default();
        let mut ids = 1..;
        let path = dir.path().join("a.sst");
        write_file(&path, 1);
        for i in 0..(FIRST_SWEEP_AT * 3) {
            let other = dir.path().join(format!("{i}.sst"));
            std::fs::hard_link(&path, &other).unwrap();
            drop(
                reg.open_shared(&other, None, || ids.next().unwrap())
                    .unwrap(),
            );
        }
        assert!(reg.entries() <= FIRST_SWEEP_AT, "{} entries", reg.entries());
    }
}
