//! A tablet: one contiguous row range of a table, served from memtables and SSTables.
//!
//! Owns: the tablet's current [`Version`] (active and frozen memtables, live files),
//! its sequence numbers and visibility point, its row locks, and its manifest. The
//! submodules implement writes ([`write`]), read-modify-writes ([`rmw`]), reads
//! ([`scan`]), flushes ([`flush`]), compactions ([`compact`]) and splits ([`split`]);
//! [`runs`] groups the files into the sorted runs reads and compactions work on.
//! Must not: manage the commit log's segments, the block cache or other tablets (the
//! [`crate::engine`] owns what tablets share).

pub mod batch;
pub mod compact;
pub mod flush;
mod keep_deleted;
pub mod rmw;
pub mod runs;
pub mod scan;
pub mod split;
pub mod write;

mod requests;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use bytes::Bytes;
use parking_lot::{Condvar, Mutex};

use crate::engine::Shared;
use crate::error::{Error, Result};
use crate::manifest::{FileEntry, ManifestState};
use crate::memtable::Memtable;
use crate::mvcc::Mvcc;
use crate::schema::TableSchema;
use crate::sstable::SstReader;

use runs::{FamilyRuns, SortedRun};

pub use requests::{LoadSplit, RequestCounts};
pub use rmw::{CompareOp, Condition};
pub use scan::{RowResult, ScanRequest, TabletScanner};
pub use split::SplitChildren;

/// Identifies a tablet to the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabletDescriptor {
    /// Unique across the cluster; names the tablet's directory and log records.
    pub id: u64,
    pub schema: TableSchema,
    /// First row (inclusive); empty = table start.
    pub start_row: Bytes,
    /// End row (exclusive); empty = table end.
    pub end_row: Bytes,
}

/// A live SSTable of the tablet.
pub struct TabletFile {
    pub entry: FileEntry,
    pub reader: Arc<SstReader>,
}

impl TabletFile {
    /// A cursor over the rows of the file this tablet may read (clamped to its row
    /// bounds when it has any); `fill_cache` as for [`SstReader`] cursors.
    pub fn cursor(&self, fill_cache: bool) -> Box<dyn crate::iter::KvIter> {
        let it = self.reader.iter_filling_cache(fill_cache);
        if self.entry.bound_start.is_empty() && self.entry.bound_end.is_empty() {
            Box::new(it)
        } else {
            Box::new(crate::sstable::BoundedIter::new(
                it,
                &self.entry.bound_start,
                &self.entry.bound_end,
            ))
        }
    }

    /// The internal-key range of the rows this tablet reads from the file: from
    /// its first bound row (empty: from the start) to its end bound row (None: to
    /// the end).
    fn key_bounds(&self) -> (Vec<u8>, Option<Vec<u8>>) {
        let e = &self.entry;
        let lo = if e.bound_start.is_empty() {
            Vec::new()
        } else {
            crate::key::row_start(&e.bound_start)
        };
        let hi = (!e.bound_end.is_empty()).then(|| crate::key::row_start(&e.bound_end));
        (lo, hi)
    }

    /// Of the file's blocks holding this tablet's rows: how many are cached, and
    /// how many there are.
    pub fn cached_blocks(&self) -> (usize, usize) {
        let (lo, hi) = self.key_bounds();
        self.reader.cached_blocks_between(&lo, hi.as_deref())
    }

    /// Drops the blocks holding this tablet's rows from the block cache (the file
    /// is compacted away; a split sibling sharing it keeps the blocks of its rows).
    pub fn evict_cached_blocks(&self) {
        let (lo, hi) = self.key_bounds();
        self.reader.evict_cached_blocks_between(&lo, hi.as_deref());
    }

    /// The first and last row the file holds (whatever its bounds); `None` when it
    /// holds nothing or its keys do not parse.
    pub fn row_span(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let meta = self.reader.meta();
        if meta.entry_count == 0 {
            return None;
        }
        Some((
            crate::key::row_of(&meta.smallest_key)?,
            crate::key::row_of(&meta.largest_key)?,
        ))
    }
}

/// An immutable snapshot of what the tablet reads from.
pub struct Version {
    pub active: Arc<Memtable>,
    /// Frozen memtables waiting for their flush, oldest first.
    pub frozen: Vec<Arc<Memtable>>,
    /// Live files, newest first within each family.
    pub files: Vec<Arc<TabletFile>>,
    /// The same files grouped per family into sorted runs (what reads consult).
    runs: Arc<Vec<FamilyRuns>>,
}

impl Version {
    /// A version over `files`, grouping them into runs.
    pub(crate) fn new(
        active: Arc<Memtable>,
        frozen: Vec<Arc<Memtable>>,
        files: Vec<Arc<TabletFile>>,
    ) -> Version {
        let mut families: Vec<Bytes> = Vec::new();
        for f in &files {
            if !families.contains(&f.entry.family) {
                families.push(f.entry.family.clone());
            }
        }
        let runs = families
            .into_iter()
            .map(|family| FamilyRuns {
                runs: runs::partition(files.iter().filter(|f| f.entry.family == family)),
                family,
            })
            .collect();
        Version {
            active,
            frozen,
            files,
            runs: Arc::new(runs),
        }
    }

    /// The same files with other memtables.
    pub(crate) fn with_memtables(
        &self,
        active: Arc<Memtable>,
        frozen: Vec<Arc<Memtable>>,
    ) -> Version {
        Version {
            active,
            frozen,
            files: self.files.clone(),
            runs: Arc::clone(&self.runs),
        }
    }

    /// The sorted runs of one family (none when it has no files).
    pub fn family_runs(&self, family: &[u8]) -> &[SortedRun] {
        self.runs
            .iter()
            .find(|r| r.family.as_ref() == family)
            .map(|r| r.runs.as_slice())
            .unwrap_or_default()
    }

    /// The files of one family, newest first.
    pub fn family_files<'a>(
        &'a self,
        family: &'a [u8],
    ) -> impl Iterator<Item = &'a Arc<TabletFile>> {
        self.files
            .iter()
            .filter(move |f| f.entry.family.as_ref() == family)
    }

    /// Bytes held by memtables.
    pub fn memtable_bytes(&self) -> usize {
        self.active.approximate_size()
            + self
                .frozen
                .iter()
                .map(|m| m.approximate_size())
                .sum::<usize>()
    }
}

/// Striped row locks: a fixed array of mutexes indexed by row hash. A call takes at
/// most one, so stripes cannot deadlock.
pub(crate) struct RowLocks {
    stripes: Vec<Mutex<()>>,
}

impl RowLocks {
    fn new(n: usize) -> Self {
        RowLocks {
            stripes: (0..n.max(1)).map(|_| Mutex::new(())).collect(),
        }
    }

    pub(crate) fn lock(&self, row: &[u8]) -> parking_lot::MutexGuard<'_, ()> {
        let h = xxhash_rust::xxh3::xxh3_64(row) as usize;
        // In range: `stripes` has at least one element and `%` keeps the index below it.
        self.stripes[h % self.stripes.len()].lock()
    }
}

/// Statistics of a tablet, for metrics and split decisions.
#[derive(Debug, Clone, Default)]
pub struct TabletStats {
    pub memtable_bytes: usize,
    pub frozen_memtables: usize,
    pub file_count: usize,
    pub file_bytes: u64,
    pub flushed_seq: u64,
    pub last_seq: u64,
}

/// One tablet open on this server.
pub struct Tablet {
    id: u64,
    dir: PathBuf,
    shared: Arc<Shared>,
    /// Read without a lock or a reference count on the get path (readers on
    /// several threads would otherwise pass the lock's and the count's cache lines
    /// back and forth); replaced whole.
    schema: ArcSwap<TableSchema>,
    start_row: Bytes,
    end_row: Bytes,
    /// Read like the schema; replaced whole under `version_lock`.
    version: ArcSwap<Version>,
    /// Serializes the read-modify-write replacements of `version` (a freeze under
    /// the write lock, a flush or compaction under the manifest lock).
    version_lock: Mutex<()>,
    /// Serializes sequence assignment, log append and memtable insert.
    write_lock: Mutex<()>,
    mvcc: Arc<Mvcc>,
    row_locks: RowLocks,
    manifest: Mutex<ManifestState>,
    /// Held while a flush runs (flushes of one tablet are sequential).
    flush_lock: Mutex<()>,
    /// Held while a compaction or split runs.
    compaction_lock: Mutex<()>,
    /// Signalled when a flush removes a frozen memtable (ends write stalls).
    flushed: Condvar,
    flushed_mutex: Mutex<()>,
    closed: AtomicBool,
    /// Reads and writes served (shared with the tablet's scanners).
    requests: Arc<requests::RequestCounters>,
}

impl Tablet {
    pub(crate) fn new(
        shared: Arc<Shared>,
        dir: PathBuf,
        schema: TableSchema,
        manifest: ManifestState,
        files: Vec<Arc<TabletFile>>,
        last_seq: u64,
    ) -> Tablet {
        let active = Arc::new(shared.new_memtable());
        Tablet {
            id: manifest.tablet_id,
            dir,
            shared,
            schema: ArcSwap::from_pointee(schema),
            start_row: manifest.start_row.clone(),
            end_row: manifest.end_row.clone(),
            version: ArcSwap::from_pointee(Version::new(active, Vec::new(), files)),
            version_lock: Mutex::new(()),
            write_lock: Mutex::new(()),
            mvcc: Arc::new(Mvcc::new(last_seq)),
            row_locks: RowLocks::new(1024),
            manifest: Mutex::new(manifest),
            flush_lock: Mutex::new(()),
            compaction_lock: Mutex::new(()),
            flushed: Condvar::new(),
            flushed_mutex: Mutex::new(()),
            closed: AtomicBool::new(false),
            requests: Arc::default(),
        }
    }

    /// The reads and writes the tablet has served since it was opened here.
    pub fn request_counts(&self) -> RequestCounts {
        self.requests.reading()
    }

    /// Where a split would part the tablet's recent requests.
    pub fn load_split(&self) -> LoadSplit {
        self.requests.load_split()
    }

    /// The tablet's id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The tablet's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// First row served (inclusive; empty = table start).
    pub fn start_row(&self) -> &Bytes {
        &self.start_row
    }

    /// End of the rows served (exclusive; empty = table end).
    pub fn end_row(&self) -> &Bytes {
        &self.end_row
    }

    /// True when `row` is inside the tablet's range.
    pub fn contains_row(&self, row: &[u8]) -> bool {
        row >= self.start_row.as_ref() && (self.end_row.is_empty() || row < self.end_row.as_ref())
    }

    /// The current schema.
    pub fn schema(&self) -> Arc<TableSchema> {
        self.schema.load_full()
    }

    /// The current schema, borrowed for a short read (no reference count taken).
    pub(crate) fn schema_guard(&self) -> arc_swap::Guard<Arc<TableSchema>> {
        self.schema.load()
    }

    /// Replaces the schema (families added, removed or changed). Data of removed
    /// families stays on disk until the next major compaction but is never read.
    pub fn set_schema(&self, schema: TableSchema) {
        self.schema.store(Arc::new(schema));
        // Compactions turned back on catch up with the files left meanwhile.
        self.shared.maybe_request_compaction(self);
    }

    /// The current version (memtables and files).
    pub fn version(&self) -> Arc<Version> {
        self.version.load_full()
    }

    /// The current version, borrowed for a short read (no reference count taken).
    pub(crate) fn version_guard(&self) -> arc_swap::Guard<Arc<Version>> {
        self.version.load()
    }

    /// True once closed.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    pub(crate) fn check_open(&self) -> Result<()> {
        if self.is_closed() {
            Err(Error::TabletClosed { tablet: self.id })
        } else {
            Ok(())
        }
    }

    pub(crate) fn mark_closed(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// Stops writes: after this returns, no write is between its sequence number and
    /// its memtable insert, and every later write fails with TabletClosed.
    pub(crate) fn close_for_writes(&self) {
        let _w = self.write_lock.lock();
        self.mark_closed();
    }

    /// Counters for metrics and split decisions.
    pub fn stats(&self) -> TabletStats {
        let v = self.version();
        TabletStats {
            memtable_bytes: v.memtable_bytes(),
            frozen_memtables: v.frozen.len(),
            file_count: v.files.len(),
            file_bytes: v.files.iter().map(|f| f.entry.size).sum(),
            flushed_seq: self.manifest.lock().flushed_seq,
            last_seq: self.mvcc.last_assigned(),
        }
    }

    /// A row near the middle of the tablet's data, for splitting; `None` if the
    /// tablet holds too little to split.
    pub fn midpoint_row(&self) -> Option<Bytes> {
        let v = self.version();
        // The middle of the biggest run: a sequential load's run of many files is
        // divided at its middle file, not inside whichever file is largest.
        let biggest = v
            .runs
            .iter()
            .flat_map(|r| r.runs.iter())
            .max_by_key(|r| r.bytes())?;
        let mid = biggest.middle_file()?.reader.middle_key().ok()??;
        let row = crate::key::row_of(&mid)?;
        let row = Bytes::from(row);
        (self.contains_row(&row) && row != self.start_row).then_some(row)
    }

    /// Wakes writers stalled on too many frozen memtables.
    pub(crate) fn notify_flushed(&self) {
        let _g = self.flushed_mutex.lock();
        self.flushed.notify_all();
    }
}
