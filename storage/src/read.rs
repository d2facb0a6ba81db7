//! The read path: turning the merged entry stream of a tablet into the cells HBase
//! semantics make visible.
//!
//! Owns: [`ReadOptions`] (what a get or scan asks for), the compiled per-family
//! [`ReadPlan`], and [`read_row`], which resolves one row: sequence-number snapshots,
//! duplicate versions, delete markers (family, family-version, column, version), TTL,
//! time ranges, the filter hook and version limits.
//! Must not: choose sources, open files or know about memtables; it only walks a
//! [`KvIter`].
//!
//! Visibility of one put, in the order it is decided:
//! 1. its sequence number is within the reader's snapshot;
//! 2. it is the newest write at its (column, timestamp);
//! 3. its timestamp is inside the family's time range;
//! 4. it is not expired by the family TTL;
//! 5. no visible marker covers it (DeleteFamily/DeleteColumn at ts >= its ts,
//!    DeleteFamilyVersion/DeleteVersion at exactly its ts);
//! 6. the filter includes it;
//! 7. fewer than `min(read max versions, family max versions)` versions of its
//!    column were included before it.
//!
//! Because a column's markers sort before its puts and puts sort newest first, steps
//! 3-5 turn into a lower bound and an upper bound on the timestamp: the reader seeks
//! straight to the newest admissible version ("as of T" costs a seek, not a walk).

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::filter::{CellVerdict, ColumnHint, Filter};
use crate::iter::KvIter;
use crate::key::{self, KeyKind};
use crate::schema::{KeepDeleted, TableSchema};
use crate::types::{Cell, ColumnSelector, TimeRange};

/// Sequential steps tried before a skip falls back to a seek.
const MAX_SEQUENTIAL_SKIPS: usize = 8;
/// Steps tried before seeking to the newest version inside a time range.
const AS_OF_SEQUENTIAL_SKIPS: usize = 2;

/// What a get or a scan asks for.
#[derive(Default)]
pub struct ReadOptions {
    /// Columns and families, in request order; empty means every family.
    pub columns: Vec<ColumnSelector>,
    /// Time range for every family.
    pub time_range: TimeRange,
    /// Per-family time ranges overriding `time_range` (Thrift2 colFamTimeRangeMap).
    pub family_time_ranges: Vec<(Bytes, TimeRange)>,
    /// Versions per column (0 is treated as 1).
    pub max_versions: u32,
    /// The server-side filter, if any.
    pub filter: Option<Box<dyn Filter>>,
}

impl std::fmt::Debug for ReadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOptions")
            .field("columns", &self.columns)
            .field("time_range", &self.time_range)
            .field("family_time_ranges", &self.family_time_ranges)
            .field("max_versions", &self.max_versions)
            .field("filter", &self.filter.is_some())
            .finish()
    }
}

impl ReadOptions {
    /// The latest version of every column.
    pub fn latest() -> Self {
        ReadOptions {
            max_versions: 1,
            ..Default::default()
        }
    }

    /// Sets the columns.
    pub fn columns(mut self, columns: Vec<ColumnSelector>) -> Self {
        self.columns = columns;
        self
    }

    /// Sets the time range.
    pub fn time_range(mut self, range: TimeRange) -> Self {
        self.time_range = range;
        self
    }

    /// Sets max versions.
    pub fn versions(mut self, n: u32) -> Self {
        self.max_versions = n;
        self
    }

    /// Sets the filter.
    pub fn filter(mut self, filter: Box<dyn Filter>) -> Self {
        self.filter = Some(filter);
        self
    }
}

/// One family's part of a read.
#[derive(Debug, Clone)]
pub struct FamilyPlan {
    pub family: Bytes,
    /// The family escaped as keys hold it (built once per read, not once per row).
    pub escaped_family: Vec<u8>,
    /// Sorted, deduplicated qualifiers; `None` = every column.
    pub qualifiers: Option<Vec<Bytes>>,
    /// For each of `qualifiers`, in order, the bytes that follow the family's key
    /// prefix in the keys of that column (the column scope byte and the escaped
    /// qualifier): built by [`ReadPlan::prepare_for_rows`] for reads of many rows
    /// (scans), once per read instead of once per row; empty otherwise (a get
    /// escapes its columns as it reads them).
    pub column_suffixes: Vec<Vec<u8>>,
    pub time_range: TimeRange,
    /// Versions returned per column.
    pub max_versions: u32,
    /// Versions the family keeps: a filter is shown this many versions of a column
    /// even when fewer are returned (as HBase calls filters before its version
    /// limit), e.g. SingleColumnValueFilter with latestVersionOnly = false.
    pub stored_versions: u32,
    /// Oldest live timestamp under the TTL (i64::MIN when none).
    pub ttl_cutoff: i64,
    /// Versions of a column readable although older than `ttl_cutoff` (the newest
    /// this many of those the time range and deletes admit).
    pub min_versions: u32,
    /// Delete markers count only when their timestamp lies in `time_range` (a
    /// family keeping deleted cells: a read as of a time before a delete sees
    /// what it deleted); otherwise markers at or after the range count too.
    pub markers_in_range_only: bool,
}

impl FamilyPlan {
    /// Whether a delete marker at `timestamp` applies to this read.
    fn marker_counts(&self, timestamp: i64) -> bool {
        !self.markers_in_range_only || self.time_range.contains(timestamp)
    }
}

/// A read compiled against a schema: which families, columns and limits.
#[derive(Debug, Clone)]
pub struct ReadPlan {
    /// Families sorted by name.
    pub families: Vec<FamilyPlan>,
}

impl ReadPlan {
    /// Compiles `opts` against `schema` at time `now_ms`. Unknown families fail.
    ///
    /// Columns combine as HBase's Get/Scan builders do: naming a family selects all
    /// of it; naming a column after its family (or alone) narrows it to the named
    /// columns; naming the family after its columns widens it back to all.
    pub fn compile(schema: &TableSchema, opts: &ReadOptions, now_ms: i64) -> Result<ReadPlan> {
        // Families are few: a small vector searched linearly (sorted below) costs
        // less than a map on every get.
        let mut wanted: Vec<(Bytes, Option<Vec<Bytes>>)> = Vec::new();
        for sel in &opts.columns {
            schema.require_family(sel.family())?;
            let slot = match wanted.iter().position(|(f, _)| f == sel.family()) {
                Some(i) => wanted.get_mut(i),
                None => {
                    wanted.push((sel.family().clone(), None));
                    wanted.last_mut()
                }
            };
            let Some((_, columns)) = slot else {
                continue;
            };
            match (sel, columns.as_mut()) {
                (ColumnSelector::Family(_), _) => *columns = None,
                (ColumnSelector::Column(_, q), Some(set)) => set.push(q.clone()),
                (ColumnSelector::Column(_, q), None) => *columns = Some(vec![q.clone()]),
            }
        }
        if opts.columns.is_empty() {
            for f in schema.families() {
                wanted.push((f.name.clone(), None));
            }
        }
        wanted.sort_by(|a, b| a.0.cmp(&b.0));
        let asked = opts.max_versions.max(1);
        let mut families = Vec::with_capacity(wanted.len());
        for (asked_family, quals) in wanted {
            let fs = schema.require_family(&asked_family)?;
            // The schema's handle on the name (interned), not the request's.
            let family = fs.name.clone();
            let qualifiers = quals.map(|mut q| {
                q.sort();
                q.dedup();
                q
            });
            let time_range = opts
                .family_time_ranges
                .iter()
                .find(|(f, _)| *f == family)
                .map(|(_, r)| *r)
                .unwrap_or(opts.time_range);
            families.push(FamilyPlan {
                max_versions: asked.min(fs.max_versions),
                stored_versions: fs.max_versions,
                ttl_cutoff: fs.ttl_cutoff(now_ms),
                min_versions: fs.min_versions,
                markers_in_range_only: fs.keep_deleted != KeepDeleted::No,
                escaped_family: key::row_start(&family),
                family,
                qualifiers,
                column_suffixes: Vec::new(),
                time_range,
            });
        }
        Ok(ReadPlan { families })
    }

    /// Builds what a read of many rows reuses from row to row (see
    /// [`FamilyPlan::column_suffixes`]).
    pub fn prepare_for_rows(&mut self) {
        for f in &mut self.families {
            f.column_suffixes = f
                .qualifiers
                .iter()
                .flatten()
                .map(|q| key::column_suffix(q))
                .collect();
        }
    }

    /// The family names the plan reads.
    pub fn family_names(&self) -> impl Iterator<Item = &Bytes> {
        self.families.iter().map(|f| &f.family)
    }

    /// The one column read and the newest timestamp admitted, when the plan reads
    /// one column as of a time (a time range with an upper bound).
    pub fn single_column_as_of(&self) -> Option<(&Bytes, &Bytes, i64)> {
        let (family, qualifier) = self.single_column()?;
        let newest = self.families.first()?.time_range.newest()?;
        (newest != i64::MAX).then_some((family, qualifier, newest))
    }

    /// True when the plan names specific columns in every family (a bloom filter on
    /// row+column can then rule a file out).
    pub fn single_column(&self) -> Option<(&Bytes, &Bytes)> {
        match self.families.as_slice() {
            [f] => match f.qualifiers.as_deref() {
                Some([q]) => Some((&f.family, q)),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The result of resolving one row.
#[derive(Debug, Default)]
pub struct RowOutcome {
    /// Included cells: families and qualifiers ascending, versions newest first.
    pub cells: Vec<Cell>,
    /// The filter asked to end the scan after this row.
    pub end_scan: bool,
}

/// Moves `iter` forward to the first entry >= `target`: a few steps first, a seek if
/// the target is further away. Never moves backwards.
pub fn skip_to(iter: &mut dyn KvIter, target: &[u8]) -> Result<()> {
    skip_to_within(iter, target, MAX_SEQUENTIAL_SKIPS)
}

/// Moves `iter`, standing at or after the first entry of a row, past the row's
/// entries (`row_key` is the escaped row every one of them starts with), seeking
/// to the row's end, built in `target`, when the row goes on.
pub fn skip_past_row(iter: &mut dyn KvIter, row_key: &[u8], target: &mut Vec<u8>) -> Result<()> {
    skip_past_prefix(iter, row_key, target, |end| key::escaped_row_to_end(end))
}

/// Moves `iter`, standing at or after the first key starting with `prefix`, past
/// every such key: a few steps first, then a seek to the end of the prefix's
/// keys, built in `end` as `prefix` changed by `to_end`.
fn skip_past_prefix(
    iter: &mut dyn KvIter,
    prefix: &[u8],
    end: &mut Vec<u8>,
    to_end: impl FnOnce(&mut Vec<u8>),
) -> Result<()> {
    for _ in 0..MAX_SEQUENTIAL_SKIPS {
        if !iter.valid() || !iter.key().starts_with(prefix) {
            return Ok(());
        }
        iter.next()?;
    }
    if iter.valid() && iter.key().starts_with(prefix) {
        end.clear();
        end.extend_from_slice(prefix);
        to_end(end);
        iter.seek(end)?;
    }
    Ok(())
}

/// [`skip_to`] trying at most `steps` steps before seeking.
fn skip_to_within(iter: &mut dyn KvIter, target: &[u8], steps: usize) -> Result<()> {
    for _ in 0..steps {
        if !iter.valid() || iter.key() >= target {
            return Ok(());
        }
        iter.next()?;
    }
    if iter.valid() && iter.key() < target {
        iter.seek(target)?;
    }
    Ok(())
}

/// Moves `iter` past every entry of the column `col` (a column-scope key prefix
/// up to the escaped qualifier): a few steps first, a seek past the column if it
/// goes on.
fn skip_column(iter: &mut dyn KvIter, col: &[u8]) -> Result<()> {
    // The class byte after the column is 0x00 or 0x01: 0x02 is past both.
    skip_past_prefix(iter, col, &mut Vec::new(), |end| end.push(0x02))
}

/// Positions `iter` at `target` unless it already stands in `[target, limit)`.
fn ensure_at(iter: &mut dyn KvIter, target: &[u8]) -> Result<()> {
    if iter.valid() && iter.key() >= target {
        // Already at or past the target: the caller checks the prefix.
        return Ok(());
    }
    skip_to(iter, target)
}

/// Buffers a read reuses from row to row (a scanner keeps one for its life), so
/// that seek targets and decoded qualifiers do not cost an allocation per row.
#[derive(Debug, Default)]
pub struct ReadScratch {
    family_prefix: Vec<u8>,
    column: Vec<u8>,
    qualifier: Vec<u8>,
    /// The last qualifier handed out in a cell: the next rows' cells of the same
    /// column share it instead of allocating their own.
    last_qualifier: Bytes,
}

impl ReadScratch {
    /// `qualifier` (just decoded) as bytes, shared with the previous call's when
    /// equal.
    fn qualifier_bytes(&mut self) -> Bytes {
        if self.last_qualifier.as_ref() != self.qualifier.as_slice() {
            self.last_qualifier = Bytes::copy_from_slice(&self.qualifier);
        }
        self.last_qualifier.clone()
    }
}

/// Where a read of one row stands.
struct RowCtx<'a> {
    /// The row, until the first cell included without a filter takes it (see
    /// [`RowCtx::row_for_kept_cell`]).
    row: Option<Bytes>,
    /// The row escaped as keys start with it (`key::row_start(row)`).
    row_key: &'a [u8],
    snapshot: u64,
    filter: Option<&'a mut (dyn Filter + 'static)>,
    scratch: &'a mut ReadScratch,
    cells: Vec<Cell>,
    /// When set, included entries are collected here as raw `(key, value)` pairs
    /// instead of cells (major compaction keeps original keys).
    raw: Option<Vec<(Vec<u8>, Vec<u8>)>>,
    stop_row: bool,
    end_scan: bool,
    /// Where the filter sent the read on to in the family (see
    /// [`Filter::column_hint`]): a later qualifier, or the family's end.
    column_target: Option<ColumnHint>,
}

impl RowCtx<'_> {
    /// The row for a cell included without a filter (nothing drops it later): the
    /// first such cell takes the row's own handle and later ones share the first
    /// one's, so a row of one cell costs no reference count beyond its own.
    fn row_for_kept_cell(&mut self) -> Result<Bytes> {
        match self.row.take() {
            Some(row) => Ok(row),
            None => self.row_for_cell(),
        }
    }

    /// The row for a cell a filter may still drop: a shared handle.
    fn row_for_cell(&self) -> Result<Bytes> {
        if let Some(row) = &self.row {
            return Ok(row.clone());
        }
        if let Some(c) = self.cells.first() {
            return Ok(c.row.clone());
        }
        key::row_bytes_of(self.row_key).ok_or_else(bad_key)
    }
}

/// Resolves one row. `row_key` is the row as keys start with it
/// (`key::row_start(row)`). `iter` may stand anywhere at or before the row's first
/// entry the read needs (it is moved forward as needed and left somewhere at or
/// after the row's end of the last family read): with no delete markers that
/// can be the newest admissible version itself. Entries with sequence numbers above `snapshot` are
/// invisible.
pub fn read_row(
    iter: &mut dyn KvIter,
    row: Bytes,
    row_key: &[u8],
    plan: &ReadPlan,
    snapshot: u64,
    filter: Option<&mut (dyn Filter + 'static)>,
    scratch: &mut ReadScratch,
) -> Result<RowOutcome> {
    let mut ctx = RowCtx {
        row: Some(row),
        row_key,
        snapshot,
        filter,
        scratch,
        cells: Vec::new(),
        raw: None,
        stop_row: false,
        end_scan: false,
        column_target: None,
    };
    for fam in &plan.families {
        if ctx.stop_row {
            break;
        }
        read_family(iter, fam, &mut ctx)?;
    }
    Ok(RowOutcome {
        cells: ctx.cells,
        end_scan: ctx.end_scan,
    })
}

/// Like [`read_row`] with an unlimited snapshot and no filter, but returns the
/// surviving entries as raw `(key, value)` pairs, markers excluded (major compaction).
pub fn read_row_raw(
    iter: &mut dyn KvIter,
    row: &Bytes,
    plan: &ReadPlan,
    scratch: &mut ReadScratch,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let row_key = key::row_start(row);
    let mut ctx = RowCtx {
        // Raw entries carry their keys: no cell needs the row.
        row: None,
        row_key: &row_key,
        snapshot: u64::MAX,
        filter: None,
        scratch,
        cells: Vec::new(),
        raw: Some(Vec::new()),
        stop_row: false,
        end_scan: false,
        column_target: None,
    };
    for fam in &plan.families {
        read_family(iter, fam, &mut ctx)?;
    }
    Ok(ctx.raw.unwrap_or_default())
}

fn bad_key() -> Error {
    Error::corruption("<merged sources>", "malformed internal key")
}

/// The delete markers in force over a column (its family's within the row, then
/// its own): everything at or before the newest "up to" marker's timestamp (a
/// DeleteFamily or DeleteColumn), and the exact versions a DeleteFamilyVersion or
/// DeleteVersion names. Reads and compactions that keep deleted cells share it.
#[derive(Debug, Default, Clone)]
pub(crate) struct DeleteMarkers {
    up_to: Option<i64>,
    versions: Vec<i64>,
}

impl DeleteMarkers {
    /// Adds a marker (a put is not one: it is passed over).
    pub(crate) fn add(&mut self, kind: KeyKind, timestamp: i64) {
        match kind {
            KeyKind::DeleteFamily | KeyKind::DeleteColumn => {
                self.up_to = Some(self.up_to.map_or(timestamp, |u| u.max(timestamp)));
            }
            KeyKind::DeleteFamilyVersion | KeyKind::DeleteVersion => self.versions.push(timestamp),
            KeyKind::Put => {}
        }
    }

    /// The newest timestamp every version at or before which is deleted.
    pub(crate) fn up_to(&self) -> Option<i64> {
        self.up_to
    }

    /// True when the version at `timestamp` is deleted.
    pub(crate) fn covers(&self, timestamp: i64) -> bool {
        self.up_to.is_some_and(|u| timestamp <= u) || self.versions.contains(&timestamp)
    }
}

fn read_family(iter: &mut dyn KvIter, fam: &FamilyPlan, ctx: &mut RowCtx<'_>) -> Result<()> {
    // The prefix is built in the scratch buffer, which is lent out for the call.
    let mut family_prefix = std::mem::take(&mut ctx.scratch.family_prefix);
    family_prefix.clear();
    family_prefix.extend_from_slice(ctx.row_key);
    family_prefix.extend_from_slice(&fam.escaped_family);
    let result = read_family_at(iter, fam, &mut family_prefix, ctx);
    ctx.scratch.family_prefix = family_prefix;
    result
}

/// [`read_family`] once the family's key prefix is built (it is extended in place).
fn read_family_at(
    iter: &mut dyn KvIter,
    fam: &FamilyPlan,
    family_prefix: &mut Vec<u8>,
    ctx: &mut RowCtx<'_>,
) -> Result<()> {
    // A key with the prefix is at or past it: one comparison in the usual case.
    if !(iter.valid() && iter.key().starts_with(family_prefix)) {
        ensure_at(iter, family_prefix)?;
    }
    let mut markers = DeleteMarkers::default();
    // Family-scope markers come first: prefix + scope byte 0x00 (the byte is
    // tested first: it rules out column entries without comparing the prefix).
    while iter.valid() {
        let k = iter.key();
        if k.get(family_prefix.len()) != Some(&0x00) || !k.starts_with(family_prefix) {
            break;
        }
        let t = key::tail(k).ok_or_else(bad_key)?;
        if t.seq <= ctx.snapshot && fam.marker_counts(t.timestamp) {
            if !matches!(t.kind, KeyKind::DeleteFamily | KeyKind::DeleteFamilyVersion) {
                return Err(bad_key());
            }
            markers.add(t.kind, t.timestamp);
        }
        iter.next()?;
    }
    match &fam.qualifiers {
        Some(quals) => read_named_columns(iter, fam, quals, family_prefix, &markers, ctx),
        None => {
            // Every column: prefix + scope byte 0x01. The column at hand is copied
            // into the scratch buffer, lent out for the call.
            family_prefix.push(key::SCOPE_COLUMN);
            let mut col = std::mem::take(&mut ctx.scratch.column);
            let result = read_all_columns(iter, fam, family_prefix, &mut col, &markers, ctx);
            ctx.scratch.column = col;
            result
        }
    }
}

/// Reads the columns `quals` (sorted) of a family, each found by its own seek.
/// Each column's key prefix is built on the end of `family_prefix` (the row's
/// and family's escaped key prefix), which is left extended.
fn read_named_columns(
    iter: &mut dyn KvIter,
    fam: &FamilyPlan,
    quals: &[Bytes],
    family_prefix: &mut Vec<u8>,
    markers: &DeleteMarkers,
    ctx: &mut RowCtx<'_>,
) -> Result<()> {
    let base = family_prefix.len();
    for (i, q) in quals.iter().enumerate() {
        if ctx.stop_row {
            break;
        }
        family_prefix.truncate(base);
        match fam.column_suffixes.get(i) {
            Some(suffix) => family_prefix.extend_from_slice(suffix),
            None => key::column_suffix_into(family_prefix, q),
        }
        let col = family_prefix.as_slice();
        // The prefix test alone would also accept longer qualifiers whose escaped
        // form starts with this one's: compare the column part. A cursor already
        // on the column (the usual case) needs no other comparison.
        let on_column = |iter: &dyn KvIter| iter.valid() && column_part(iter.key()) == Some(col);
        let mut found = on_column(iter);
        if !found {
            ensure_at(iter, col)?;
            found = on_column(iter);
        }
        if found {
            // The next column (or row) is reached by its own seek, so the cursor may
            // stay inside this column.
            read_column(iter, fam, q, col, markers, ctx, false)?;
        }
    }
    Ok(())
}

/// Reads every column of a family; `columns_prefix` is the family's key prefix
/// followed by the column scope byte.
fn read_all_columns(
    iter: &mut dyn KvIter,
    fam: &FamilyPlan,
    columns_prefix: &[u8],
    col: &mut Vec<u8>,
    markers: &DeleteMarkers,
    ctx: &mut RowCtx<'_>,
) -> Result<()> {
    while !ctx.stop_row && iter.valid() && iter.key().starts_with(columns_prefix) {
        let k = iter.key();
        col.clear();
        col.extend_from_slice(column_part(k).ok_or_else(bad_key)?);
        key::qualifier_into(k, &mut ctx.scratch.qualifier).ok_or_else(bad_key)?;
        let qualifier = ctx.scratch.qualifier_bytes();
        read_column(iter, fam, &qualifier, col, markers, ctx, true)?;
        if let Some(hint) = ctx.column_target.take() {
            // The filter names where its columns resume: a few steps reach a column
            // close by, a seek one far away.
            col.clear();
            col.extend_from_slice(columns_prefix);
            match hint {
                ColumnHint::SkipTo(qualifier) => key::escape_into(col, &qualifier),
                // Past the column scope byte: past every column of the family.
                _ => {
                    if let Some(scope) = col.last_mut() {
                        *scope = key::SCOPE_COLUMN + 1;
                    }
                }
            }
            skip_to(iter, col)?;
        }
    }
    Ok(())
}

/// The bytes of a column-scope key up to and including the escaped qualifier.
pub(crate) fn column_part(k: &[u8]) -> Option<&[u8]> {
    // Column keys end with class (1) + tail (17).
    k.get(..k.len().checked_sub(18)?)
}

/// Reads one column; `iter` must stand on one of its entries (`col` is the
/// column's key prefix, see [`column_part`]). With `leave_past`, `iter` stands
/// after the column's entries on return (or anywhere in the row, when the filter
/// ended the row); without it, anywhere at or after the column's start (the
/// caller seeks onwards itself).
fn read_column(
    iter: &mut dyn KvIter,
    fam: &FamilyPlan,
    qualifier: &Bytes,
    col: &[u8],
    family_markers: &DeleteMarkers,
    ctx: &mut RowCtx<'_>,
    leave_past: bool,
) -> Result<()> {
    // The family's markers and the column's own (a copy of an empty list does not
    // allocate: most rows have no markers).
    let mut deletes = family_markers.clone();
    // Callers hand the cursor over standing on an entry of the column: until it
    // moves, the column need not be compared again.
    let mut known_on_column = true;
    // Column markers: class byte 0x00.
    while iter.valid() {
        let k = iter.key();
        // The class byte first: it rules out puts without comparing the column.
        if k.get(col.len()) != Some(&0x00) || column_part(k) != Some(col) {
            break;
        }
        let t = key::tail(k).ok_or_else(bad_key)?;
        if t.seq <= ctx.snapshot && fam.marker_counts(t.timestamp) {
            if !matches!(t.kind, KeyKind::DeleteColumn | KeyKind::DeleteVersion) {
                return Err(bad_key());
            }
            deletes.add(t.kind, t.timestamp);
        }
        iter.next()?;
        known_on_column = false;
    }
    let past_column = |iter: &mut dyn KvIter| -> Result<()> {
        if leave_past {
            skip_column(iter, col)?;
        }
        Ok(())
    };

    let newest = match fam.time_range.newest() {
        Some(n) => n,
        None => return past_column(iter),
    };
    // With versions kept past the TTL, expiry is told version by version below.
    let mut oldest = if fam.min_versions == 0 {
        fam.time_range.min.max(fam.ttl_cutoff)
    } else {
        fam.time_range.min
    };
    if let Some(d) = deletes.up_to() {
        if d == i64::MAX {
            return past_column(iter);
        }
        oldest = oldest.max(d + 1);
    }
    if oldest > newest {
        return past_column(iter);
    }

    // Jump to the newest admissible version unless the cursor is already there.
    // For a read as of a time, the versions to pass over may be many: seek
    // (through the block index, O(log n)) after a couple of steps.
    if newest != i64::MAX {
        let mut put_at = col.to_vec();
        put_at.push(0x01);
        put_at.extend_from_slice(&key::ts_desc(newest));
        skip_to_within(iter, &put_at, AS_OF_SEQUENTIAL_SKIPS)?;
        known_on_column = false;
    }

    let mut included = 0u32;
    // Visible versions passed to the filter so far.
    let mut seen = 0u32;
    // Versions the time range and deletes admitted so far.
    let mut admitted = 0u32;
    let mut last_ts: Option<i64> = None;
    while iter.valid() {
        let k = iter.key();
        if !known_on_column && column_part(k) != Some(col) {
            return Ok(());
        }
        known_on_column = false;
        let t = key::tail(k).ok_or_else(bad_key)?;
        if t.kind != KeyKind::Put || t.seq > ctx.snapshot || last_ts == Some(t.timestamp) {
            iter.next()?;
            continue;
        }
        last_ts = Some(t.timestamp);
        if t.timestamp < oldest {
            break;
        }
        // (Versions at or before the "up to" marker ended the walk above.)
        if t.timestamp > newest || deletes.covers(t.timestamp) {
            iter.next()?;
            continue;
        }
        admitted += 1;
        if t.timestamp < fam.ttl_cutoff && admitted > fam.min_versions {
            // Expired, and the versions kept past the TTL are behind.
            break;
        }
        if let Some(raw) = ctx.raw.as_mut() {
            raw.push((iter.key().to_vec(), iter.value().to_vec()));
            included += 1;
            if included >= fam.max_versions {
                break;
            }
            iter.next()?;
            continue;
        }
        if ctx.filter.is_none() {
            // Without a filter every admissible version is included up to the limit
            // (built in place: a cell is large enough for its moves to show).
            let row = ctx.row_for_kept_cell()?;
            ctx.cells.push(Cell {
                row,
                family: fam.family.clone(),
                qualifier: qualifier.clone(),
                timestamp: t.timestamp,
                value: iter.value_bytes(),
            });
            included += 1;
            if included >= fam.max_versions {
                break;
            }
            iter.next()?;
            continue;
        }
        let cell = Cell {
            row: ctx.row_for_cell()?,
            family: fam.family.clone(),
            qualifier: qualifier.clone(),
            timestamp: t.timestamp,
            value: iter.value_bytes(),
        };
        let verdict = match ctx.filter.as_deref_mut() {
            None => CellVerdict::Include,
            Some(f) => f.filter_cell(&cell),
        };
        seen += 1;
        if included >= fam.max_versions {
            // Past the version limit the filter only observes the version.
            match verdict {
                CellVerdict::NextRow => {
                    ctx.stop_row = true;
                    return Ok(());
                }
                CellVerdict::EndScan => {
                    ctx.stop_row = true;
                    ctx.end_scan = true;
                    return Ok(());
                }
                CellVerdict::NextColumn | CellVerdict::IncludeAndNextColumn => break,
                CellVerdict::Include | CellVerdict::Skip => {}
            }
            if seen >= fam.stored_versions {
                break;
            }
            iter.next()?;
            continue;
        }
        match verdict {
            CellVerdict::Include | CellVerdict::IncludeAndNextColumn => {
                let cell = match ctx.filter.as_deref_mut() {
                    Some(f) => f.transform_cell(cell),
                    None => cell,
                };
                ctx.cells.push(cell);
                included += 1;
                let limit_reached = included >= fam.max_versions
                    && (ctx.filter.is_none() || seen >= fam.stored_versions);
                if verdict == CellVerdict::IncludeAndNextColumn || limit_reached {
                    break;
                }
            }
            CellVerdict::Skip => {}
            CellVerdict::NextColumn => {
                if leave_past {
                    if let Some(f) = ctx.filter.as_deref() {
                        ctx.column_target = match f.column_hint(&cell) {
                            ColumnHint::SkipTo(target) if target > *qualifier => {
                                Some(ColumnHint::SkipTo(target))
                            }
                            ColumnHint::RestOfFamily => Some(ColumnHint::RestOfFamily),
                            _ => None,
                        };
                    }
                }
                break;
            }
            CellVerdict::NextRow => {
                ctx.stop_row = true;
                return Ok(());
            }
            CellVerdict::EndScan => {
                ctx.stop_row = true;
                ctx.end_scan = true;
                return Ok(());
            }
        }
        iter.next()?;
    }
    past_column(iter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::FamilySchema;

    fn schema() -> TableSchema {
        let families = ["b", "a", "c"]
            .into_iter()
            .map(|f| FamilySchema::new(f.as_bytes().to_vec()))
            .collect();
        TableSchema::new("t", families).expect("schema")
    }

    fn fam(f: &str) -> ColumnSelector {
        ColumnSelector::Family(Bytes::copy_from_slice(f.as_bytes()))
    }

    fn col(f: &str, q: &str) -> ColumnSelector {
        ColumnSelector::Column(
            Bytes::copy_from_slice(f.as_bytes()),
            Bytes::copy_from_slice(q.as_bytes()),
        )
    }

    /// The compiled plan as (family, qualifiers) pairs.
    fn compiled(columns: Vec<ColumnSelector>) -> Vec<(String, Option<Vec<String>>)> {
        let opts = ReadOptions::latest().columns(columns);
        let plan = ReadPlan::compile(&schema(), &opts, 0).expect("compiles");
        let text = |b: &Bytes| String::from_utf8_lossy(b).into_owned();
        plan.families
            .iter()
            .map(|f| {
                assert_eq!(f.escaped_family, key::row_start(&f.family));
                (
                    text(&f.family),
                    f.qualifiers
                        .as_ref()
                        .map(|qs| qs.iter().map(text).collect()),
                )
            })
            .collect()
    }

    #[test]
    fn columns_combine_as_hbase_builders_do() {
        let all = |f: &str| (f.to_string(), None);
        let only = |f: &str, qs: &[&str]| {
            (
                f.to_string(),
                Some(qs.iter().map(|q| q.to_string()).collect()),
            )
        };
        // No columns: every family, sorted by name.
        assert_eq!(compiled(vec![]), vec![all("a"), all("b"), all("c")]);
        // Columns are sorted and deduplicated; families come out sorted.
        assert_eq!(
            compiled(vec![
                col("c", "z"),
                col("a", "y"),
                col("c", "x"),
                col("c", "z")
            ]),
            vec![only("a", &["y"]), only("c", &["x", "z"])]
        );
        // A column after its family narrows it; the family after its columns widens
        // it back.
        assert_eq!(
            compiled(vec![fam("b"), col("b", "q")]),
            vec![only("b", &["q"])]
        );
        assert_eq!(compiled(vec![col("b", "q"), fam("b")]), vec![all("b")]);
        assert_eq!(
            compiled(vec![col("b", "q"), fam("b"), col("b", "r")]),
            vec![only("b", &["r"])]
        );
    }

    #[test]
    fn unknown_families_fail_and_as_of_needs_one_bounded_column() {
        let opts = ReadOptions::latest().columns(vec![col("nope", "q")]);
        assert!(ReadPlan::compile(&schema(), &opts, 0).is_err());

        let plan = |columns, range| {
            let opts = ReadOptions::latest().columns(columns).time_range(range);
            ReadPlan::compile(&schema(), &opts, 0).expect("compiles")
        };
        let before = TimeRange::before(50);
        let p = plan(vec![col("a", "q")], before);
        let got = p
            .single_column_as_of()
            .map(|(f, q, n)| (f.clone(), q.clone(), n));
        assert_eq!(got, Some((Bytes::from("a"), Bytes::from("q"), 49)));
        assert!(plan(vec![col("a", "q")], TimeRange::ALL)
            .single_column_as_of()
            .is_none());
        assert!(plan(vec![fam("a")], before).single_column_as_of().is_none());
        assert!(plan(vec![col("a", "q"), col("a", "r")], before)
            .single_column_as_of()
            .is_none());
        assert!(plan(vec![col("a", "q"), col("b", "q")], before)
            .single_column_as_of()
            .is_none());
    }
}
