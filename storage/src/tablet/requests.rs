//! Per-tablet request counters: the reads and writes a tablet has served, for the
//! metrics endpoint (hot tablets) and the coordinator's load-aware balancing
//! (through the regionserver's report).
//!
//! Owns: [`RequestCounters`], kept by every tablet, and [`RequestCounts`], a reading
//! of them. Each counter is a [`StripedCounter`], so gets on several threads do not
//! pass one cache line back and forth.
//! Must not: be read on the request path (a reading walks every stripe).

use crate::striped::StripedCounter;

/// The requests a tablet has served since it was opened on this server.
#[derive(Default)]
pub(crate) struct RequestCounters {
    reads: StripedCounter,
    writes: StripedCounter,
}

impl RequestCounters {
    /// One row read (a get, or a row a scanner returned).
    pub(crate) fn read(&self) {
        self.reads.add_one();
    }

    /// One row mutation applied.
    pub(crate) fn wrote(&self) {
        self.writes.add_one();
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
                        counters.read();
                    }
                    for _ in 0..t {
                        counters.wrote();
                    }
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
