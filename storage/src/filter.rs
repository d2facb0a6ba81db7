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

    /// Decides on one cell.
    fn filter_cell(&mut self, _cell: &Cell) -> CellVerdict {
        CellVerdict::Include
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
