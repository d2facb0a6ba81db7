//! Preparing the next commit log segment ahead of time, on a thread of its own.
//!
//! Owns: writing a future segment's file before the log needs it: its header, then
//! zeros up to the segment size, fsynced, under a temporary name. Records later
//! written into that file overwrite bytes that already exist, so each group
//! commit's fdatasync flushes only data: the file's size and block map do not
//! change, and the filesystem has no journal commit to wait for (a third faster or
//! more per fsync on ext4). The writer asks for segment `n + 1` once segment `n`
//! is half full and takes the file at rotation, if it is ready by then. A segment
//! that was not prepared (the first of each run, or one whose preparation was not
//! ready in time) asks for its successor after [`EARLY_REQUEST_AFTER`] bytes
//! already, and the log rotates to the successor as soon as [`Readiness`] says it
//! is ready, so a run's synced writes do not pay for an unprepared file longer
//! than it takes to prepare one.
//! Must not: touch a segment that is in use (it only writes its own temporary
//! file, which the writer renames into place) or decide when segments rotate.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::log::record::SEGMENT_HEADER_LEN;
use crate::log::segments::prepared_file_name;
use crate::log::writer::{start_segment_file, IoProbe};

/// Zeros written per call while preparing a segment.
const ZERO_CHUNK: usize = 1 << 20;

/// Bytes into a segment that was not prepared after which its successor is asked
/// for (a segment that was prepared asks at half its size). Logs that write
/// less, as most tests' do, never start the preparer.
pub(crate) const EARLY_REQUEST_AFTER: u64 = 1 << 20;

/// No segment (the value of [`Readiness`]' fields when there is none to name).
const NO_SEGMENT: u64 = u64::MAX;

/// What the log's append path may learn of the preparer and of the open segment
/// without the I/O lock (which a group commit holds through its fsync).
pub(crate) struct Readiness {
    /// The prepared segment waiting to be taken.
    ready: AtomicU64,
    /// The open segment, when its file was created without preparation.
    unprepared_open: AtomicU64,
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness {
            ready: AtomicU64::new(NO_SEGMENT),
            unprepared_open: AtomicU64::new(NO_SEGMENT),
        }
    }
}

impl Readiness {
    /// True when segment `current` is open in a file that was not prepared and
    /// its successor is prepared: rotating now moves the rest of the writes onto
    /// the prepared file.
    pub(crate) fn early_rotation_due(&self, current: u64) -> bool {
        self.unprepared_open.load(Ordering::Acquire) == current
            && self.ready.load(Ordering::Acquire) == current.saturating_add(1)
    }

    /// Notes that segment `number` is open, in a prepared file or not.
    pub(crate) fn opened(&self, number: u64, prepared: bool) {
        let value = if prepared { NO_SEGMENT } else { number };
        self.unprepared_open.store(value, Ordering::Release);
    }
}

/// A prepared segment file, positioned after its header.
pub(crate) struct PreparedSegment {
    pub(crate) number: u64,
    pub(crate) file: File,
    /// Its temporary path, to be renamed to the segment's name.
    pub(crate) path: PathBuf,
    /// Bytes the file holds (header and zeros).
    pub(crate) len: u64,
}

/// What the preparing thread is asked to do, and what it has done.
#[derive(Default)]
struct Slot {
    /// The segment the writer wants next.
    wanted: Option<u64>,
    /// A segment ready to be taken.
    ready: Option<PreparedSegment>,
    stopping: bool,
}

/// State shared with the preparing thread.
struct Inner {
    dir: PathBuf,
    run_first: u64,
    segment_size: u64,
    probe: Arc<IoProbe>,
    readiness: Arc<Readiness>,
    slot: Mutex<Slot>,
    changed: Condvar,
}

/// Prepares segment files ahead of the writer. The thread starts at the first
/// request, so a log that never fills half a segment never starts it.
pub(crate) struct SegmentPreparer {
    inner: Arc<Inner>,
    thread: Option<JoinHandle<()>>,
}

impl SegmentPreparer {
    /// A preparer for the segments of the run that began at `run_first`.
    pub(crate) fn new(dir: &Path, run_first: u64, segment_size: u64, probe: Arc<IoProbe>) -> Self {
        SegmentPreparer {
            inner: Arc::new(Inner {
                dir: dir.to_path_buf(),
                run_first,
                segment_size,
                probe,
                readiness: Arc::new(Readiness::default()),
                slot: Mutex::new(Slot::default()),
                changed: Condvar::new(),
            }),
            thread: None,
        }
    }

    /// The readiness signal this preparer keeps up to date.
    pub(crate) fn readiness(&self) -> Arc<Readiness> {
        Arc::clone(&self.inner.readiness)
    }

    /// Asks for segment `number` to be prepared (a no-op if it already is, or is
    /// being prepared). A failure to start the thread is logged: the writer then
    /// creates its segments as it would without a preparer.
    pub(crate) fn request(&mut self, number: u64) {
        {
            let mut slot = self.inner.slot.lock();
            if slot.stopping || slot.wanted == Some(number) {
                return;
            }
            slot.wanted = Some(number);
        }
        self.inner.changed.notify_all();
        if self.thread.is_none() {
            let inner = Arc::clone(&self.inner);
            match std::thread::Builder::new()
                .name("tabula-log-prep".into())
                .spawn(move || inner.run())
            {
                Ok(handle) => self.thread = Some(handle),
                Err(e) => tracing::warn!(error = %e, "cannot start the log segment preparer"),
            }
        }
    }

    /// The prepared file of segment `number`, if it is ready. Segment `number`
    /// (and any before it) is no longer wanted either way: a preparation of it
    /// still under way is abandoned, and a ready file for another number is stale
    /// and removed.
    pub(crate) fn take(&mut self, number: u64) -> Option<PreparedSegment> {
        let ready = {
            let mut slot = self.inner.slot.lock();
            if slot.wanted.is_some_and(|wanted| wanted <= number) {
                slot.wanted = None;
            }
            let ready = slot.ready.take()?;
            self.inner
                .readiness
                .ready
                .store(NO_SEGMENT, Ordering::Release);
            ready
        };
        if ready.number == number {
            return Some(ready);
        }
        remove_quietly(&ready.path);
        None
    }

    /// Whether segment `number` is ready to be taken.
    #[cfg(test)]
    pub(crate) fn is_ready(&self, number: u64) -> bool {
        self.inner.slot.lock().ready.as_ref().map(|r| r.number) == Some(number)
    }

    /// Stops the thread (waiting for a preparation under way) and removes a
    /// prepared file nobody took.
    pub(crate) fn stop(&mut self) {
        self.inner.slot.lock().stopping = true;
        self.inner.changed.notify_all();
        if let Some(handle) = self.thread.take() {
            if handle.join().is_err() {
                tracing::error!("the log segment preparer panicked");
            }
        }
        if let Some(ready) = self.inner.slot.lock().ready.take() {
            self.inner
                .readiness
                .ready
                .store(NO_SEGMENT, Ordering::Release);
            remove_quietly(&ready.path);
        }
    }
}

impl Drop for SegmentPreparer {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Inner {
    /// The thread: prepares each segment asked for, one at a time.
    fn run(&self) {
        let mut slot = self.slot.lock();
        loop {
            if slot.stopping {
                return;
            }
            let ready_number = slot.ready.as_ref().map(|r| r.number);
            let todo = slot.wanted.filter(|n| Some(*n) != ready_number);
            let Some(number) = todo else {
                self.changed.wait(&mut slot);
                continue;
            };
            drop(slot);
            let outcome = self.prepare(number);
            slot = self.slot.lock();
            match outcome {
                Ok(prepared) if !slot.stopping && slot.wanted == Some(number) => {
                    self.readiness.ready.store(number, Ordering::Release);
                    if let Some(old) = slot.ready.replace(prepared) {
                        remove_quietly(&old.path);
                    }
                }
                Ok(prepared) => remove_quietly(&prepared.path),
                Err(e) => {
                    if !slot.stopping && slot.wanted == Some(number) {
                        tracing::warn!(error = %e, segment = number, "could not prepare a log segment");
                    }
                    // Not retried: the writer creates the segment itself.
                    if slot.wanted == Some(number) {
                        slot.wanted = None;
                    }
                }
            }
        }
    }

    /// Writes segment `number`'s header and zeros up to the segment size under its
    /// temporary name, and fsyncs it.
    fn prepare(&self, number: u64) -> Result<PreparedSegment> {
        let path = self.dir.join(prepared_file_name(number));
        let header_len = SEGMENT_HEADER_LEN as u64;
        let written = (|| -> std::io::Result<(File, u64)> {
            let mut file = start_segment_file(&path, number, self.run_first)?;
            let mut len = header_len;
            let zeros = vec![0u8; ZERO_CHUNK];
            while len < self.segment_size {
                let slot = self.slot.lock();
                if slot.stopping || slot.wanted != Some(number) {
                    return Err(std::io::Error::other("no longer wanted"));
                }
                drop(slot);
                let step = usize::try_from(self.segment_size - len)
                    .map_or(ZERO_CHUNK, |rest| rest.min(ZERO_CHUNK));
                file.write_all(zeros.get(..step).unwrap_or(&zeros))?;
                len += step as u64;
            }
            self.probe.sync_all(&file)?;
            fail::fail_point!("log-segment-prepared");
            file.seek(SeekFrom::Start(header_len))?;
            Ok((file, len))
        })();
        match written {
            Ok((file, len)) => Ok(PreparedSegment {
                number,
                file,
                path,
                len,
            }),
            Err(e) => {
                remove_quietly(&path);
                Err(Error::io(
                    format!("preparing log segment file {}", path.display()),
                    e,
                ))
            }
        }
    }
}

/// Removes a prepared file that will not be used (a leftover is removed when the
/// log next opens anyway).
fn remove_quietly(path: &Path) {
    if let Err(e) = std::fs::remove_file(path) {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!(path = %path.display(), error = %e, "could not remove a prepared log segment");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::reader::LogReader;
    use crate::log::segments::segment_file_name;
    use std::time::{Duration, Instant};

    const SIZE: u64 = 256 * 1024;

    fn preparer(dir: &Path) -> SegmentPreparer {
        SegmentPreparer::new(dir, 3, SIZE, Arc::new(IoProbe::default()))
    }

    fn wait_ready(p: &SegmentPreparer, number: u64) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !p.is_ready(number) {
            assert!(
                Instant::now() < deadline,
                "segment {number} was never prepared"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    #[test]
    fn a_prepared_segment_is_a_valid_empty_segment_of_full_size() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = preparer(dir.path());
        p.request(5);
        wait_ready(&p, 5);
        let prepared = p.take(5).expect("segment 5 is ready");
        assert_eq!(prepared.len, SIZE);
        assert_eq!(std::fs::metadata(&prepared.path).unwrap().len(), SIZE);
        // Renamed into place, it reads as a segment of the run with no records
        // and nothing dropped.
        let path = dir.path().join(segment_file_name(5));
        std::fs::rename(&prepared.path, &path).unwrap();
        let mut reader = LogReader::open(&path).unwrap();
        assert_eq!(reader.header().number, 5);
        assert_eq!(reader.header().run_first, 3);
        assert_eq!(reader.by_ref().count(), 0);
        assert_eq!(reader.dropped_bytes(), 0);
    }

    #[test]
    fn a_prepared_file_for_another_segment_is_removed_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = preparer(dir.path());
        p.request(5);
        wait_ready(&p, 5);
        let path = dir.path().join(prepared_file_name(5));
        assert!(path.exists());
        // The writer moved on to segment 6 without it.
        assert!(p.take(6).is_none());
        assert!(!path.exists());
        assert!(p.take(5).is_none(), "removed, not kept for later");
    }

    #[test]
    fn a_segment_created_before_its_preparation_ends_is_not_left_prepared() {
        let dir = tempfile::tempdir().unwrap();
        let probe = Arc::new(IoProbe::default());
        probe
            .faults
            .fsync_delay_micros
            .store(200_000, std::sync::atomic::Ordering::SeqCst);
        let mut p = SegmentPreparer::new(dir.path(), 3, SIZE, probe);
        p.request(5);
        // The writer reaches segment 5 while its fsync is still under way.
        assert!(p.take(5).is_none());
        std::thread::sleep(Duration::from_millis(500));
        assert!(!p.is_ready(5), "a file nobody will take was kept");
        assert!(!dir.path().join(prepared_file_name(5)).exists());
    }

    #[test]
    fn stopping_removes_a_prepared_file_nobody_took() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = preparer(dir.path());
        p.request(9);
        wait_ready(&p, 9);
        p.stop();
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "{left:?}");
        // A stopped preparer takes no more requests.
        p.request(10);
        assert!(!p.is_ready(10));
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }
}
