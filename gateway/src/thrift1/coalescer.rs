//! Coalesced increments (HBase's `hbase.regionserver.thrift.coalesceIncrement`,
//! setting `coalesce_increments`): Thrift1's `increment` and `incrementRows`, which
//! return nothing, answer once the increment is queued; a worker thread sums the
//! queued amounts of each cell and applies them, one read-modify-write per row.
//!
//! Owns: [`IncrementCoalescer`]: the queue of pending amounts, its worker, and the
//! drain at shutdown (every queued amount is applied before the process stops).
//! Must not: validate increments (the handler does, before queueing) or answer a
//! client about an increment applied later (a failure then is logged, as HBase
//! logs it: the client was answered already).
//!
//! As in HBase, a queued increment is acknowledged before it is in the commit log:
//! a crash of the process loses what the worker had not applied yet. Unlike HBase,
//! a full queue makes the caller apply its increment itself instead of dropping it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use bytes::Bytes;
use parking_lot::{Condvar, Mutex};
use tabula_storage::Durability;

use crate::backend::Backend;

/// Cells with an amount pending at most; past it, callers apply their own.
pub const MAX_PENDING_CELLS: usize = 500_000;
/// Threads applying one round's rows at once.
const APPLIERS: usize = 4;

/// One counter cell: table, row, family, qualifier.
type CellKey = (Bytes, Bytes, Bytes, Bytes);
/// The amounts of one row's cells: family, qualifier, amount.
type RowAmounts = Vec<(Bytes, Bytes, i64)>;

/// Counts of what the coalescer did, for metrics and tests.
#[derive(Debug, Default)]
pub struct CoalescerStats {
    /// Increments queued.
    pub queued: AtomicU64,
    /// Queued increments added to an amount already pending for their cell.
    pub coalesced: AtomicU64,
    /// Row increments the worker applied (one per row and round).
    pub applied: AtomicU64,
    /// Cells whose pending amount failed to apply (logged).
    pub failed: AtomicU64,
}

struct Pending {
    amounts: HashMap<CellKey, i64>,
    stopping: bool,
}

struct Shared {
    backend: Arc<dyn Backend>,
    pending: Mutex<Pending>,
    wake: Condvar,
    stats: CoalescerStats,
}

/// Queues increments and applies them, summed per cell, on a worker thread.
pub struct IncrementCoalescer {
    shared: Arc<Shared>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

impl IncrementCoalescer {
    /// A coalescer applying through `backend`, its worker started.
    pub fn start(backend: Arc<dyn Backend>) -> Arc<Self> {
        let coalescer = Self::paused(backend);
        coalescer.resume();
        coalescer
    }

    /// A coalescer whose worker is not started yet: increments wait in the queue
    /// until [`IncrementCoalescer::resume`].
    pub fn paused(backend: Arc<dyn Backend>) -> Arc<Self> {
        Arc::new(IncrementCoalescer {
            shared: Arc::new(Shared {
                backend,
                pending: Mutex::new(Pending {
                    amounts: HashMap::new(),
                    stopping: false,
                }),
                wake: Condvar::new(),
                stats: CoalescerStats::default(),
            }),
            worker: Mutex::new(None),
        })
    }

    /// Starts the worker (once).
    pub fn resume(&self) {
        let mut worker = self.worker.lock();
        if worker.is_some() {
            return;
        }
        let shared = Arc::clone(&self.shared);
        match std::thread::Builder::new()
            .name("tabula-increments".into())
            .spawn(move || shared.work())
        {
            Ok(handle) => *worker = Some(handle),
            Err(e) => tracing::error!(error = %e, "could not start the increment coalescer"),
        }
    }

    /// Queues `amount` for the cell. False when the queue is full or the cell's
    /// pending amount would overflow: the caller must apply the increment itself.
    pub fn queue(
        &self,
        table: &[u8],
        row: &Bytes,
        family: &Bytes,
        qualifier: &Bytes,
        amount: i64,
    ) -> bool {
        let key: CellKey = (
            Bytes::copy_from_slice(table),
            row.clone(),
            family.clone(),
            qualifier.clone(),
        );
        let mut pending = self.shared.pending.lock();
        if pending.stopping {
            return false;
        }
        let full = pending.amounts.len() >= MAX_PENDING_CELLS;
        match pending.amounts.get_mut(&key) {
            Some(sum) => match sum.checked_add(amount) {
                Some(total) => {
                    *sum = total;
                    self.shared.stats.coalesced.fetch_add(1, Ordering::Relaxed);
                }
                None => return false,
            },
            None if full => return false,
            None => {
                pending.amounts.insert(key, amount);
            }
        }
        self.shared.stats.queued.fetch_add(1, Ordering::Relaxed);
        drop(pending);
        self.shared.wake.notify_one();
        true
    }

    /// Cells with an amount waiting to be applied.
    pub fn pending_cells(&self) -> usize {
        self.shared.pending.lock().amounts.len()
    }

    /// What the coalescer has done so far.
    pub fn stats(&self) -> &CoalescerStats {
        &self.shared.stats
    }

    /// Applies every queued amount and stops the worker; later increments are
    /// refused by [`IncrementCoalescer::queue`] (their callers apply them).
    pub fn drain(&self) {
        self.resume();
        self.shared.pending.lock().stopping = true;
        self.shared.wake.notify_all();
        if let Some(handle) = self.worker.lock().take() {
            if handle.join().is_err() {
                tracing::error!("the increment coalescer's worker panicked");
            }
        }
    }
}

impl Drop for IncrementCoalescer {
    fn drop(&mut self) {
        // The worker applies what is pending, then exits.
        self.shared.pending.lock().stopping = true;
        self.shared.wake.notify_all();
    }
}

impl Shared {
    /// The worker: takes everything pending, applies it row by row, and again,
    /// until stopped with nothing left.
    fn work(&self) {
        loop {
            let batch = {
                let mut pending = self.pending.lock();
                while pending.amounts.is_empty() && !pending.stopping {
                    self.wake.wait(&mut pending);
                }
                if pending.amounts.is_empty() {
                    return;
                }
                std::mem::take(&mut pending.amounts)
            };
            self.apply(batch);
        }
    }

    /// One increment per row (atomic on the row). Rows are applied by up to
    /// [`APPLIERS`] threads at once, so their commit-log waits are shared.
    fn apply(&self, batch: HashMap<CellKey, i64>) {
        let mut rows: BTreeMap<(Bytes, Bytes), RowAmounts> = BTreeMap::new();
        for ((table, row, family, qualifier), amount) in batch {
            rows.entry((table, row))
                .or_default()
                .push((family, qualifier, amount));
        }
        let rows: Vec<_> = rows.into_iter().collect();
        if rows.len() < 2 {
            rows.iter().for_each(|row| self.apply_row(row));
            return;
        }
        let appliers = APPLIERS.min(rows.len());
        std::thread::scope(|scope| {
            for first in 0..appliers {
                let rows = &rows;
                scope.spawn(move || {
                    rows.iter()
                        .skip(first)
                        .step_by(appliers)
                        .for_each(|row| self.apply_row(row));
                });
            }
        });
    }

    fn apply_row(&self, ((table, row), columns): &((Bytes, Bytes), RowAmounts)) {
        match self
            .backend
            .increment(table, row, columns, Durability::Sync)
        {
            Ok(_) => {
                self.stats.applied.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                self.stats
                    .failed
                    .fetch_add(columns.len() as u64, Ordering::Relaxed);
                tracing::error!(
                    table = %String::from_utf8_lossy(table),
                    row = ?row,
                    columns = ?columns,
                    error = %e,
                    "a coalesced increment failed and is lost"
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::null_backend::NullBackend;
    use tabula_storage::FamilySchema;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    fn backend_with_table() -> Arc<dyn Backend> {
        let backend = NullBackend::new(8);
        backend
            .create_table(
                b"t",
                vec![FamilySchema::new(&b"f"[..])],
                Vec::new(),
                Default::default(),
            )
            .unwrap();
        Arc::new(backend)
    }

    #[test]
    fn increments_of_a_cell_are_summed_and_each_row_applied_once() {
        let coalescer = IncrementCoalescer::paused(backend_with_table());
        for i in 0..100 {
            let (row, qualifier) = match i % 3 {
                0 => ("r1", "a"),
                1 => ("r1", "b"),
                _ => ("r2", "a"),
            };
            assert!(coalescer.queue(b"t", &b(row), &b("f"), &b(qualifier), 1));
        }
        assert_eq!(coalescer.pending_cells(), 3);
        let stats = coalescer.stats();
        assert_eq!(stats.queued.load(Ordering::Relaxed), 100);
        assert_eq!(stats.coalesced.load(Ordering::Relaxed), 97);
        coalescer.drain();
        assert_eq!(coalescer.pending_cells(), 0);
        assert_eq!(
            coalescer.stats().applied.load(Ordering::Relaxed),
            2,
            "one increment per row"
        );
        // Drained: later increments are the caller's to apply.
        assert!(!coalescer.queue(b"t", &b("r1"), &b("f"), &b("a"), 1));
    }

    #[test]
    fn an_overflowing_sum_is_left_to_the_caller_and_failures_are_counted() {
        let coalescer = IncrementCoalescer::paused(backend_with_table());
        assert!(coalescer.queue(b"t", &b("r"), &b("f"), &b("a"), i64::MAX));
        assert!(!coalescer.queue(b"t", &b("r"), &b("f"), &b("a"), 1));
        assert!(coalescer.queue(b"gone", &b("r"), &b("f"), &b("a"), 1));
        assert!(coalescer.queue(b"gone", &b("r"), &b("f"), &b("b"), 1));
        coalescer.drain();
        let stats = coalescer.stats();
        assert_eq!(stats.applied.load(Ordering::Relaxed), 1);
        assert_eq!(
            stats.failed.load(Ordering::Relaxed),
            2,
            "both cells of the missing table"
        );
    }

    #[test]
    fn a_running_worker_applies_what_is_queued() {
        let coalescer = IncrementCoalescer::start(backend_with_table());
        for _ in 0..10 {
            assert!(coalescer.queue(b"t", &b("r"), &b("f"), &b("a"), 2));
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while coalescer.pending_cells() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(coalescer.pending_cells(), 0);
        coalescer.drain();
        assert!(coalescer.stats().applied.load(Ordering::Relaxed) >= 1);
    }
}
