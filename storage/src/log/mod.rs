//! The commit log: one write-ahead log shared by every tablet of a server.
//!
//! Owns: the [`CommitLog`] handle (open, append, sync with group commit, tracking
//! which segments are obsolete, close) and the public face of the log's modules:
//! record and header formats ([`record`]), the write path ([`writer`]), segments
//! prepared ahead of time ([`prepare`]), the segment set ([`segments`]) and replay
//! ([`reader`]). The byte format is described
//! in docs/format-log.md.
//! Must not: interpret payloads (they are opaque bytes tagged with a tablet id and
//! sequence number) or know about memtables and SSTables.
//!
//! Records of all tablets are appended, in call order, to a buffer; a segment file
//! is written from that buffer in large chunks. `sync` with [`Durability::Fsync`]
//! waits for an fsync shared with every concurrent caller, and so does
//! [`Durability::Sync`] unless [`LogOptions::fsync`] is off (then it waits for the
//! write to the OS); `Async` data (and unsynced `Sync` data) is written
//! and fsynced by a background thread at least every
//! [`LogOptions::async_flush_interval`]. The log rotates to a new segment file when
//! the current one reaches [`LogOptions::segment_size`], and deletes a closed
//! segment once every tablet with records in it has flushed them elsewhere (see
//! [`CommitLog::mark_flushed`]) or been forgotten.

mod direct;
mod prepare;
mod reader;
mod record;
mod segments;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::Mutex;

use crate::dir_lock::DirLock;
use crate::error::{Error, Result};
use crate::types::Durability;

pub use reader::{
    read_segment, read_segment_header, replay_segments, torn_tail_allowed, truncate_torn_tail,
    LogReader, Replay, ReplayStats, TailPolicy, TornTail,
};
pub use record::{
    decode_record, encode_record, HeaderError, LogRecord, RecordError, SegmentHeader,
    FORMAT_VERSION, MAX_PAYLOAD_LEN, MAX_RECORD_BODY_LEN, RECORD_HEADER_LEN, RECORD_IDS_LEN,
    SEGMENT_HEADER_LEN, SEGMENT_MAGIC,
};
pub use segments::{list_segment_paths, list_segments, parse_segment_file_name, segment_file_name};
pub use writer::LogPosition;

use record::PreparedRecord;
pub(crate) use segments::remove_temp_files;
use segments::segment_number_of;
use writer::{FlushGoal, IoProbe, SegmentWriter, Shared};

/// How a commit log behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogOptions {
    /// A segment is closed and a new one started once the next record would take
    /// it past this many bytes (a single larger record gets a segment of its own).
    pub segment_size: u64,
    /// Longest time `Async` records stay unsynced.
    pub async_flush_interval: Duration,
    /// Write segments with direct I/O where the file system allows it (see
    /// `direct`); otherwise through the page cache.
    pub direct_io: bool,
    /// `Sync` waits for an fsync (true) or only for the write to the OS (false,
    /// HBase's `hbase.wal.hsync=false`); `Fsync` always waits for an fsync.
    pub fsync: bool,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            segment_size: 64 << 20,
            async_flush_interval: Duration::from_secs(1),
            direct_io: true,
            fsync: true,
        }
    }
}

impl LogOptions {
    /// Checks the options make sense.
    fn validate(&self) -> Result<()> {
        if self.segment_size <= SEGMENT_HEADER_LEN as u64 {
            return Err(Error::InvalidArgument(format!(
                "commit log segment_size {} must be larger than the {SEGMENT_HEADER_LEN}-byte segment header",
                self.segment_size
            )));
        }
        if self.async_flush_interval.is_zero() {
            return Err(Error::InvalidArgument(
                "commit log async_flush_interval must not be zero".into(),
            ));
        }
        Ok(())
    }
}

/// A snapshot of the log's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogStats {
    /// Segments this log owns (closed ones not yet deleted, plus the current one).
    pub segments: usize,
    /// Bytes of those segments, counting buffered records.
    pub size_bytes: u64,
    /// Record bytes appended since open.
    pub appended_bytes: u64,
    /// Record bytes handed to the OS.
    pub written_bytes: u64,
    /// Record bytes fsynced.
    pub synced_bytes: u64,
    /// fsync calls made (segments and directory).
    pub fsyncs: u64,
}

/// The server's commit log. Share it between threads behind an `Arc`.
pub struct CommitLog {
    /// No other process (or open) writes this directory while the log is open;
    /// released when it closes.
    lock: Mutex<Option<DirLock>>,
    shared: Arc<Shared>,
    /// The log directory, canonicalized (to recognise the log's own files).
    canonical_dir: PathBuf,
    background: Mutex<Option<JoinHandle<()>>>,
    /// Whether `Sync` waits for an fsync ([`LogOptions::fsync`]).
    fsync: bool,
}

impl CommitLog {
    /// Opens the log in `dir` (created if missing). Returns the log, writing to a
    /// new segment numbered after every existing one, and the existing segment
    /// files, oldest first, for the caller to replay. Those files are not owned by
    /// the new log: delete them with [`CommitLog::delete_replayed`] once their
    /// contents are persisted elsewhere.
    pub fn open(dir: &Path, opts: LogOptions) -> Result<(CommitLog, Vec<PathBuf>)> {
        opts.validate()?;
        let existed = dir.exists();
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating log directory {}", dir.display()), e))?;
        let probe = Arc::new(IoProbe::default());
        if !existed {
            if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
                probe
                    .sync_dir(parent)
                    .map_err(|e| Error::io(format!("syncing {}", parent.display()), e))?;
            }
        }
        // Before anything in the directory is read or removed: a second process
        // would otherwise split and delete the segments the first is writing.
        let lock = DirLock::acquire(dir)?;
        let canonical_dir = std::fs::canonicalize(dir)
            .map_err(|e| Error::io(format!("resolving log directory {}", dir.display()), e))?;
        remove_temp_files(dir)?;
        let existing = segments::list_segments(dir)?;
        let number = match existing.last() {
            Some((last, _)) => last.checked_add(1).ok_or_else(|| {
                Error::InvalidArgument("commit log segment numbers exhausted".into())
            })?,
            None => 1,
        };
        let writer = SegmentWriter::create_first(dir, number, &opts, Arc::clone(&probe))?;
        let shared = Arc::new(Shared::new(
            dir,
            opts.segment_size,
            opts.async_flush_interval,
            writer,
            number,
            probe,
        ));
        let background = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("tabula-log-flush".into())
                .spawn(move || shared.run_background())
                .map_err(|e| Error::io("starting the commit log flush thread", e))?
        };
        tracing::info!(
            dir = %dir.display(),
            segment = number,
            to_replay = existing.len(),
            "commit log opened"
        );
        let log = CommitLog {
            lock: Mutex::new(Some(lock)),
            shared,
            canonical_dir,
            background: Mutex::new(Some(background)),
            fsync: opts.fsync,
        };
        Ok((log, existing.into_iter().map(|(_, path)| path).collect()))
    }

    /// The log directory.
    pub fn dir(&self) -> &Path {
        self.shared.dir()
    }

    /// Appends a record to the buffer (no I/O unless the buffer is very large) and
    /// returns its position. Records are logged in call order; callers append one
    /// tablet's records in sequence order.
    pub fn append(&self, tablet_id: u64, seq: u64, payload: &[u8]) -> Result<LogPosition> {
        let record = PreparedRecord::new(tablet_id, seq, payload)?;
        self.shared.append(&record)
    }

    /// Makes the record at `pos` (and everything before it) as durable as asked.
    /// `Fsync` returns once it is written and fsynced, sharing the fsync with
    /// concurrent callers, and so does `Sync` unless the log's `fsync` option is
    /// off: then `Sync` returns once it is written to the OS (the background
    /// thread fsyncs it within `async_flush_interval`). `Async` (and `Skip`)
    /// return at once, leaving the write to the background thread. Errors with
    /// `Poisoned` after a failed write.
    pub fn sync(&self, pos: LogPosition, durability: Durability) -> Result<()> {
        match durability {
            Durability::Fsync => self.shared.flush(pos.end(), FlushGoal::Synced),
            Durability::Sync if self.fsync => self.shared.flush(pos.end(), FlushGoal::Synced),
            Durability::Sync => self.shared.flush(pos.end(), FlushGoal::Written),
            Durability::Async | Durability::Skip => self.shared.state.lock().check_poison(),
        }
    }

    /// Makes every fsync from now on fail (`true`) or succeed again.
    #[cfg(test)]
    pub(crate) fn fail_fsyncs(&self, fail: bool) {
        self.shared
            .probe
            .faults
            .fail_fsyncs
            .store(fail, std::sync::atomic::Ordering::SeqCst);
    }

    /// Writes and fsyncs everything appended so far.
    pub fn sync_all(&self) -> Result<()> {
        let target = self.shared.progress().appended;
        self.shared.flush(target, FlushGoal::Synced)
    }

    /// Notes that every record of the tablet with seq <= `flushed_seq` is persisted
    /// elsewhere, and deletes the closed segments that are now obsolete.
    pub fn mark_flushed(&self, tablet_id: u64, flushed_seq: u64) -> Result<()> {
        self.shared
            .state
            .lock()
            .segments
            .mark_flushed(tablet_id, flushed_seq);
        self.shared.delete_obsolete()
    }

    /// Notes that none of the tablet's records logged so far are needed (it was
    /// closed or moved), and deletes the closed segments that are now obsolete.
    pub fn forget_tablet(&self, tablet_id: u64) -> Result<()> {
        self.shared.state.lock().segments.forget_tablet(tablet_id);
        self.shared.delete_obsolete()
    }

    /// Tablets whose unflushed records keep the oldest closed segment alive, in
    /// ascending order. Empty when the current segment is the only one.
    pub fn oldest_segment_blockers(&self) -> Vec<u64> {
        self.shared.state.lock().segments.oldest_blockers()
    }

    /// Segments this log owns: closed ones not yet deleted plus the current one.
    pub fn segment_count(&self) -> usize {
        self.shared.state.lock().segments.count()
    }

    /// Bytes of the segments this log owns, counting buffered records.
    pub fn size_bytes(&self) -> u64 {
        self.shared.state.lock().segments.size_bytes()
    }

    /// The number of the segment records are appended to.
    pub fn current_segment(&self) -> u64 {
        self.shared.state.lock().segments.current_number()
    }

    /// fsync calls made so far (segment data, new segments, directory entries).
    pub fn fsync_count(&self) -> u64 {
        self.shared.probe.fsyncs()
    }

    /// A snapshot of the log's counters.
    pub fn stats(&self) -> LogStats {
        let progress = self.shared.progress();
        let (segments, size_bytes) = {
            let st = self.shared.state.lock();
            (st.segments.count(), st.segments.size_bytes())
        };
        LogStats {
            segments,
            size_bytes,
            appended_bytes: progress.appended,
            written_bytes: progress.written,
            synced_bytes: progress.synced,
            fsyncs: self.shared.probe.fsyncs(),
        }
    }

    /// Deletes segment files that were returned by [`CommitLog::open`] (or belong
    /// to another server's log) once their records are persisted elsewhere. Files
    /// already gone are ignored; the log's own segments are refused.
    pub fn delete_replayed(&self, paths: &[PathBuf]) -> Result<()> {
        for path in paths {
            if self.is_own_segment(path) {
                return Err(Error::InvalidArgument(format!(
                    "{} is a live segment of this commit log",
                    path.display()
                )));
            }
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        for path in paths {
            match std::fs::remove_file(path) {
                Ok(()) => {
                    tracing::debug!(path = %path.display(), "deleted replayed log segment");
                    let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
                    if !dirs.contains(&parent) {
                        dirs.push(parent);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(Error::io(
                        format!("deleting replayed log segment {}", path.display()),
                        e,
                    ))
                }
            }
        }
        for dir in dirs {
            let dir = if dir.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                dir
            };
            self.shared
                .probe
                .sync_dir(&dir)
                .map_err(|e| Error::io(format!("syncing {}", dir.display()), e))?;
        }
        Ok(())
    }

    /// True when `path` names one of this log's own segments.
    fn is_own_segment(&self, path: &Path) -> bool {
        let Some(number) = segment_number_of(path) else {
            return false;
        };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let same_dir = std::fs::canonicalize(parent).is_ok_and(|p| p == self.canonical_dir);
        same_dir && self.shared.state.lock().segments.owns(number)
    }

    /// Writes and fsyncs everything buffered and stops the background thread.
    /// Later appends fail with `ShuttingDown`. Safe to call more than once.
    pub fn close(&self) -> Result<()> {
        let result = self.shared.shut_down();
        if let Some(handle) = self.background.lock().take() {
            if handle.join().is_err() {
                tracing::error!("the commit log flush thread panicked");
            }
        }
        // Closed cleanly, nothing writes the directory any more: another open may
        // have it. (After a failure the lock stays until the log is dropped.)
        if result.is_ok() {
            self.lock.lock().take();
        }
        result
    }
}

impl Drop for CommitLog {
    fn drop(&mut self) {
        if let Err(e) = self.close() {
            tracing::warn!(error = %e, "closing the commit log failed");
        }
    }
}

impl std::fmt::Debug for CommitLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitLog")
            .field("dir", &self.dir())
            .field("stats", &self.stats())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};
    use std::sync::atomic::Ordering;
    use std::thread;
    use std::time::Instant;

    fn small_opts() -> LogOptions {
        LogOptions {
            segment_size: 4096,
            async_flush_interval: Duration::from_millis(50),
            ..LogOptions::default()
        }
    }

    /// Segments of `segment_size` bytes and no background flush within a test's
    /// run: what reaches the disk is what the test syncs or the buffer pushes out.
    fn quiet_opts(segment_size: u64) -> LogOptions {
        LogOptions {
            segment_size,
            async_flush_interval: Duration::from_secs(3600),
            ..LogOptions::default()
        }
    }

    fn payload(tablet: u64, seq: u64) -> Vec<u8> {
        format!("t{tablet}-s{seq}-{}", "p".repeat((seq % 97) as usize)).into_bytes()
    }

    fn replay_dir(dir: &Path) -> (Vec<LogRecord>, ReplayStats) {
        let paths: Vec<PathBuf> = list_segments(dir)
            .unwrap()
            .into_iter()
            .map(|(_, p)| p)
            .collect();
        let mut replay = replay_segments(&paths, None).unwrap();
        let records = replay.by_ref().map(|r| r.unwrap()).collect();
        (records, replay.stats().clone())
    }

    #[test]
    fn without_fsync_a_synced_write_waits_for_the_os_and_fsync_wal_still_fsyncs() {
        let dir = tempfile::tempdir().unwrap();
        let opts = LogOptions {
            fsync: false,
            direct_io: false,
            ..quiet_opts(1 << 20)
        };
        let (log, _) = CommitLog::open(dir.path(), opts).unwrap();
        let fsyncs = log.stats().fsyncs;
        let pos = log.append(1, 1, b"written, not fsynced").unwrap();
        log.sync(pos, Durability::Sync).unwrap();
        let stats = log.stats();
        assert!(stats.written_bytes >= pos.end(), "{stats:?}");
        assert!(stats.synced_bytes < pos.end(), "no fsync: {stats:?}");
        assert_eq!(stats.fsyncs, fsyncs);
        // What the OS holds survives the process: another reader sees it.
        let (records, _) = replay_dir(dir.path());
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].payload, b"written, not fsynced");

        let pos = log.append(1, 2, b"fsynced").unwrap();
        log.sync(pos, Durability::Fsync).unwrap();
        let stats = log.stats();
        assert!(stats.synced_bytes >= pos.end(), "{stats:?}");
        assert!(stats.fsyncs > fsyncs);
        log.close().unwrap();
    }

    #[test]
    fn with_fsync_a_synced_write_waits_for_the_fsync() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), quiet_opts(1 << 20)).unwrap();
        let pos = log.append(1, 1, b"fsynced").unwrap();
        log.sync(pos, Durability::Sync).unwrap();
        assert!(log.stats().synced_bytes >= pos.end());
        log.close().unwrap();
    }

    #[test]
    fn without_fsync_the_background_thread_fsyncs_what_synced_writes_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let opts = LogOptions {
            fsync: false,
            ..small_opts()
        };
        let (log, _) = CommitLog::open(dir.path(), opts).unwrap();
        let pos = log.append(1, 1, b"fsynced later").unwrap();
        log.sync(pos, Durability::Sync).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while log.stats().synced_bytes < pos.end() {
            assert!(
                Instant::now() < deadline,
                "never fsynced: {:?}",
                log.stats()
            );
            thread::sleep(Duration::from_millis(10));
        }
        log.close().unwrap();
    }

    #[test]
    fn records_across_rotated_segments_replay_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (log, to_replay) = CommitLog::open(dir.path(), small_opts()).unwrap();
        assert!(to_replay.is_empty());
        let mut expected = Vec::new();
        let mut last = None;
        for i in 0..2000u64 {
            let tablet = i % 7;
            let seq = i / 7 + 1;
            let p = payload(tablet, seq);
            last = Some(log.append(tablet, seq, &p).unwrap());
            expected.push(LogRecord {
                tablet_id: tablet,
                seq,
                payload: p,
            });
        }
        log.sync(last.unwrap(), Durability::Sync).unwrap();
        assert!(log.segment_count() > 10, "{}", log.segment_count());
        let files = list_segments(dir.path()).unwrap();
        assert_eq!(files.len(), log.segment_count());
        for (_, path) in &files {
            assert!(std::fs::metadata(path).unwrap().len() <= 4096);
        }
        let size_bytes = log.size_bytes();
        log.close().unwrap();
        // Closing trims the open segment, should it be a prepared one.
        let on_disk: u64 = files
            .iter()
            .map(|(_, p)| std::fs::metadata(p).unwrap().len())
            .sum();
        assert_eq!(size_bytes, on_disk);
        let (records, stats) = replay_dir(dir.path());
        assert_eq!(records, expected);
        assert_eq!(stats.dropped_bytes, 0);
        assert_eq!(stats.segments, files.len());
    }

    #[test]
    fn positions_are_ordered_and_name_the_segment() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        let a = log.append(1, 1, b"a").unwrap();
        let b = log.append(1, 2, b"b").unwrap();
        assert!(a < b);
        assert_eq!(a.segment(), log.current_segment());
        assert_eq!(a.offset(), SEGMENT_HEADER_LEN as u64);
        assert_eq!(b.offset(), a.offset() + 25);
        assert_eq!(b.end(), 50);
    }

    /// A log in `dir` whose every fsync takes `fsync_micros` longer.
    fn open_with_slow_fsyncs(dir: &Path, opts: LogOptions, fsync_micros: u64) -> Arc<CommitLog> {
        let (log, _) = CommitLog::open(dir, opts).unwrap();
        log.shared
            .probe
            .faults
            .fsync_delay_micros
            .store(fsync_micros, Ordering::SeqCst);
        Arc::new(log)
    }

    #[test]
    fn group_commit_shares_fsyncs() {
        let dir = tempfile::tempdir().unwrap();
        let log = open_with_slow_fsyncs(dir.path(), LogOptions::default(), 1000);
        let before = log.fsync_count();
        const THREADS: u64 = 16;
        const SYNCS: u64 = 40;
        let handles: Vec<_> = (0..THREADS)
            .map(|tablet| {
                let log = Arc::clone(&log);
                thread::spawn(move || {
                    for seq in 1..=SYNCS {
                        let pos = log.append(tablet, seq, &payload(tablet, seq)).unwrap();
                        log.sync(pos, Durability::Sync).unwrap();
                        assert!(log.stats().synced_bytes >= pos.end());
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let fsyncs = log.fsync_count() - before;
        let syncs = THREADS * SYNCS;
        assert!(fsyncs * 4 < syncs, "{fsyncs} fsyncs for {syncs} syncs");
        log.close().unwrap();
        let (records, _) = replay_dir(dir.path());
        assert_eq!(records.len() as u64, syncs);
        let mut next: HashMap<u64, u64> = HashMap::new();
        for rec in records {
            let expect = next.entry(rec.tablet_id).or_insert(1);
            assert_eq!(rec.seq, *expect);
            assert_eq!(rec.payload, payload(rec.tablet_id, rec.seq));
            *expect += 1;
        }
    }

    /// Writers that sync and writers that do not, rotations every few records and
    /// slow fsyncs, with the background thread too slow to rescue anyone: every
    /// sync returns (no waiter is left asleep when the batch covering it is done,
    /// nor when its batch is the next one, which one of them must lead) and covers
    /// its record.
    #[test]
    fn mixed_syncs_under_rotation_all_return() {
        let dir = tempfile::tempdir().unwrap();
        let opts = quiet_opts(4096);
        let log = open_with_slow_fsyncs(dir.path(), opts, 300);
        const THREADS: u64 = 12;
        const WRITES: u64 = 150;
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        for tablet in 0..THREADS {
            let log = Arc::clone(&log);
            let done_tx = done_tx.clone();
            thread::spawn(move || {
                for seq in 1..=WRITES {
                    let pos = log.append(tablet, seq, &payload(tablet, seq)).unwrap();
                    let durability = if (tablet + seq) % 3 == 0 {
                        Durability::Async
                    } else {
                        Durability::Sync
                    };
                    log.sync(pos, durability).unwrap();
                    if durability == Durability::Sync {
                        assert!(log.stats().synced_bytes >= pos.end());
                    }
                }
                let _ = done_tx.send(tablet);
            });
        }
        drop(done_tx);
        for _ in 0..THREADS {
            done_rx
                .recv_timeout(Duration::from_secs(30))
                .expect("a writer is stuck waiting for the log");
        }
        log.sync_all().unwrap();
        log.close().unwrap();
        let (records, _) = replay_dir(dir.path());
        assert_eq!(records.len() as u64, THREADS * WRITES);
    }

    /// Many short batches (no added fsync delay), callers that want syncs and
    /// callers that only want their records written, and no background thread to
    /// rescue a caller left asleep: the window between a caller choosing its batch
    /// and falling asleep is hit often, and no wake-up may be lost in it.
    #[test]
    fn short_batches_lose_no_wake_ups() {
        let dir = tempfile::tempdir().unwrap();
        let opts = quiet_opts(1 << 20);
        let log = open_with_slow_fsyncs(dir.path(), opts, 0);
        const THREADS: u64 = 16;
        const WRITES: u64 = 1500;
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        for tablet in 0..THREADS {
            let log = Arc::clone(&log);
            let done_tx = done_tx.clone();
            thread::spawn(move || {
                for seq in 1..=WRITES {
                    let pos = log.append(tablet, seq, &payload(tablet, seq)).unwrap();
                    if (tablet + seq) % 4 == 0 {
                        log.shared.flush(pos.end(), FlushGoal::Written).unwrap();
                        assert!(log.shared.progress().written >= pos.end());
                    } else {
                        log.sync(pos, Durability::Sync).unwrap();
                        assert!(log.stats().synced_bytes >= pos.end());
                    }
                }
                let _ = done_tx.send(tablet);
            });
        }
        drop(done_tx);
        for _ in 0..THREADS {
            done_rx
                .recv_timeout(Duration::from_secs(60))
                .expect("a writer is stuck waiting for the log");
        }
        log.close().unwrap();
        let (records, _) = replay_dir(dir.path());
        assert_eq!(records.len() as u64, THREADS * WRITES);
    }

    /// A first caller syncs with fsyncs slowed by `fsync_micros`; `head_start`
    /// later, while that fsync is under way, a second caller appends and syncs,
    /// pausing `sleep_delay_micros` between finding its batch unfinished and falling
    /// asleep. Nothing else runs (no background sync): the second caller must still
    /// return, with its record synced. `stuck` names the failure when it does not.
    fn second_caller_during_an_fsync_is_synced(
        fsync_micros: u64,
        sleep_delay_micros: u64,
        head_start: Duration,
        stuck: &str,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let opts = quiet_opts(1 << 20);
        let log = open_with_slow_fsyncs(dir.path(), opts, fsync_micros);
        let faults = &log.shared.probe.faults;
        faults
            .sleep_delay_micros
            .store(sleep_delay_micros, Ordering::SeqCst);
        let first = {
            let log = Arc::clone(&log);
            thread::spawn(move || {
                let pos = log.append(1, 1, &payload(1, 1)).unwrap();
                log.sync(pos, Durability::Sync).unwrap();
            })
        };
        thread::sleep(head_start);
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        {
            let log = Arc::clone(&log);
            thread::spawn(move || {
                let pos = log.append(2, 1, &payload(2, 1)).unwrap();
                log.sync(pos, Durability::Sync).unwrap();
                let _ = done_tx.send(pos.end());
            });
        }
        first.join().unwrap();
        let end = done_rx.recv_timeout(Duration::from_secs(10)).expect(stuck);
        assert!(log.stats().synced_bytes >= end);
        faults.sleep_delay_micros.store(0, Ordering::SeqCst);
        log.close().unwrap();
    }

    /// A caller that appends while a leader's fsync is in flight waits for the next
    /// batch; when that leader finishes and has nothing more to write, the caller
    /// is woken to lead the next batch itself.
    #[test]
    fn a_waiter_for_the_next_batch_leads_it_when_the_leader_leaves() {
        second_caller_during_an_fsync_is_synced(
            100_000,
            0,
            Duration::from_millis(30),
            "the caller waiting for the next batch was never woken",
        );
    }

    /// The batch a caller waits for ends after the caller has found it unfinished
    /// but before it has fallen asleep: it must not sleep through that end (nothing
    /// else would wake it: no other caller, no background sync).
    #[test]
    fn a_batch_ending_before_its_waiter_sleeps_still_wakes_it() {
        second_caller_during_an_fsync_is_synced(
            50_000,
            150_000,
            Duration::from_millis(20),
            "the caller slept through the end of the batch it waited for",
        );
    }

    #[test]
    fn async_records_are_synced_by_the_background_thread() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        let pos = log.append(3, 1, b"later").unwrap();
        log.sync(pos, Durability::Async).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while log.stats().synced_bytes < pos.end() {
            assert!(Instant::now() < deadline, "background thread never synced");
            thread::sleep(Duration::from_millis(5));
        }
        let path = dir.path().join(segment_file_name(pos.segment()));
        let got: Vec<LogRecord> = LogReader::open(&path)
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].payload, b"later");
    }

    #[test]
    fn big_unsynced_volume_is_written_in_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let opts = quiet_opts(8 << 20);
        let (log, _) = CommitLog::open(dir.path(), opts).unwrap();
        let record = vec![0xabu8; 64 << 10];
        for seq in 1..=400u64 {
            log.append(1, seq, &record).unwrap();
        }
        let stats = log.stats();
        assert!(
            stats.appended_bytes - stats.written_bytes <= writer::MAX_UNWRITTEN,
            "{stats:?}"
        );
        assert!(stats.segments >= 3);
        log.close().unwrap();
        let (records, _) = replay_dir(dir.path());
        assert_eq!(records.len(), 400);
        assert!(records.iter().zip(1..).all(|(r, s)| r.seq == s));
    }

    #[test]
    fn failed_write_poisons_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        let good = log.append(1, 1, b"ok").unwrap();
        log.sync(good, Durability::Sync).unwrap();
        log.shared
            .probe
            .faults
            .fail_writes
            .store(true, Ordering::SeqCst);
        let pos = log.append(1, 2, b"lost").unwrap();
        assert!(matches!(
            log.sync(pos, Durability::Sync),
            Err(Error::Poisoned(_))
        ));
        log.shared
            .probe
            .faults
            .fail_writes
            .store(false, Ordering::SeqCst);
        assert!(matches!(log.append(1, 3, b"x"), Err(Error::Poisoned(_))));
        assert!(matches!(
            log.sync(good, Durability::Sync),
            Err(Error::Poisoned(_))
        ));
        assert!(matches!(
            log.sync(good, Durability::Async),
            Err(Error::Poisoned(_))
        ));
        assert!(matches!(log.close(), Err(Error::Poisoned(_))));
    }

    #[test]
    fn failed_fsync_poisons_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        log.shared
            .probe
            .faults
            .fail_fsyncs
            .store(true, Ordering::SeqCst);
        let pos = log.append(1, 1, b"x").unwrap();
        let err = log.sync(pos, Durability::Sync).unwrap_err();
        assert!(matches!(err, Error::Poisoned(ref m) if m.contains("injected fsync failure")));
        log.shared
            .probe
            .faults
            .fail_fsyncs
            .store(false, Ordering::SeqCst);
        assert!(matches!(log.append(1, 2, b"y"), Err(Error::Poisoned(_))));
        assert!(matches!(
            log.sync(pos, Durability::Sync),
            Err(Error::Poisoned(_))
        ));
    }

    #[test]
    fn obsolete_segments_are_deleted_after_flush_and_forget() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        let big = vec![7u8; 1500];
        // Segments: A {1}, B {1, 2}, C {2}, and the current one D {2}.
        log.append(1, 1, &big).unwrap();
        log.append(1, 2, &big).unwrap();
        let first = log.current_segment();
        log.append(1, 3, &big).unwrap();
        log.append(2, 1, &big).unwrap();
        log.append(2, 2, &big).unwrap();
        log.append(2, 3, &big).unwrap();
        let last = log.append(2, 4, &big).unwrap();
        log.sync(last, Durability::Sync).unwrap();
        assert_eq!(log.segment_count(), 4);
        assert_eq!(log.oldest_segment_blockers(), vec![1]);

        log.mark_flushed(1, 1).unwrap();
        assert_eq!(log.segment_count(), 4, "seq 2 of tablet 1 is still needed");
        log.mark_flushed(1, 3).unwrap();
        assert_eq!(log.segment_count(), 3);
        assert!(!dir.path().join(segment_file_name(first)).exists());
        assert_eq!(log.oldest_segment_blockers(), vec![2]);

        log.forget_tablet(2).unwrap();
        assert_eq!(log.segment_count(), 1, "only the current segment remains");
        assert!(log.oldest_segment_blockers().is_empty());
        let files = list_segments(dir.path()).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].0, log.current_segment());
        let size_bytes = log.size_bytes();
        // Closing trims the current segment, should it be a prepared one.
        log.close().unwrap();
        assert_eq!(size_bytes, std::fs::metadata(&files[0].1).unwrap().len());
    }

    #[test]
    fn flushed_before_rotation_is_deleted_once_sealed() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        let big = vec![1u8; 3000];
        log.append(5, 1, &big).unwrap();
        log.mark_flushed(5, 1).unwrap();
        let pos = log.append(6, 1, &big).unwrap();
        assert_eq!(log.segment_count(), 2);
        log.sync(pos, Durability::Sync).unwrap();
        assert_eq!(log.segment_count(), 1);
        assert_eq!(list_segments(dir.path()).unwrap().len(), 1);
    }

    #[test]
    fn reopen_returns_old_segments_and_starts_a_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        let first = log.current_segment();
        log.append(1, 1, b"one").unwrap();
        log.close().unwrap();
        assert!(matches!(log.append(1, 2, b"two"), Err(Error::ShuttingDown)));
        drop(log);

        let (log, to_replay) = CommitLog::open(dir.path(), small_opts()).unwrap();
        assert_eq!(to_replay, vec![dir.path().join(segment_file_name(first))]);
        assert!(log.current_segment() > first);
        assert_eq!(log.segment_count(), 1, "replayed segments are not owned");
        let own = dir.path().join(segment_file_name(log.current_segment()));
        assert!(matches!(
            log.delete_replayed(std::slice::from_ref(&own)),
            Err(Error::InvalidArgument(_))
        ));
        log.delete_replayed(&to_replay).unwrap();
        log.delete_replayed(&to_replay).unwrap();
        assert!(!to_replay[0].exists());
        drop(log);
        assert!(
            list_segments(dir.path()).unwrap().is_empty(),
            "an unused segment is removed at close"
        );
    }

    #[test]
    fn restart_after_torn_tail_still_replays() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        let seg = log.current_segment();
        log.append(1, 1, b"kept").unwrap();
        log.append(1, 2, b"torn away").unwrap();
        log.close().unwrap();
        drop(log);
        let path = dir.path().join(segment_file_name(seg));
        let len = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len - 4)
            .unwrap();

        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        let big = vec![2u8; 3000];
        log.append(1, 3, &big).unwrap();
        log.append(1, 4, &big).unwrap();
        log.append(1, 5, &big).unwrap();
        log.close().unwrap();
        let (records, stats) = replay_dir(dir.path());
        let seqs: Vec<u64> = records.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, vec![1, 3, 4, 5]);
        assert_eq!(stats.torn_tails.len(), 1);
        assert_eq!(stats.torn_tails[0].path, path);
    }

    #[test]
    fn filtered_replay_of_a_real_log() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        for i in 0..300u64 {
            log.append(i % 5, i / 5 + 1, &payload(i % 5, i)).unwrap();
        }
        log.close().unwrap();
        let paths: Vec<PathBuf> = list_segments(dir.path())
            .unwrap()
            .into_iter()
            .map(|(_, p)| p)
            .collect();
        let wanted: HashSet<u64> = [0u64, 3].into_iter().collect();
        let records: Vec<LogRecord> = replay_segments(&paths, Some(&wanted))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(records.len(), 120);
        assert!(records.iter().all(|r| wanted.contains(&r.tablet_id)));
    }

    #[test]
    fn sync_beyond_the_end_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (other, _) = CommitLog::open(&dir.path().join("other"), small_opts()).unwrap();
        let far = other.append(1, 1, &[0u8; 100]).unwrap();
        let (log, _) = CommitLog::open(&dir.path().join("log"), small_opts()).unwrap();
        assert!(matches!(
            log.sync(far, Durability::Sync),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn log_is_shareable_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<CommitLog>();
        assert_send_sync::<LogPosition>();
    }

    #[test]
    fn bad_options_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let tiny = LogOptions {
            segment_size: 10,
            ..LogOptions::default()
        };
        assert!(matches!(
            CommitLog::open(dir.path(), tiny),
            Err(Error::InvalidArgument(_))
        ));
        let zero = LogOptions {
            async_flush_interval: Duration::ZERO,
            ..LogOptions::default()
        };
        assert!(matches!(
            CommitLog::open(dir.path(), zero),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn oversized_record_gets_its_own_segment() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        log.append(1, 1, b"small").unwrap();
        let big = log.append(1, 2, &vec![9u8; 10_000]).unwrap();
        let after = log.append(1, 3, b"small").unwrap();
        assert_ne!(big.segment(), after.segment());
        log.close().unwrap();
        let (records, _) = replay_dir(dir.path());
        assert_eq!(records.len(), 3);
        assert_eq!(records[1].payload.len(), 10_000);
    }

    /// Waits (up to 10 s) until the preparer has segment `number` ready.
    fn wait_for_prepared(log: &CommitLog, number: u64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !log.shared.prepared_ready(number) {
            assert!(
                Instant::now() < deadline,
                "segment {number} was never prepared"
            );
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// Once a segment is half full the next one is prepared (header and zeros,
    /// fsynced) and used at rotation; sealing and closing cut the unused zeros
    /// off, and a copy of the directory taken while the log runs, as a crash would
    /// leave it, replays every synced record with nothing reported dropped.
    /// Writes the same records (synced and unsynced, across a rotation) with and
    /// without direct I/O: a copy taken while the log runs replays every synced
    /// record (the zeros a direct write pads its last block with read as the end),
    /// and after close both logs' files are the same bytes.
    #[test]
    fn direct_and_buffered_segments_hold_the_same_bytes() {
        let run = |direct_io: bool| {
            let dir = tempfile::tempdir().unwrap();
            let opts = LogOptions {
                direct_io,
                ..quiet_opts(64 * 1024)
            };
            let (log, _) = CommitLog::open(dir.path(), opts).unwrap();
            let first = log.current_segment();
            let mut synced = 0u64;
            for seq in 1..=120u64 {
                let body = vec![seq as u8; 100 + (seq as usize * 37) % 1500];
                let pos = log.append(1, seq, &body).unwrap();
                if seq % 3 != 0 {
                    log.sync(pos, Durability::Sync).unwrap();
                    synced = seq;
                }
            }
            assert!(log.current_segment() > first, "the log rotated");
            let copy = tempfile::tempdir().unwrap();
            for (_, path) in list_segments(dir.path()).unwrap() {
                std::fs::copy(&path, copy.path().join(path.file_name().unwrap())).unwrap();
            }
            let (records, stats) = replay_dir(copy.path());
            assert!(
                records.len() as u64 >= synced,
                "every synced record replays"
            );
            assert_eq!(stats.dropped_bytes, 0);
            let direct_segments = log.shared.probe.direct_segments.load(Ordering::SeqCst);
            if !direct_io {
                assert_eq!(direct_segments, 0);
            } else if direct::supported(dir.path()) {
                assert!(
                    direct_segments >= 2,
                    "{direct_segments} segments written directly"
                );
            }
            log.close().unwrap();
            list_segments(dir.path())
                .unwrap()
                .into_iter()
                .map(|(n, path)| (n, std::fs::read(path).unwrap()))
                .collect::<Vec<_>>()
        };
        let direct = run(true);
        let buffered = run(false);
        assert_eq!(direct.len(), buffered.len());
        for ((n, a), (m, b)) in direct.iter().zip(&buffered) {
            assert_eq!(n, m);
            assert!(a == b, "segment {n}: {} vs {} bytes", a.len(), b.len());
        }
    }

    #[test]
    fn prepared_segments_are_used_trimmed_and_replay_cleanly() {
        let dir = tempfile::tempdir().unwrap();
        let opts = quiet_opts(64 * 1024);
        let (log, _) = CommitLog::open(dir.path(), opts).unwrap();
        let first = log.current_segment();
        let body = vec![7u8; 1000];
        let mut ends: HashMap<u64, u64> = HashMap::new();
        let mut seq = 0u64;
        let mut write_until = |log: &CommitLog, segment: u64, min_offset: u64| loop {
            seq += 1;
            let pos = log.append(1, seq, &body).unwrap();
            log.sync(pos, Durability::Sync).unwrap();
            let end = pos.offset() + (RECORD_HEADER_LEN + RECORD_IDS_LEN + body.len()) as u64;
            ends.insert(pos.segment(), end);
            if pos.segment() > segment || pos.offset() >= min_offset {
                return (pos, seq);
            }
        };
        // Half of the first segment: the second is asked for.
        write_until(&log, first, 33 * 1024);
        wait_for_prepared(&log, first + 1);
        // Into the second segment, past its half: the third is asked for.
        write_until(&log, first, u64::MAX);
        assert_eq!(log.current_segment(), first + 1);
        write_until(&log, first + 1, 33 * 1024);
        wait_for_prepared(&log, first + 2);
        let (last, written) = write_until(&log, first + 1, u64::MAX);
        assert_eq!(last.segment(), first + 2);
        assert_eq!(log.shared.probe.prepared_used.load(Ordering::SeqCst), 2);

        // The open segment is a prepared one: its file runs past its records.
        let current = dir.path().join(segment_file_name(first + 2));
        assert_eq!(std::fs::metadata(&current).unwrap().len(), 64 * 1024);
        // Sealed ones end at their last record.
        for number in [first, first + 1] {
            let path = dir.path().join(segment_file_name(number));
            assert_eq!(std::fs::metadata(&path).unwrap().len(), ends[&number]);
        }

        // A crash now: the segment files as they are on disk.
        let copy = tempfile::tempdir().unwrap();
        for (_, path) in list_segments(dir.path()).unwrap() {
            std::fs::copy(&path, copy.path().join(path.file_name().unwrap())).unwrap();
        }
        let (records, stats) = replay_dir(copy.path());
        assert_eq!(records.len() as u64, written);
        assert!(records.iter().all(|r| r.payload == body));
        assert_eq!(stats.dropped_bytes, 0);
        assert!(stats.torn_tails.is_empty());

        log.close().unwrap();
        assert_eq!(
            std::fs::metadata(&current).unwrap().len(),
            ends[&(first + 2)]
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let (records, stats) = replay_dir(dir.path());
        assert_eq!(records.len() as u64, written);
        assert_eq!(stats.dropped_bytes, 0);
    }

    /// The first segment of a run is created without preparation: after
    /// EARLY_REQUEST_AFTER bytes its successor is prepared, and the log moves to
    /// it as soon as it is ready instead of filling the unprepared file. A
    /// prepared segment does not rotate early. Every record replays.
    #[test]
    fn an_unprepared_segment_gives_way_to_a_prepared_one_early() {
        let dir = tempfile::tempdir().unwrap();
        let opts = quiet_opts(8 << 20);
        let (log, _) = CommitLog::open(dir.path(), opts).unwrap();
        let first = log.current_segment();
        let body = vec![5u8; 1000];
        let mut seq = 0u64;
        let mut put = |log: &CommitLog| {
            seq += 1;
            let pos = log.append(1, seq, &body).unwrap();
            log.sync(pos, Durability::Sync).unwrap();
            (pos, seq)
        };
        // Past the threshold the successor is asked for, and the log moves to it
        // as soon as it is ready: within the next few writes on a fast disk, so
        // the loop stops at the move or a little past the threshold.
        let mut last = put(&log).0;
        while last.segment() == first && last.offset() < prepare::EARLY_REQUEST_AFTER + 4096 {
            last = put(&log).0;
        }
        if last.segment() == first {
            wait_for_prepared(&log, first + 1);
            last = put(&log).0;
        }
        assert_eq!(last.segment(), first + 1, "moved to the prepared segment");
        assert_eq!(log.shared.probe.prepared_used.load(Ordering::SeqCst), 1);
        let first_len = std::fs::metadata(dir.path().join(segment_file_name(first)))
            .unwrap()
            .len();
        assert!(
            (prepare::EARLY_REQUEST_AFTER..2 << 20).contains(&first_len),
            "first segment sealed at {first_len} bytes: not before the threshold, far from full"
        );
        // Twice the early threshold into the prepared segment, below its half:
        // it stays open.
        let mut written = 0;
        while last.offset() < 3 * prepare::EARLY_REQUEST_AFTER {
            (last, written) = put(&log);
        }
        assert_eq!(last.segment(), first + 1);
        log.close().unwrap();
        let (records, stats) = replay_dir(dir.path());
        assert_eq!(records.len() as u64, written);
        assert!(records.iter().zip(1..).all(|(r, s)| r.seq == s));
        assert_eq!(stats.dropped_bytes, 0);
    }

    /// A prepared segment file left by a crash is removed when the log opens, and
    /// is not taken for a segment.
    #[test]
    fn a_prepared_file_left_by_a_crash_is_removed_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), small_opts()).unwrap();
        let pos = log.append(1, 1, b"kept").unwrap();
        log.sync(pos, Durability::Sync).unwrap();
        let next = log.current_segment() + 1;
        log.close().unwrap();
        drop(log);
        let leftover = dir.path().join(segments::prepared_file_name(next));
        std::fs::write(&leftover, vec![0u8; 4096]).unwrap();
        let (log, old) = CommitLog::open(dir.path(), small_opts()).unwrap();
        assert!(!leftover.exists());
        assert_eq!(old.len(), 1);
        assert_eq!(log.current_segment(), next);
        assert_eq!(log.shared.probe.prepared_used.load(Ordering::SeqCst), 0);
        log.close().unwrap();
    }

    /// A directory whose log is open elsewhere is refused, untouched; once that log
    /// is dropped it opens.
    #[test]
    fn a_log_directory_in_use_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), LogOptions::default()).unwrap();
        let pos = log.append(1, 1, b"kept").unwrap();
        log.sync(pos, Durability::Sync).unwrap();
        assert!(matches!(
            CommitLog::open(dir.path(), LogOptions::default()),
            Err(Error::DirectoryInUse { .. })
        ));
        // The refused open neither started a segment nor took the first one.
        assert!(dir.path().join(segment_file_name(pos.segment())).exists());
        assert!(!dir
            .path()
            .join(segment_file_name(pos.segment() + 1))
            .exists());
        drop(log);
        let (_again, existing) = CommitLog::open(dir.path(), LogOptions::default()).unwrap();
        assert_eq!(existing.len(), 1);
    }

    /// A log that never fills half a segment prepares nothing (no thread, no file).
    #[test]
    fn a_quiet_log_prepares_no_segment() {
        let dir = tempfile::tempdir().unwrap();
        let (log, _) = CommitLog::open(dir.path(), LogOptions::default()).unwrap();
        let pos = log.append(1, 1, b"small").unwrap();
        log.sync(pos, Durability::Sync).unwrap();
        log.close().unwrap();
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| name != crate::dir_lock::LOCK_FILE)
            .collect();
        assert_eq!(names, vec![segment_file_name(pos.segment())]);
        assert_eq!(log.shared.probe.prepared_used.load(Ordering::SeqCst), 0);
    }
}
