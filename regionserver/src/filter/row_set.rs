//! Filters keeping the rows of a set known up front (FuzzyRowFilter's keys,
//! MultiRowRangeFilter's ranges): [`RowSetFilter`] judges each row by key, sends the
//! scan past a rejected row straight to where the set's rows resume (a
//! [`SkipHint::SkipTo`]), and ends the scan once no row further on in the scan's
//! direction can be in the set. The
//! regionserver tells every filter of a reversed scan before its first row
//! ([`tabula_storage::Filter::set_reversed`]); a get reads forward.
//!
//! Must not: know what a set holds (the sets do: `fuzzy_row`, `row_ranges`).

use tabula_storage::types::Cell;
use tabula_storage::{CellVerdict, ColumnHint, Filter, RowVerdict, SkipHint};

use super::row_filters::cell_of_row;

/// The order rows arrive in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ScanOrder {
    /// Ascending row keys (a forward scan, or a get).
    #[default]
    Forward,
    /// Descending row keys (a reverse scan).
    Reverse,
}

impl ScanOrder {
    /// The order of a scan that is `reversed` or not.
    pub(crate) fn of(reversed: bool) -> ScanOrder {
        if reversed {
            ScanOrder::Reverse
        } else {
            ScanOrder::Forward
        }
    }
}

/// A set of rows a filter keeps.
pub(crate) trait RowSet: Send {
    /// `row` is in the set.
    fn contains(&self, row: &[u8]) -> bool;
    /// No row after `row` in scan `order` is in the set.
    fn passed(&self, row: &[u8], order: ScanOrder) -> bool;
    /// For a `row` not in the set, a bound in the [`SkipHint::SkipTo`] sense: no row
    /// between `row` and it in scan `order` is in the set (forward, every row below
    /// the bound; reverse, every row at or above it). `None` names no bound.
    fn resume_at(&self, row: &[u8], order: ScanOrder) -> Option<Vec<u8>>;
}

/// The filter keeping the rows of `S`.
pub(crate) struct RowSetFilter<S> {
    set: S,
    order: ScanOrder,
    row_rejected: bool,
    done: bool,
}

impl<S: RowSet> RowSetFilter<S> {
    pub(crate) fn new(set: S) -> Self {
        RowSetFilter {
            set,
            order: ScanOrder::Forward,
            row_rejected: true,
            done: false,
        }
    }
}

impl<S: RowSet> Filter for RowSetFilter<S> {
    fn set_reversed(&mut self, reversed: bool) {
        self.order = ScanOrder::of(reversed);
    }

    fn reset(&mut self) {
        self.row_rejected = true;
    }

    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        if self.done {
            return RowVerdict::Skip;
        }
        self.row_rejected = !self.set.contains(row);
        if self.row_rejected {
            self.done = self.set.passed(row, self.order);
            RowVerdict::Skip
        } else {
            RowVerdict::Include
        }
    }

    fn skip_hint(&self, row: &[u8]) -> SkipHint {
        if self.done || !self.row_rejected {
            return SkipHint::Indifferent;
        }
        match self.set.resume_at(row, self.order) {
            Some(bound) => SkipHint::SkipTo(bound),
            None => SkipHint::Indifferent,
        }
    }

    fn filter_cell(&mut self, _cell: &Cell) -> CellVerdict {
        cell_of_row(self.row_rejected)
    }

    fn filter_row(&mut self) -> bool {
        self.row_rejected
    }

    fn filter_all_remaining(&self) -> bool {
        self.done
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        // Judges whole rows: no state across columns.
        ColumnHint::Indifferent
    }
}
