//! Per-tablet request counters: the reads and writes a tablet has served, for the
//! metrics endpoint (hot tablets) and the coordinator's load-aware balancing
//! (through the regionserver's report), and a sample of the rows they touched,
//! which tells where a split would part the tablet's load ([`LoadSplit`]).
//!
//! Owns: [`RequestCounters`], kept by every tablet, [`RequestCounts`], a reading
//! of them, and [`LoadSplit`]. Each counter is a [`StripedCounter`], so gets on
//! several threads do not pass one cache line back and forth; one call in
//! [`SAMPLE_EVERY`] of each thread also copies its row into a small ring.
//! Must not: be read on the request path (a reading walks every stripe).

use bytes::Bytes;
use parking_lot::Mutex;

use crate::striped::StripedCounter;

/// One request in this many (per thread) has its row sampled.
const SAMPLE_EVERY: u64 = 64;
/// The most recent sampled rows kept.
const SAMPLES_KEPT: usize = 256;
/// Fewer samples than this say nothing about where the load lies.
const MIN_SAMPLES: usize = 64;
/// A split leaving this share of the samples on one side parts nothing.
const CONCENTRATED: f64 = 0.9;

/// The requests a tablet has served since it was opened on this server.
#[derive(Default)]
pub(crate) struct RequestCounters {
    reads: StripedCounter,
    writes: StripedCounter,
    samples: Mutex<RowSamples>,
}

impl RequestCounters {
    /// One row read (a get, or a row a scanner returned).
    pub(crate) fn read(&self, row: &[u8]) {
        if self.reads.add_one_sampled(SAMPLE_EVERY) {
            self.samples.lock().push(row);
        }
    }

    /// One row mutation applied.
    pub(crate) fn wrote(&self, row: &[u8]) {
        if self.writes.add_one_sampled(SAMPLE_EVERY) {
            self.samples.lock().push(row);
        }
    }

    pub(crate) fn reading(&self) -> RequestCounts {
        RequestCounts {
            reads: self.reads.sum(),
            writes: self.writes.sum(),
        }
    }

    /// Where the recently sampled requests would split in halves.
    pub(crate) fn load_split(&self) -> LoadSplit {
        let mut rows = self.samples.lock().rows.clone();
        if rows.len() < MIN_SAMPLES {
            return LoadSplit::Unknown;
        }
        rows.sort_unstable();
        let n = rows.len();
        // The row starting the right half: the first of a run of equal rows
        // (a split cannot part one row's requests) whose left side is nearest half.
        let best = (1..n)
            .filter(|&i| rows.get(i) != rows.get(i - 1))
            .min_by_key(|&i| (2 * i).abs_diff(n));
        let Some(i) = best else {
            return LoadSplit::Concentrated;
        };
        let larger_side = i.max(n - i) as f64;
        match rows.get(i) {
            Some(row) if larger_side < CONCENTRATED * n as f64 => LoadSplit::At(row.clone()),
            _ => LoadSplit::Concentrated,
        }
    }
}

/// The last [`SAMPLES_KEPT`] sampled rows, the oldest overwritten first.
#[derive(Default)]
struct RowSamples {
    rows: Vec<Bytes>,
    next: usize,
}

impl RowSamples {
    fn push(&mut self, row: &[u8]) {
        let row = Bytes::copy_from_slice(row);
        if self.rows.len() < SAMPLES_KEPT {
            self.rows.push(row);
        } else if let Some(slot) = self.rows.get_mut(self.next) {
            *slot = row;
        }
        self.next = (self.next + 1) % SAMPLES_KEPT;
    }
}

/// Where a split would part a tablet's recent requests (reads and writes alike),
/// from a sample of their rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum LoadSplit {
    /// Too few requests were sampled to tell.
    #[default]
    Unknown,
    /// Splitting at this row (it starts the right half) parts the sampled
    /// requests most evenly.
    At(Bytes),
    /// Nine tenths or more of the sampled requests stay on one side of any split
    /// (most fall on one row): splitting would not spread them.
    Concentrated,
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
                        counters.read(b"r");
                    }
                    for _ in 0..t {
                        counters.wrote(b"r");
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

    fn row(i: usize) -> Vec<u8> {
        format!("row{i:05}").into_bytes()
    }

    #[test]
    fn the_load_split_parts_the_sampled_rows_in_halves() {
        let counters = RequestCounters::default();
        assert_eq!(counters.load_split(), LoadSplit::Unknown, "nothing sampled");
        // Rows 0..99 read evenly, then rows 100..199 three times as often: the
        // load's middle is near row 133, not the rows' middle.
        for round in 0..SAMPLE_EVERY as usize * 4 {
            for i in 0..100 {
                counters.read(&row(i + round % 7));
            }
            for _ in 0..3 {
                for i in 100..200 {
                    counters.wrote(&row(i + round % 7));
                }
            }
        }
        let LoadSplit::At(at) = counters.load_split() else {
            panic!("a split row is known: {:?}", counters.load_split());
        };
        let at = String::from_utf8(at.to_vec()).expect("utf-8");
        let index: usize = at.trim_start_matches("row").parse().expect("a row number");
        assert!((120..=150).contains(&index), "split at {at}");
    }

    #[test]
    fn load_on_one_row_cannot_be_parted() {
        let counters = RequestCounters::default();
        for i in 0..SAMPLE_EVERY as usize * SAMPLES_KEPT {
            // Nineteen calls in twenty on one row.
            if i % 20 == 0 {
                counters.read(&row(i));
            } else {
                counters.read(b"hot");
            }
        }
        assert_eq!(counters.load_split(), LoadSplit::Concentrated);
        let one_row = RequestCounters::default();
        for _ in 0..SAMPLE_EVERY as usize * MIN_SAMPLES {
            one_row.wrote(b"hot");
        }
        assert_eq!(one_row.load_split(), LoadSplit::Concentrated);
    }

    #[test]
    fn the_ring_keeps_the_latest_samples() {
        let counters = RequestCounters::default();
        for _ in 0..SAMPLE_EVERY as usize * SAMPLES_KEPT {
            counters.read(b"old");
        }
        for i in 0..SAMPLE_EVERY as usize * SAMPLES_KEPT {
            counters.read(&row(i % 1000));
        }
        let samples = counters.samples.lock();
        assert_eq!(samples.rows.len(), SAMPLES_KEPT);
        assert!(samples.rows.iter().all(|r| r.as_ref() != b"old"));
    }
}
