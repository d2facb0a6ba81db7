//! Merging and major compactions of a tablet's SSTables.
//!
//! Owns: the compaction policy per family (merge the smallest sorted runs once a
//! family has more than the configured number, so a read consults a bounded number
//! of cursors and a get a bounded number of files; files that do not overlap, as a
//! sequential load writes them, form one run and are not rewritten;
//! after a split, rewrite the files inherited from the parent so its directory can be
//! collected),
//! the merge itself (through the same [`MergingIter`] reads use), the garbage rules of
//! major compactions, caching the output's blocks when the inputs' were cached, and
//! I/O throttling; none of it for a table whose compactions are turned off.
//! Must not: schedule itself (the engine's background worker calls it).
//!
//! A merging compaction keeps every entry: its output answers every read exactly as
//! its inputs did. A major compaction rewrites all of a family's files (after a
//! flush) and keeps only what a read of everything would return: no delete markers,
//! no covered, expired or surplus versions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::keep_deleted::{retain_entries, Retention};
use super::runs::{self, SortedRun};
use super::{Tablet, TabletFile};
use crate::error::Result;
use crate::iter::KvIter;
use crate::key;
use crate::manifest::FileEntry;
use crate::merge::MergingIter;
use crate::read::{FamilyPlan, ReadPlan};
use crate::schema::KeepDeleted;
use crate::sstable::SstWriter;
use crate::types::TimeRange;

/// What a compaction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompactionReport {
    pub families: usize,
    pub input_files: usize,
    pub output_files: usize,
    pub input_bytes: u64,
    pub output_bytes: u64,
}

impl Tablet {
    /// Runs merging compactions on every family holding more files than allowed.
    pub fn compact_if_needed(&self) -> Result<CompactionReport> {
        let _c = self.compaction_lock.lock();
        let mut report = CompactionReport::default();
        // A tablet closed while this waited for the lock (split, moved, dropped) is
        // left alone: after a split its files belong to the children.
        // A table with compactions turned off keeps its files as flushed.
        if self.is_closed() || !self.schema().compactions_enabled() {
            return Ok(report);
        }
        let limit = self.shared.opts.max_files_per_read.max(2);
        for family in self.schema().families() {
            let version = self.version();
            if version.family_files(&family.name).any(|f| !f.entry.owned) {
                let files: Vec<Arc<TabletFile>> =
                    version.family_files(&family.name).cloned().collect();
                // Files shared with a split sibling (bounded views of the parent's)
                // keep the parent's whole files alive: rewrite the family into one
                // file of this tablet's own, as HBase compacts daughters' references.
                self.compact_files(&family.name, &files, false, &mut report)?;
                continue;
            }
            // What a read consults is one cursor per sorted run: files that follow
            // one another (a sequential load's flushes) stay as they are.
            let mut runs: Vec<&SortedRun> = version.family_runs(&family.name).iter().collect();
            if runs.len() <= limit {
                continue;
            }
            // Merge the smallest runs: enough that the family ends one below the limit.
            runs.sort_by_key(|r| r.bytes());
            let take = runs.len() - limit + 2;
            let inputs: Vec<Arc<TabletFile>> = runs
                .iter()
                .take(take)
                .flat_map(|r| r.files().iter().cloned())
                .collect();
            self.compact_files(&family.name, &inputs, false, &mut report)?;
        }
        Ok(report)
    }

    /// Flushes, then rewrites every family into at most one file each, dropping
    /// deleted, expired and surplus versions and every delete marker. Does
    /// nothing for a table with compactions turned off (HBase ignores such
    /// requests).
    pub fn major_compact(&self) -> Result<CompactionReport> {
        self.check_open()?;
        if !self.schema().compactions_enabled() {
            return Ok(CompactionReport::default());
        }
        self.flush()?;
        let _c = self.compaction_lock.lock();
        // Closed (e.g. split) while this waited for the lock: its files are no longer
        // its own to rewrite or delete.
        self.check_open()?;
        let mut report = CompactionReport::default();
        let version = self.version();
        // Files of families no longer in the schema are dropped.
        let schema = self.schema();
        let orphans: Vec<Arc<TabletFile>> = version
            .files
            .iter()
            .filter(|f| schema.family(&f.entry.family).is_none())
            .cloned()
            .collect();
        if !orphans.is_empty() {
            self.replace_files(&orphans, None)?;
        }
        for family in schema.families() {
            let inputs: Vec<Arc<TabletFile>> =
                self.version().family_files(&family.name).cloned().collect();
            if inputs.is_empty() {
                continue;
            }
            self.compact_files(&family.name, &inputs, true, &mut report)?;
        }
        Ok(report)
    }

    fn compact_files(
        &self,
        family: &Bytes,
        inputs: &[Arc<TabletFile>],
        major: bool,
        report: &mut CompactionReport,
    ) -> Result<()> {
        // One pass over cold data: do not evict the blocks reads are using. Inputs
        // that follow one another are read as one run, through one cursor.
        let children: Vec<Box<dyn KvIter>> = runs::partition(inputs)
            .iter()
            .map(|run| run.cursor(false))
            .collect();
        let mut iter = MergingIter::new(children);
        iter.seek_to_first()?;
        let (rel, abs) = self.new_file_path();
        let file_id = self.shared.next_file_id();
        // An output cached as it is written bypasses the page cache (see
        // `SstWriter::create_direct`).
        let mut writer = match self
            .block_cache_for(family)
            .filter(|_| mostly_cached(inputs))
        {
            Some(cache) => {
                let mut writer = SstWriter::create_direct(&abs, self.sst_options(family))?;
                writer.cache_blocks(cache, file_id);
                writer
            }
            None => SstWriter::create(&abs, self.sst_options(family))?,
        };
        let mut throttle = Throttle::new(self.shared.opts.compaction_bytes_per_sec);
        let mut written = 0usize;
        let outcome = if major {
            self.write_major(&mut iter, family, &mut writer, &mut throttle, &mut written)
        } else {
            write_all(&mut iter, &mut writer, &mut throttle, &mut written)
        };
        if let Err(e) = outcome {
            drop(writer);
            let _ = std::fs::remove_file(&abs);
            return Err(e);
        }
        let output = if written == 0 {
            drop(writer);
            let _ = std::fs::remove_file(&abs);
            None
        } else {
            let meta = writer.finish()?;
            Some(self.open_file_as(FileEntry::written(family.clone(), rel, &meta), file_id)?)
        };
        let read: u64 = inputs.iter().map(|f| f.entry.size).sum();
        let written = output.as_ref().map_or(0, |o| o.entry.size);
        report.families += 1;
        report.input_files += inputs.len();
        report.input_bytes += read;
        if output.is_some() {
            report.output_files += 1;
            report.output_bytes += written;
        }
        fail::fail_point!("compaction-output-written");
        self.replace_files(inputs, output)?;
        self.shared.activity.compacted(major, read, written);
        Ok(())
    }

    /// Swaps `inputs` for `output` in the manifest and version, then deletes the
    /// inputs this tablet owns.
    fn replace_files(
        &self,
        inputs: &[Arc<TabletFile>],
        output: Option<Arc<TabletFile>>,
    ) -> Result<()> {
        self.install(
            |_, files| {
                let mut next: Vec<Arc<TabletFile>> = Vec::with_capacity(files.len());
                let mut placed = false;
                for f in files {
                    if inputs.iter().any(|i| Arc::ptr_eq(i, f)) {
                        // The output takes the place of the newest input.
                        if !placed {
                            if let Some(o) = &output {
                                next.push(Arc::clone(o));
                            }
                            placed = true;
                        }
                    } else {
                        next.push(Arc::clone(f));
                    }
                }
                Ok(next)
            },
            None,
        )?;
        fail::fail_point!("compaction-installed");
        // A closed tablet deletes nothing: a split parent's files are the children's.
        if self.is_closed() {
            return Ok(());
        }
        for f in inputs {
            // Its blocks would only take cache room from live ones until evicted
            // (of a file shared with a split sibling, the blocks of this tablet's
            // rows; the file is not this tablet's to delete).
            f.evict_cached_blocks();
            if f.entry.owned {
                let path = self.shared.tablets_root().join(&f.entry.path);
                if let Err(e) = std::fs::remove_file(&path) {
                    tracing::warn!(path = %path.display(), error = %e, "could not delete compacted file");
                }
            }
        }
        Ok(())
    }

    /// Writes what a full read of the family returns, keeping original keys.
    fn write_major(
        &self,
        iter: &mut MergingIter,
        family: &Bytes,
        writer: &mut SstWriter,
        throttle: &mut Throttle,
        written: &mut usize,
    ) -> Result<()> {
        let schema = self.schema();
        let fs = schema.require_family(family)?;
        if fs.keep_deleted != KeepDeleted::No {
            let rules = Retention::of(fs, self.shared.now_ms());
            return retain_entries(iter, &rules, &mut |k, v| {
                writer.add(k, v)?;
                *written += 1;
                throttle.consume(k.len() + v.len());
                Ok(())
            });
        }
        let plan = ReadPlan {
            families: vec![FamilyPlan {
                family: family.clone(),
                escaped_family: key::row_start(family),
                qualifiers: None,
                column_suffixes: Vec::new(),
                time_range: TimeRange::ALL,
                max_versions: fs.max_versions,
                stored_versions: fs.max_versions,
                ttl_cutoff: fs.ttl_cutoff(self.shared.now_ms()),
                min_versions: fs.min_versions,
                markers_in_range_only: false,
            }],
        };
        let mut scratch = crate::read::ReadScratch::default();
        while iter.valid() {
            let row = key::row_bytes_of(iter.key()).ok_or_else(|| {
                crate::error::Error::corruption("<compaction input>", "malformed internal key")
            })?;
            let kept = crate::read::read_row_raw(iter, &row, &plan, &mut scratch)?;
            for (k, v) in kept {
                writer.add(&k, &v)?;
                *written += 1;
                throttle.consume(k.len() + v.len());
            }
            crate::read::skip_to(iter, &key::row_end(&row))?;
        }
        Ok(())
    }
}

/// True when at least half of the inputs' data blocks (of the rows this tablet reads
/// from them) are in the block cache: the
/// compaction then caches its output's blocks as it writes them (as HBase can with
/// `hbase.rs.cachecompactedblocksonwrite`), so that data read from the cache before
/// a compaction (or a split child's rewrite of its inherited files) still is after
/// it, instead of every block being read back from disk by the next get that needs
/// it. Inputs mostly not cached leave the cache alone: their data is not being read.
fn mostly_cached(inputs: &[Arc<TabletFile>]) -> bool {
    let (cached, total) = inputs
        .iter()
        .map(|f| f.cached_blocks())
        .fold((0, 0), |(c, t), (fc, ft)| (c + fc, t + ft));
    total > 0 && cached * 2 >= total
}

/// Copies every entry (merging compaction).
fn write_all(
    iter: &mut MergingIter,
    writer: &mut SstWriter,
    throttle: &mut Throttle,
    written: &mut usize,
) -> Result<()> {
    let mut last: Vec<u8> = Vec::new();
    while iter.valid() {
        let k = iter.key();
        if *written == 0 || k != last.as_slice() {
            writer.add(k, iter.value())?;
            throttle.consume(k.len() + iter.value().len());
            last.clear();
            last.extend_from_slice(k);
            *written += 1;
        }
        iter.next()?;
    }
    Ok(())
}

/// Keeps a compaction's write rate under a limit by sleeping.
struct Throttle {
    bytes_per_sec: u64,
    start: Instant,
    bytes: u64,
}

impl Throttle {
    fn new(bytes_per_sec: u64) -> Self {
        Throttle {
            bytes_per_sec,
            start: Instant::now(),
            bytes: 0,
        }
    }

    fn consume(&mut self, n: usize) {
        if self.bytes_per_sec == 0 {
            return;
        }
        self.bytes += n as u64;
        // Check once per MiB.
        if self.bytes % (1 << 20) >= n as u64 {
            return;
        }
        let due = Duration::from_secs_f64(self.bytes as f64 / self.bytes_per_sec as f64);
        let elapsed = self.start.elapsed();
        if due > elapsed {
            std::thread::sleep(due - elapsed);
        }
    }
}
