//! The regionserver: tablets on one storage engine, behind [`TabletService`].
//!
//! Owns: translating service calls into tablet calls (compiling filter strings,
//! converting read specs), the registry of open tablet scanners with their leases,
//! the regionserver's view of which tablets it serves, the row a split may use
//! under its table's split policy, and timing data calls for the slow-call log.
//! Must not: decide which tablets it serves (the coordinator assigns them) or know
//! about Thrift.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::Mutex;
use tabula_storage::read::ReadOptions;
use tabula_storage::tablet::{Condition, ScanRequest, TabletDescriptor, TabletScanner};
use tabula_storage::{Cell, Durability, Engine, RowMutation, SplitRule, TableSchema};

use crate::api::{
    ReadSpec, RsError, RsResult, ScanBatch, ScanSpec, SplitOutcome, TabletReport, TabletService,
};
use crate::filter::parse_filter;
use crate::slow_log::{CallKind, SlowCall, SlowLog, SlowLogSettings};

/// A scanner and when it was last used.
struct LeasedScanner {
    scanner: Arc<Mutex<TabletScanner>>,
    last_used: Instant,
    /// The tablet it reads (for the slow-call log).
    tablet: u64,
}

/// Settings of a regionserver.
#[derive(Debug, Clone)]
pub struct RegionServerOptions {
    /// The name the server is known by (host:port, or any unique name in one process).
    pub name: String,
    /// Scanners idle longer than this are closed.
    pub scanner_lease: Duration,
    /// Where the regionservers sharing this storage keep their commit logs, one
    /// directory per server name (`<data>/logs`); `None` when the storage is this
    /// server's alone.
    pub logs_root: Option<std::path::PathBuf>,
    /// Which calls the slow-call log keeps.
    pub slow_log: SlowLogSettings,
}

impl Default for RegionServerOptions {
    fn default() -> Self {
        RegionServerOptions {
            name: "regionserver-0".into(),
            scanner_lease: Duration::from_secs(60),
            logs_root: None,
            slow_log: SlowLogSettings::default(),
        }
    }
}

/// A regionserver serving tablets from one engine.
pub struct RegionServer {
    opts: RegionServerOptions,
    engine: Arc<Engine>,
    scanners: Mutex<HashMap<u64, LeasedScanner>>,
    next_scanner: AtomicU64,
    slow_log: SlowLog,
    /// When this server started, ms since the epoch.
    start_code: i64,
}

/// Converts a read spec into engine read options (compiling the filter).
pub fn read_options(spec: &ReadSpec) -> RsResult<ReadOptions> {
    let filter = match &spec.filter {
        Some(f) if !f.is_empty() => Some(parse_filter(f)?),
        _ => None,
    };
    Ok(ReadOptions {
        columns: spec.columns.clone(),
        time_range: spec.time_range,
        family_time_ranges: spec.family_time_ranges.clone(),
        max_versions: spec.max_versions.max(1),
        filter,
    })
}

impl RegionServer {
    /// A regionserver over `engine`.
    pub fn new(engine: Arc<Engine>, opts: RegionServerOptions) -> RegionServer {
        RegionServer {
            slow_log: SlowLog::new(opts.slow_log.clone(), &opts.name),
            opts,
            engine,
            scanners: Mutex::new(HashMap::new()),
            next_scanner: AtomicU64::new(1),
            start_code: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
        }
    }

    /// The engine.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Runs `call` through the slow-call log (its table looked up only for a
    /// call it keeps).
    fn timed<T>(
        &self,
        kind: CallKind<'_>,
        call: impl FnOnce() -> T,
        size: impl FnOnce(&T) -> u64,
    ) -> T {
        let table = || {
            self.engine
                .tablet(kind.tablet)
                .map(|t| t.schema().name.clone())
                .unwrap_or_default()
        };
        self.slow_log.timed(kind, table, call, size)
    }

    fn tablet(&self, id: u64) -> RsResult<Arc<tabula_storage::Tablet>> {
        self.engine
            .tablet(id)
            .map_err(|_| RsError::NotServing { tablet: id })
    }

    /// Closes scanners idle longer than the lease; returns how many remain open.
    pub fn expire_scanners(&self) -> usize {
        let lease = self.opts.scanner_lease;
        let mut s = self.scanners.lock();
        let before = s.len();
        s.retain(|_, l| l.last_used.elapsed() < lease);
        let expired = before - s.len();
        if expired > 0 {
            tracing::info!(expired, open = s.len(), "expired idle tablet scanners");
        }
        s.len()
    }

    /// Opens a scanner of `tablet` and leases it.
    fn open_scanner_on(&self, tablet: u64, spec: &ScanSpec) -> RsResult<u64> {
        let t = self.tablet(tablet)?;
        let mut read = read_options(&spec.read)?;
        if let Some(filter) = read.filter.as_mut() {
            filter.set_reversed(spec.reverse);
        }
        let scanner = t.scan(ScanRequest {
            start_row: spec.start_row.clone(),
            stop_row: spec.stop_row.clone(),
            reverse: spec.reverse,
            read,
            batch: spec.batch as usize,
        })?;
        let id = self.next_scanner.fetch_add(1, Ordering::Relaxed);
        self.scanners.lock().insert(
            id,
            LeasedScanner {
                scanner: Arc::new(Mutex::new(scanner)),
                last_used: Instant::now(),
                tablet,
            },
        );
        Ok(id)
    }

    /// The next rows of scanner `id`.
    fn next_batch(
        &self,
        id: u64,
        scanner: &Mutex<TabletScanner>,
        max_rows: usize,
    ) -> RsResult<ScanBatch> {
        let mut s = scanner.lock();
        let rows = s.next_rows(max_rows.max(1))?;
        let exhausted = rows.len() < max_rows.max(1);
        let out = ScanBatch {
            exhausted,
            ended_by_filter: exhausted && s.ended_by_filter(),
            rows,
        };
        if let Some(l) = self.scanners.lock().get_mut(&id) {
            l.last_used = Instant::now();
        }
        Ok(out)
    }

    /// Number of open scanners.
    pub fn open_scanners(&self) -> usize {
        self.scanners.lock().len()
    }

    /// Flushes every tablet and closes the engine's log.
    pub fn shutdown(&self) -> RsResult<()> {
        self.scanners.lock().clear();
        self.engine.shutdown().map_err(RsError::from)
    }
}

/// About how many bytes `cells` answer: rows, columns and values.
fn cells_bytes(cells: &[Cell]) -> u64 {
    cells
        .iter()
        .map(|c| (c.row.len() + c.family.len() + c.qualifier.len() + c.value.len() + 8) as u64)
        .sum()
}

/// The bytes a call answering cells answered (none when it failed).
fn answered_bytes(out: &RsResult<Vec<Cell>>) -> u64 {
    out.as_ref().map_or(0, |cells| cells_bytes(cells))
}

/// Where `tablet` may split in place of `at` under its table's split policy:
/// `at` cut to its prefix (rows sharing it stay together), or where the next
/// prefix group starts when the cut leaves no row before it; `None` when the
/// policy forbids splits or no such row is inside the tablet.
fn split_row_allowed(
    tablet: &tabula_storage::Tablet,
    rule: &SplitRule,
    at: Bytes,
) -> RsResult<Option<Bytes>> {
    let Some(prefix) = rule.shape(&at) else {
        return Ok(None);
    };
    if prefix.len() == at.len() {
        return Ok(Some(at));
    }
    let Some(first) = first_row_from(tablet, tablet.start_row())? else {
        return Ok(None);
    };
    let candidate = if first < prefix {
        Some(prefix)
    } else {
        // The tablet starts with `prefix`'s group: split where the next one starts.
        match rule.after_group(&prefix) {
            Some(bound) => first_row_from(tablet, &bound)?.and_then(|r| rule.shape(&r)),
            None => None,
        }
    };
    // A cut row must still leave each child a row.
    Ok(candidate.filter(|row| first < *row))
}

/// The first row of `tablet` at or after `from`.
fn first_row_from(tablet: &tabula_storage::Tablet, from: &Bytes) -> RsResult<Option<Bytes>> {
    let mut scanner = tablet.scan(ScanRequest {
        start_row: from.clone(),
        stop_row: Bytes::new(),
        reverse: false,
        read: ReadOptions::latest(),
        batch: 0,
    })?;
    Ok(scanner.next_row()?.map(|r| r.row().clone()))
}

impl TabletService for RegionServer {
    fn name(&self) -> String {
        self.opts.name.clone()
    }

    fn start_code(&self) -> i64 {
        self.start_code
    }

    fn get(&self, tablet: u64, row: &Bytes, spec: &ReadSpec) -> RsResult<Vec<Cell>> {
        self.timed(
            CallKind::single("Get", "GetRequest", tablet, row),
            || {
                self.engine
                    .with_tablet(tablet, |t| -> RsResult<Vec<Cell>> {
                        Ok(t.get(row, read_options(spec)?)?)
                    })
                    .map_err(|_| RsError::NotServing { tablet })?
            },
            answered_bytes,
        )
    }

    fn mutate(&self, tablet: u64, mutation: &RowMutation, durability: Durability) -> RsResult<()> {
        self.timed(
            CallKind::single("Mutate", "MutateRequest", tablet, &mutation.row),
            || Ok(self.tablet(tablet)?.mutate(mutation, durability)?),
            |_| 0,
        )
    }

    fn mutate_batch(
        &self,
        batches: &[(u64, Vec<&RowMutation>)],
        durability: Durability,
    ) -> Vec<RsResult<Vec<RsResult<()>>>> {
        let groups: Vec<(u64, &[&RowMutation])> = batches
            .iter()
            .map(|(tablet, rows)| (*tablet, rows.as_slice()))
            .collect();
        let first = batches.first().map_or(0, |(tablet, _)| *tablet);
        let kind = CallKind {
            method: "Multi",
            request: "MultiRequest",
            tablet: first,
            row: &[],
            multi_mutations: batches.iter().map(|(_, rows)| rows.len()).sum(),
        };
        self.timed(
            kind,
            || {
                self.engine
                    .mutate_batches(&groups, durability)
                    .into_iter()
                    .map(|group| {
                        group
                            .map(|rows| {
                                rows.into_iter().map(|r| r.map_err(RsError::from)).collect()
                            })
                            .map_err(RsError::from)
                    })
                    .collect()
            },
            |_| 0,
        )
    }

    fn check_and_mutate(
        &self,
        tablet: u64,
        condition: &Condition,
        mutation: &RowMutation,
        durability: Durability,
    ) -> RsResult<bool> {
        self.timed(
            CallKind::single("Mutate", "MutateRequest", tablet, &mutation.row),
            || {
                Ok(self
                    .tablet(tablet)?
                    .check_and_mutate(condition, mutation, durability)?)
            },
            |_| 0,
        )
    }

    fn increment(
        &self,
        tablet: u64,
        row: &Bytes,
        columns: &[(Bytes, Bytes, i64)],
        durability: Durability,
    ) -> RsResult<Vec<Cell>> {
        self.timed(
            CallKind::single("Mutate", "MutateRequest", tablet, row),
            || Ok(self.tablet(tablet)?.increment(row, columns, durability)?),
            answered_bytes,
        )
    }

    fn append(
        &self,
        tablet: u64,
        row: &Bytes,
        columns: &[(Bytes, Bytes, Bytes)],
        durability: Durability,
    ) -> RsResult<Vec<Cell>> {
        self.timed(
            CallKind::single("Mutate", "MutateRequest", tablet, row),
            || Ok(self.tablet(tablet)?.append(row, columns, durability)?),
            answered_bytes,
        )
    }

    fn open_scanner(&self, tablet: u64, spec: &ScanSpec) -> RsResult<u64> {
        self.timed(
            CallKind::single("Scan", "ScanRequest", tablet, &spec.start_row),
            || self.open_scanner_on(tablet, spec),
            |_| 0,
        )
    }

    fn scanner_next(&self, scanner: u64, max_rows: usize) -> RsResult<ScanBatch> {
        let (s, tablet) = {
            let mut map = self.scanners.lock();
            let l = map
                .get_mut(&scanner)
                .ok_or(RsError::UnknownScanner { scanner })?;
            l.last_used = Instant::now();
            (Arc::clone(&l.scanner), l.tablet)
        };
        self.timed(
            CallKind::single("Scan", "ScanRequest", tablet, &[]),
            || self.next_batch(scanner, &s, max_rows),
            |out| {
                out.as_ref()
                    .map_or(0, |b| b.rows.iter().map(|r| cells_bytes(&r.cells)).sum())
            },
        )
    }

    fn close_scanner(&self, scanner: u64) {
        self.scanners.lock().remove(&scanner);
    }

    fn open_tablet(&self, desc: &TabletDescriptor) -> RsResult<()> {
        match self.engine.open_tablet(desc.clone()) {
            Ok(_) => Ok(()),
            Err(tabula_storage::Error::TabletAlreadyOpen { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    fn close_tablet(&self, tablet: u64) -> RsResult<()> {
        match self.engine.close_tablet(tablet) {
            Ok(()) | Err(tabula_storage::Error::TabletNotOpen { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    fn destroy_tablet(&self, tablet: u64) -> RsResult<()> {
        Ok(self.engine.destroy_tablet_dir(tablet)?)
    }

    fn split_tablet(
        &self,
        tablet: u64,
        at: Option<Bytes>,
        left: u64,
        right: u64,
    ) -> RsResult<SplitOutcome> {
        let t = self.tablet(tablet)?;
        let refused = |why: &str| {
            RsError::Storage(tabula_storage::Error::InvalidArgument(format!(
                "tablet {tablet} {why}"
            )))
        };
        let at = match at {
            Some(a) => a,
            None => t
                .midpoint_row()
                .ok_or_else(|| refused("holds too little data to split"))?,
        };
        let schema = t.schema().as_ref().clone();
        let at = split_row_allowed(&t, schema.split_rule(), at)?
            .ok_or_else(|| refused("has no row its table's split policy allows a split at"))?;
        let (l, r) = self.engine.split_tablet(tablet, &at, left, right)?;
        let desc = |t: &tabula_storage::Tablet| TabletDescriptor {
            id: t.id(),
            schema: schema.clone(),
            start_row: t.start_row().clone(),
            end_row: t.end_row().clone(),
        };
        Ok(SplitOutcome {
            at,
            left: desc(&l),
            right: desc(&r),
        })
    }

    fn flush_tablet(&self, tablet: u64) -> RsResult<()> {
        Ok(self.tablet(tablet)?.flush()?)
    }

    fn compact_tablet(&self, tablet: u64, major: bool) -> RsResult<()> {
        let t = self.tablet(tablet)?;
        if major {
            t.major_compact()?;
        } else {
            t.flush()?;
            t.compact_if_needed()?;
        }
        Ok(())
    }

    fn update_schema(&self, tablet: u64, schema: &TableSchema) -> RsResult<()> {
        self.tablet(tablet)?.set_schema(schema.clone());
        Ok(())
    }

    fn report(&self) -> Vec<TabletReport> {
        self.engine
            .tablets()
            .into_iter()
            .map(|t| TabletReport {
                tablet: t.id(),
                stats: t.stats(),
                requests: t.request_counts(),
                load_split: t.load_split(),
            })
            .collect()
    }

    fn collect_garbage(&self, live: &std::collections::HashSet<u64>) -> RsResult<usize> {
        Ok(self.engine.collect_garbage(live)?)
    }

    fn recover_log_of(&self, server: &str) -> RsResult<()> {
        let Some(root) = &self.opts.logs_root else {
            return Ok(());
        };
        let dir = root.join(server_log_dir_name(server)?);
        if !dir.exists() {
            return Ok(());
        }
        tracing::info!(server, dir = %dir.display(), "recovering a dead regionserver's commit log");
        self.engine.recover_log_of(&dir)?;
        std::fs::remove_dir_all(&dir)
            .map_err(|e| tabula_storage::Error::io(format!("removing {}", dir.display()), e))?;
        Ok(())
    }

    fn slow_calls(&self) -> RsResult<Vec<SlowCall>> {
        Ok(self.slow_log.calls())
    }

    fn clear_slow_calls(&self) -> RsResult<bool> {
        Ok(self.slow_log.clear())
    }
}

/// The directory name of a server's commit log under the shared logs root: the
/// server's name, which must not be empty, a path step, or contain a `/`.
pub fn server_log_dir_name(server: &str) -> RsResult<&str> {
    if server.is_empty()
        || server == "."
        || server == ".."
        || server.contains('/')
        || server.contains('\0')
    {
        return Err(RsError::Storage(tabula_storage::Error::InvalidArgument(
            format!("{server:?} cannot name a regionserver's log directory"),
        )));
    }
    Ok(server)
}
