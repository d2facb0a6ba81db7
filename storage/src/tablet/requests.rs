//! Per-tablet request counters: the reads and writes a tablet has served, for the
//! metrics endpoint (hot tablets) and, later, load-aware balancing.
//!
//! Owns: [`RequestCounters`], kept by every tablet, and [`RequestCounts`], a reading
//! of them. Each counter is striped: a thread adds to its own cache-line-sized
//! stripe, so gets on several threads do not pass one line back and forth; a
//! reading sums the stripes.
//! Must not: be read on the request path (a reading walks every stripe).

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

/// Stripes per counter: enough that a few request threads rarely share one.
const STRIPES: usize = 8;

/// Hands each thread its stripe, round robin.
static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static STRIPE: Cell<Option<usize>> = const { Cell::new(None) };
}

fn stripe() -> usize {
    STRIPE.with(|s| match s.get() {
        Some(index) => index,
        None => {
            let index = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES;
            s.set(Some(index));
            index
        }
    })
}

/// A counter only ever added to, striped over cache lines.
#[derive(Default)]
struct StripedCounter {
    stripes: [CachePadded<AtomicU64>; STRIPES],
}

impl StripedCounter {
    fn add(&self, n: u64) {
        if let Some(slot) = self.stripes.get(stripe()) {
            slot.fetch_add(n, Ordering::Relaxed);
        }
    }

    fn sum(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.load(Ordering::Relaxed))
            .fold(0, u64::wrapping_add)
    }
}

/// The requests a tablet has served since it was opened on this server.
#[derive(Default)]
pub(crate) struct RequestCounters {
    reads: StripedCounter,
    writes: StripedCounter,
}

impl RequestCounters {
    /// `n` rows read (a get, or rows a scanner returned).
    pub(crate) fn read(&self, n: u64) {
        self.reads.add(n);
    }

    /// `n` row mutations applied.
    pub(crate) fn wrote(&self, n: u64) {
        self.writes.add(n);
    }

    pub(crate) fn reading(&self) -> RequestCounts {
        RequestCounts {
            reads: self.reads.sum(),
            writes: self.writes.sum(),
        }
    }
}

/// A reading of a tablet's request counters (HBase's readRequestsCount and
/// writeRequestsCount of a region).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestCounts {
    /// Rows read: one per get and per row a scanner returned.
    pub reads: u64,
    /// Row mutations applied: one per row of a put, delete or batch, and one per
    /// read-modify-write (which also counts one read).
    pub writes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_many_threads_add_up() {
        let counters = std::sync::Arc::new(RequestCounters::default());
        let threads: Vec<_> = (0..12)
            .map(|t| {
                let counters = counters.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        counters.read(1);
                    }
                    counters.wrote(t);
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(
            counters.reading(),
            RequestCounts {
                reads: 12_000,
                writes: (0..12).sum(),
            }
        );
    }
}
