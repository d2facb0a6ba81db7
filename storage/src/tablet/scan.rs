//! Reads of a tablet: gets and scanners.
//!
//! Owns: choosing the sources of a read (memtables, then the files of the families
//! read, pruned for single-row reads by bloom filters and by the files' timestamp
//! ranges, clamped to the tablet's rows), the newest-source-first order of a get
//! of one column's newest version, the forward and reverse row walks of
//! [`TabletScanner`], the filter's row-level calls, and splitting wide rows into
//! batches.
//! Must not: resolve versions or deletes itself (see [`crate::read`]).

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};

use super::{Tablet, Version};
use crate::error::Result;
use crate::filter::{Filter, RowVerdict, SkipHint};
use crate::iter::KvIter;
use crate::key;
use crate::merge::merged;
use crate::read::{read_row, FamilyPlan, ReadOptions, ReadPlan, ReadScratch};
use crate::sstable::SstMeta;
use crate::types::Cell;

/// What a read merges: one cursor per source, and whether any of them may hold
/// delete markers.
pub(crate) struct Sources {
    pub(crate) iters: Vec<Box<dyn KvIter>>,
    /// The newest timestamp each cursor may hold (`i64::MAX` for a memtable or a
    /// run of files), side by side with `iters`.
    pub(crate) newest: Vec<i64>,
    pub(crate) may_hold_markers: bool,
}

/// A scan of a tablet.
#[derive(Debug, Default)]
pub struct ScanRequest {
    /// First row (inclusive; for reverse scans the highest row); empty = unbounded.
    pub start_row: Bytes,
    /// Row where the scan stops (exclusive); empty = unbounded.
    pub stop_row: Bytes,
    /// Rows in descending order.
    pub reverse: bool,
    pub read: ReadOptions,
    /// Maximum cells per result; 0 = whole rows. Ignored when the filter needs whole
    /// rows.
    pub batch: usize,
}

/// A row (or part of one, when batching) returned by a scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowResult {
    /// The row's cells, at least one; each carries the row.
    pub cells: Vec<Cell>,
    /// More cells of this row follow in the next result.
    pub partial: bool,
}

impl RowResult {
    /// The row these cells belong to (empty only for a result without cells,
    /// which a scanner never returns).
    pub fn row(&self) -> &Bytes {
        static NO_ROW: Bytes = Bytes::new();
        self.cells.first().map_or(&NO_ROW, |c| &c.row)
    }
}

impl Tablet {
    /// The sources a read consults: memtables (newest first), then one cursor per
    /// sorted run of the plan's families. With `row` set (a get: the row and its
    /// key prefix, `key::row_start(row)`), each run gives at most its one file
    /// whose key range reaches the row, and none when that file's bloom filters
    /// rule the row (or the single column read) out.
    pub(crate) fn sources(
        &self,
        version: &Version,
        plan: &ReadPlan,
        row: Option<(&[u8], &[u8])>,
    ) -> Sources {
        let capacity = 2 + version.frozen.len() + version.files.len();
        let mut out: Vec<Box<dyn KvIter>> = Vec::with_capacity(capacity);
        let mut newest: Vec<i64> = Vec::with_capacity(capacity);
        let mut may_hold_markers = false;
        // Both hashes once per read, not once per source.
        let row_hash = row.map(|(r, _)| key::bloom_row_hash(r));
        // An empty memtable adds nothing but a cursor the merge must ask at every
        // step, and one whose row filter rules the row out nothing but a memtable
        // search. Callers take their snapshot before choosing sources, so writes it
        // takes later are past the snapshot anyway.
        let memtables = std::iter::once(&version.active).chain(version.frozen.iter().rev());
        for m in memtables.filter(|m| !m.is_empty()) {
            if row_hash.is_some_and(|rh| !m.may_contain_row_hash(rh)) {
                continue;
            }
            may_hold_markers |= m.holds_markers();
            out.push(Box::new(m.iter()));
            newest.push(i64::MAX);
        }
        let single = plan.single_column();
        let column_hash = row
            .zip(single)
            .map(|((r, _), (_, q))| key::bloom_column_hash(r, q));
        for fam in &plan.families {
            for run in version.family_runs(&fam.family) {
                let Some((_, row_key)) = row else {
                    // A scan reads every run through one cursor.
                    may_hold_markers |= run.holds_markers();
                    out.push(run.cursor(true));
                    newest.push(i64::MAX);
                    continue;
                };
                // A get reads at most one file of the run: the one whose key range
                // meets the row, if its filters do not rule the row out (a file
                // without the row cannot hold the column; the row filter is checked
                // too, as a family may keep row blooms only).
                let Some(f) = run.file_for_row(row_key) else {
                    continue;
                };
                let meta = f.reader.meta();
                let keep = may_matter_to(meta, fam)
                    && row_hash.is_none_or(|rh| f.reader.may_contain_row_hash(rh))
                    && column_hash.is_none_or(|ch| f.reader.may_contain_column_hash(ch));
                if !keep {
                    continue;
                }
                may_hold_markers |= meta.delete_count > 0;
                out.push(f.cursor(true));
                newest.push(meta.max_timestamp);
            }
        }
        Sources {
            iters: out,
            newest,
            may_hold_markers,
        }
    }

    /// Resolves one row at `snapshot` (no row-level filter calls).
    pub(crate) fn read_row_with(
        &self,
        row: &Bytes,
        plan: &ReadPlan,
        snapshot: u64,
        filter: Option<&mut (dyn Filter + 'static)>,
    ) -> Result<Vec<Cell>> {
        let version = self.version_guard();
        let row_key = key::row_start(row);
        let mut sources = self.sources(&version, plan, Some((row, &row_key)));
        // Without delete markers in any source, an as-of read of one column has
        // nothing to collect before its version: one seek goes straight to it
        // (through the block index) instead of a seek to the row and another to
        // the version.
        let version_target = plan
            .single_column_as_of()
            .filter(|_| !sources.may_hold_markers)
            .map(|(family, qualifier, newest)| key::column_put_at(row, family, qualifier, newest));
        let target = version_target.as_deref().unwrap_or(&row_key);
        let mut scratch = ReadScratch::default();
        if filter.is_none() && newest_version_only(plan, &sources) {
            if let Some(cells) = newest_source_first(
                &mut sources,
                row,
                &row_key,
                target,
                plan,
                snapshot,
                &mut scratch,
            )? {
                return Ok(cells);
            }
        }
        let mut iter = merged(sources.iters);
        iter.seek(target)?;
        Ok(read_row(
            iter.as_mut(),
            row.clone(),
            &row_key,
            plan,
            snapshot,
            filter,
            &mut scratch,
        )?
        .cells)
    }

    /// Reads one row: HBase's Get. Returns the included cells (empty when the row
    /// has none or the filter dropped it).
    pub fn get(&self, row: &Bytes, mut opts: ReadOptions) -> Result<Vec<Cell>> {
        self.check_open()?;
        crate::types::check_row(row)?;
        if !self.contains_row(row) {
            return Err(crate::error::Error::RowOutOfRange { tablet: self.id });
        }
        let plan = ReadPlan::compile(&self.schema_guard(), &opts, self.shared.now_ms())?;
        self.requests.read(row);
        let snapshot = self.mvcc.read_point();
        let mut filter = opts.filter.take();
        if let Some(f) = filter.as_deref_mut() {
            if f.filter_all_remaining() {
                return Ok(Vec::new());
            }
            f.reset();
            if f.filter_row_key(row) != RowVerdict::Include {
                return Ok(Vec::new());
            }
        }
        let mut cells = self.read_row_with(row, &plan, snapshot, filter.as_deref_mut())?;
        if let Some(f) = filter.as_deref_mut() {
            f.filter_row_cells(&mut cells);
            if f.filter_row() {
                cells.clear();
            }
        }
        Ok(cells)
    }

    /// Opens a scanner over the tablet's rows in `[start_row, stop_row)` clamped to
    /// the tablet's range. The scanner sees the data as of its creation.
    pub fn scan(&self, mut req: ScanRequest) -> Result<TabletScanner> {
        self.check_open()?;
        let mut plan = ReadPlan::compile(&self.schema(), &req.read, self.shared.now_ms())?;
        plan.prepare_for_rows();
        // The snapshot is taken before the sources are chosen: every write it
        // covers is then in one of them.
        let snapshot = self.mvcc.read_point();
        let version = self.version();
        let iter = merged(self.sources(&version, &plan, None).iters);
        let filter = req.read.filter.take();
        let whole_rows = filter.as_ref().is_some_and(|f| f.needs_whole_row());
        let next_target = if req.reverse {
            // Reverse scans start just past their first row (or the tablet's end, or
            // the largest key any source holds) and walk down.
            if !req.start_row.is_empty()
                && (self.end_row.is_empty() || req.start_row < self.end_row)
            {
                key::row_end(&req.start_row)
            } else if !self.end_row.is_empty() {
                key::row_start(&self.end_row)
            } else {
                let mut top = largest_key(&version);
                top.push(0);
                top
            }
        } else {
            key::row_start(std::cmp::max(&req.start_row, &self.start_row))
        };
        // Forward scans stop at the nearer of the stop row and the tablet's end.
        let stop = if req.reverse {
            req.stop_row.clone()
        } else if req.stop_row.is_empty()
            || (!self.end_row.is_empty() && self.end_row < req.stop_row)
        {
            self.end_row.clone()
        } else {
            req.stop_row.clone()
        };
        Ok(TabletScanner {
            _version: version,
            requests: self.requests.clone(),
            iter,
            plan,
            snapshot,
            filter,
            reverse: req.reverse,
            stop,
            tablet_start: self.start_row.clone(),
            next_target,
            row_key: Vec::new(),
            row_arena: BytesMut::new(),
            scratch: ReadScratch::default(),
            batch: if whole_rows { 0 } else { req.batch },
            pending: VecDeque::new(),
            done: false,
            end_after_row: false,
            positioned: false,
            hinted_target: None,
            ended_by_filter: false,
        })
    }
}

fn largest_key(version: &Version) -> Vec<u8> {
    let mut top: Vec<u8> = Vec::new();
    let mems = std::iter::once(&version.active).chain(version.frozen.iter());
    for m in mems {
        if let Some(k) = m.last_key() {
            top = top.max(k);
        }
    }
    for f in &version.files {
        let k = f.reader.meta().largest_key.clone();
        top = top.max(k);
    }
    top
}

/// A scanner over one tablet. Holds the version it started with, so flushes and
/// compactions never disturb it; sees writes visible at its creation.
pub struct TabletScanner {
    _version: Arc<Version>,
    /// The tablet's request counters: every row returned counts one read.
    requests: Arc<super::requests::RequestCounters>,
    iter: Box<dyn KvIter>,
    plan: ReadPlan,
    snapshot: u64,
    filter: Option<Box<dyn Filter>>,
    reverse: bool,
    /// Exclusive end of the scan: forward, rows must be below it; reverse, above it.
    /// Empty = unbounded.
    stop: Bytes,
    /// The tablet's first row: reverse scans end below it.
    tablet_start: Bytes,
    /// Where the first row is sought (forward: its first key; reverse: the bound
    /// the first row is below), then the buffer a forward seek past a row's end is
    /// built in.
    next_target: Vec<u8>,
    /// The current row as keys start with it.
    row_key: Vec<u8>,
    /// Where the rows handed out are copied (see [`key::split_row`]).
    row_arena: BytesMut,
    scratch: ReadScratch,
    batch: usize,
    pending: VecDeque<RowResult>,
    done: bool,
    end_after_row: bool,
    /// False until the first row is sought.
    positioned: bool,
    /// Where the next row is sought instead of the row after the current one: set
    /// when the filter skipped a row and named where the rows it keeps resume.
    hinted_target: Option<Vec<u8>>,
    /// The filter ended the scan (WHILE, PageFilter...): later tablets of the same
    /// scan must not be read either.
    ended_by_filter: bool,
}

impl TabletScanner {
    /// The next row (or batch of a row); `None` at the end.
    pub fn next_row(&mut self) -> Result<Option<RowResult>> {
        loop {
            if let Some(r) = self.pending.pop_front() {
                return Ok(Some(r));
            }
            if self.done {
                return Ok(None);
            }
            let Some(cells) = self.next_full_row()? else {
                self.done = true;
                return Ok(None);
            };
            self.requests
                .read(cells.first().map_or(&[][..], |c| c.row.as_ref()));
            if self.batch == 0 || cells.len() <= self.batch {
                return Ok(Some(RowResult {
                    cells,
                    partial: false,
                }));
            }
            let mut chunks = cells.chunks(self.batch).peekable();
            while let Some(c) = chunks.next() {
                self.pending.push_back(RowResult {
                    cells: c.to_vec(),
                    partial: chunks.peek().is_some(),
                });
            }
        }
    }

    /// Collects up to `n` results.
    pub fn next_rows(&mut self, n: usize) -> Result<Vec<RowResult>> {
        let mut out = Vec::with_capacity(n.min(1024));
        while out.len() < n {
            match self.next_row()? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(out)
    }

    /// True when the filter, not the end of the rows, ended the scan.
    pub fn ended_by_filter(&self) -> bool {
        self.ended_by_filter
    }

    /// The next row's cells (never empty); `None` at the end.
    fn next_full_row(&mut self) -> Result<Option<Vec<Cell>>> {
        loop {
            if self.end_after_row {
                self.ended_by_filter = true;
                return Ok(None);
            }
            if let Some(f) = self.filter.as_deref() {
                if f.filter_all_remaining() {
                    self.ended_by_filter = true;
                    return Ok(None);
                }
            }
            let Some((row, prefix_len)) = self.position_next_row()? else {
                return Ok(None);
            };
            // The cursor stands on an entry of `row`, whose key starts with the
            // escaped row (= `row_start`): the next row is found from it.
            self.row_key.clear();
            self.row_key
                .extend_from_slice(self.iter.key().get(..prefix_len).ok_or_else(bad_key)?);
            if let Some(f) = self.filter.as_deref_mut() {
                f.reset();
                match f.filter_row_key(&row) {
                    RowVerdict::Include => {}
                    RowVerdict::Skip => {
                        if let SkipHint::SkipTo(bound) = f.skip_hint(&row) {
                            self.hinted_target = hinted_target(&row, &bound, self.reverse);
                        }
                        continue;
                    }
                    RowVerdict::EndScan => {
                        self.ended_by_filter = true;
                        return Ok(None);
                    }
                }
            }
            if self.reverse {
                self.iter.seek(&self.row_key)?;
            }
            // The row's handle goes to its first cell.
            let outcome = read_row(
                self.iter.as_mut(),
                row,
                &self.row_key,
                &self.plan,
                self.snapshot,
                self.filter.as_deref_mut(),
                &mut self.scratch,
            )?;
            let mut cells = outcome.cells;
            if outcome.end_scan {
                self.end_after_row = true;
            }
            if let Some(f) = self.filter.as_deref_mut() {
                f.filter_row_cells(&mut cells);
                if f.filter_row() {
                    continue;
                }
            }
            if cells.is_empty() {
                continue;
            }
            return Ok(Some(cells));
        }
    }

    /// Finds the next candidate row in scan order, or `None` past the range.
    /// Returns the row and the length of its escaped form at the front of the
    /// cursor's key.
    fn position_next_row(&mut self) -> Result<Option<(Bytes, usize)>> {
        if self.reverse {
            // After the first row, the row below the current one: the last entry
            // before the current row's start.
            let target = if let Some(hinted) = &self.hinted_target {
                hinted
            } else if self.positioned {
                &self.row_key
            } else {
                self.positioned = true;
                &self.next_target
            };
            self.iter.seek_for_prev(target)?;
            self.hinted_target = None;
            if !self.iter.valid() {
                return Ok(None);
            }
            let (row, prefix_len) =
                key::split_row(self.iter.key(), &mut self.row_arena).ok_or_else(bad_key)?;
            let below = (!self.stop.is_empty() && row.as_ref() <= self.stop.as_ref())
                || row.as_ref() < self.tablet_start.as_ref();
            if below {
                return Ok(None);
            }
            Ok(Some((row, prefix_len)))
        } else {
            if let Some(hinted) = self.hinted_target.take() {
                // The cursor stands in the skipped row: a few steps reach a hinted
                // row close by, a seek one far away.
                crate::read::skip_to(self.iter.as_mut(), &hinted)?;
            } else if self.positioned {
                crate::read::skip_past_row(
                    self.iter.as_mut(),
                    &self.row_key,
                    &mut self.next_target,
                )?;
            } else {
                self.iter.seek(&self.next_target)?;
                self.positioned = true;
            }
            if !self.iter.valid() {
                return Ok(None);
            }
            let (row, prefix_len) =
                key::split_row(self.iter.key(), &mut self.row_arena).ok_or_else(bad_key)?;
            if !self.stop.is_empty() && row.as_ref() >= self.stop.as_ref() {
                return Ok(None);
            }
            Ok(Some((row, prefix_len)))
        }
    }
}

/// The seek target of a filter's [`SkipHint::SkipTo`] after it skipped `row`: the
/// first key of `bound`'s row (a forward seek lands on the first row at or above it;
/// a reversed one, seeking for the entry before it, on the last row below it).
/// `None` when the bound is not past `row` in scan order.
fn hinted_target(row: &[u8], bound: &[u8], reverse: bool) -> Option<Vec<u8>> {
    let past = if reverse { bound < row } else { bound > row };
    past.then(|| key::row_start(bound))
}

fn bad_key() -> crate::error::Error {
    crate::error::Error::corruption("<merged sources>", "malformed internal key")
}

/// False when a file cannot hold anything a read of `fam` returns or that hides
/// what it returns: it is empty, every entry in it is older than the read's time
/// range or (when no versions are kept past it) the family's TTL (a delete marker
/// only hides versions at or before its own time), or it holds no delete markers
/// and every entry is newer than the range.
fn may_matter_to(meta: &SstMeta, fam: &FamilyPlan) -> bool {
    if meta.entry_count == 0
        || meta.max_timestamp < fam.time_range.min
        || (meta.max_timestamp < fam.ttl_cutoff && fam.min_versions == 0)
    {
        return false;
    }
    let newer_than_range = fam
        .time_range
        .newest()
        .is_some_and(|newest| meta.min_timestamp > newest);
    !(meta.delete_count == 0 && newer_than_range)
}

/// True when the read wants only the newest version of one column, unfiltered,
/// from sources without delete markers: then each source can be read alone, the
/// newest first, and a source whose newest timestamp is below a version already
/// found cannot change the answer.
fn newest_version_only(plan: &ReadPlan, sources: &Sources) -> bool {
    sources.iters.len() > 1
        && !sources.may_hold_markers
        && plan.single_column().is_some()
        && plan.families.first().is_some_and(|f| f.max_versions == 1)
}

/// HBase's lazy seek for a get of one column's newest version: reads the sources
/// one at a time in descending order of the newest timestamp each may hold
/// (memtables first), keeping the newest version found, and stops at the first
/// source whose newest timestamp is below it -- a row rewritten since the bulk of
/// its table was written reads one block instead of one per file. Two sources
/// holding the same timestamp need the merge's sequence order to pick the later
/// write: `None` then, and the caller merges every source.
fn newest_source_first(
    sources: &mut Sources,
    row: &Bytes,
    row_key: &[u8],
    target: &[u8],
    plan: &ReadPlan,
    snapshot: u64,
    scratch: &mut ReadScratch,
) -> Result<Option<Vec<Cell>>> {
    let mut order: Vec<(i64, usize)> = sources
        .newest
        .iter()
        .enumerate()
        .map(|(i, &newest)| (newest, i))
        .collect();
    // Descending by timestamp; the sort is stable, so ties keep the sources' order
    // (memtables newest first).
    order.sort_by_key(|&(newest, _)| std::cmp::Reverse(newest));
    let mut best: Option<Vec<Cell>> = None;
    for (newest, i) in order {
        let found_ts = best
            .as_ref()
            .and_then(|cells| cells.first())
            .map(|c| c.timestamp);
        if found_ts.is_some_and(|ts| newest < ts) {
            break;
        }
        let Some(iter) = sources.iters.get_mut(i) else {
            continue;
        };
        iter.seek(target)?;
        let cells = read_row(
            iter.as_mut(),
            row.clone(),
            row_key,
            plan,
            snapshot,
            None,
            scratch,
        )?
        .cells;
        let Some(ts) = cells.first().map(|c| c.timestamp) else {
            continue;
        };
        if cells.len() > 1 || found_ts == Some(ts) {
            return Ok(None);
        }
        if found_ts.is_none_or(|found| ts > found) {
            best = Some(cells);
        }
    }
    Ok(Some(best.unwrap_or_default()))
}
