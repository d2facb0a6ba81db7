//! Filters that decide by cell values: ValueFilter, SingleColumnValueFilter (and its
//! Exclude variant), DependentColumnFilter and ColumnValueFilter.
//!
//! Must not: parse arguments (compile does) or combine filters (list, wrappers).

use std::collections::HashSet;

use bytes::Bytes;
use tabula_storage::types::Cell;
use tabula_storage::{CellVerdict, ColumnHint, Filter};

use super::comparator::Comparison;

fn is_column(cell: &Cell, family: &[u8], qualifier: &[u8]) -> bool {
    cell.family.as_ref() == family && cell.qualifier.as_ref() == qualifier
}

/// `ValueFilter(op, 'comparator')`: cells whose value satisfies the test; the other
/// cells of the row are unaffected.
pub(crate) struct ValueFilter {
    test: Comparison,
}

impl ValueFilter {
    pub(crate) fn new(test: Comparison) -> Self {
        ValueFilter { test }
    }
}

impl Filter for ValueFilter {
    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        if self.test.passes(&cell.value) {
            CellVerdict::Include
        } else {
            CellVerdict::Skip
        }
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        ColumnHint::Indifferent
    }
}

/// The settings of a SingleColumnValueFilter beyond its column and test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SingleColumnOptions {
    /// Drop rows that lack the column (default false: they pass).
    pub filter_if_missing: bool,
    /// Test only the newest version (default true); otherwise any version may match.
    pub latest_version_only: bool,
    /// Remove the tested column from the output (SingleColumnValueExcludeFilter).
    pub exclude_tested_column: bool,
}

/// `SingleColumnValueFilter('f', 'q', op, 'comparator'[, filterIfMissing,
/// latestVersionOnly])`: the whole row when `f:q` satisfies the test; rows without the
/// column pass unless `filterIfMissing`.
pub(crate) struct SingleColumnValueFilter {
    family: Bytes,
    qualifier: Bytes,
    test: Comparison,
    options: SingleColumnOptions,
    found_column: bool,
    matched_column: bool,
}

impl SingleColumnValueFilter {
    pub(crate) fn new(
        family: Bytes,
        qualifier: Bytes,
        test: Comparison,
        options: SingleColumnOptions,
    ) -> Self {
        SingleColumnValueFilter {
            family,
            qualifier,
            test,
            options,
            found_column: false,
            matched_column: false,
        }
    }
}

impl Filter for SingleColumnValueFilter {
    fn reset(&mut self) {
        self.found_column = false;
        self.matched_column = false;
    }

    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        if self.matched_column {
            return CellVerdict::Include;
        }
        if self.options.latest_version_only && self.found_column {
            // The newest version was tested and failed: the row is lost.
            return CellVerdict::NextRow;
        }
        if !is_column(cell, &self.family, &self.qualifier) {
            return CellVerdict::Include;
        }
        self.found_column = true;
        if self.test.passes(&cell.value) {
            self.matched_column = true;
            CellVerdict::Include
        } else if self.options.latest_version_only {
            CellVerdict::NextRow
        } else {
            CellVerdict::Include
        }
    }

    fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        if self.options.exclude_tested_column {
            cells.retain(|cell| !is_column(cell, &self.family, &self.qualifier));
        }
    }

    fn filter_row(&mut self) -> bool {
        if self.found_column {
            !self.matched_column
        } else {
            self.options.filter_if_missing
        }
    }

    fn needs_whole_row(&self) -> bool {
        true
    }
}

/// `DependentColumnFilter('f', 'q'[, dropDependentColumn[, op, 'comparator']])`: only the
/// cells whose timestamp equals that of some version of the reference column `f:q`
/// (versions failing the optional value test do not count); `dropDependentColumn`
/// hides the reference column itself.
pub(crate) struct DependentColumnFilter {
    family: Bytes,
    qualifier: Bytes,
    drop_reference: bool,
    test: Option<Comparison>,
    timestamps: HashSet<i64>,
}

impl DependentColumnFilter {
    pub(crate) fn new(
        family: Bytes,
        qualifier: Bytes,
        drop_reference: bool,
        test: Option<Comparison>,
    ) -> Self {
        DependentColumnFilter {
            family,
            qualifier,
            drop_reference,
            test,
            timestamps: HashSet::new(),
        }
    }
}

impl Filter for DependentColumnFilter {
    fn reset(&mut self) {
        self.timestamps.clear();
    }

    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        if !is_column(cell, &self.family, &self.qualifier) {
            // Kept for now; filter_row_cells removes those without a reference stamp.
            return CellVerdict::Include;
        }
        if self
            .test
            .as_ref()
            .is_some_and(|test| !test.passes(&cell.value))
        {
            return CellVerdict::Skip;
        }
        self.timestamps.insert(cell.timestamp);
        if self.drop_reference {
            CellVerdict::Skip
        } else {
            CellVerdict::Include
        }
    }

    fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        cells.retain(|cell| self.timestamps.contains(&cell.timestamp));
    }

    fn needs_whole_row(&self) -> bool {
        true
    }
}

/// `ColumnValueFilter('f', 'q', op, 'comparator')`: only the versions of `f:q` whose
/// value satisfies the test (not the rest of the row).
pub(crate) struct ColumnValueFilter {
    family: Bytes,
    qualifier: Bytes,
    test: Comparison,
    column_found: bool,
}

impl ColumnValueFilter {
    pub(crate) fn new(family: Bytes, qualifier: Bytes, test: Comparison) -> Self {
        ColumnValueFilter {
            family,
            qualifier,
            test,
            column_found: false,
        }
    }
}

impl Filter for ColumnValueFilter {
    fn reset(&mut self) {
        self.column_found = false;
    }

    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        if !is_column(cell, &self.family, &self.qualifier) {
            // Past the column nothing else of the row can match.
            return if self.column_found {
                CellVerdict::NextRow
            } else {
                CellVerdict::NextColumn
            };
        }
        self.column_found = true;
        if self.test.passes(&cell.value) {
            CellVerdict::Include
        } else {
            CellVerdict::Skip
        }
    }

    fn column_hint(&self, cell: &Cell) -> ColumnHint {
        // Before its column in its family: the column; anywhere else in a family,
        // nothing more of the family (its column was passed, or is not in it).
        if cell.family == self.family && cell.qualifier < self.qualifier {
            ColumnHint::SkipTo(self.qualifier.clone())
        } else {
            ColumnHint::RestOfFamily
        }
    }
}
