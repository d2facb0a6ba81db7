//! The commit log's write path: the in-memory buffer, the segment files being
//! written, group commit and the background flush thread.
//!
//! Owns: copying appended records into the buffer (in call order), handing buffered
//! bytes to the OS in large chunks, fsync with leader/follower group commit, segment
//! file creation and sealing on rotation, poisoning after a failed write or fsync,
//! and the background thread that bounds how long `Async` data stays unsynced.
//! Must not: interpret payloads, read segments back, or decide which segments are
//! obsolete (segments.rs does; this module only deletes what it is told).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::error::{Error, Result};
use crate::log::direct::DirectTail;
use crate::log::prepare::{Readiness, SegmentPreparer, EARLY_REQUEST_AFTER};
use crate::log::record::{PreparedRecord, SegmentHeader, SEGMENT_HEADER_LEN};
use crate::log::segments::{segment_file_name, temp_file_name, SegmentSet};
use crate::log::LogOptions;

/// Unwritten bytes at which the background thread is woken to write them out.
pub(crate) const WRITE_THRESHOLD: u64 = 1 << 20;
/// Unwritten bytes at which an appender writes them itself before returning
/// (back-pressure when the background thread cannot keep up).
pub(crate) const MAX_UNWRITTEN: u64 = 16 << 20;
/// Largest buffer kept for reuse after a write: every buffer an appender can fill
/// before writing it itself. A buffer that grows anew from empty touches fresh pages
/// (a page fault each) and copies itself at every doubling.
const SPARE_BUFFER_MAX: usize = 2 * MAX_UNWRITTEN as usize;
/// Capacity a fresh buffer starts with when no written one is back for reuse yet.
const FRESH_BUFFER_CAPACITY: usize = 2 * WRITE_THRESHOLD as usize;

/// Where a record ends up: its segment, its offset there, and its end in the log's
/// stream of record bytes (what [`crate::log::CommitLog::sync`] waits for).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LogPosition {
    end: u64,
    segment: u64,
    offset: u64,
}

impl LogPosition {
    /// The segment holding the record.
    pub fn segment(&self) -> u64 {
        self.segment
    }

    /// The record's first byte inside its segment file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The record's end in the log's stream of record bytes since it was opened.
    /// Positions of one log are ordered by this value.
    pub fn end(&self) -> u64 {
        self.end
    }
}

/// Failures injected by tests.
#[cfg(test)]
#[derive(Debug, Default)]
pub(crate) struct Faults {
    pub(crate) fail_writes: std::sync::atomic::AtomicBool,
    pub(crate) fail_fsyncs: std::sync::atomic::AtomicBool,
    pub(crate) fsync_delay_micros: AtomicU64,
    /// A pause between a waiting caller finding its batch unfinished and falling
    /// asleep: the window a batch may end in.
    pub(crate) sleep_delay_micros: AtomicU64,
}

/// Counters (and, in tests, fault switches) shared by the writer and the log.
#[derive(Debug, Default)]
pub(crate) struct IoProbe {
    fsyncs: AtomicU64,
    /// Segments opened from a prepared file.
    pub(crate) prepared_used: AtomicU64,
    /// Segments written with direct I/O.
    pub(crate) direct_segments: AtomicU64,
    #[cfg(test)]
    pub(crate) faults: Faults,
}

impl IoProbe {
    /// fsync (or fdatasync) calls made so far, on segments and the directory.
    pub(crate) fn fsyncs(&self) -> u64 {
        self.fsyncs.load(Ordering::Relaxed)
    }

    #[cfg(test)]
    fn before_write(&self) -> std::io::Result<()> {
        if self.faults.fail_writes.load(Ordering::SeqCst) {
            return Err(std::io::Error::other("injected write failure"));
        }
        Ok(())
    }

    #[cfg(not(test))]
    fn before_write(&self) -> std::io::Result<()> {
        Ok(())
    }

    #[cfg(test)]
    fn before_fsync(&self) -> std::io::Result<()> {
        let delay = self.faults.fsync_delay_micros.load(Ordering::SeqCst);
        if delay > 0 {
            std::thread::sleep(Duration::from_micros(delay));
        }
        if self.faults.fail_fsyncs.load(Ordering::SeqCst) {
            return Err(std::io::Error::other("injected fsync failure"));
        }
        Ok(())
    }

    #[cfg(not(test))]
    fn before_fsync(&self) -> std::io::Result<()> {
        Ok(())
    }

    #[cfg(test)]
    fn before_sleep(&self) {
        let delay = self.faults.sleep_delay_micros.load(Ordering::SeqCst);
        if delay > 0 {
            std::thread::sleep(Duration::from_micros(delay));
        }
    }

    #[cfg(not(test))]
    fn before_sleep(&self) {}

    /// fdatasync of a segment file.
    fn sync_data(&self, file: &File) -> std::io::Result<()> {
        self.before_fsync()?;
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        file.sync_data()
    }

    /// fsync of a file including its metadata.
    pub(crate) fn sync_all(&self, file: &File) -> std::io::Result<()> {
        self.before_fsync()?;
        self.fsyncs.fetch_add(1, Ordering::Relaxed);
        file.sync_all()
    }

    /// fsync of a directory, making created, renamed and removed names durable.
    pub(crate) fn sync_dir(&self, dir: &Path) -> std::io::Result<()> {
        let handle = File::open(dir)?;
        self.sync_all(&handle)
    }
}

/// Creates (or empties) the file at `path` and writes the header of segment
/// `number` of the run that began at `run_first`; the file is left positioned
/// after the header.
pub(crate) fn start_segment_file(
    path: &Path,
    number: u64,
    run_first: u64,
) -> std::io::Result<File> {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    file.write_all(&SegmentHeader { number, run_first }.encode())?;
    Ok(file)
}

/// The segment file currently open for writing.
struct OpenSegment {
    number: u64,
    file: File,
    /// Direct-I/O writes of this segment, where the file system allows them.
    direct: Option<DirectTail>,
    /// Bytes written to the file, its header included.
    len: u64,
    /// Bytes the file holds: more than `len` in a prepared segment, or after
    /// direct writes padded the last block with zeros; the zeros past `len` are cut
    /// off when the segment is sealed or the log closes.
    allocated: u64,
    /// The file was prepared ahead of time.
    prepared: bool,
}

/// Owns the segment files while they are written. Only the thread that holds the
/// log's I/O role touches it.
pub(crate) struct SegmentWriter {
    dir: PathBuf,
    run_first: u64,
    open: Option<OpenSegment>,
    probe: Arc<IoProbe>,
    /// Half of this many bytes into a segment, the next one is asked for.
    segment_size: u64,
    preparer: SegmentPreparer,
    /// The segment last asked of the preparer.
    requested: Option<u64>,
    /// Whether segments are written with direct I/O where possible.
    direct_io: bool,
}

impl SegmentWriter {
    /// Creates segment `number`, the first of this run, and opens it for writing.
    pub(crate) fn create_first(
        dir: &Path,
        number: u64,
        opts: &LogOptions,
        probe: Arc<IoProbe>,
    ) -> Result<Self> {
        let segment_size = opts.segment_size;
        let mut writer = SegmentWriter {
            dir: dir.to_path_buf(),
            run_first: number,
            open: None,
            preparer: SegmentPreparer::new(dir, number, segment_size, Arc::clone(&probe)),
            probe,
            segment_size,
            requested: None,
            direct_io: opts.direct_io,
        };
        writer.create(number)?;
        Ok(writer)
    }

    /// What the append path may know of segment preparation (see [`Readiness`]).
    pub(crate) fn readiness(&self) -> Arc<Readiness> {
        self.preparer.readiness()
    }

    /// Creates a segment file: its header is written and fsynced under a temporary
    /// name, then the file is renamed into place and the directory fsynced, so a
    /// segment file never has a partial header. A prepared file is used when one
    /// is ready (renamed into place the same way).
    fn create(&mut self, number: u64) -> Result<()> {
        let final_path = self.dir.join(segment_file_name(number));
        let context = || format!("creating log segment {}", final_path.display());
        let prepared = self.preparer.take(number);
        let was_prepared = prepared.is_some();
        let (temp_path, file, allocated) = match prepared {
            Some(p) => (p.path, p.file, p.len),
            None => {
                let temp_path = self.dir.join(temp_file_name(number));
                let file = self
                    .probe
                    .before_write()
                    .and_then(|()| start_segment_file(&temp_path, number, self.run_first))
                    .and_then(|file| self.probe.sync_all(&file).map(|()| file))
                    .map_err(|e| Error::io(context(), e))?;
                (temp_path, file, SEGMENT_HEADER_LEN as u64)
            }
        };
        std::fs::rename(&temp_path, &final_path).map_err(|e| Error::io(context(), e))?;
        self.probe
            .sync_dir(&self.dir)
            .map_err(|e| Error::io(context(), e))?;
        fail::fail_point!("log-segment-created");
        if was_prepared {
            self.probe.prepared_used.fetch_add(1, Ordering::Relaxed);
        }
        self.preparer.readiness().opened(number, was_prepared);
        let direct = if self.direct_io {
            match DirectTail::open(&final_path, SEGMENT_HEADER_LEN as u64) {
                Ok(direct) => {
                    if direct.is_some() {
                        self.probe.direct_segments.fetch_add(1, Ordering::Relaxed);
                    }
                    direct
                }
                Err(e) => {
                    tracing::warn!(
                        "log segment {}: no direct I/O ({e}); writing through the page cache",
                        final_path.display()
                    );
                    None
                }
            }
        } else {
            None
        };
        self.open = Some(OpenSegment {
            number,
            file,
            direct,
            len: SEGMENT_HEADER_LEN as u64,
            allocated,
            prepared: was_prepared,
        });
        Ok(())
    }

    /// The open segment `number`, creating the segment if it is new. A different
    /// segment still open is sealed first.
    fn segment_for(&mut self, number: u64) -> Result<&mut OpenSegment> {
        let is_open = self.open.as_ref().map(|s| s.number);
        if is_open != Some(number) {
            if let Some(other) = is_open {
                self.seal(other)?;
            }
            self.create(number)?;
        }
        match self.open.as_mut() {
            Some(seg) => Ok(seg),
            None => Err(Error::io(
                format!("writing log segment {number}"),
                std::io::Error::other("segment file is not open"),
            )),
        }
    }

    /// Appends bytes to segment `number`.
    fn write(&mut self, number: u64, data: &[u8]) -> Result<()> {
        let probe = Arc::clone(&self.probe);
        let path = self.dir.join(segment_file_name(number));
        let seg = self.segment_for(number)?;
        if data.is_empty() {
            return Ok(());
        }
        let written = probe.before_write().and_then(|()| {
            if let Some(direct) = seg.direct.as_mut() {
                match direct.write(data) {
                    Ok(end) => {
                        seg.allocated = seg.allocated.max(end);
                        return Ok(());
                    }
                    // The device wants another alignment: this segment goes on
                    // through the page cache (the bytes are written again there).
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                        tracing::warn!(
                            "log segment {}: direct write refused ({e}); writing through the page cache",
                            path.display()
                        );
                        seg.direct = None;
                        // Blocks it wrote before refusing may have grown the file.
                        if let Ok(meta) = seg.file.metadata() {
                            seg.allocated = seg.allocated.max(meta.len());
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
            seg.file.write_all_at(data, seg.len)
        });
        written.map_err(|e| Error::io(format!("writing log segment {}", path.display()), e))?;
        self.wrote(data.len() as u64);
        Ok(())
    }

    /// Counts bytes written to the open segment, and asks for the next segment to
    /// be prepared once this one is half full, or, when this one was not prepared,
    /// after [`EARLY_REQUEST_AFTER`] bytes.
    fn wrote(&mut self, bytes: u64) {
        let Some(seg) = self.open.as_mut() else {
            return;
        };
        seg.len = seg.len.saturating_add(bytes);
        let next = seg.number.saturating_add(1);
        let due =
            seg.len >= self.segment_size / 2 || (!seg.prepared && seg.len >= EARLY_REQUEST_AFTER);
        if due && self.requested != Some(next) {
            self.requested = Some(next);
            self.preparer.request(next);
        }
    }

    /// Fsyncs segment `number` and closes it; it receives no more bytes.
    fn seal(&mut self, number: u64) -> Result<()> {
        if let Some(seg) = self.open.take() {
            if seg.number != number {
                self.open = Some(seg);
                return Ok(());
            }
            let path = self.dir.join(segment_file_name(number));
            self.trim(&seg)
                .and_then(|trimmed| {
                    if trimmed {
                        Ok(())
                    } else {
                        self.probe.sync_data(&seg.file)
                    }
                })
                .map_err(|e| Error::io(format!("sealing log segment {}", path.display()), e))?;
            fail::fail_point!("log-segment-sealed");
        }
        Ok(())
    }

    /// Cuts a prepared segment's unused zeros off (the file then ends at its last
    /// record, as every sealed segment does) and fsyncs it. False when there was
    /// nothing to cut.
    fn trim(&self, seg: &OpenSegment) -> std::io::Result<bool> {
        if seg.allocated <= seg.len {
            return Ok(false);
        }
        seg.file.set_len(seg.len)?;
        self.probe.sync_all(&seg.file)?;
        Ok(true)
    }

    /// At close: trims the open segment (see [`Self::trim`]) and stops preparing
    /// segments, removing a prepared one nobody took.
    fn finish(&mut self) -> Result<()> {
        self.preparer.stop();
        let Some(seg) = &self.open else {
            return Ok(());
        };
        let path = self.dir.join(segment_file_name(seg.number));
        let trimmed = self
            .trim(seg)
            .map_err(|e| Error::io(format!("trimming log segment {}", path.display()), e))?;
        if let Some(seg) = self.open.as_mut().filter(|_| trimmed) {
            seg.allocated = seg.len;
        }
        Ok(())
    }

    /// Fsyncs the open segment.
    fn sync(&mut self) -> Result<()> {
        if let Some(seg) = &self.open {
            let path = self.dir.join(segment_file_name(seg.number));
            self.probe
                .sync_data(&seg.file)
                .map_err(|e| Error::io(format!("syncing log segment {}", path.display()), e))?;
        }
        Ok(())
    }

    /// Closes and removes the open segment `number` (used for an empty segment at
    /// close, so restarts without writes leave no empty files behind).
    fn discard(&mut self, number: u64) -> Result<()> {
        if self.open.as_ref().map(|s| s.number) != Some(number) {
            return Ok(());
        }
        self.open = None;
        let path = self.dir.join(segment_file_name(number));
        std::fs::remove_file(&path)
            .and_then(|()| self.probe.sync_dir(&self.dir))
            .map_err(|e| Error::io(format!("removing empty log segment {}", path.display()), e))
    }
}

/// Bytes of one segment waiting to be written.
struct Chunk {
    segment: u64,
    data: Vec<u8>,
    /// The segment is complete after these bytes: fsync and close it.
    seal: bool,
}

/// What a flush must achieve before it returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FlushGoal {
    /// The bytes are handed to the OS.
    Written,
    /// The bytes are handed to the OS and fsynced.
    Synced,
}

/// Everything guarded by the log's state lock.
pub(crate) struct State {
    /// Why the log refuses writes, once a write or fsync failed.
    poison: Option<String>,
    /// Set by close: appends are refused.
    shutting_down: bool,
    /// Unwritten bytes of the current segment.
    buf: Vec<u8>,
    /// An empty buffer kept for reuse.
    spare: Vec<u8>,
    /// Complete, unwritten tails of segments closed by rotation, oldest first.
    rotated: Vec<Chunk>,
    /// Record bytes appended since open.
    appended: u64,
    /// Record bytes handed to the OS.
    written: u64,
    /// Record bytes fsynced.
    synced: u64,
    /// A thread is writing (the leader); others wait for it (see [`Finished`]).
    io_busy: bool,
    /// Number of the last batch a leader took (the one in flight while `io_busy`).
    batch: u64,
    /// End of the batch in flight, and whether it is fsynced: a waiter it covers
    /// waits for it, the others for the batch after it.
    in_flight_end: u64,
    in_flight_fsync: bool,
    /// When the last fsync finished (or the log opened).
    last_sync: Instant,
    /// The segments and their per-tablet bookkeeping.
    pub(crate) segments: SegmentSet,
}

impl State {
    /// Errors when the log no longer accepts appends.
    fn check_accepting(&self) -> Result<()> {
        if let Some(reason) = &self.poison {
            return Err(Error::Poisoned(reason.clone()));
        }
        if self.shutting_down {
            return Err(Error::ShuttingDown);
        }
        Ok(())
    }

    /// Errors when the log is poisoned.
    pub(crate) fn check_poison(&self) -> Result<()> {
        match &self.poison {
            Some(reason) => Err(Error::Poisoned(reason.clone())),
            None => Ok(()),
        }
    }

    /// Closes the current segment: its unwritten bytes become a sealing chunk.
    fn rotate(&mut self) -> Result<()> {
        let number = self.segments.current_number();
        self.segments.rotate()?;
        let next = self.take_spare();
        let data = std::mem::replace(&mut self.buf, next);
        self.rotated.push(Chunk {
            segment: number,
            data,
            seal: true,
        });
        Ok(())
    }

    /// Takes every unwritten byte, in log order.
    fn take_batch(&mut self) -> Vec<Chunk> {
        let mut chunks = std::mem::take(&mut self.rotated);
        let next = self.take_spare();
        let data = std::mem::replace(&mut self.buf, next);
        chunks.push(Chunk {
            segment: self.segments.current_number(),
            data,
            seal: false,
        });
        chunks
    }

    /// The buffer that replaces one taken for writing: the spare, or a new one
    /// with room for a background write's worth of records.
    fn take_spare(&mut self) -> Vec<u8> {
        let mut next = std::mem::take(&mut self.spare);
        if next.capacity() < FRESH_BUFFER_CAPACITY {
            next.reserve(FRESH_BUFFER_CAPACITY);
        }
        next
    }

    /// Keeps one written buffer for reuse.
    fn recycle(&mut self, chunks: Vec<Chunk>) {
        for chunk in chunks {
            let mut data = chunk.data;
            if data.capacity() <= SPARE_BUFFER_MAX && data.capacity() > self.spare.capacity() {
                data.clear();
                self.spare = data;
            }
        }
    }
}

/// Counters describing the write path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progress {
    pub(crate) appended: u64,
    pub(crate) written: u64,
    pub(crate) synced: u64,
}

/// What the last finished batch tells the callers it wakes, who read it without
/// taking the state lock (a finished batch's callers would otherwise take that
/// lock one after another, each woken by the one before).
#[derive(Default)]
struct Finished {
    /// Number of the last batch finished (or failed).
    batch: AtomicU64,
    /// The state's `written` and `synced` once that batch finished; stored before
    /// `batch`.
    written: AtomicU64,
    synced: AtomicU64,
    /// A write or fsync failed; the state holds the reason.
    poisoned: AtomicBool,
    /// Callers waiting for the end of batch `n` sleep on `epoch[n % 2]`, which
    /// every batch end bumps.
    epoch: [AtomicU32; 2],
}

/// How a leader's batch ended.
struct BatchEnd {
    batch: u64,
    /// Rotated segments were sealed: obsolete ones may be deletable.
    sealed_any: bool,
}

/// The state shared by the log's handle, its callers and the background thread.
pub(crate) struct Shared {
    dir: PathBuf,
    segment_size: u64,
    async_flush_interval: Duration,
    pub(crate) state: Mutex<State>,
    io: Mutex<SegmentWriter>,
    /// Where waiting callers look when woken. A finished batch wakes only the
    /// callers it covers, and one caller of the next batch to lead it, instead of
    /// every waiter (most of whom would find their records not yet written and
    /// sleep again).
    finished: Finished,
    /// Callers waiting for an fsync, so a leader that only meant to write fsyncs
    /// too (counted under the state lock; a woken caller uncounts itself).
    sync_waiters: AtomicUsize,
    bg_wake: Condvar,
    pub(crate) probe: Arc<IoProbe>,
    /// Whether the open segment should give way to a prepared one early.
    readiness: Arc<Readiness>,
}

impl Shared {
    /// Shared state for a log whose first segment `writer` has just created.
    pub(crate) fn new(
        dir: &Path,
        segment_size: u64,
        async_flush_interval: Duration,
        writer: SegmentWriter,
        first_segment: u64,
        probe: Arc<IoProbe>,
    ) -> Self {
        let readiness = writer.readiness();
        Shared {
            dir: dir.to_path_buf(),
            segment_size,
            async_flush_interval,
            state: Mutex::new(State {
                poison: None,
                shutting_down: false,
                buf: Vec::new(),
                spare: Vec::new(),
                rotated: Vec::new(),
                appended: 0,
                written: 0,
                synced: 0,
                io_busy: false,
                batch: 0,
                in_flight_end: 0,
                in_flight_fsync: false,
                last_sync: Instant::now(),
                segments: SegmentSet::new(first_segment),
            }),
            io: Mutex::new(writer),
            finished: Finished::default(),
            sync_waiters: AtomicUsize::new(0),
            bg_wake: Condvar::new(),
            probe,
            readiness,
        }
    }

    /// The log directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Copies a record into the buffer, rotating first if the current segment is
    /// full, or if it holds [`EARLY_REQUEST_AFTER`] bytes or more in a file that
    /// was not prepared and the next segment's prepared file is ready.
    pub(crate) fn append(&self, record: &PreparedRecord<'_>) -> Result<LogPosition> {
        let len = record.encoded_len() as u64;
        let mut st = self.state.lock();
        st.check_accepting()?;
        // Only past the early request's threshold: a small segment fills the way
        // it always did, at the same record whatever the preparer's timing.
        let early = || {
            st.segments.current_records() > 0
                && st.segments.current_size() >= EARLY_REQUEST_AFTER
                && self
                    .readiness
                    .early_rotation_due(st.segments.current_number())
        };
        if st.segments.should_rotate(len, self.segment_size) || early() {
            st.rotate()?;
        }
        let segment = st.segments.current_number();
        let offset = st.segments.current_size();
        record.write_to(&mut st.buf);
        st.segments
            .record_appended(record.tablet_id(), record.seq(), len);
        let unwritten_before = st.appended.saturating_sub(st.written);
        st.appended = st.appended.saturating_add(len);
        let end = st.appended;
        drop(st);
        let unwritten = unwritten_before.saturating_add(len);
        if unwritten_before < WRITE_THRESHOLD && unwritten >= WRITE_THRESHOLD {
            self.bg_wake.notify_one();
        }
        if unwritten >= MAX_UNWRITTEN {
            self.flush(end, FlushGoal::Written)?;
        }
        Ok(LogPosition {
            end,
            segment,
            offset,
        })
    }

    /// Returns once every record byte up to `target` has reached `goal`.
    ///
    /// Group commit: the first caller that finds no write in progress becomes the
    /// leader. It takes the whole buffer, writes it (and fsyncs when asked to, or
    /// when any waiter wants an fsync) without holding the state lock, publishes
    /// the new positions and wakes the waiters its batch covers, and one waiter of
    /// the next batch, who leads that one (unless a newcomer already does).
    pub(crate) fn flush(&self, target: u64, goal: FlushGoal) -> Result<()> {
        let wants_sync = goal == FlushGoal::Synced;
        let mut st = self.state.lock();
        if target > st.appended {
            return Err(Error::InvalidArgument(format!(
                "log position {target} is beyond the end of this log ({})",
                st.appended
            )));
        }
        loop {
            st.check_poison()?;
            let reached = match goal {
                FlushGoal::Written => st.written >= target,
                FlushGoal::Synced => st.synced >= target,
            };
            if reached {
                return Ok(());
            }
            if st.io_busy {
                let covered = target <= st.in_flight_end && (!wants_sync || st.in_flight_fsync);
                let in_flight = st.batch;
                let sleep_on = self.epoch_of(if covered {
                    in_flight
                } else {
                    in_flight.wrapping_add(1)
                });
                let seen = sleep_on.load(Ordering::Acquire);
                if wants_sync {
                    self.sync_waiters.fetch_add(1, Ordering::SeqCst);
                }
                drop(st);
                self.wait_for_end_of(in_flight, sleep_on, seen);
                if wants_sync {
                    self.sync_waiters.fetch_sub(1, Ordering::SeqCst);
                }
                if self.finished_reached(target, goal) {
                    return Ok(());
                }
                // Not covered (woken to lead the next batch), or the log failed.
                st = self.state.lock();
                continue;
            }
            let fsync = wants_sync || self.sync_waiters.load(Ordering::SeqCst) > 0;
            let ended = self.lead(&mut st, fsync);
            let failed = st.check_poison();
            // The callers are woken once the state lock is free: the next leader
            // needs it at once.
            drop(st);
            self.wake_after(&ended, failed.is_err());
            if ended.sealed_any {
                if let Err(e) = self.delete_obsolete() {
                    tracing::warn!(error = %e, "could not delete an obsolete log segment");
                }
            }
            failed?;
            // The batch took every record appended, this caller's included.
            if self.finished_reached(target, goal) {
                return Ok(());
            }
            st = self.state.lock();
        }
    }

    /// Wakes the callers a finished batch covers, and one caller of the batch
    /// after it to lead that one (all of them when the log `failed`).
    fn wake_after(&self, ended: &BatchEnd, failed: bool) {
        let done = self.epoch_of(ended.batch);
        let next = self.epoch_of(ended.batch.wrapping_add(1));
        atomic_wait::wake_all(done);
        if failed {
            atomic_wait::wake_all(next);
        } else {
            atomic_wait::wake_one(next);
        }
    }

    /// The word callers waiting for the end of batch `batch` sleep on.
    fn epoch_of(&self, batch: u64) -> &AtomicU32 {
        let [even, odd] = &self.finished.epoch;
        if batch.is_multiple_of(2) {
            even
        } else {
            odd
        }
    }

    /// Sleeps on `word` (last seen holding `seen`) until batch `in_flight` has
    /// ended or the log has failed. Every batch end bumps both words before waking
    /// anyone, so a caller that had not yet fallen asleep does not miss its wake-up.
    fn wait_for_end_of(&self, in_flight: u64, word: &AtomicU32, mut seen: u32) {
        while self.finished.batch.load(Ordering::Acquire) < in_flight
            && !self.finished.poisoned.load(Ordering::Acquire)
        {
            self.probe.before_sleep();
            atomic_wait::wait(word, seen);
            seen = word.load(Ordering::Acquire);
        }
    }

    /// Whether the last finished batch took the log to `target` for `goal`.
    fn finished_reached(&self, target: u64, goal: FlushGoal) -> bool {
        let position = match goal {
            FlushGoal::Written => &self.finished.written,
            FlushGoal::Synced => &self.finished.synced,
        };
        position.load(Ordering::Acquire) >= target
    }

    /// One round as leader: write out everything buffered, fsync if asked, publish.
    /// The waiters are not woken here (see [`Self::wake_after`]).
    fn lead(&self, st: &mut MutexGuard<'_, State>, fsync: bool) -> BatchEnd {
        let chunks = st.take_batch();
        let end = st.appended;
        st.batch = st.batch.wrapping_add(1);
        st.in_flight_end = end;
        st.in_flight_fsync = fsync;
        st.io_busy = true;
        let outcome = MutexGuard::unlocked(st, || self.write_batch(&chunks, fsync));
        st.io_busy = false;
        let mut sealed_any = false;
        match outcome {
            Ok(sealed) => {
                for number in &sealed {
                    st.segments.mark_sealed(*number);
                }
                sealed_any = !sealed.is_empty();
                st.written = end;
                if fsync {
                    st.synced = end;
                    st.last_sync = Instant::now();
                }
                st.recycle(chunks);
            }
            Err(e) => {
                let reason = e.to_string();
                tracing::error!(error = %reason, "commit log write failed; the log is poisoned");
                st.poison = Some(reason);
                self.finished.poisoned.store(true, Ordering::Release);
            }
        }
        self.finished.written.store(st.written, Ordering::Release);
        self.finished.synced.store(st.synced, Ordering::Release);
        self.finished.batch.store(st.batch, Ordering::Release);
        // Both words change before anyone is woken, so a caller between reading
        // its word and falling asleep does not sleep through its wake-up.
        self.epoch_of(st.batch).fetch_add(1, Ordering::AcqRel);
        self.epoch_of(st.batch.wrapping_add(1))
            .fetch_add(1, Ordering::AcqRel);
        BatchEnd {
            batch: st.batch,
            sealed_any,
        }
    }

    /// Writes the chunks in order, sealing rotated segments, then fsyncs the open
    /// segment if asked. Returns the numbers of the segments sealed.
    fn write_batch(&self, chunks: &[Chunk], fsync: bool) -> Result<Vec<u64>> {
        let mut io = self.io.lock();
        let mut sealed = Vec::new();
        for chunk in chunks {
            io.write(chunk.segment, &chunk.data)?;
            if chunk.seal {
                io.seal(chunk.segment)?;
                sealed.push(chunk.segment);
            }
        }
        if fsync {
            io.sync()?;
        }
        Ok(sealed)
    }

    /// Deletes the closed segments that no tablet needs any more. Segments whose
    /// file could not be removed stay tracked so a later call retries them.
    pub(crate) fn delete_obsolete(&self) -> Result<()> {
        let obsolete = self.state.lock().segments.take_obsolete();
        if obsolete.is_empty() {
            return Ok(());
        }
        let mut first_error = None;
        let mut failed = Vec::new();
        let mut removed_any = false;
        for seg in obsolete {
            let path = self.dir.join(segment_file_name(seg.number));
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    removed_any = true;
                    tracing::debug!(path = %path.display(), "deleted obsolete log segment");
                    fail::fail_point!("log-segment-deleted");
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    first_error.get_or_insert(Error::io(
                        format!("deleting obsolete log segment {}", path.display()),
                        e,
                    ));
                    failed.push(seg);
                }
            }
        }
        if removed_any {
            if let Err(e) = self.probe.sync_dir(&self.dir) {
                first_error.get_or_insert(Error::io(
                    format!("syncing log directory {}", self.dir.display()),
                    e,
                ));
            }
        }
        if !failed.is_empty() {
            let mut st = self.state.lock();
            for seg in failed {
                st.segments.restore(seg);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Stops appends, writes and fsyncs everything, and removes the current
    /// segment if it never received a record.
    pub(crate) fn shut_down(&self) -> Result<()> {
        let target = {
            let mut st = self.state.lock();
            st.shutting_down = true;
            st.appended
        };
        self.bg_wake.notify_all();
        self.flush(target, FlushGoal::Synced)?;
        let empty_current = {
            let st = self.state.lock();
            (st.segments.current_records() == 0).then(|| st.segments.current_number())
        };
        let mut io = self.io.lock();
        if let Some(number) = empty_current {
            io.discard(number)?;
        }
        io.finish()
    }

    /// Whether segment `number` is prepared and waiting to be used.
    #[cfg(test)]
    pub(crate) fn prepared_ready(&self, number: u64) -> bool {
        self.io.lock().preparer.is_ready(number)
    }

    /// Where the write path stands.
    pub(crate) fn progress(&self) -> Progress {
        let st = self.state.lock();
        Progress {
            appended: st.appended,
            written: st.written,
            synced: st.synced,
        }
    }

    /// The background thread: writes big buffers out, and writes and fsyncs
    /// whatever is unsynced once `async_flush_interval` has passed since the last
    /// fsync. Returns when the log shuts down.
    pub(crate) fn run_background(&self) {
        let interval = self.async_flush_interval;
        let mut st = self.state.lock();
        loop {
            if st.shutting_down {
                return;
            }
            if st.poison.is_some() {
                self.bg_wake.wait(&mut st);
                continue;
            }
            let now = Instant::now();
            let unsynced = st.synced < st.appended;
            let due = unsynced && now.saturating_duration_since(st.last_sync) >= interval;
            let big = st.appended.saturating_sub(st.written) >= WRITE_THRESHOLD;
            if due || big {
                let target = st.appended;
                let goal = if due {
                    FlushGoal::Synced
                } else {
                    FlushGoal::Written
                };
                let result = MutexGuard::unlocked(&mut st, || self.flush(target, goal));
                if let Err(e) = result {
                    tracing::error!(error = %e, "background commit log flush failed");
                }
                continue;
            }
            let base = if unsynced { st.last_sync } else { now };
            match base.checked_add(interval) {
                Some(deadline) => {
                    self.bg_wake.wait_until(&mut st, deadline);
                }
                None => self.bg_wake.wait(&mut st),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{list_segment_paths, replay_segments, CommitLog, LogOptions};
    use crate::types::Durability;
    use std::collections::HashMap;

    #[test]
    fn rotation_under_concurrent_syncs_keeps_every_record_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let opts = LogOptions {
            segment_size: 2048,
            async_flush_interval: Duration::from_millis(20),
            ..LogOptions::default()
        };
        let (log, _) = CommitLog::open(dir.path(), opts).unwrap();
        let log = Arc::new(log);
        let handles: Vec<_> = (0..8u64)
            .map(|tablet| {
                let log = Arc::clone(&log);
                std::thread::spawn(move || {
                    for seq in 1..=150u64 {
                        let body = vec![tablet as u8; (seq % 200) as usize];
                        let pos = log.append(tablet, seq, &body).unwrap();
                        let durability = if seq % 3 == 0 {
                            Durability::Sync
                        } else {
                            Durability::Async
                        };
                        log.sync(pos, durability).unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert!(log.segment_count() > 20);
        log.close().unwrap();
        let paths = list_segment_paths(dir.path()).unwrap();
        let mut next: HashMap<u64, u64> = HashMap::new();
        let mut total = 0;
        for rec in replay_segments(&paths, None).unwrap() {
            let rec = rec.unwrap();
            let want = next.entry(rec.tablet_id).or_insert(1);
            assert_eq!(rec.seq, *want);
            assert_eq!(
                rec.payload,
                vec![rec.tablet_id as u8; (rec.seq % 200) as usize]
            );
            *want += 1;
            total += 1;
        }
        assert_eq!(total, 8 * 150);
    }

    #[test]
    fn write_only_flush_does_not_count_as_synced() {
        let dir = tempfile::tempdir().unwrap();
        let opts = LogOptions {
            segment_size: 1 << 20,
            async_flush_interval: Duration::from_secs(3600),
            ..LogOptions::default()
        };
        let (log, _) = CommitLog::open(dir.path(), opts).unwrap();
        let pos = log.append(1, 1, b"abc").unwrap();
        log.shared.flush(pos.end(), FlushGoal::Written).unwrap();
        let progress = log.shared.progress();
        assert_eq!(progress.written, pos.end());
        assert_eq!(progress.synced, 0);
        let before = log.fsync_count();
        log.sync(pos, Durability::Sync).unwrap();
        assert_eq!(log.fsync_count(), before + 1);
        assert_eq!(log.shared.progress().synced, pos.end());
        log.sync(pos, Durability::Sync).unwrap();
        assert_eq!(
            log.fsync_count(),
            before + 1,
            "already synced: no new fsync"
        );
    }
}
