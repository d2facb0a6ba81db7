//! The read-path filter hook: how the gateway plugs HBase filters into scans and gets.
//!
//! Owns: the [`Filter`] trait and its verdict types, mirroring the call order of HBase's
//! region scanner so that HBase filter semantics can be implemented on top of it.
//! Must not: contain any particular filter (the gateway owns the HBase filter language).
//!
//! Call order for each row the read visits:
//! 1. [`Filter::filter_all_remaining`]: true ends the scan before the row.
//! 2. [`Filter::reset`], then [`Filter::filter_row_key`].
//! 3. For every candidate cell (newest version first within each column, after column
//!    selection, time range, TTL and delete masking, before version counting):
//!    [`Filter::filter_cell`], and for included cells [`Filter::transform_cell`].
//! 4. [`Filter::filter_row_cells`] with the row's included cells (may edit them).
//! 5. [`Filter::filter_row`]: true drops the row.
//!
//! After a row skipped by its key (step 2), scans ask [`Filter::skip_hint`] how far
//! they may go without showing the filter the rows in between (HBase's
//! SEEK_NEXT_USING_HINT): a filter keeping a few ranges of a large table sends the
//! read straight to the next range instead of through every row before it. Within a
//! row, after a cell answered [`CellVerdict::NextColumn`] while every column of its
//! family is read, [`Filter::column_hint`] may likewise name the qualifier the read
//! goes on from.

use bytes::Bytes;

use crate::types::Cell;

/// What to do with a row before any of its cells are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowVerdict {
    /// Read the row's cells.
    Include,
    /// Skip the row.
    Skip,
    /// Skip the row and end the scan.
    EndScan,
}

/// What to do with one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellVerdict {
    /// Keep the cell (it counts towards the version limit).
    Include,
    /// Keep the cell and skip the column's remaining versions.
    IncludeAndNextColumn,
    /// Drop the cell, look at the next one.
    Skip,
    /// Drop the cell and the column's remaining versions.
    NextColumn,
    /// Drop the cell and the rest of the row (cells already included stay).
    NextRow,
    /// Drop the cell and end the scan after this row.
    EndScan,
}

/// How far a scan may pass over rows after one was skipped by its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipHint {
    /// Show the filter the key of every row: skipping rows unseen could change what
    /// it does with later ones (it ends the scan at the first row failing a test).
    SeeEveryRow,
    /// Rows may be passed over unseen, but the filter names no row to go to.
    Indifferent,
    /// Every row before this bound in scan order would be skipped by its key, and
    /// passing over them unseen changes nothing. Forward, the next row read is the
    /// first at or above the bound; reversed, the first below it. A bound not past
    /// the skipped row is ignored.
    SkipTo(Vec<u8>),
}

/// How far a read of a family's columns may pass over columns after one answered
/// [`CellVerdict::NextColumn`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnHint {
    /// Show the filter every column: skipping some unseen could change what it does
    /// with later ones (it counts columns, or looks for one in particular).
    SeeEveryColumn,
    /// Columns may be passed over unseen, but the filter names none to go to.
    Indifferent,
    /// Every column of the cell's family from the cell's up to (not including) this
    /// qualifier would answer NextColumn, and passing over them unseen changes
    /// nothing: the read goes on from the first column at or after it. A qualifier
    /// not after the cell's is ignored.
    SkipTo(Bytes),
    /// Every remaining column of the cell's family would answer NextColumn, and
    /// passing over them unseen changes nothing: the read goes on to the next family.
    RestOfFamily,
}

/// A server-side filter. Implementations keep per-row state between `reset` calls.
pub trait Filter: Send {
    /// Told once, before the first row, that the scan walks rows in descending
    /// order (HBase's `Filter.setReversed`): a filter that stops at a boundary row
    /// must know which side of it is "past".
    fn set_reversed(&mut self, _reversed: bool) {}

    /// Called before each row; clears per-row state.
    fn reset(&mut self) {}

    /// Decides on a row from its key alone.
    fn filter_row_key(&mut self, _row: &[u8]) -> RowVerdict {
        RowVerdict::Include
    }

    /// Called right after [`Filter::filter_row_key`] skipped `row` (whichever part of
    /// a filter list rejected it): see [`SkipHint`]. A filter whose state depends on
    /// seeing every row key must answer [`SkipHint::SeeEveryRow`].
    fn skip_hint(&self, _row: &[u8]) -> SkipHint {
        SkipHint::Indifferent
    }

    /// Decides on one cell.
    fn filter_cell(&mut self, _cell: &Cell) -> CellVerdict {
        CellVerdict::Include
    }

    /// Called right after [`Filter::filter_cell`] answered [`CellVerdict::NextColumn`]
    /// for `cell`, when the read walks every column of the cell's family: see
    /// [`ColumnHint`]. The default shows the filter every column; a filter keeping
    /// no state across columns answers [`ColumnHint::Indifferent`] or better.
    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        ColumnHint::SeeEveryColumn
    }

    /// Rewrites an included cell (e.g. strips its value).
    fn transform_cell(&mut self, cell: Cell) -> Cell {
        cell
    }

    /// Edits the row's included cells once all were seen.
    fn filter_row_cells(&mut self, _cells: &mut Vec<Cell>) {}

    /// True drops the whole row, after its cells were seen.
    fn filter_row(&mut self) -> bool {
        false
    }

    /// True ends the scan.
    fn filter_all_remaining(&self) -> bool {
        false
    }

    /// True when the filter needs whole rows (row-level decisions): the reader then
    /// never splits a row into partial results.
    fn needs_whole_row(&self) -> bool {
        false
    }
}
