//! One connection's share of a workload: picks keys, makes the calls, checks the
//! answers and records each latency.
//!
//! Owns: [`Task`] (what a worker does per step, including the phases of the
//! time-dimension workload), [`Shared`] (what all workers of a run share) and
//! [`Worker`].
//! Must not: spawn threads, decide when a run ends, or print.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use rand::rngs::StdRng;
use rand::{Rng, RngCore, SeedableRng};

use crate::client::{Connection, Endpoint};
use crate::error::BenchError;
use crate::keys::{bigtable_row, ycsb_row, KeyChooser};
use crate::stats::Recorder;
use crate::workload::{YcsbMix, YcsbOp};

/// Column of the Bigtable workloads and of the versions cells.
pub const COLUMN: &[u8] = b"cf:q";
/// Counter column of the counters workload (beside the Bigtable workloads' cells).
pub const COUNTER_COLUMN: &[u8] = b"cf:n";
/// The many-version row and the one-version row of the versions workload.
pub const MANY_VERSIONS_ROW: &[u8] = b"many";
pub const ONE_VERSION_ROW: &[u8] = b"one";
/// Rows per scanner call.
const SCAN_BATCH: u32 = 100;
/// Longest YCSB scan (YCSB's default maxscanlength).
const YCSB_MAX_SCAN: u32 = 100;

/// What a worker does at each step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Task {
    SeqWrite,
    RandWrite,
    SeqRead,
    RandRead,
    RandReadMem,
    Scan,
    YcsbLoad,
    Ycsb(YcsbMix),
    /// Writes versions `1..=--versions` of the many-version cell.
    VersionsLoad,
    /// A get of the many-version cell as of a random time.
    AsOf,
    /// A get of the one-version cell.
    OneVersion,
    /// A major compaction of the Bigtable table (one call in the whole run).
    Compact,
    /// One `increment` of the counter column of a zipfian-chosen row.
    Counters,
}

impl Task {
    /// Works through its slice of the records once instead of a shared budget.
    pub fn walks_slice(&self) -> bool {
        matches!(self, Task::SeqWrite | Task::YcsbLoad | Task::VersionsLoad)
    }
}

/// Settings and counters every worker of a run shares.
pub struct Shared {
    pub endpoint: Endpoint,
    pub bigtable_table: Vec<u8>,
    pub ycsb_table: Vec<u8>,
    pub versions_table: Vec<u8>,
    pub records: u64,
    pub mem_records: u64,
    pub value_size: usize,
    pub ycsb_fields: usize,
    pub ycsb_field_size: usize,
    pub scan_rows: u32,
    /// The filter string of the `scan` workload's scanners.
    pub scan_filter: Option<Vec<u8>>,
    pub versions: u64,
    pub write_batch: usize,
    /// Rows per multi-get of randread and randread-mem (1: one get per row).
    pub read_batch: usize,
    /// YCSB records known to be written (read by the latest distribution).
    pub ycsb_inserted: Arc<AtomicU64>,
    /// Next YCSB record number an insert takes.
    pub ycsb_next_insert: AtomicU64,
}

impl Shared {
    fn ycsb_column(&self, field: usize) -> Vec<u8> {
        format!("cf:field{field}").into_bytes()
    }
}

/// The outcome of one call before it is recorded.
enum Checked {
    /// Succeeded, touching this many rows or values.
    Ok(u64),
    /// Answered, but not what the data set holds.
    Wrong,
}

/// One connection's worker.
pub struct Worker {
    shared: Arc<Shared>,
    conn: Connection,
    rng: StdRng,
    pub recorder: Recorder,
    value: Vec<u8>,
    field_value: Vec<u8>,
    ycsb_columns: Vec<Vec<u8>>,
    slice: Range<u64>,
    cursor: u64,
    chooser: KeyChooser,
}

/// `0..n` split into `parts` contiguous slices; the `index`th.
pub fn slice_of(n: u64, parts: usize, index: usize) -> Range<u64> {
    let parts = parts.max(1) as u64;
    let index = index as u64;
    (n * index / parts)..(n * (index + 1) / parts)
}

impl Worker {
    /// Connects worker `index` of `workers` for `task`, with its own seeded randomness.
    pub async fn connect(
        shared: Arc<Shared>,
        task: Task,
        index: usize,
        workers: usize,
        seed: u64,
    ) -> Result<Worker, BenchError> {
        let conn = Connection::open(&shared.endpoint).await?;
        let mut rng =
            StdRng::seed_from_u64(seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut value = vec![0u8; shared.value_size];
        rng.fill_bytes(&mut value);
        let mut field_value = vec![0u8; shared.ycsb_field_size];
        rng.fill_bytes(&mut field_value);
        let slice = match task {
            Task::VersionsLoad => slice_of(shared.versions, workers, index),
            _ => slice_of(shared.records, workers, index),
        };
        let chooser = match task {
            Task::RandReadMem => KeyChooser::uniform(shared.mem_records.min(shared.records)),
            // Start rows leave room for a whole scan before the last record.
            Task::Scan => KeyChooser::uniform(
                shared
                    .records
                    .saturating_sub(u64::from(shared.scan_rows))
                    .saturating_add(1),
            ),
            Task::Ycsb(mix) if mix.latest => KeyChooser::latest(Arc::clone(&shared.ycsb_inserted)),
            Task::Ycsb(_) | Task::Counters => KeyChooser::scrambled_zipfian(shared.records),
            _ => KeyChooser::uniform(shared.records),
        };
        let ycsb_columns = (0..shared.ycsb_fields)
            .map(|f| shared.ycsb_column(f))
            .collect();
        Ok(Worker {
            shared,
            conn,
            rng,
            recorder: Recorder::new(),
            value,
            field_value,
            ycsb_columns,
            cursor: slice.start,
            slice,
            chooser,
        })
    }

    /// Records one call; after a connection-level failure reconnects. False when the
    /// worker cannot go on.
    async fn observe(
        &mut self,
        op: &'static str,
        started: Instant,
        result: thrift::Result<Checked>,
    ) -> bool {
        let latency = started.elapsed();
        match result {
            Ok(Checked::Ok(units)) => {
                self.recorder.record_units(op, latency, units);
                true
            }
            Ok(Checked::Wrong) => {
                self.recorder
                    .record_error(op, &"the value read is not the one written");
                true
            }
            Err(thrift::Error::User(e)) => {
                // The service's declared exception (IOError, IllegalArgument...): its
                // Debug form carries the message.
                self.recorder.record_error(op, &format_args!("{e:?}"));
                true
            }
            Err(e @ thrift::Error::Application(_)) => {
                self.recorder.record_error(op, &e);
                true
            }
            Err(e) => {
                self.recorder
                    .record_error(op, &format_args!("{e} (reconnecting)"));
                match Connection::open(&self.shared.endpoint).await {
                    Ok(c) => {
                        self.conn = c;
                        true
                    }
                    Err(_) => false,
                }
            }
        }
    }

    /// Does one step of `task`. False when this worker has nothing left to do.
    pub async fn step(&mut self, task: Task) -> bool {
        match task {
            Task::SeqWrite => self.seq_write().await,
            Task::RandWrite if self.shared.write_batch > 1 => self.rand_write_batch().await,
            Task::RandWrite => {
                let k = self.chooser.next(&mut self.rng);
                self.write_row(k).await
            }
            Task::SeqRead => {
                let k = self.next_in_slice_cyclic();
                self.read_row(k).await
            }
            Task::RandRead | Task::RandReadMem if self.shared.read_batch > 1 => {
                self.rand_read_batch().await
            }
            Task::RandRead | Task::RandReadMem => {
                let k = self.chooser.next(&mut self.rng);
                self.read_row(k).await
            }
            Task::Scan => self.scan().await,
            Task::YcsbLoad => self.ycsb_load().await,
            Task::Ycsb(mix) => self.ycsb(mix).await,
            Task::VersionsLoad => self.versions_load().await,
            Task::AsOf => self.as_of().await,
            Task::OneVersion => self.one_version().await,
            Task::Counters => self.count().await,
            Task::Compact => {
                let started = Instant::now();
                let result = self.conn.major_compact(&self.shared.bigtable_table).await;
                self.observe("compact", started, result.map(|()| Checked::Ok(1)))
                    .await
            }
        }
    }

    /// The next record of this worker's slice, starting over at its end.
    fn next_in_slice_cyclic(&mut self) -> u64 {
        if self.cursor >= self.slice.end {
            self.cursor = self.slice.start;
        }
        let k = self.cursor;
        self.cursor += 1;
        k
    }

    async fn write_row(&mut self, k: u64) -> bool {
        let row = bigtable_row(k);
        let started = Instant::now();
        let table = &self.shared.bigtable_table;
        let result = self
            .conn
            .put(table, &row, &[(COLUMN, &self.value)])
            .await
            .map(|()| Checked::Ok(1));
        self.observe("write", started, result).await
    }

    /// Adds one to the counter of a zipfian-chosen row.
    async fn count(&mut self) -> bool {
        let row = bigtable_row(self.chooser.next(&mut self.rng));
        let started = Instant::now();
        let result = self
            .conn
            .increment(&self.shared.bigtable_table, &row, COUNTER_COLUMN, 1)
            .await
            .map(|()| Checked::Ok(1));
        self.observe("increment", started, result).await
    }

    /// One mutateRows call of `write_batch` rows at random keys (what a client's
    /// write buffer sends, as HBase's PerformanceEvaluation does by default).
    async fn rand_write_batch(&mut self) -> bool {
        let rows: Vec<Vec<u8>> = (0..self.shared.write_batch)
            .map(|_| bigtable_row(self.chooser.next(&mut self.rng)))
            .collect();
        let started = Instant::now();
        let result = self
            .conn
            .put_rows(&self.shared.bigtable_table, &rows, &[(COLUMN, &self.value)])
            .await;
        let units = rows.len() as u64;
        self.observe("write", started, result.map(|()| Checked::Ok(units)))
            .await
    }

    async fn seq_write(&mut self) -> bool {
        if self.cursor >= self.slice.end {
            return false;
        }
        let end = (self.cursor + self.shared.write_batch.max(1) as u64).min(self.slice.end);
        let rows: Vec<Vec<u8>> = (self.cursor..end).map(bigtable_row).collect();
        self.cursor = end;
        let started = Instant::now();
        let table = &self.shared.bigtable_table;
        let result = if rows.len() == 1 {
            self.conn
                .put(table, &rows[0], &[(COLUMN, &self.value)])
                .await
        } else {
            self.conn
                .put_rows(table, &rows, &[(COLUMN, &self.value)])
                .await
        };
        let units = rows.len() as u64;
        self.observe("write", started, result.map(|()| Checked::Ok(units)))
            .await
    }

    async fn read_row(&mut self, k: u64) -> bool {
        let row = bigtable_row(k);
        let started = Instant::now();
        let expected = self.shared.value_size;
        let result = self
            .conn
            .get(&self.shared.bigtable_table, &row, COLUMN)
            .await
            .map(|len| {
                if len == expected {
                    Checked::Ok(1)
                } else {
                    Checked::Wrong
                }
            });
        self.observe("read", started, result).await
    }

    /// One getRowsWithColumns call of `read_batch` rows at random keys; every row
    /// must come back with its whole value.
    async fn rand_read_batch(&mut self) -> bool {
        let rows: Vec<Vec<u8>> = (0..self.shared.read_batch)
            .map(|_| bigtable_row(self.chooser.next(&mut self.rng)))
            .collect();
        let started = Instant::now();
        let expected = self.shared.value_size;
        let result = self
            .conn
            .get_rows(&self.shared.bigtable_table, &rows, COLUMN)
            .await
            .map(|lens| {
                if lens.len() == rows.len() && lens.iter().all(|&l| l == expected) {
                    Checked::Ok(rows.len() as u64)
                } else {
                    Checked::Wrong
                }
            });
        self.observe("read", started, result).await
    }

    async fn scan(&mut self) -> bool {
        let start = bigtable_row(self.chooser.next(&mut self.rng));
        let rows = self.shared.scan_rows;
        let started = Instant::now();
        let result = self
            .conn
            .scan(
                &self.shared.bigtable_table,
                &start,
                rows,
                SCAN_BATCH,
                self.shared.scan_filter.as_deref(),
            )
            .await
            .map(Checked::Ok);
        self.observe("scan", started, result).await
    }

    async fn ycsb_insert(&mut self, k: u64, op: &'static str) -> bool {
        let row = ycsb_row(k);
        let started = Instant::now();
        let cells = record_cells(&self.ycsb_columns, &self.field_value);
        let result = self.conn.put(&self.shared.ycsb_table, &row, &cells).await;
        let ok = result.is_ok();
        let go_on = self
            .observe(op, started, result.map(|()| Checked::Ok(1)))
            .await;
        if ok {
            self.shared.ycsb_inserted.fetch_max(k + 1, Ordering::AcqRel);
        }
        go_on
    }

    async fn ycsb_load(&mut self) -> bool {
        if self.cursor >= self.slice.end {
            return false;
        }
        let end = (self.cursor + self.shared.write_batch.max(1) as u64).min(self.slice.end);
        if end - self.cursor == 1 {
            let k = self.cursor;
            self.cursor = end;
            return self.ycsb_insert(k, "insert").await;
        }
        let rows: Vec<Vec<u8>> = (self.cursor..end).map(ycsb_row).collect();
        self.cursor = end;
        let started = Instant::now();
        let cells = record_cells(&self.ycsb_columns, &self.field_value);
        let result = self
            .conn
            .put_rows(&self.shared.ycsb_table, &rows, &cells)
            .await;
        let units = rows.len() as u64;
        self.observe("insert", started, result.map(|()| Checked::Ok(units)))
            .await
    }

    async fn ycsb(&mut self, mix: YcsbMix) -> bool {
        let table = self.shared.ycsb_table.clone();
        match mix.pick(self.rng.gen::<f64>()) {
            YcsbOp::Read => {
                let row = ycsb_row(self.chooser.next(&mut self.rng));
                let started = Instant::now();
                let result = self
                    .conn
                    .get_row(&table, &row)
                    .await
                    .map(|_| Checked::Ok(1));
                self.observe("read", started, result).await
            }
            YcsbOp::Update => {
                let row = ycsb_row(self.chooser.next(&mut self.rng));
                let field = self.rng.gen_range(0..self.ycsb_columns.len().max(1));
                let started = Instant::now();
                let result = self.update_field(&table, &row, field).await;
                self.observe("update", started, result.map(|()| Checked::Ok(1)))
                    .await
            }
            YcsbOp::Insert => {
                let k = self.shared.ycsb_next_insert.fetch_add(1, Ordering::AcqRel);
                self.ycsb_insert(k, "insert").await
            }
            YcsbOp::Scan => {
                let row = ycsb_row(self.chooser.next(&mut self.rng));
                let len = self.rng.gen_range(1..=YCSB_MAX_SCAN);
                let started = Instant::now();
                let result = self
                    .conn
                    .scan(&table, &row, len, len, None)
                    .await
                    .map(Checked::Ok);
                self.observe("scan", started, result).await
            }
            YcsbOp::ReadModifyWrite => {
                let row = ycsb_row(self.chooser.next(&mut self.rng));
                let field = self.rng.gen_range(0..self.ycsb_columns.len().max(1));
                let started = Instant::now();
                let result = match self.conn.get_row(&table, &row).await {
                    Ok(_) => self.update_field(&table, &row, field).await,
                    Err(e) => Err(e),
                };
                self.observe("rmw", started, result.map(|()| Checked::Ok(1)))
                    .await
            }
        }
    }

    async fn update_field(&mut self, table: &[u8], row: &[u8], field: usize) -> thrift::Result<()> {
        let column = self.ycsb_columns.get(field).cloned().unwrap_or_default();
        self.conn
            .put(table, row, &[(&column, &self.field_value)])
            .await
    }

    async fn versions_load(&mut self) -> bool {
        if self.cursor >= self.slice.end {
            return false;
        }
        // Versions are 1..=versions; the slice is over 0..versions.
        let ts = self.cursor as i64 + 1;
        self.cursor += 1;
        let started = Instant::now();
        let result = self
            .conn
            .put_at(
                &self.shared.versions_table,
                MANY_VERSIONS_ROW,
                COLUMN,
                &self.value,
                ts,
            )
            .await;
        self.observe("write", started, result.map(|()| Checked::Ok(1)))
            .await
    }

    async fn as_of(&mut self) -> bool {
        let newest = self.shared.versions.max(1) as i64;
        // Times 2..=newest+1: the answer is the version just below, 1..=newest.
        let before = self.rng.gen_range(2..=newest + 1);
        let started = Instant::now();
        let result = self
            .conn
            .get_as_of(
                &self.shared.versions_table,
                MANY_VERSIONS_ROW,
                COLUMN,
                before,
            )
            .await
            .map(|ts| {
                if ts == Some(before - 1) {
                    Checked::Ok(1)
                } else {
                    Checked::Wrong
                }
            });
        self.observe("asof", started, result).await
    }

    async fn one_version(&mut self) -> bool {
        let started = Instant::now();
        let expected = self.shared.value_size;
        let result = self
            .conn
            .get(&self.shared.versions_table, ONE_VERSION_ROW, COLUMN)
            .await
            .map(|len| {
                if len == expected {
                    Checked::Ok(1)
                } else {
                    Checked::Wrong
                }
            });
        self.observe("get", started, result).await
    }
}

/// Every field of a YCSB record, each holding `value`.
fn record_cells<'c>(columns: &'c [Vec<u8>], value: &'c [u8]) -> Vec<(&'c [u8], &'c [u8])> {
    columns.iter().map(|c| (c.as_slice(), value)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_the_range_without_overlap() {
        for (n, parts) in [(10u64, 3usize), (100, 16), (5, 8), (0, 4)] {
            let slices: Vec<Range<u64>> = (0..parts).map(|i| slice_of(n, parts, i)).collect();
            assert_eq!(slices[0].start, 0);
            assert_eq!(slices[parts - 1].end, n);
            for w in slices.windows(2) {
                assert_eq!(w[0].end, w[1].start);
            }
        }
    }
}
