//! Filters that decide on whole rows: PrefixFilter, InclusiveStopFilter, RowFilter,
//! PageFilter and FirstKeyOnlyFilter, and the filter-language extensions FilterAllFilter
//! and RandomRowFilter.
//!
//! Must not: parse arguments (compile does) or combine filters (list, wrappers).

use bytes::Bytes;
use tabula_storage::types::Cell;
use tabula_storage::{CellVerdict, ColumnHint, Filter, RowVerdict, SkipHint};

use super::comparator::Comparison;

fn row_verdict(rejected: bool) -> RowVerdict {
    if rejected {
        RowVerdict::Skip
    } else {
        RowVerdict::Include
    }
}

/// What a filter that judges whole rows answers for a cell: the rest of a rejected
/// row is skipped, a kept row's cells are kept.
pub(crate) fn cell_of_row(rejected: bool) -> CellVerdict {
    if rejected {
        CellVerdict::NextRow
    } else {
        CellVerdict::Include
    }
}

/// `PrefixFilter('p')`: rows whose key starts with `p`; once a key sorts past the
/// prefix, all remaining rows are filtered.
pub(crate) struct PrefixFilter {
    prefix: Bytes,
    /// The current row is rejected (also when its key was never looked at).
    row_rejected: bool,
    /// A key past the prefix was seen.
    passed_prefix: bool,
    /// The scan walks rows in descending order: "past" is below the prefix.
    reversed: bool,
}

impl PrefixFilter {
    pub(crate) fn new(prefix: Bytes) -> Self {
        PrefixFilter {
            prefix,
            row_rejected: true,
            passed_prefix: false,
            reversed: false,
        }
    }
}

impl Filter for PrefixFilter {
    fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
    }

    fn reset(&mut self) {
        self.row_rejected = true;
    }

    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        if self.passed_prefix {
            return RowVerdict::Skip;
        }
        // A key shorter than the prefix is rejected without judging the prefix passed.
        let Some(head) = row.get(..self.prefix.len()) else {
            return RowVerdict::Skip;
        };
        let order = head.cmp(self.prefix.as_ref());
        if (order.is_gt() && !self.reversed) || (order.is_lt() && self.reversed) {
            self.passed_prefix = true;
        }
        self.row_rejected = order.is_ne();
        row_verdict(self.row_rejected)
    }

    fn skip_hint(&self, row: &[u8]) -> SkipHint {
        if !self.row_rejected || self.passed_prefix {
            return SkipHint::Indifferent;
        }
        // Coming towards the prefix: its first row going up, and going down the
        // first row past every key starting with it.
        let bound = if self.reversed {
            prefix_end(&self.prefix).filter(|end| row >= end.as_slice())
        } else {
            (row < self.prefix.as_ref()).then(|| self.prefix.to_vec())
        };
        bound.map_or(SkipHint::Indifferent, SkipHint::SkipTo)
    }

    fn filter_cell(&mut self, _cell: &Cell) -> CellVerdict {
        cell_of_row(self.row_rejected)
    }

    fn filter_row(&mut self) -> bool {
        self.row_rejected
    }

    fn filter_all_remaining(&self) -> bool {
        self.passed_prefix
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        // Judges whole rows: no state across columns.
        ColumnHint::Indifferent
    }
}

/// The first row sorting after every row starting with `prefix` (its last byte below
/// 0xff raised by one, the bytes after it dropped); `None` when there is none.
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let last = prefix.iter().rposition(|b| *b < u8::MAX)?;
    let mut end = prefix.get(..=last)?.to_vec();
    let byte = end.last_mut()?;
    *byte = byte.checked_add(1)?;
    Some(end)
}

/// `InclusiveStopFilter('stop')`: rows up to and including `stop`, then the scan ends.
pub(crate) struct InclusiveStopFilter {
    stop: Bytes,
    done: bool,
    /// The scan walks rows in descending order: it ends below the stop row.
    reversed: bool,
}

impl InclusiveStopFilter {
    pub(crate) fn new(stop: Bytes) -> Self {
        InclusiveStopFilter {
            stop,
            done: false,
            reversed: false,
        }
    }
}

impl Filter for InclusiveStopFilter {
    fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
    }

    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        if !self.done {
            self.done = if self.reversed {
                row < self.stop.as_ref()
            } else {
                row > self.stop.as_ref()
            };
        }
        row_verdict(self.done)
    }

    fn filter_cell(&mut self, _cell: &Cell) -> CellVerdict {
        cell_of_row(self.done)
    }

    fn filter_all_remaining(&self) -> bool {
        self.done
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        // Judges whole rows: no state across columns.
        ColumnHint::Indifferent
    }
}

/// `RowFilter(op, 'comparator')`: rows whose key satisfies `key <op> operand`.
pub(crate) struct RowFilter {
    test: Comparison,
    row_rejected: bool,
}

impl RowFilter {
    pub(crate) fn new(test: Comparison) -> Self {
        RowFilter {
            test,
            row_rejected: false,
        }
    }
}

impl Filter for RowFilter {
    fn reset(&mut self) {
        self.row_rejected = false;
    }

    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        if !self.test.passes(row) {
            self.row_rejected = true;
        }
        row_verdict(self.row_rejected)
    }

    fn filter_cell(&mut self, _cell: &Cell) -> CellVerdict {
        cell_of_row(self.row_rejected)
    }

    fn filter_row(&mut self) -> bool {
        self.row_rejected
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        // Judges whole rows: no state across columns.
        ColumnHint::Indifferent
    }
}

/// `PageFilter(n)`: at most `n` rows per scan of one tablet. A row counts when it
/// reaches `filter_row` (it has cells left and no earlier filter of an AND dropped it);
/// once `n` rows counted, all remaining rows are filtered.
pub(crate) struct PageFilter {
    page_size: i64,
    rows_accepted: i64,
}

impl PageFilter {
    pub(crate) fn new(page_size: i64) -> Self {
        PageFilter {
            page_size,
            rows_accepted: 0,
        }
    }
}

impl Filter for PageFilter {
    fn filter_row_key(&mut self, _row: &[u8]) -> RowVerdict {
        row_verdict(self.filter_all_remaining())
    }

    fn filter_row(&mut self) -> bool {
        self.rows_accepted = self.rows_accepted.saturating_add(1);
        self.rows_accepted > self.page_size
    }

    fn filter_all_remaining(&self) -> bool {
        self.rows_accepted >= self.page_size
    }

    fn needs_whole_row(&self) -> bool {
        true
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        // Judges whole rows: no state across columns.
        ColumnHint::Indifferent
    }
}

/// `FirstKeyOnlyFilter()`: only the first cell of each row.
#[derive(Default)]
pub(crate) struct FirstKeyOnlyFilter {
    found: bool,
}

impl Filter for FirstKeyOnlyFilter {
    fn reset(&mut self) {
        self.found = false;
    }

    fn filter_cell(&mut self, _cell: &Cell) -> CellVerdict {
        if self.found {
            CellVerdict::NextRow
        } else {
            self.found = true;
            CellVerdict::Include
        }
    }
}

/// `FilterAllFilter()`: filters out every row. HBase walks the whole scan dropping each
/// row; here the filter has filtered all remaining from the start, so the scan ends at
/// once with the same (empty) result.
pub(crate) struct FilterAllFilter;

impl Filter for FilterAllFilter {
    fn filter_row_key(&mut self, _row: &[u8]) -> RowVerdict {
        RowVerdict::Skip
    }

    fn filter_cell(&mut self, _cell: &Cell) -> CellVerdict {
        CellVerdict::NextRow
    }

    fn filter_row(&mut self) -> bool {
        true
    }

    fn filter_all_remaining(&self) -> bool {
        true
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        // Judges whole rows: no state across columns.
        ColumnHint::Indifferent
    }
}

/// `RandomRowFilter('chance')`: each row passes with probability `chance`, drawn
/// afresh per row (so 0 or less filters every row and 1 or more passes every row).
pub(crate) struct RandomRowFilter {
    chance: f32,
    dice: SplitMix64,
    row_rejected: bool,
}

impl RandomRowFilter {
    /// A filter with its own randomly seeded dice.
    pub(crate) fn new(chance: f32) -> Self {
        Self::with_seed(chance, random_seed())
    }

    /// A filter whose draws follow from `seed` (for tests).
    pub(crate) fn with_seed(chance: f32, seed: u64) -> Self {
        RandomRowFilter {
            chance,
            dice: SplitMix64(seed),
            row_rejected: false,
        }
    }
}

impl Filter for RandomRowFilter {
    fn reset(&mut self) {
        self.row_rejected = false;
    }

    fn filter_row_key(&mut self, _row: &[u8]) -> RowVerdict {
        // A draw in [0, 1) below the chance passes (never for 0, always for 1).
        self.row_rejected = self.dice.next_unit() >= self.chance || self.chance.is_nan();
        row_verdict(self.row_rejected)
    }

    fn filter_cell(&mut self, _cell: &Cell) -> CellVerdict {
        cell_of_row(self.row_rejected)
    }

    fn filter_row(&mut self) -> bool {
        self.row_rejected
    }

    fn column_hint(&self, _cell: &Cell) -> ColumnHint {
        // Judges whole rows: no state across columns.
        ColumnHint::Indifferent
    }
}

/// A seed that differs between filters and between processes.
fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos());
    hasher.write_u128(nanos);
    hasher.finish()
}

/// The SplitMix64 generator: small, fast and statistically sound for sampling rows.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform draw in [0, 1) with 24 random bits, the precision of an f32.
    fn next_unit(&mut self) -> f32 {
        const SCALE: f32 = 1.0 / (1u32 << 24) as f32;
        (self.next_u64() >> 40) as f32 * SCALE
    }
}
