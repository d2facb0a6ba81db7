//! Filters that wrap another: SKIP (SkipFilter), WHILE (WhileMatchFilter), and
//! [`ScanFilter`], the outermost wrapper every compiled filter is handed to the engine in.
//!
//! A wrapped filter's cell passes when it is included (Include or IncludeAndNextColumn);
//! its row key passes when it is included. Unlike HBase's SkipFilter (which ignores the
//! wrapped filter's row-key, row and scan-end answers, so that e.g. `SKIP
//! PrefixFilter('a')` drops every row) and WhileMatchFilter (which does not pass the
//! row's cells on), both wrappers here hand every call through to the wrapped filter.
//!
//! Must not: know any particular wrapped filter.

use tabula_storage::types::Cell;
use tabula_storage::{CellVerdict, ColumnHint, Filter, RowVerdict, SkipHint};

use super::list::includes;

/// `SKIP f`: the whole row is dropped when any of its cells (or its key) fails `f`.
pub(crate) struct SkipFilter {
    inner: Box<dyn Filter>,
    row_failed: bool,
}

impl SkipFilter {
    pub(crate) fn new(inner: Box<dyn Filter>) -> Self {
        SkipFilter {
            inner,
            row_failed: false,
        }
    }
}

impl Filter for SkipFilter {
    fn set_reversed(&mut self, reversed: bool) {
        self.inner.set_reversed(reversed);
    }

    fn reset(&mut self) {
        self.inner.reset();
        self.row_failed = false;
    }

    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        let verdict = self.inner.filter_row_key(row);
        if verdict != RowVerdict::Include {
            self.row_failed = true;
        }
        verdict
    }

    fn skip_hint(&self, row: &[u8]) -> SkipHint {
        self.inner.skip_hint(row)
    }

    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        let verdict = self.inner.filter_cell(cell);
        if !includes(verdict) {
            self.row_failed = true;
        }
        verdict
    }

    fn column_hint(&self, cell: &Cell) -> ColumnHint {
        if !self.row_failed {
            // Every cell must pass for the row to stay: all must be seen.
            return ColumnHint::SeeEveryColumn;
        }
        // The row is dropped whatever comes; the wrapped filter may still say where
        // its columns resume.
        match self.inner.column_hint(cell) {
            ColumnHint::SeeEveryColumn => ColumnHint::Indifferent,
            hint => hint,
        }
    }

    fn transform_cell(&mut self, cell: Cell) -> Cell {
        self.inner.transform_cell(cell)
    }

    fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        self.inner.filter_row_cells(cells);
    }

    fn filter_row(&mut self) -> bool {
        // Both are asked so that the wrapped filter sees every row it saw cells of.
        let inner_drops = self.inner.filter_row();
        self.row_failed || inner_drops
    }

    fn filter_all_remaining(&self) -> bool {
        self.inner.filter_all_remaining()
    }

    fn needs_whole_row(&self) -> bool {
        true
    }
}

/// `WHILE f`: everything passes while `f` passes; the first cell, row key or row that
/// fails `f` filters all remaining (the rest of that row and the scan).
pub(crate) struct WhileMatchFilter {
    inner: Box<dyn Filter>,
    ended: bool,
}

impl WhileMatchFilter {
    pub(crate) fn new(inner: Box<dyn Filter>) -> Self {
        WhileMatchFilter {
            inner,
            ended: false,
        }
    }
}

impl Filter for WhileMatchFilter {
    fn set_reversed(&mut self, reversed: bool) {
        self.inner.set_reversed(reversed);
    }

    fn reset(&mut self) {
        self.inner.reset();
    }

    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        if self.filter_all_remaining() {
            return RowVerdict::Skip;
        }
        let verdict = self.inner.filter_row_key(row);
        if verdict != RowVerdict::Include {
            self.ended = true;
        }
        verdict
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        if self.filter_all_remaining() {
            ColumnHint::Indifferent
        } else {
            // Still matching: the first cell the wrapped filter fails ends the scan.
            ColumnHint::SeeEveryColumn
        }
    }

    fn skip_hint(&self, _row: &[u8]) -> SkipHint {
        if self.filter_all_remaining() {
            SkipHint::Indifferent
        } else {
            // Still matching: the wrapped filter must judge every row, the first it
            // fails ending the scan.
            SkipHint::SeeEveryRow
        }
    }

    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        let verdict = self.inner.filter_cell(cell);
        if !includes(verdict) {
            self.ended = true;
        }
        verdict
    }

    fn transform_cell(&mut self, cell: Cell) -> Cell {
        self.inner.transform_cell(cell)
    }

    fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        self.inner.filter_row_cells(cells);
    }

    fn filter_row(&mut self) -> bool {
        let drops = self.inner.filter_row();
        if drops {
            self.ended = true;
        }
        drops
    }

    fn filter_all_remaining(&self) -> bool {
        self.ended || self.inner.filter_all_remaining()
    }

    fn needs_whole_row(&self) -> bool {
        self.inner.needs_whole_row()
    }
}

/// The outermost filter, doing what HBase's region scanner does around a filter:
/// - once the filter has filtered all remaining, every further cell (also later cells
///   of the current row) answers EndScan, and a rejected row key whose rejection made
///   the filter filter all remaining answers EndScan;
/// - a row left without cells is dropped without asking `filter_row` (so PageFilter
///   counts only rows that have cells).
pub(crate) struct ScanFilter {
    inner: Box<dyn Filter>,
    included_any: bool,
    cells_after_row_filter: Option<bool>,
}

impl ScanFilter {
    pub(crate) fn new(inner: Box<dyn Filter>) -> Self {
        ScanFilter {
            inner,
            included_any: false,
            cells_after_row_filter: None,
        }
    }
}

impl Filter for ScanFilter {
    fn set_reversed(&mut self, reversed: bool) {
        self.inner.set_reversed(reversed);
    }

    fn reset(&mut self) {
        self.inner.reset();
        self.included_any = false;
        self.cells_after_row_filter = None;
    }

    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        if self.inner.filter_all_remaining() {
            return RowVerdict::EndScan;
        }
        match self.inner.filter_row_key(row) {
            RowVerdict::Skip if self.inner.filter_all_remaining() => RowVerdict::EndScan,
            verdict => verdict,
        }
    }

    fn column_hint(&self, cell: &Cell) -> ColumnHint {
        self.inner.column_hint(cell)
    }

    fn skip_hint(&self, row: &[u8]) -> SkipHint {
        self.inner.skip_hint(row)
    }

    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        if self.inner.filter_all_remaining() {
            return CellVerdict::EndScan;
        }
        let verdict = self.inner.filter_cell(cell);
        if includes(verdict) {
            self.included_any = true;
        }
        verdict
    }

    fn transform_cell(&mut self, cell: Cell) -> Cell {
        self.inner.transform_cell(cell)
    }

    fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        self.inner.filter_row_cells(cells);
        self.cells_after_row_filter = Some(!cells.is_empty());
    }

    fn filter_row(&mut self) -> bool {
        let has_cells = self.cells_after_row_filter.unwrap_or(self.included_any);
        !has_cells || self.inner.filter_row()
    }

    fn filter_all_remaining(&self) -> bool {
        self.inner.filter_all_remaining()
    }

    fn needs_whole_row(&self) -> bool {
        self.inner.needs_whole_row()
    }
}
