//! The engine: what every tablet of one server shares.
//!
//! Owns: the server's single commit log, the block caches (one apart for in-memory
//! families), the registry of open tablets, background flush and compaction
//! workers, memory accounting across tablets, and recovery: at start-up the
//! previous log is split into per-tablet "recovered edits" files that each tablet
//! replays when it is opened (the same mechanism recovers a dead server's tablets
//! from its log).
//! Must not: decide which tablets to open (the regionserver does, on the
//! coordinator's orders) or interpret table schemas beyond passing them on.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex, RwLock};

use crate::cache::BlockCache;
use crate::dir_lock::DirLock;
use crate::error::{Error, Result};
use crate::log::{CommitLog, LogOptions};
use crate::manifest::{self, ManifestState};
use crate::memory::MemtableMemory;
use crate::memtable::Memtable;
use crate::readers::ReaderRegistry;
use crate::recovery;
use crate::tablet::{Tablet, TabletDescriptor, TabletFile};
use crate::types::{Durability, RowMutation};

/// A source of "now" in milliseconds since the epoch (tests substitute their own).
pub type Clock = Arc<dyn Fn() -> i64 + Send + Sync>;

/// The wall clock.
pub fn system_clock() -> Clock {
    Arc::new(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
            .unwrap_or(0)
    })
}

/// Settings of an engine.
#[derive(Clone)]
pub struct EngineOptions {
    /// Root of tablet directories (`<data_dir>/tablets/<id>/`).
    pub data_dir: PathBuf,
    /// This server's commit log directory (default `<data_dir>/log`).
    pub log_dir: Option<PathBuf>,
    /// Memory the engine may use: a quarter goes to the block cache, half to
    /// memtables.
    pub memory_budget: u64,
    /// A tablet's memtable is frozen and flushed at this size.
    pub memtable_size: usize,
    /// Target uncompressed size of SSTable data blocks.
    pub block_size: usize,
    /// Files per family a read may have to consult before a merging compaction runs.
    pub max_files_per_read: usize,
    /// Largest value accepted.
    pub max_value_size: usize,
    /// Compaction write rate limit (0 = unlimited).
    pub compaction_bytes_per_sec: u64,
    /// Commit log segment size.
    pub log_segment_size: u64,
    /// Log segments kept before the tablets holding the oldest one are flushed.
    pub max_log_segments: usize,
    /// Interval of the asynchronous log flush (Durability::Async, and the fsync of
    /// `Sync` writes when `log_fsync` is off).
    pub async_log_interval: Duration,
    /// `Durability::Sync` waits for the log's fsync (true) or only for its write
    /// to the OS (false: HBase's `hbase.wal.hsync=false`; the log is then written
    /// through the page cache).
    pub log_fsync: bool,
    /// Run flushes and compactions on background threads (tests may turn it off
    /// and call them directly).
    pub background_work: bool,
    /// The clock.
    pub clock: Clock,
}

impl std::fmt::Debug for EngineOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineOptions")
            .field("data_dir", &self.data_dir)
            .field("log_dir", &self.log_dir)
            .field("memory_budget", &self.memory_budget)
            .field("memtable_size", &self.memtable_size)
            .field("block_size", &self.block_size)
            .field("max_files_per_read", &self.max_files_per_read)
            .field("max_value_size", &self.max_value_size)
            .finish_non_exhaustive()
    }
}

impl EngineOptions {
    /// Defaults rooted at `data_dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        EngineOptions {
            data_dir: data_dir.into(),
            log_dir: None,
            memory_budget: 1 << 30,
            memtable_size: 64 << 20,
            block_size: 64 << 10,
            max_files_per_read: 8,
            max_value_size: 10 << 20,
            compaction_bytes_per_sec: 128 << 20,
            log_segment_size: 64 << 20,
            max_log_segments: 16,
            async_log_interval: Duration::from_secs(1),
            log_fsync: true,
            background_work: true,
            clock: system_clock(),
        }
    }

    fn log_dir(&self) -> PathBuf {
        self.log_dir
            .clone()
            .unwrap_or_else(|| self.data_dir.join("log"))
    }

    fn tablets_root(&self) -> PathBuf {
        self.data_dir.join("tablets")
    }
}

/// A queue of tablet ids for one background worker.
#[derive(Default)]
struct WorkQueue {
    queue: Mutex<VecDeque<u64>>,
    ready: Condvar,
}

impl WorkQueue {
    fn push(&self, id: u64) {
        let mut q = self.queue.lock();
        if !q.contains(&id) {
            q.push_back(id);
        }
        self.ready.notify_one();
    }

    fn len(&self) -> u64 {
        self.queue.lock().len() as u64
    }

    fn pop(&self, timeout: Duration) -> Option<u64> {
        let mut q = self.queue.lock();
        if q.is_empty() {
            self.ready.wait_for(&mut q, timeout);
        }
        q.pop_front()
    }
}

/// The block cache is bounded at this fraction of the memory budget (a quarter).
const BLOCK_CACHE_SHARE: u64 = 4;
/// The blocks of in-memory families are cached apart, in up to this fraction of
/// the block cache's bound again (a quarter, HBase's in-memory share of its LRU
/// cache), on top of it: a cluster without in-memory families loses nothing.
const IN_MEMORY_SHARE: u64 = 4;

/// State shared by the engine and its tablets.
pub struct Shared {
    pub(crate) opts: EngineOptions,
    /// The tablets directory's lock (see `Engine::open`), released at shutdown.
    tablets_lock: Mutex<Option<DirLock>>,
    pub(crate) log: CommitLog,
    pub(crate) cache: Arc<BlockCache>,
    /// The blocks of in-memory families (HBase's IN_MEMORY), which only each
    /// other evict: a scan of other data does not push them out.
    pub(crate) in_memory_cache: Arc<BlockCache>,
    /// Bytes held by all memtables; writers stall above the memtable budget.
    pub(crate) memtable_memory: Arc<MemtableMemory>,
    tablets_root: PathBuf,
    file_ids: AtomicU64,
    /// Open SSTable readers by path: tablets sharing a file share its reader.
    pub(crate) readers: ReaderRegistry,
    tablets: RwLock<HashMap<u64, Weak<Tablet>>>,
    flushes: WorkQueue,
    compactions: WorkQueue,
    stopping: AtomicBool,
    /// Flushes and compactions done, for metrics.
    pub(crate) activity: crate::activity::Activity,
}

impl Shared {
    pub(crate) fn now_ms(&self) -> i64 {
        (self.opts.clock)()
    }

    pub(crate) fn tablets_root(&self) -> &Path {
        &self.tablets_root
    }

    /// A new active memtable charged to the engine's memtable gauge.
    pub(crate) fn new_memtable(&self) -> Memtable {
        Memtable::accounted(self.opts.memtable_size, Arc::clone(&self.memtable_memory))
    }

    /// The block cache the files of `family` in a table of `schema` read through:
    /// the in-memory one for an in-memory family, None for a family with its block
    /// cache turned off.
    pub(crate) fn block_cache_for(
        &self,
        schema: &crate::schema::TableSchema,
        family: &[u8],
    ) -> Option<Arc<BlockCache>> {
        let family = schema.family(family);
        if !family.is_none_or(|f| f.block_cache) {
            return None;
        }
        let cache = match family.is_some_and(|f| f.in_memory) {
            true => &self.in_memory_cache,
            false => &self.cache,
        };
        Some(Arc::clone(cache))
    }

    pub(crate) fn next_file_id(&self) -> u64 {
        self.file_ids.fetch_add(1, Ordering::Relaxed)
    }

    pub(crate) fn request_flush(&self, tablet: u64) {
        if self.opts.background_work {
            self.flushes.push(tablet);
        }
    }

    pub(crate) fn maybe_request_compaction(&self, tablet: &Tablet) {
        if !self.opts.background_work || !tablet.schema().compactions_enabled() {
            return;
        }
        let limit = self.opts.max_files_per_read.max(2);
        let version = tablet.version();
        let over = tablet
            .schema()
            .families()
            .iter()
            .any(|f| version.family_runs(&f.name).len() > limit);
        // Files inherited from a split parent are rewritten as soon as possible.
        let inherited = version.files.iter().any(|f| !f.entry.owned);
        if over || inherited {
            self.compactions.push(tablet.id());
        }
    }

    fn tablet(&self, id: u64) -> Option<Arc<Tablet>> {
        self.tablets.read().get(&id).and_then(Weak::upgrade)
    }

    fn open_tablets(&self) -> Vec<Arc<Tablet>> {
        self.tablets
            .read()
            .values()
            .filter_map(Weak::upgrade)
            .collect()
    }
}

/// The storage engine of one server.
pub struct Engine {
    shared: Arc<Shared>,
    /// The open tablets, read on every call without a lock; replaced whole
    /// (read-copy-update) when a tablet opens or goes.
    tablets: ArcSwap<HashMap<u64, Arc<Tablet>>>,
    /// Serializes tablet opens, so that two opens of one tablet cannot both pass the
    /// "not open yet" check.
    opening: Mutex<()>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl Engine {
    /// Opens the engine: creates directories, splits the previous commit log into
    /// per-tablet recovered edits, starts a fresh log and the background workers.
    pub fn open(opts: EngineOptions) -> Result<Engine> {
        let tablets_root = opts.tablets_root();
        std::fs::create_dir_all(&tablets_root)
            .map_err(|e| Error::io(format!("creating {}", tablets_root.display()), e))?;
        let log_opts = LogOptions {
            segment_size: opts.log_segment_size,
            async_flush_interval: opts.async_log_interval,
            // Direct I/O makes each write wait for the device: worth it when an
            // fsync follows, not when the write to the OS is the whole wait.
            direct_io: opts.log_fsync,
            fsync: opts.log_fsync,
        };
        // A data directory is one server's (log under `log/`) or shared by servers
        // that each keep their log apart (`log_dir` set): one process alone
        // holds it exclusively, sharers hold it shared, and neither kind opens
        // while the other holds it.
        let tablets_lock = if opts.log_dir.is_some() {
            DirLock::acquire_shared(&tablets_root)?
        } else {
            DirLock::acquire(&tablets_root)?
        };
        let (log, old_segments) = CommitLog::open(&opts.log_dir(), log_opts)?;
        recovery::split_segments(&old_segments, &tablets_root)?;
        fail::fail_point!("recovery-segments-split");
        log.delete_replayed(&old_segments)?;
        let cache = Arc::new(BlockCache::new(opts.memory_budget / BLOCK_CACHE_SHARE));
        let in_memory_cache = Arc::new(BlockCache::new(
            opts.memory_budget / BLOCK_CACHE_SHARE / IN_MEMORY_SHARE,
        ));
        let memtable_memory = Arc::new(MemtableMemory::new(memtable_budget(&opts)));
        let shared = Arc::new(Shared {
            opts,
            tablets_lock: Mutex::new(Some(tablets_lock)),
            log,
            cache,
            in_memory_cache,
            memtable_memory,
            tablets_root,
            file_ids: AtomicU64::new(1),
            readers: ReaderRegistry::default(),
            tablets: RwLock::new(HashMap::new()),
            flushes: WorkQueue::default(),
            compactions: WorkQueue::default(),
            stopping: AtomicBool::new(false),
            activity: crate::activity::Activity::default(),
        });
        let engine = Engine {
            shared,
            tablets: ArcSwap::from_pointee(HashMap::new()),
            opening: Mutex::new(()),
            workers: Mutex::new(Vec::new()),
        };
        if engine.shared.opts.background_work {
            engine.start_workers();
        }
        Ok(engine)
    }

    /// Splits another server's commit log (in `log_dir`) into recovered edits for
    /// its tablets, then deletes it (with the half-created or prepared segment
    /// files it left). Run before those tablets are opened elsewhere.
    pub fn recover_log_of(&self, log_dir: &Path) -> Result<()> {
        // A server still writing this log holds its lock: refuse rather than split
        // and delete segments under it.
        let _lock = crate::dir_lock::DirLock::acquire(log_dir)?;
        crate::log::remove_temp_files(log_dir)?;
        let segments = crate::log::list_segment_paths(log_dir)?;
        recovery::split_segments(&segments, &self.shared.tablets_root)?;
        for s in &segments {
            std::fs::remove_file(s)
                .map_err(|e| Error::io(format!("deleting {}", s.display()), e))?;
        }
        Ok(())
    }

    /// An engine in `dir` without background work, with one tablet (id 1) of table
    /// `t` covering every row, with the one family `family`.
    #[cfg(test)]
    pub(crate) fn with_one_tablet(dir: &Path, family: &'static str) -> (Engine, Arc<Tablet>) {
        Self::with_one_tablet_and(EngineOptions::new(dir), family)
    }

    /// [`Engine::with_one_tablet`] with other options (background work off).
    #[cfg(test)]
    pub(crate) fn with_one_tablet_and(
        mut opts: EngineOptions,
        family: &'static str,
    ) -> (Engine, Arc<Tablet>) {
        opts.background_work = false;
        let engine = Engine::open(opts).expect("engine");
        let schema = crate::schema::TableSchema::new(
            "t",
            vec![crate::schema::FamilySchema::new(family.as_bytes())],
        )
        .expect("schema");
        let tablet = engine
            .open_tablet(TabletDescriptor {
                id: 1,
                schema,
                start_row: bytes::Bytes::new(),
                end_row: bytes::Bytes::new(),
            })
            .expect("tablet");
        (engine, tablet)
    }

    /// The engine's commit log.
    #[cfg(test)]
    pub(crate) fn log(&self) -> &CommitLog {
        &self.shared.log
    }

    /// Fsyncs the commit log has done since it opened.
    #[cfg(test)]
    pub(crate) fn log_fsyncs(&self) -> u64 {
        self.shared.log.fsync_count()
    }

    /// Flushes and compactions done since the engine opened, and the work queued.
    pub fn activity(&self) -> crate::activity::ActivitySnapshot {
        self.shared
            .activity
            .snapshot(self.shared.flushes.len(), self.shared.compactions.len())
    }

    /// The commit log's counters (segments, bytes, fsyncs), for metrics.
    pub fn log_stats(&self) -> crate::log::LogStats {
        self.shared.log.stats()
    }

    /// The settings the engine runs with.
    pub fn options(&self) -> &EngineOptions {
        &self.shared.opts
    }

    /// The gauge of bytes held by all memtables (writers stall above its limit).
    pub fn memtable_memory(&self) -> &MemtableMemory {
        &self.shared.memtable_memory
    }

    /// The shared block cache (every cached family's blocks but those of
    /// in-memory families).
    pub fn block_cache(&self) -> &Arc<BlockCache> {
        &self.shared.cache
    }

    /// The block cache of in-memory families' blocks.
    pub fn in_memory_block_cache(&self) -> &Arc<BlockCache> {
        &self.shared.in_memory_cache
    }

    /// Opens a tablet: its manifest (created if new), its files, and any recovered
    /// edits, which are replayed and flushed before the tablet serves.
    pub fn open_tablet(&self, desc: TabletDescriptor) -> Result<Arc<Tablet>> {
        let opening = self.opening.lock();
        if self.tablets.load().contains_key(&desc.id) {
            return Err(Error::TabletAlreadyOpen { tablet: desc.id });
        }
        let dir = self.shared.tablets_root.join(desc.id.to_string());
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
        let state = match manifest::load(&dir)? {
            Some(s) => {
                if s.tablet_id != desc.id {
                    return Err(Error::corruption(
                        manifest::manifest_path(&dir),
                        format!(
                            "manifest names tablet {} instead of {}",
                            s.tablet_id, desc.id
                        ),
                    ));
                }
                s
            }
            None => {
                let s = ManifestState {
                    tablet_id: desc.id,
                    start_row: desc.start_row.clone(),
                    end_row: desc.end_row.clone(),
                    flushed_seq: 0,
                    next_file_no: 1,
                    files: Vec::new(),
                };
                manifest::store(&dir, &s)?;
                manifest::sync_dir(&self.shared.tablets_root)?;
                s
            }
        };
        remove_orphan_files(&dir, &state, desc.id);
        let edits = recovery::load_edits(&dir, state.flushed_seq)?;
        let last_seq = edits.iter().map(|e| e.seq).fold(state.max_seq(), u64::max);
        let files = self.open_files(&state, &desc)?;
        let tablet = Arc::new(Tablet::new(
            Arc::clone(&self.shared),
            dir.clone(),
            desc.schema,
            state,
            files,
            last_seq,
        ));
        if !edits.is_empty() {
            for e in &edits {
                tablet.apply_replayed(&e.row, &e.entries, e.seq);
            }
            tablet.flush()?;
            tracing::info!(
                tablet = desc.id,
                records = edits.len(),
                "replayed recovered edits"
            );
            fail::fail_point!("recovery-edits-replayed");
        }
        recovery::remove_edits(&dir)?;
        self.shared
            .tablets
            .write()
            .insert(desc.id, Arc::downgrade(&tablet));
        self.tablets.rcu(|open| {
            let mut open = HashMap::clone(open);
            open.insert(desc.id, Arc::clone(&tablet));
            open
        });
        drop(opening);
        self.shared.maybe_request_compaction(&tablet);
        Ok(tablet)
    }

    fn open_files(
        &self,
        state: &ManifestState,
        desc: &TabletDescriptor,
    ) -> Result<Vec<Arc<TabletFile>>> {
        let mut files = Vec::with_capacity(state.files.len());
        for entry in &state.files {
            let path = self.shared.tablets_root.join(&entry.path);
            let cache = self.shared.block_cache_for(&desc.schema, &entry.family);
            let reader = self
                .shared
                .readers
                .open_shared(&path, cache, || self.shared.next_file_id())?;
            files.push(Arc::new(TabletFile {
                entry: entry.clone(),
                reader,
            }));
        }
        Ok(files)
    }

    /// The open tablet `id`.
    pub fn tablet(&self, id: u64) -> Result<Arc<Tablet>> {
        self.tablets
            .load()
            .get(&id)
            .cloned()
            .ok_or(Error::TabletNotOpen { tablet: id })
    }

    /// Runs `f` on open tablet `id` without taking a reference to it (a get's
    /// reference count would be one more cache line the threads serving gets
    /// pass back and forth). `f` should be short: it holds a snapshot of the
    /// table of open tablets.
    pub fn with_tablet<R>(&self, id: u64, f: impl FnOnce(&Tablet) -> R) -> Result<R> {
        let tablets = self.tablets.load();
        let tablet = tablets
            .get(&id)
            .ok_or(Error::TabletNotOpen { tablet: id })?;
        Ok(f(tablet))
    }

    /// Every open tablet.
    pub fn tablets(&self) -> Vec<Arc<Tablet>> {
        self.tablets.load().values().cloned().collect()
    }

    /// Flushes and closes a tablet; its log records are no longer needed.
    pub fn close_tablet(&self, id: u64) -> Result<()> {
        let tablet = self.tablet(id)?;
        tablet.flush()?;
        tablet.close_for_writes();
        // Writes that raced with the close are in the memtable: flush them too.
        tablet.flush()?;
        self.forget(id);
        Ok(())
    }

    /// Drops a tablet from the registry without flushing (after a split, or when
    /// its table is deleted).
    pub fn forget(&self, id: u64) {
        let mut removed = None;
        self.tablets.rcu(|open| {
            let mut open = HashMap::clone(open);
            removed = open.remove(&id);
            open
        });
        if let Some(t) = removed {
            t.mark_closed();
        }
        self.shared.tablets.write().remove(&id);
        if let Err(e) = self.shared.log.forget_tablet(id) {
            tracing::warn!(tablet = id, error = %e, "could not release commit log segments");
        }
    }

    /// Applies client batches to open tablets of this engine, each row atomic on its
    /// own, waiting for the shared commit log once for all of them. Per group: an
    /// error when its tablet is not open here, otherwise one result per row.
    pub fn mutate_batches(
        &self,
        groups: &[(u64, &[&RowMutation])],
        durability: Durability,
    ) -> Vec<Result<Vec<Result<()>>>> {
        let tablets: Vec<Result<Arc<Tablet>>> =
            groups.iter().map(|&(id, _)| self.tablet(id)).collect();
        let open: Vec<(&Tablet, &[&RowMutation])> = tablets
            .iter()
            .zip(groups)
            .filter_map(|(t, &(_, rows))| t.as_ref().ok().map(|t| (t.as_ref(), rows)))
            .collect();
        let mut applied = crate::tablet::batch::apply_batches(&open, durability).into_iter();
        tablets
            .into_iter()
            .map(|t| t.map(|_| applied.next().unwrap_or_default()))
            .collect()
    }

    /// Splits an open tablet, opens both children and closes the parent.
    pub fn split_tablet(
        &self,
        id: u64,
        at: &[u8],
        left_id: u64,
        right_id: u64,
    ) -> Result<(Arc<Tablet>, Arc<Tablet>)> {
        let parent = self.tablet(id)?;
        let children = parent.split(at, left_id, right_id)?;
        self.forget(id);
        let schema = parent.schema().as_ref().clone();
        let describe = |id: u64, m: &ManifestState| TabletDescriptor {
            id,
            schema: schema.clone(),
            start_row: m.start_row.clone(),
            end_row: m.end_row.clone(),
        };
        let opened = self
            .open_tablet(describe(left_id, &children.left))
            .and_then(
                |left| match self.open_tablet(describe(right_id, &children.right)) {
                    Ok(right) => Ok((left, right)),
                    Err(e) => {
                        self.forget(left_id);
                        Err(e)
                    }
                },
            );
        if let Err(e) = &opened {
            // The children cannot serve: the parent (flushed, its files intact)
            // serves its rows again; the children's directories are garbage.
            tracing::warn!(tablet = id, error = %e, "opening split children failed; reopening the parent");
            let desc = TabletDescriptor {
                id,
                schema: schema.clone(),
                start_row: parent.start_row().clone(),
                end_row: parent.end_row().clone(),
            };
            drop(parent);
            if let Err(reopen) = self.open_tablet(desc) {
                tracing::error!(tablet = id, error = %reopen, "reopening a split parent failed");
            }
        }
        opened
    }

    /// Deletes a tablet's directory (its table was dropped). The caller makes sure no
    /// split sibling still references files in it.
    pub fn destroy_tablet_dir(&self, id: u64) -> Result<()> {
        self.forget(id);
        let dir = self.shared.tablets_root.join(id.to_string());
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(format!("deleting {}", dir.display()), e)),
        }
    }

    /// Deletes the directories of tablets not in `live` once no live tablet's
    /// manifest references a file in them (split parents whose children have
    /// rewritten their halves, leftovers of dropped tables). Returns how many went.
    /// Tablets being created or split must be in `live` (the caller serializes).
    pub fn collect_garbage(&self, live: &HashSet<u64>) -> Result<usize> {
        let root = &self.shared.tablets_root;
        let entries = std::fs::read_dir(root)
            .map_err(|e| Error::io(format!("listing {}", root.display()), e))?;
        let retired: Vec<(u64, PathBuf)> = entries
            .flatten()
            .filter_map(|entry| {
                let id = entry.file_name().to_string_lossy().parse::<u64>().ok()?;
                (!live.contains(&id)).then(|| (id, entry.path()))
            })
            .collect();
        // The usual case: nothing retired, so no manifest needs reading.
        if retired.is_empty() {
            return Ok(0);
        }
        // Directories some live manifest lists a file in (paths are `<id>/<file>`).
        let mut in_use: HashSet<u64> = HashSet::new();
        for id in live {
            if let Some(m) = manifest::load(&root.join(id.to_string()))? {
                in_use.extend(m.files.iter().filter_map(|f| {
                    f.path
                        .split_once('/')
                        .and_then(|(dir, _)| dir.parse::<u64>().ok())
                }));
            }
        }
        let mut removed = 0;
        for (id, dir) in retired {
            if in_use.contains(&id) {
                continue;
            }
            match std::fs::remove_dir_all(&dir) {
                Ok(()) => {
                    tracing::info!(tablet = id, "removed the directory of a retired tablet");
                    removed += 1;
                }
                Err(e) => {
                    tracing::warn!(dir = %dir.display(), error = %e, "could not remove a retired tablet's directory");
                }
            }
        }
        Ok(removed)
    }

    /// Flushes every tablet.
    pub fn flush_all(&self) -> Result<()> {
        for t in self.tablets() {
            t.flush()?;
        }
        Ok(())
    }

    /// Stops background work, flushes every tablet and closes the log.
    pub fn shutdown(&self) -> Result<()> {
        self.shared.stopping.store(true, Ordering::Release);
        self.shared.flushes.ready.notify_all();
        self.shared.compactions.ready.notify_all();
        for h in self.workers.lock().drain(..) {
            let _ = h.join();
        }
        let result = self.flush_all();
        self.shared.log.close()?;
        self.shared.tablets_lock.lock().take();
        result
    }

    fn start_workers(&self) {
        let mut workers = self.workers.lock();
        let s = Arc::clone(&self.shared);
        workers.extend(
            std::thread::Builder::new()
                .name("tabula-flush".into())
                .spawn(move || flush_worker(s))
                .ok(),
        );
        let s = Arc::clone(&self.shared);
        workers.extend(
            std::thread::Builder::new()
                .name("tabula-compact".into())
                .spawn(move || compaction_worker(s))
                .ok(),
        );
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::Release);
        self.shared.flushes.ready.notify_all();
        self.shared.compactions.ready.notify_all();
        for h in self.workers.lock().drain(..) {
            let _ = h.join();
        }
    }
}

/// Deletes `.sst` files in a tablet's own directory that its manifest does not list
/// (left behind by a crash during a flush or compaction).
fn remove_orphan_files(dir: &Path, state: &ManifestState, id: u64) {
    let listed: HashSet<&str> = state.files.iter().map(|f| f.path.as_str()).collect();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".sst") {
            continue;
        }
        let rel = format!("{id}/{name}");
        if !listed.contains(rel.as_str()) {
            tracing::info!(file = %rel, "removing file no manifest references");
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Bytes all memtables of the engine may hold before writers stall: half the memory
/// budget (a quarter goes to the block cache).
fn memtable_budget(opts: &EngineOptions) -> usize {
    usize::try_from(opts.memory_budget / 2).unwrap_or(usize::MAX)
}

fn flush_worker(shared: Arc<Shared>) {
    while !shared.stopping.load(Ordering::Acquire) {
        if let Some(id) = shared.flushes.pop(Duration::from_millis(50)) {
            if let Some(t) = shared.tablet(id) {
                loop {
                    match t.flush_oldest() {
                        Ok(true) => {
                            freeze_for_memory(&shared);
                            continue;
                        }
                        Ok(false) => break,
                        Err(e) => {
                            tracing::error!(tablet = id, error = %e, "flush failed; retrying");
                            std::thread::sleep(Duration::from_secs(1));
                            shared.flushes.push(id);
                            break;
                        }
                    }
                }
            }
        }
        freeze_for_memory(&shared);
        // Log length: flush the tablets pinning the oldest segment.
        if shared.log.segment_count() > shared.opts.max_log_segments {
            for id in shared.log.oldest_segment_blockers() {
                if let Some(t) = shared.tablet(id) {
                    t.freeze();
                }
            }
        }
    }
}

/// Memory across tablets: once the memtables hold more than three quarters of the
/// memtable budget and no flush is pending, freezes the biggest active memtable so
/// its flush starts before writers reach the stall at the full budget. While a flush
/// is pending its release is awaited instead: freezing more then would only make
/// small files.
fn freeze_for_memory(shared: &Shared) {
    let gauge = &shared.memtable_memory;
    if gauge.bytes() <= gauge.limit() / 4 * 3 {
        return;
    }
    let tablets = shared.open_tablets();
    if tablets.iter().any(|t| !t.version().frozen.is_empty()) {
        return;
    }
    if let Some(t) = tablets
        .iter()
        .max_by_key(|t| t.version().active.approximate_size())
    {
        t.freeze();
    }
}

fn compaction_worker(shared: Arc<Shared>) {
    while !shared.stopping.load(Ordering::Acquire) {
        let Some(id) = shared.compactions.pop(Duration::from_millis(500)) else {
            continue;
        };
        let Some(t) = shared.tablet(id) else { continue };
        if t.is_closed() {
            continue;
        }
        match t.compact_if_needed() {
            Ok(r) if r.input_files > 0 => {
                tracing::debug!(
                    tablet = id,
                    inputs = r.input_files,
                    bytes = r.input_bytes,
                    "merging compaction"
                )
            }
            Ok(_) => {}
            Err(e) => tracing::error!(tablet = id, error = %e, "compaction failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(data: &Path, log: Option<&str>) -> EngineOptions {
        let mut opts = EngineOptions::new(data);
        opts.background_work = false;
        opts.log_dir = log.map(|name| data.join("logs").join(name));
        opts
    }

    #[test]
    fn a_data_directory_is_one_servers_or_shared_by_servers_with_logs_apart() {
        let dir = tempfile::tempdir().expect("tempdir");
        // Servers keeping their logs apart share the directory...
        let a = Engine::open(options(dir.path(), Some("a"))).expect("first sharer");
        let b = Engine::open(options(dir.path(), Some("b"))).expect("second sharer");
        // ...and keep out a server that takes it for its own, and one on the
        // same log as a sharer.
        assert!(matches!(
            Engine::open(options(dir.path(), None)),
            Err(Error::DirectoryInUse { .. })
        ));
        assert!(matches!(
            Engine::open(options(dir.path(), Some("a"))),
            Err(Error::DirectoryInUse { .. })
        ));
        a.shutdown().expect("shutdown");
        b.shutdown().expect("shutdown");
        drop((a, b));
        // One server alone keeps sharers out.
        let alone = Engine::open(options(dir.path(), None)).expect("alone");
        assert!(matches!(
            Engine::open(options(dir.path(), Some("c"))),
            Err(Error::DirectoryInUse { .. })
        ));
        // A shut-down engine no longer holds the directory.
        alone.shutdown().expect("shutdown");
        Engine::open(options(dir.path(), Some("c"))).expect("free after shutdown");
    }
}
