//! Counts of the engine's background work since it opened: flushes and
//! compactions, with the bytes they wrote and read, and the work queued, for
//! metrics. Updated once per flush or compaction (never on the read or write path).
//!
//! Must not: decide or schedule work (the engine's workers do).

use std::sync::atomic::{AtomicU64, Ordering};

/// Live counters, in the engine's shared state.
#[derive(Debug, Default)]
pub struct Activity {
    flushes: AtomicU64,
    flushed_bytes: AtomicU64,
    compactions: AtomicU64,
    major_compactions: AtomicU64,
    compaction_read_bytes: AtomicU64,
    compaction_written_bytes: AtomicU64,
}

/// A copy of the counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ActivitySnapshot {
    /// Memtables written out as SSTables.
    pub flushes: u64,
    /// Bytes of the SSTables flushes wrote.
    pub flushed_bytes: u64,
    /// Merging compactions (one per family rewritten).
    pub compactions: u64,
    /// Major compactions (one per family rewritten).
    pub major_compactions: u64,
    /// Bytes of the SSTables compactions read.
    pub compaction_read_bytes: u64,
    /// Bytes of the SSTables compactions wrote.
    pub compaction_written_bytes: u64,
    /// Tablets waiting for a flush.
    pub queued_flushes: u64,
    /// Tablets waiting for a compaction check.
    pub queued_compactions: u64,
}

impl Activity {
    pub(crate) fn flushed(&self, bytes: u64) {
        self.flushes.fetch_add(1, Ordering::Relaxed);
        self.flushed_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn compacted(&self, major: bool, read: u64, written: u64) {
        let count = if major {
            &self.major_compactions
        } else {
            &self.compactions
        };
        count.fetch_add(1, Ordering::Relaxed);
        self.compaction_read_bytes
            .fetch_add(read, Ordering::Relaxed);
        self.compaction_written_bytes
            .fetch_add(written, Ordering::Relaxed);
    }

    /// The counters now, with the queue lengths given.
    pub(crate) fn snapshot(
        &self,
        queued_flushes: u64,
        queued_compactions: u64,
    ) -> ActivitySnapshot {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ActivitySnapshot {
            flushes: load(&self.flushes),
            flushed_bytes: load(&self.flushed_bytes),
            compactions: load(&self.compactions),
            major_compactions: load(&self.major_compactions),
            compaction_read_bytes: load(&self.compaction_read_bytes),
            compaction_written_bytes: load(&self.compaction_written_bytes),
            queued_flushes,
            queued_compactions,
        }
    }
}
