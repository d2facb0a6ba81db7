//! FilterList: MUST_PASS_ALL (AND) and MUST_PASS_ONE (OR) over sub-filters, with HBase's
//! rules for combining their answers.
//!
//! A cell verdict is read as "include the cell?" plus "how far to skip": this cell, the
//! column's other versions, the row, or the scan. AND includes only what every
//! sub-filter includes and skips as far as the farthest (HBase's maximal step), and stops
//! asking sub-filters once the cell is out (so their counters do not move); a sub-filter
//! that has filtered all remaining makes AND answer NextRow. OR includes what any
//! sub-filter includes and skips only as far as the nearest (minimal step), never asks
//! a sub-filter that has filtered all remaining, and remembers each sub-filter's last
//! answer: one that said NextColumn / IncludeAndNextColumn is not asked again for that
//! column, one that said NextRow (or EndScan) is not asked again in that row. (HBase
//! scopes NextRow to a column family because its NextRow only leaves the family; the
//! engine's NextRow leaves the whole row, so the row is the scope here.)
//!
//! Row keys: AND rejects a row when any sub-filter rejects it (every sub-filter still sees
//! the key); OR rejects it only when every sub-filter that has not filtered all remaining
//! rejects it. `filter_row`: AND drops when any drops, OR when all drop (both stop at the
//! first deciding answer, as HBase does, which matters for PageFilter's counting).
//! `filter_all_remaining`: AND when any, OR when all. Transforms: AND chains every
//! sub-filter's transform; OR chains those of the sub-filters that included the cell.
//! `filter_row_cells` runs every sub-filter in order; `needs_whole_row` when any needs it.
//!
//! Skip hints (after a rejected row key): AND goes as far as the farthest bound of a
//! sub-filter that rejected the row (each rejects everything before its own), unless a
//! sub-filter must see every row; OR goes only as far as the nearest bound, and only
//! when every sub-filter still asked named one. Column hints (after a cell's
//! NextColumn): AND takes the hint of the sub-filter that rejected the cell when the
//! sub-filters that let it through do not need to see every column (those after it
//! were not asked, and would not be for the columns it rejects); OR takes the
//! nearest hint of the sub-filters it asked, a sub-filter done with the row counting
//! as the family's end.
//!
//! Must not: know any particular sub-filter.

use bytes::Bytes;
use tabula_storage::types::Cell;
use tabula_storage::{CellVerdict, ColumnHint, Filter, RowVerdict, SkipHint};

/// How far a cell verdict moves the read on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Reach {
    Cell,
    Column,
    Row,
    Scan,
}

fn split(verdict: CellVerdict) -> (bool, Reach) {
    match verdict {
        CellVerdict::Include => (true, Reach::Cell),
        CellVerdict::IncludeAndNextColumn => (true, Reach::Column),
        CellVerdict::Skip => (false, Reach::Cell),
        CellVerdict::NextColumn => (false, Reach::Column),
        CellVerdict::NextRow => (false, Reach::Row),
        CellVerdict::EndScan => (false, Reach::Scan),
    }
}

fn join(include: bool, reach: Reach) -> CellVerdict {
    match (include, reach) {
        (true, Reach::Cell) => CellVerdict::Include,
        // Including while leaving the row is not a verdict the engine has; keeping the
        // cell and moving to the next column is the nearest safe one.
        (true, _) => CellVerdict::IncludeAndNextColumn,
        (false, Reach::Cell) => CellVerdict::Skip,
        (false, Reach::Column) => CellVerdict::NextColumn,
        (false, Reach::Row) => CellVerdict::NextRow,
        (false, Reach::Scan) => CellVerdict::EndScan,
    }
}

/// True when a verdict keeps the cell.
pub(crate) fn includes(verdict: CellVerdict) -> bool {
    split(verdict).0
}

/// The AND of two verdicts (the most restrictive).
pub(crate) fn and_verdict(a: CellVerdict, b: CellVerdict) -> CellVerdict {
    let (a_in, a_reach) = split(a);
    let (b_in, b_reach) = split(b);
    join(a_in && b_in, a_reach.max(b_reach))
}

/// The OR of two verdicts (the least restrictive).
pub(crate) fn or_verdict(a: CellVerdict, b: CellVerdict) -> CellVerdict {
    let (a_in, a_reach) = split(a);
    let (b_in, b_reach) = split(b);
    join(a_in || b_in, a_reach.min(b_reach))
}

/// The bound of two [`SkipHint::SkipTo`]s lying farther on in scan order (`farther`)
/// or nearer.
fn pick_bound(a: Vec<u8>, b: Vec<u8>, reversed: bool, farther: bool) -> Vec<u8> {
    // Forward scans go up, reversed ones down.
    if (a > b) == (farther != reversed) {
        a
    } else {
        b
    }
}

/// MUST_PASS_ALL.
pub(crate) struct AndList {
    filters: Vec<Box<dyn Filter>>,
    reversed: bool,
    /// The sub-filter that rejected the last cell with NextColumn, if one did.
    column_rejecter: Option<usize>,
}

impl AndList {
    pub(crate) fn new(filters: Vec<Box<dyn Filter>>) -> Self {
        AndList {
            filters,
            reversed: false,
            column_rejecter: None,
        }
    }
}

impl Filter for AndList {
    fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
        for filter in &mut self.filters {
            filter.set_reversed(reversed);
        }
    }

    fn reset(&mut self) {
        for filter in &mut self.filters {
            filter.reset();
        }
    }

    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        let mut verdict = RowVerdict::Include;
        for filter in &mut self.filters {
            let answer = if filter.filter_all_remaining() {
                RowVerdict::Skip
            } else {
                filter.filter_row_key(row)
            };
            verdict = match (verdict, answer) {
                (RowVerdict::EndScan, _) | (_, RowVerdict::EndScan) => RowVerdict::EndScan,
                (RowVerdict::Skip, _) | (_, RowVerdict::Skip) => RowVerdict::Skip,
                _ => RowVerdict::Include,
            };
        }
        verdict
    }

    fn skip_hint(&self, row: &[u8]) -> SkipHint {
        if self.filter_all_remaining() {
            return SkipHint::Indifferent;
        }
        let mut bound: Option<Vec<u8>> = None;
        for filter in &self.filters {
            match filter.skip_hint(row) {
                SkipHint::SeeEveryRow => return SkipHint::SeeEveryRow,
                SkipHint::Indifferent => {}
                SkipHint::SkipTo(theirs) => {
                    bound = Some(match bound {
                        None => theirs,
                        Some(mine) => pick_bound(mine, theirs, self.reversed, true),
                    });
                }
            }
        }
        bound.map_or(SkipHint::Indifferent, SkipHint::SkipTo)
    }

    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        let mut verdict = CellVerdict::Include;
        self.column_rejecter = None;
        for (index, filter) in self.filters.iter_mut().enumerate() {
            if filter.filter_all_remaining() {
                return CellVerdict::NextRow;
            }
            let answer = filter.filter_cell(cell);
            verdict = and_verdict(verdict, answer);
            if !includes(verdict) {
                if answer == CellVerdict::NextColumn {
                    self.column_rejecter = Some(index);
                }
                return verdict;
            }
        }
        verdict
    }

    fn column_hint(&self, cell: &Cell) -> ColumnHint {
        let Some(rejecter) = self.column_rejecter else {
            return ColumnHint::SeeEveryColumn;
        };
        let mut asked = self.filters.iter().take(rejecter.saturating_add(1));
        let Some(hint) = asked.next_back().map(|f| f.column_hint(cell)) else {
            return ColumnHint::SeeEveryColumn;
        };
        if asked.any(|f| f.column_hint(cell) == ColumnHint::SeeEveryColumn) {
            return ColumnHint::SeeEveryColumn;
        }
        hint
    }

    fn transform_cell(&mut self, cell: Cell) -> Cell {
        self.filters
            .iter_mut()
            .fold(cell, |cell, filter| filter.transform_cell(cell))
    }

    fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        for filter in &mut self.filters {
            filter.filter_row_cells(cells);
        }
    }

    fn filter_row(&mut self) -> bool {
        self.filters.iter_mut().any(|filter| filter.filter_row())
    }

    fn filter_all_remaining(&self) -> bool {
        self.filters
            .iter()
            .any(|filter| filter.filter_all_remaining())
    }

    fn needs_whole_row(&self) -> bool {
        self.filters.iter().any(|filter| filter.needs_whole_row())
    }
}

/// What OR remembers about one sub-filter within the current row.
#[derive(Default)]
struct Memory {
    /// The last verdict that lets later cells be answered without asking, with the
    /// column it was given for.
    standing: Option<(CellVerdict, Bytes, Bytes)>,
    /// The sub-filter included the current cell (its transform applies).
    included: bool,
    /// The sub-filter itself judged the current cell (it was not answered from
    /// `standing`): only then does its column hint speak of this cell.
    judged: bool,
}

impl Memory {
    /// The remembered answer for `cell`, if the last verdict covers it.
    fn answer_for(&self, cell: &Cell) -> Option<CellVerdict> {
        let (verdict, family, qualifier) = self.standing.as_ref()?;
        match verdict {
            CellVerdict::NextRow | CellVerdict::EndScan => Some(*verdict),
            CellVerdict::NextColumn | CellVerdict::IncludeAndNextColumn
                if *family == cell.family && *qualifier == cell.qualifier =>
            {
                Some(CellVerdict::NextColumn)
            }
            _ => None,
        }
    }

    fn record(&mut self, verdict: CellVerdict, cell: &Cell) {
        self.standing = match verdict {
            CellVerdict::Include | CellVerdict::Skip => None,
            _ => Some((verdict, cell.family.clone(), cell.qualifier.clone())),
        };
        self.included = includes(verdict);
    }
}

/// MUST_PASS_ONE.
pub(crate) struct OrList {
    filters: Vec<Box<dyn Filter>>,
    memories: Vec<Memory>,
    reversed: bool,
}

impl OrList {
    pub(crate) fn new(filters: Vec<Box<dyn Filter>>) -> Self {
        let memories = filters.iter().map(|_| Memory::default()).collect();
        OrList {
            filters,
            memories,
            reversed: false,
        }
    }
}

impl Filter for OrList {
    fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
        for filter in &mut self.filters {
            filter.set_reversed(reversed);
        }
    }

    fn reset(&mut self) {
        for filter in &mut self.filters {
            filter.reset();
        }
        for memory in &mut self.memories {
            *memory = Memory::default();
        }
    }

    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        let mut any_include = false;
        let mut all_end = true;
        let mut asked = 0;
        for filter in &mut self.filters {
            if filter.filter_all_remaining() {
                continue;
            }
            asked += 1;
            match filter.filter_row_key(row) {
                RowVerdict::Include => any_include = true,
                RowVerdict::Skip => all_end = false,
                RowVerdict::EndScan => {}
            }
        }
        if any_include {
            RowVerdict::Include
        } else if asked > 0 && all_end {
            RowVerdict::EndScan
        } else {
            RowVerdict::Skip
        }
    }

    fn column_hint(&self, cell: &Cell) -> ColumnHint {
        // `None` stands for the family's end (a sub-filter done with the row).
        let mut nearest: Option<Option<Bytes>> = None;
        for (filter, memory) in self.filters.iter().zip(&self.memories) {
            if filter.filter_all_remaining() {
                continue;
            }
            let reach = match memory.standing.as_ref().map(|(verdict, _, _)| *verdict) {
                Some(CellVerdict::NextRow | CellVerdict::EndScan) => None,
                // Remembered for this column only: what comes after is unknown.
                Some(CellVerdict::NextColumn) if !memory.judged => return ColumnHint::Indifferent,
                Some(CellVerdict::NextColumn) => match filter.column_hint(cell) {
                    ColumnHint::SkipTo(qualifier) => Some(qualifier),
                    ColumnHint::RestOfFamily => None,
                    other => return other,
                },
                _ => return ColumnHint::SeeEveryColumn,
            };
            nearest = Some(match (nearest, reach) {
                (None, reach) => reach,
                (Some(None), reach) | (Some(reach), None) => reach,
                (Some(Some(mine)), Some(theirs)) => Some(mine.min(theirs)),
            });
        }
        match nearest {
            Some(Some(qualifier)) => ColumnHint::SkipTo(qualifier),
            Some(None) => ColumnHint::RestOfFamily,
            None => ColumnHint::Indifferent,
        }
    }

    fn skip_hint(&self, row: &[u8]) -> SkipHint {
        // Sub-filters that filter all remaining are never asked again: they keep
        // no row anywhere and do not limit the skip.
        let mut bound: Option<Vec<u8>> = None;
        let mut indifferent = false;
        for filter in self.filters.iter().filter(|f| !f.filter_all_remaining()) {
            match filter.skip_hint(row) {
                SkipHint::SeeEveryRow => return SkipHint::SeeEveryRow,
                SkipHint::Indifferent => indifferent = true,
                SkipHint::SkipTo(theirs) => {
                    bound = Some(match bound {
                        None => theirs,
                        Some(mine) => pick_bound(mine, theirs, self.reversed, false),
                    });
                }
            }
        }
        match bound {
            Some(bound) if !indifferent => SkipHint::SkipTo(bound),
            _ => SkipHint::Indifferent,
        }
    }

    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        let mut verdict: Option<CellVerdict> = None;
        for (filter, memory) in self.filters.iter_mut().zip(self.memories.iter_mut()) {
            memory.included = false;
            if filter.filter_all_remaining() {
                continue;
            }
            let remembered = memory.answer_for(cell);
            let answer = remembered.unwrap_or_else(|| filter.filter_cell(cell));
            memory.record(answer, cell);
            memory.judged = remembered.is_none();
            verdict = Some(match verdict {
                None => answer,
                Some(so_far) => or_verdict(so_far, answer),
            });
        }
        verdict.unwrap_or(CellVerdict::Skip)
    }

    fn transform_cell(&mut self, cell: Cell) -> Cell {
        self.filters
            .iter_mut()
            .zip(self.memories.iter())
            .filter(|(_, memory)| memory.included)
            .fold(cell, |cell, (filter, _)| filter.transform_cell(cell))
    }

    fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        for filter in &mut self.filters {
            filter.filter_row_cells(cells);
        }
    }

    fn filter_row(&mut self) -> bool {
        self.filters.iter_mut().all(|filter| filter.filter_row())
    }

    fn filter_all_remaining(&self) -> bool {
        self.filters
            .iter()
            .all(|filter| filter.filter_all_remaining())
    }

    fn needs_whole_row(&self) -> bool {
        self.filters.iter().any(|filter| filter.needs_whole_row())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [CellVerdict; 6] = [
        CellVerdict::Include,
        CellVerdict::IncludeAndNextColumn,
        CellVerdict::Skip,
        CellVerdict::NextColumn,
        CellVerdict::NextRow,
        CellVerdict::EndScan,
    ];

    #[test]
    fn and_follows_hbase_maximal_step_table() {
        use CellVerdict::*;
        // (so far, sub-filter, merged), the rows of HBase's table the engine can express.
        let table = [
            (Include, IncludeAndNextColumn, IncludeAndNextColumn),
            (Skip, IncludeAndNextColumn, NextColumn),
            (IncludeAndNextColumn, Skip, NextColumn),
            (Skip, NextRow, NextRow),
            (NextColumn, Skip, NextColumn),
            (Include, Skip, Skip),
            (Include, Include, Include),
        ];
        for (a, b, merged) in table {
            assert_eq!(and_verdict(a, b), merged, "{a:?} AND {b:?}");
        }
    }

    #[test]
    fn or_follows_hbase_minimal_step_table() {
        use CellVerdict::*;
        let table = [
            (Include, NextRow, Include),
            (IncludeAndNextColumn, Skip, Include),
            (IncludeAndNextColumn, NextColumn, IncludeAndNextColumn),
            (IncludeAndNextColumn, NextRow, IncludeAndNextColumn),
            (NextColumn, Skip, Skip),
            (NextColumn, NextRow, NextColumn),
            (NextRow, NextRow, NextRow),
            (Skip, Skip, Skip),
        ];
        for (a, b, merged) in table {
            assert_eq!(or_verdict(a, b), merged, "{a:?} OR {b:?}");
        }
    }

    #[test]
    fn merges_are_commutative_and_include_is_their_identity_or_absorber() {
        for a in ALL {
            for b in ALL {
                assert_eq!(and_verdict(a, b), and_verdict(b, a));
                assert_eq!(or_verdict(a, b), or_verdict(b, a));
            }
            assert_eq!(and_verdict(CellVerdict::Include, a), a);
            assert_eq!(or_verdict(CellVerdict::Include, a), CellVerdict::Include);
            assert_eq!(or_verdict(CellVerdict::EndScan, a), a);
        }
    }
}
