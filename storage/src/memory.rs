//! The engine-wide memtable memory gauge and write stall.
//!
//! Owns: the count of bytes held by every memtable of the engine (active, frozen and
//! flushed-but-still-read), charged by [`crate::memtable::Memtable`] on insert and
//! released when a memtable is dropped, and the stall that holds writers while the
//! count is over the engine's memtable budget.
//! Must not: decide which memtable to freeze or flush (the engine's flush worker
//! does) or know about tablets.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use parking_lot::{Condvar, Mutex};

/// Bytes held by the memtables of one engine, with a limit writers wait under.
#[derive(Debug)]
pub struct MemtableMemory {
    bytes: AtomicUsize,
    limit: usize,
    released_mutex: Mutex<()>,
    released: Condvar,
}

impl MemtableMemory {
    /// A gauge whose writers stall above `limit` bytes.
    pub fn new(limit: usize) -> Self {
        MemtableMemory {
            bytes: AtomicUsize::new(0),
            limit: limit.max(1),
            released_mutex: Mutex::new(()),
            released: Condvar::new(),
        }
    }

    /// Bytes currently held.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The stall limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// True while writers must wait.
    pub fn over_limit(&self) -> bool {
        self.bytes() > self.limit
    }

    pub(crate) fn charge(&self, bytes: usize) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn release(&self, bytes: usize) {
        // Saturating: a release never exceeds what its memtable charged, but keep the
        // gauge sane even if accounting ever drifts.
        let _ = self
            .bytes
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| {
                Some(b.saturating_sub(bytes))
            });
        if bytes > 0 {
            let _g = self.released_mutex.lock();
            self.released.notify_all();
        }
    }

    /// Blocks while the gauge is over its limit, until `deadline`. Returns false if
    /// the deadline passed with the gauge still over.
    pub fn wait_for_room(&self, deadline: Instant) -> bool {
        if !self.over_limit() {
            return true;
        }
        let mut g = self.released_mutex.lock();
        while self.over_limit() {
            if self.released.wait_until(&mut g, deadline).timed_out() {
                return !self.over_limit();
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[test]
    fn writers_wait_until_memory_is_released() {
        let gauge = Arc::new(MemtableMemory::new(100));
        gauge.charge(150);
        assert!(gauge.over_limit());
        assert!(!gauge.wait_for_room(Instant::now() + Duration::from_millis(20)));
        let g = Arc::clone(&gauge);
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            g.release(100);
        });
        assert!(gauge.wait_for_room(Instant::now() + Duration::from_secs(10)));
        assert_eq!(gauge.bytes(), 50);
        releaser.join().unwrap();
    }

    #[test]
    fn release_never_underflows() {
        let gauge = MemtableMemory::new(10);
        gauge.charge(5);
        gauge.release(8);
        assert_eq!(gauge.bytes(), 0);
    }
}
