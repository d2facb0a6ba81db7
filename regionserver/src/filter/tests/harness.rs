//! Drives a filter over in-memory rows in the storage read path's call order
//! (see `tabula_storage::filter`), with every version visible.

use bytes::Bytes;
use tabula_storage::types::Cell;
use tabula_storage::{CellVerdict, ColumnHint, Filter, RowVerdict, SkipHint};

use crate::filter::parse_filter;

/// A row key and its cells, sorted as the engine delivers them.
pub(crate) type Row = (Bytes, Vec<Cell>);

pub(crate) fn cell(row: &str, family: &str, qualifier: &str, timestamp: i64, value: &str) -> Cell {
    Cell {
        row: Bytes::copy_from_slice(row.as_bytes()),
        family: Bytes::copy_from_slice(family.as_bytes()),
        qualifier: Bytes::copy_from_slice(qualifier.as_bytes()),
        timestamp,
        value: Bytes::copy_from_slice(value.as_bytes()),
    }
}

/// Groups cells into rows, ordered by row, family, qualifier, then newest first.
pub(crate) fn table(mut cells: Vec<Cell>) -> Vec<Row> {
    cells.sort_by(|a, b| {
        (&a.row, &a.family, &a.qualifier)
            .cmp(&(&b.row, &b.family, &b.qualifier))
            .then(b.timestamp.cmp(&a.timestamp))
    });
    let mut rows: Vec<Row> = Vec::new();
    for cell in cells {
        match rows.last_mut() {
            Some((key, row_cells)) if *key == cell.row => row_cells.push(cell),
            _ => rows.push((cell.row.clone(), vec![cell])),
        }
    }
    rows
}

fn same_column(a: &Cell, b: &Cell) -> bool {
    a.family == b.family && a.qualifier == b.qualifier
}

/// Runs `filter` over `rows` the way the engine does, returning the rows it emits.
pub(crate) fn run_filter(filter: &mut dyn Filter, rows: &[Row]) -> Vec<Row> {
    run_filter_with(filter, rows, Hints::Follow)
}

/// Whether the driver passes over rows a filter's skip hint names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hints {
    /// As the engine does: rows before a [`SkipHint::SkipTo`] bound are not shown,
    /// nor the columns a [`ColumnHint`] passes over.
    Follow,
    /// Every row is shown to the filter.
    Ignore,
}

/// [`run_filter`], following the filter's skip hints or not.
pub(crate) fn run_filter_with(filter: &mut dyn Filter, rows: &[Row], hints: Hints) -> Vec<Row> {
    // Rows in descending order are a reversed scan, which the regionserver tells
    // the filter before the first row.
    let descending = matches!(rows, [(first, _), (second, _), ..] if second < first);
    filter.set_reversed(descending);
    let mut emitted = Vec::new();
    let mut skip_to: Option<Vec<u8>> = None;
    'rows: for (key, cells) in rows {
        if let Some(bound) = &skip_to {
            let before_bound = if descending {
                key.as_ref() >= bound.as_slice()
            } else {
                key.as_ref() < bound.as_slice()
            };
            if before_bound {
                continue;
            }
            skip_to = None;
        }
        if filter.filter_all_remaining() {
            break;
        }
        filter.reset();
        match filter.filter_row_key(key) {
            RowVerdict::Include => {}
            RowVerdict::Skip => {
                if let (Hints::Follow, SkipHint::SkipTo(bound)) = (hints, filter.skip_hint(key)) {
                    let past = if descending {
                        bound.as_slice() < key.as_ref()
                    } else {
                        bound.as_slice() > key.as_ref()
                    };
                    assert!(
                        past || bound.as_slice() == key.as_ref(),
                        "a skip hint points back: {bound:?} from {key:?}"
                    );
                    skip_to = past.then_some(bound);
                }
                continue;
            }
            RowVerdict::EndScan => break,
        }
        let mut included = Vec::new();
        let mut skipping_column: Option<&Cell> = None;
        // A column hint: the family it was given in, and where its columns resume
        // (`None`: the family's end).
        let mut skipping_to: Option<(&Bytes, Option<Bytes>)> = None;
        let mut end_after_row = false;
        for cell in cells {
            if let Some((family, resume)) = &skipping_to {
                let passed_over =
                    cell.family == **family && resume.as_ref().is_none_or(|q| cell.qualifier < *q);
                if passed_over {
                    continue;
                }
                skipping_to = None;
            }
            if let Some(skipped) = skipping_column {
                if same_column(skipped, cell) {
                    continue;
                }
                skipping_column = None;
            }
            match filter.filter_cell(cell) {
                CellVerdict::Include => included.push(filter.transform_cell(cell.clone())),
                CellVerdict::IncludeAndNextColumn => {
                    included.push(filter.transform_cell(cell.clone()));
                    skipping_column = Some(cell);
                }
                CellVerdict::Skip => {}
                CellVerdict::NextColumn => {
                    skipping_column = Some(cell);
                    if hints == Hints::Follow {
                        skipping_to = match filter.column_hint(cell) {
                            ColumnHint::SkipTo(q) if q > cell.qualifier => {
                                Some((&cell.family, Some(q)))
                            }
                            ColumnHint::RestOfFamily => Some((&cell.family, None)),
                            _ => None,
                        };
                    }
                }
                CellVerdict::NextRow => break,
                CellVerdict::EndScan => {
                    end_after_row = true;
                    break;
                }
            }
        }
        filter.filter_row_cells(&mut included);
        let dropped = filter.filter_row();
        if !dropped && !included.is_empty() {
            emitted.push((key.clone(), included));
        }
        if end_after_row {
            break 'rows;
        }
    }
    emitted
}

/// A cell as `row fam:qual@ts=value` (bytes shown lossily).
pub(crate) fn render(cell: &Cell) -> String {
    let text = |b: &Bytes| String::from_utf8_lossy(b).into_owned();
    format!(
        "{} {}:{}@{}={}",
        text(&cell.row),
        text(&cell.family),
        text(&cell.qualifier),
        cell.timestamp,
        text(&cell.value)
    )
}

/// Parses `filter` and runs it, rendering every emitted cell.
pub(crate) fn scan(filter: &str, rows: &[Row]) -> Vec<String> {
    let mut compiled = parse_filter(filter.as_bytes()).unwrap_or_else(|e| panic!("{filter}: {e}"));
    run_filter(compiled.as_mut(), rows)
        .iter()
        .flat_map(|(_, cells)| cells.iter().map(render))
        .collect()
}

/// Parses `filter` and runs it, listing the emitted row keys.
pub(crate) fn scan_rows(filter: &str, rows: &[Row]) -> Vec<String> {
    let mut compiled = parse_filter(filter.as_bytes()).unwrap_or_else(|e| panic!("{filter}: {e}"));
    run_filter(compiled.as_mut(), rows)
        .iter()
        .map(|(key, _)| String::from_utf8_lossy(key).into_owned())
        .collect()
}

/// Four rows over two families, with two versions of row1's cf:a.
pub(crate) fn sample() -> Vec<Row> {
    table(vec![
        cell("row1", "cf", "a", 3, "apple"),
        cell("row1", "cf", "a", 2, "apricot"),
        cell("row1", "cf", "b", 3, "banana"),
        cell("row1", "cf2", "a", 3, "avocado"),
        cell("row2", "cf", "a", 5, "Cherry"),
        cell("row2", "cf", "c", 5, "coconut"),
        cell("row3", "cf", "b", 1, "blueberry"),
        cell("rox4", "cf", "a", 1, "date"),
    ])
}

/// Every cell of `rows`, rendered.
pub(crate) fn everything(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .flat_map(|(_, cells)| cells.iter().map(render))
        .collect()
}
