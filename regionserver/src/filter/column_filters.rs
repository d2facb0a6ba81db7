//! Filters that decide on cells by column or timestamp: KeyOnlyFilter,
//! ColumnPrefixFilter, MultipleColumnPrefixFilter, ColumnRangeFilter,
//! ColumnCountGetFilter, ColumnPaginationFilter, TimestampsFilter, FamilyFilter and
//! QualifierFilter.
//!
//! Where HBase answers "seek using a hint" (to a later column) these answer NextColumn,
//! and where HBase's NextRow only leaves the current column family (because qualifiers
//! restart in the next family) these answer NextColumn too, since the engine's NextRow
//! leaves the whole row.
//!
//! Must not: parse arguments (compile does) or combine filters (list, wrappers).

use std::collections::BTreeSet;

use bytes::Bytes;
use tabula_storage::types::Cell;
use tabula_storage::{CellVerdict, ColumnHint, Filter, RowVerdict};

use super::comparator::Comparison;

/// `KeyOnlyFilter()` / `KeyOnlyFilter(lenAsVal)`: values become empty, or the 4-byte
/// big-endian length of the original value.
pub(crate) struct KeyOnlyFilter {
    length_as_value: bool,
}

impl KeyOnlyFilter {
    pub(crate) fn new(length_as_value: bool) -> Self {
        KeyOnlyFilter { length_as_value }
    }
}

impl Filter for KeyOnlyFilter {
    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        ColumnHint::Indifferent
    }

    fn transform_cell(&mut self, mut cell: Cell) -> Cell {
        cell.value = if self.length_as_value {
            let length = i32::try_from(cell.value.len()).unwrap_or(i32::MAX);
            Bytes::copy_from_slice(&length.to_be_bytes())
        } else {
            Bytes::new()
        };
        cell
    }
}

/// `ColumnPrefixFilter('p')`: cells whose qualifier starts with `p`.
pub(crate) struct ColumnPrefixFilter {
    prefix: Bytes,
}

impl ColumnPrefixFilter {
    pub(crate) fn new(prefix: Bytes) -> Self {
        ColumnPrefixFilter { prefix }
    }
}

impl Filter for ColumnPrefixFilter {
    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        if cell.qualifier.starts_with(&self.prefix) {
            CellVerdict::Include
        } else {
            CellVerdict::NextColumn
        }
    }

    fn column_hint(&self, cell: &Cell) -> ColumnHint {
        prefix_hint(&cell.qualifier, std::slice::from_ref(&self.prefix))
    }
}

/// Where the columns starting with one of `prefixes` (sorted) resume after
/// `qualifier`, which starts with none of them: the first prefix above it, or
/// nowhere in the family.
fn prefix_hint(qualifier: &[u8], prefixes: &[Bytes]) -> ColumnHint {
    match prefixes.iter().find(|prefix| prefix.as_ref() > qualifier) {
        Some(prefix) => ColumnHint::SkipTo(prefix.clone()),
        None => ColumnHint::RestOfFamily,
    }
}

/// `MultipleColumnPrefixFilter('p1', 'p2', ...)`: cells whose qualifier starts with any
/// of the prefixes; with no prefixes, every cell.
pub(crate) struct MultipleColumnPrefixFilter {
    prefixes: Vec<Bytes>,
}

impl MultipleColumnPrefixFilter {
    pub(crate) fn new(mut prefixes: Vec<Bytes>) -> Self {
        prefixes.sort();
        MultipleColumnPrefixFilter { prefixes }
    }
}

impl Filter for MultipleColumnPrefixFilter {
    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        if self.prefixes.is_empty()
            || self
                .prefixes
                .iter()
                .any(|prefix| cell.qualifier.starts_with(prefix))
        {
            CellVerdict::Include
        } else {
            CellVerdict::NextColumn
        }
    }

    fn column_hint(&self, cell: &Cell) -> ColumnHint {
        prefix_hint(&cell.qualifier, &self.prefixes)
    }
}

/// `ColumnRangeFilter('min', minInclusive, 'max', maxInclusive)`: cells whose qualifier
/// lies in the range; an absent bound is unbounded.
pub(crate) struct ColumnRangeFilter {
    min: Option<Bytes>,
    min_inclusive: bool,
    max: Option<Bytes>,
    max_inclusive: bool,
}

impl ColumnRangeFilter {
    pub(crate) fn new(
        min: Option<Bytes>,
        min_inclusive: bool,
        max: Option<Bytes>,
        max_inclusive: bool,
    ) -> Self {
        ColumnRangeFilter {
            min,
            min_inclusive,
            max,
            max_inclusive,
        }
    }
}

impl Filter for ColumnRangeFilter {
    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        let qualifier = cell.qualifier.as_ref();
        if let Some(min) = &self.min {
            let order = qualifier.cmp(min.as_ref());
            if order.is_lt() || (order.is_eq() && !self.min_inclusive) {
                return CellVerdict::NextColumn;
            }
        }
        let Some(max) = &self.max else {
            return CellVerdict::Include;
        };
        let order = qualifier.cmp(max.as_ref());
        if order.is_lt() || (order.is_eq() && self.max_inclusive) {
            CellVerdict::Include
        } else {
            CellVerdict::NextColumn
        }
    }

    fn column_hint(&self, cell: &Cell) -> ColumnHint {
        // Below the range: its first qualifier (the one after an exclusive min).
        match &self.min {
            Some(min) if cell.qualifier.as_ref() <= min.as_ref() => {
                if self.min_inclusive {
                    ColumnHint::SkipTo(min.clone())
                } else {
                    let mut after = min.to_vec();
                    after.push(0);
                    ColumnHint::SkipTo(Bytes::from(after))
                }
            }
            // Above it (the cell was rejected): nothing more in the family.
            _ => ColumnHint::RestOfFamily,
        }
    }
}

/// `ColumnCountGetFilter(n)`: the first `n` columns of a row (newest version each).
/// Once a row has more, all remaining is filtered: the rest of that row and the scan.
pub(crate) struct ColumnCountGetFilter {
    limit: i64,
    count: i64,
}

impl ColumnCountGetFilter {
    pub(crate) fn new(limit: i32) -> Self {
        ColumnCountGetFilter {
            limit: i64::from(limit),
            count: 0,
        }
    }
}

impl Filter for ColumnCountGetFilter {
    fn reset(&mut self) {
        self.count = 0;
    }

    fn filter_row_key(&mut self, _row: &[u8]) -> RowVerdict {
        if self.filter_all_remaining() {
            RowVerdict::Skip
        } else {
            RowVerdict::Include
        }
    }

    fn filter_cell(&mut self, _cell: &Cell) -> CellVerdict {
        self.count = self.count.saturating_add(1);
        if self.filter_all_remaining() {
            CellVerdict::NextColumn
        } else {
            CellVerdict::IncludeAndNextColumn
        }
    }

    fn filter_all_remaining(&self) -> bool {
        self.count > self.limit
    }
}

/// `ColumnPaginationFilter(limit, offset)`: per row, skip `offset` columns and return
/// the next `limit` (newest version each). `ColumnPaginationFilter(limit, 'qualifier')`
/// (an extension: HBase's Java client's column-offset form, which its filter language
/// cannot write) starts instead at the first column whose qualifier sorts at or after
/// `qualifier`; as in HBase, only columns before the first one returned are compared,
/// so once a column is returned the next `limit - 1` follow whatever their qualifiers
/// (a later family's too).
pub(crate) struct ColumnPaginationFilter {
    limit: i64,
    offset: i64,
    column_offset: Option<Bytes>,
    count: i64,
}

impl ColumnPaginationFilter {
    pub(crate) fn new(limit: i32, offset: i32) -> Self {
        ColumnPaginationFilter {
            limit: i64::from(limit),
            offset: i64::from(offset),
            column_offset: None,
            count: 0,
        }
    }

    /// The column-offset form: `limit` columns from the first at or after `qualifier`.
    pub(crate) fn from_column(limit: i32, qualifier: Bytes) -> Self {
        ColumnPaginationFilter {
            limit: i64::from(limit),
            offset: 0,
            column_offset: Some(qualifier),
            count: 0,
        }
    }
}

impl Filter for ColumnPaginationFilter {
    fn reset(&mut self) {
        self.count = 0;
    }

    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        if let Some(start) = &self.column_offset {
            if self.count >= self.limit {
                return CellVerdict::NextRow;
            }
            if self.count == 0 && cell.qualifier.as_ref() < start.as_ref() {
                return CellVerdict::NextColumn;
            }
            self.count += 1;
            return CellVerdict::IncludeAndNextColumn;
        }
        if self.count >= self.offset + self.limit {
            return CellVerdict::NextRow;
        }
        let verdict = if self.count < self.offset {
            CellVerdict::NextColumn
        } else {
            CellVerdict::IncludeAndNextColumn
        };
        self.count += 1;
        verdict
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        // The column-offset form rejects columns only before its first one, all
        // below its qualifier; the counting form counts every column.
        match &self.column_offset {
            Some(start) if self.count == 0 => ColumnHint::SkipTo(start.clone()),
            _ => ColumnHint::SeeEveryColumn,
        }
    }
}

/// `TimestampsFilter(t1, t2, ...)`: only cells whose timestamp is listed.
pub(crate) struct TimestampsFilter {
    timestamps: BTreeSet<i64>,
    oldest: i64,
}

impl TimestampsFilter {
    pub(crate) fn new(timestamps: BTreeSet<i64>) -> Self {
        let oldest = timestamps.first().copied().unwrap_or(i64::MAX);
        TimestampsFilter { timestamps, oldest }
    }
}

impl Filter for TimestampsFilter {
    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        if self.timestamps.contains(&cell.timestamp) {
            CellVerdict::Include
        } else if cell.timestamp < self.oldest {
            // Older versions of this column are older still.
            CellVerdict::NextColumn
        } else {
            CellVerdict::Skip
        }
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        ColumnHint::Indifferent
    }
}

/// `FamilyFilter(op, 'comparator')`: cells whose family satisfies the test.
pub(crate) struct FamilyFilter {
    test: Comparison,
}

impl FamilyFilter {
    pub(crate) fn new(test: Comparison) -> Self {
        FamilyFilter { test }
    }
}

impl Filter for FamilyFilter {
    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        if !cell.family.is_empty() && !self.test.passes(&cell.family) {
            CellVerdict::NextColumn
        } else {
            CellVerdict::Include
        }
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        ColumnHint::Indifferent
    }
}

/// `QualifierFilter(op, 'comparator')`: cells whose qualifier satisfies the test.
pub(crate) struct QualifierFilter {
    test: Comparison,
}

impl QualifierFilter {
    pub(crate) fn new(test: Comparison) -> Self {
        QualifierFilter { test }
    }
}

impl Filter for QualifierFilter {
    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        if self.test.passes(&cell.qualifier) {
            CellVerdict::Include
        } else {
            CellVerdict::Skip
        }
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        ColumnHint::Indifferent
    }
}
