//! Minor compaction: writing a frozen memtable out as SSTables.
//!
//! Owns: the flush of the oldest frozen memtable into one new SSTable per column
//! family, the manifest edit that adds them and advances the flushed sequence number,
//! and telling the commit log which records are no longer needed.
//! Must not: choose when to flush (the engine and the write path request flushes).

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;

use super::{Tablet, TabletFile, Version};
use crate::error::{Error, Result};
use crate::key;
use crate::manifest::{self, FileEntry};
use crate::sstable::{SstOptions, SstWriter};

impl Tablet {
    /// Options for a new SSTable of `family`.
    pub(crate) fn sst_options(&self, family: &[u8]) -> SstOptions {
        let schema = self.schema();
        let mut opts = SstOptions {
            block_size: self.shared.opts.block_size,
            ..SstOptions::default()
        };
        if let Some(f) = schema.family(family) {
            opts.compression = f.compression;
            opts.bloom = f.bloom;
            if let Some(size) = f.block_size {
                opts.block_size = size as usize;
            }
        }
        opts
    }

    /// Allocates a new file number and path in the tablet's directory.
    pub(crate) fn new_file_path(&self) -> (String, PathBuf) {
        let no = {
            let mut m = self.manifest.lock();
            let no = m.next_file_no.max(1);
            m.next_file_no = no + 1;
            no
        };
        let rel = format!("{}/{:06}.sst", self.id, no);
        let abs = self.shared.tablets_root().join(&rel);
        (rel, abs)
    }

    /// Opens a finished file for reading.
    pub(crate) fn open_file(&self, entry: FileEntry) -> Result<Arc<TabletFile>> {
        self.open_file_as(entry, self.shared.next_file_id())
    }

    /// Opens a finished file for reading under block-cache id `file_id` (one from
    /// `Shared::next_file_id`, which its writer may have cached blocks under).
    pub(crate) fn open_file_as(&self, entry: FileEntry, file_id: u64) -> Result<Arc<TabletFile>> {
        let path = self.shared.tablets_root().join(&entry.path);
        let cache = self.block_cache_for(&entry.family);
        let reader = self.shared.readers.open_new(&path, file_id, cache)?;
        Ok(Arc::new(TabletFile { entry, reader }))
    }

    pub(crate) fn block_cache_for(&self, family: &[u8]) -> Option<Arc<crate::cache::BlockCache>> {
        self.shared.block_cache_for(&self.schema(), family)
    }

    /// Freezes the active memtable and flushes every frozen one; returns once all
    /// data written before the call is in SSTables.
    pub fn flush(&self) -> Result<()> {
        self.freeze();
        while self.flush_oldest()? {}
        Ok(())
    }

    /// Flushes the oldest frozen memtable, if any; returns whether there was one.
    pub fn flush_oldest(&self) -> Result<bool> {
        let _f = self.flush_lock.lock();
        let Some(mem) = self.version().frozen.first().cloned() else {
            return Ok(false);
        };
        // Everything in it must be complete before it becomes a file.
        self.mvcc.wait_visible(mem.max_seq());

        // One writer per family, found by comparing the escaped family with the few
        // a table has (keys sort by row first, so families interleave).
        let mut writers: Vec<(Vec<u8>, Bytes, String, PathBuf, SstWriter)> = Vec::new();
        let result = mem.for_each(|k, v| {
            let fam_esc = key::escaped_family(k)
                .ok_or_else(|| Error::InvalidArgument("malformed key in memtable".into()))?;
            let at = match writers.iter().position(|(f, ..)| f.as_slice() == fam_esc) {
                Some(at) => at,
                None => {
                    let family = Bytes::from(key::decode(k).map(|p| p.family).unwrap_or_default());
                    let (rel, abs) = self.new_file_path();
                    let w = SstWriter::create(&abs, self.sst_options(&family))?;
                    writers.push((fam_esc.to_vec(), family, rel, abs, w));
                    writers.len() - 1
                }
            };
            match writers.get_mut(at) {
                Some((.., w)) => w.add(k, v),
                None => Ok(()),
            }
        });
        if let Err(e) = result {
            for (_, _, _, abs, _) in writers {
                let _ = std::fs::remove_file(abs);
            }
            return Err(e);
        }
        let mut new_files = Vec::with_capacity(writers.len());
        for (_, family, rel, _abs, w) in writers {
            let meta = w.finish()?;
            new_files.push(self.open_file(FileEntry::written(family, rel, &meta))?);
        }
        let written: u64 = new_files.iter().map(|f| f.entry.size).sum();
        manifest::sync_dir(&self.dir)?;
        fail::fail_point!("flush-files-written");

        let flushed_seq = mem.max_seq();
        self.install(
            |m, files| {
                m.flushed_seq = m.flushed_seq.max(flushed_seq);
                let mut all: Vec<Arc<TabletFile>> = new_files.clone();
                all.extend(files.iter().cloned());
                Ok(all)
            },
            Some(&mem),
        )?;
        fail::fail_point!("flush-installed");
        if let Err(e) = self.shared.log.mark_flushed(self.id, flushed_seq) {
            tracing::warn!(tablet = self.id, error = %e, "could not release commit log segments");
        }
        self.notify_flushed();
        self.shared.activity.flushed(written);
        self.shared.maybe_request_compaction(self);
        Ok(true)
    }

    /// Applies a change of the file set: `edit` updates the manifest fields and
    /// returns the new file list (newest first); the manifest is stored durably, then
    /// the in-memory version is swapped. `flushed` names a frozen memtable the new
    /// files replace.
    pub(crate) fn install(
        &self,
        edit: impl FnOnce(
            &mut crate::manifest::ManifestState,
            &[Arc<TabletFile>],
        ) -> Result<Vec<Arc<TabletFile>>>,
        flushed: Option<&Arc<crate::memtable::Memtable>>,
    ) -> Result<()> {
        let mut m = self.manifest.lock();
        let current = self.version();
        let mut next_state = m.clone();
        let files = edit(&mut next_state, &current.files)?;
        next_state.files = files.iter().map(|f| f.entry.clone()).collect();
        manifest::store(&self.dir, &next_state)?;
        *m = next_state;
        let _replacing = self.version_lock.lock();
        let current = self.version.load_full();
        let frozen = match flushed {
            Some(mem) => current
                .frozen
                .iter()
                .filter(|f| !Arc::ptr_eq(f, mem))
                .cloned()
                .collect(),
            None => current.frozen.clone(),
        };
        self.version.store(Arc::new(Version::new(
            Arc::clone(&current.active),
            frozen,
            files,
        )));
        Ok(())
    }
}
