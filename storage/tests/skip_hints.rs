//! Scans follow a filter's skip hints: after a row skipped by its key, a
//! `SkipHint::SkipTo` bound sends the read straight to the first row at (forward) or
//! below (reversed) the bound, without showing the filter the rows between; after a
//! cell's NextColumn, a `ColumnHint` sends it to a later qualifier of the family or
//! past the family. Checked over rows and columns spread across SSTables and the
//! memtable, with deleted rows and columns, start and stop rows and hints beyond
//! them, against models of what is kept; and the row keys and cells the filter is
//! shown are counted.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use common::{open_engine, quiet_options};
use proptest::prelude::*;
use tabula_storage::types::{Cell, Mutation};
use tabula_storage::{
    CellVerdict, ColumnHint, Durability, FamilySchema, Filter, ReadOptions, RowMutation,
    RowVerdict, ScanRequest, SkipHint, TableSchema, Tablet,
};

const NOW: i64 = 1_000_000;

/// Rows a scan returned, as (row, value of `f:q`).
type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// Keeps the rows of a set; after a row outside it, hints at the next row of the set
/// in scan order (or names none, when `hints` is off).
struct KeepRows {
    keep: Arc<BTreeSet<Vec<u8>>>,
    hints: bool,
    reversed: bool,
    rejected: bool,
    shown: Arc<AtomicUsize>,
}

impl Filter for KeepRows {
    fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
    }

    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        self.shown.fetch_add(1, Ordering::Relaxed);
        self.rejected = !self.keep.contains(row);
        if self.rejected {
            RowVerdict::Skip
        } else {
            RowVerdict::Include
        }
    }

    fn skip_hint(&self, row: &[u8]) -> SkipHint {
        if !self.hints {
            return SkipHint::Indifferent;
        }
        let bound = if self.reversed {
            // Just above the nearest kept row below: the read lands on it.
            self.keep.range(..row.to_vec()).next_back().map(|kept| {
                let mut above = kept.clone();
                above.push(0);
                above
            })
        } else {
            self.keep.range(row.to_vec()..).next().cloned()
        };
        // Past the last kept row: a bound beyond every row ends the read.
        SkipHint::SkipTo(bound.unwrap_or_else(|| {
            if self.reversed {
                Vec::new()
            } else {
                vec![0xff; 8]
            }
        }))
    }
}

fn schema() -> TableSchema {
    TableSchema::new("t", vec![FamilySchema::new(&b"f"[..])]).expect("valid schema")
}

fn write(tablet: &Tablet, row: &[u8], mutation: Mutation) {
    tablet
        .mutate(
            &RowMutation {
                row: Bytes::copy_from_slice(row),
                mutations: vec![mutation],
            },
            Durability::Sync,
        )
        .expect("write");
}

fn put(value: &[u8], timestamp: i64) -> Mutation {
    Mutation::Put {
        family: Bytes::from_static(b"f"),
        qualifier: Bytes::from_static(b"q"),
        timestamp,
        value: Bytes::copy_from_slice(value),
    }
}

/// Scans with a [`KeepRows`] filter: the rows returned as (row, value), and the
/// number of row keys the filter was shown.
fn scan(
    tablet: &Tablet,
    keep: &Arc<BTreeSet<Vec<u8>>>,
    hints: bool,
    start: &[u8],
    stop: &[u8],
    reverse: bool,
) -> (Rows, usize) {
    let shown = Arc::new(AtomicUsize::new(0));
    let filter = KeepRows {
        keep: keep.clone(),
        hints,
        reversed: false,
        rejected: false,
        shown: shown.clone(),
    };
    let mut filter: Box<dyn Filter> = Box::new(filter);
    filter.set_reversed(reverse);
    let mut scanner = tablet
        .scan(ScanRequest {
            start_row: Bytes::copy_from_slice(start),
            stop_row: Bytes::copy_from_slice(stop),
            reverse,
            read: ReadOptions::latest().filter(filter),
            batch: 0,
        })
        .expect("scan opens");
    let rows = scanner
        .next_rows(usize::MAX)
        .expect("scan reads")
        .into_iter()
        .map(|r| {
            let cell: &Cell = r.cells.first().expect("a row has cells");
            (cell.row.to_vec(), cell.value.to_vec())
        })
        .collect();
    (rows, shown.load(Ordering::Relaxed))
}

/// What a scan keeping `keep` returns from `model` (row -> value, deleted rows
/// absent) between `start` and `stop`.
fn expected(
    model: &BTreeMap<Vec<u8>, Vec<u8>>,
    keep: &BTreeSet<Vec<u8>>,
    start: &[u8],
    stop: &[u8],
    reverse: bool,
) -> Rows {
    let in_scan = |row: &[u8]| {
        if reverse {
            (start.is_empty() || row <= start) && (stop.is_empty() || row > stop)
        } else {
            row >= start && (stop.is_empty() || row < stop)
        }
    };
    let mut rows: Vec<_> = model
        .iter()
        .filter(|(row, _)| keep.contains(*row) && in_scan(row))
        .map(|(row, value)| (row.clone(), value.clone()))
        .collect();
    if reverse {
        rows.reverse();
    }
    rows
}

fn row(i: usize) -> Vec<u8> {
    format!("row{i:05}").into_bytes()
}

#[test]
fn a_hinted_scan_reads_only_the_rows_near_the_kept_ones() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    let mut model = BTreeMap::new();
    // Three layers: two SSTables and the memtable, each rewriting or deleting some
    // rows of the one before.
    for i in 0..3000 {
        write(&tablet, &row(i), put(b"old", 10));
        model.insert(row(i), b"old".to_vec());
    }
    tablet.flush().expect("flush");
    for i in (0..3000).step_by(7) {
        write(&tablet, &row(i), put(b"mid", 20));
        model.insert(row(i), b"mid".to_vec());
    }
    tablet.flush().expect("flush");
    for i in (0..3000).step_by(11) {
        write(&tablet, &row(i), Mutation::DeleteRow { timestamp: 30 });
        model.remove(&row(i));
    }
    for i in (3..3000).step_by(13) {
        write(&tablet, &row(i), put(b"new", 40));
        model.insert(row(i), b"new".to_vec());
    }
    let keep: Arc<BTreeSet<Vec<u8>>> = Arc::new(
        [5usize, 6, 7, 11, 22, 700, 1001, 1002, 2001, 2999]
            .into_iter()
            .map(row)
            .collect(),
    );
    for reverse in [false, true] {
        let (hinted, shown) = scan(&tablet, &keep, true, b"", b"", reverse);
        let (every, shown_all) = scan(&tablet, &keep, false, b"", b"", reverse);
        assert_eq!(hinted, expected(&model, &keep, b"", b"", reverse));
        assert_eq!(hinted, every);
        // Every kept row (7 not deleted) and the rows the scan lands on between them.
        assert!(
            shown <= 2 * keep.len() + 2,
            "{shown} rows shown (reverse {reverse})"
        );
        assert!(shown_all > 2500, "{shown_all} rows shown without hints");
    }
    // Start and stop rows, with hints pointing beyond the stop row.
    let (hinted, _) = scan(&tablet, &keep, true, &row(6), &row(1002), false);
    assert_eq!(hinted, expected(&model, &keep, &row(6), &row(1002), false));
    let (hinted, _) = scan(&tablet, &keep, true, &row(1002), &row(6), true);
    assert_eq!(hinted, expected(&model, &keep, &row(1002), &row(6), true));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn hinted_scans_match_the_model(
        rows in prop::collection::vec((0usize..400, 0u8..4), 1..120),
        kept in prop::collection::btree_set(0usize..400, 0..20),
        flush_at in 0usize..120,
        start in prop::option::of(0usize..400),
        stop in prop::option::of(0usize..400),
        reverse in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().expect("temp dir");
        let (_engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
        let mut model = BTreeMap::new();
        for (n, (i, action)) in rows.iter().enumerate() {
            if n == flush_at {
                tablet.flush().expect("flush");
            }
            let ts = 100 + n as i64;
            if *action == 0 {
                write(&tablet, &row(*i), Mutation::DeleteRow { timestamp: ts });
                model.remove(&row(*i));
            } else {
                let value = format!("v{n}").into_bytes();
                write(&tablet, &row(*i), put(&value, ts));
                model.insert(row(*i), value);
            }
        }
        let keep: Arc<BTreeSet<Vec<u8>>> = Arc::new(kept.into_iter().map(row).collect());
        let start = start.map(row).unwrap_or_default();
        let stop = stop.map(row).unwrap_or_default();
        let (hinted, _) = scan(&tablet, &keep, true, &start, &stop, reverse);
        prop_assert_eq!(hinted, expected(&model, &keep, &start, &stop, reverse));
    }
}

/// Keeps the columns of a set (in every family); after a column outside it, hints at
/// the next kept qualifier, or the family's end past the last (or names none, when
/// `hints` is off).
struct KeepColumns {
    keep: Arc<BTreeSet<Vec<u8>>>,
    hints: bool,
    shown: Arc<AtomicUsize>,
}

impl Filter for KeepColumns {
    fn filter_cell(&mut self, cell: &Cell) -> CellVerdict {
        self.shown.fetch_add(1, Ordering::Relaxed);
        if self.keep.contains(cell.qualifier.as_ref()) {
            CellVerdict::Include
        } else {
            CellVerdict::NextColumn
        }
    }

    fn column_hint(&self, cell: &Cell) -> ColumnHint {
        if !self.hints {
            return ColumnHint::SeeEveryColumn;
        }
        match self.keep.range(cell.qualifier.to_vec()..).next() {
            Some(next) => ColumnHint::SkipTo(Bytes::copy_from_slice(next)),
            None => ColumnHint::RestOfFamily,
        }
    }
}

fn two_family_schema() -> TableSchema {
    TableSchema::new(
        "t",
        vec![
            FamilySchema::new(&b"f"[..]).max_versions(3),
            FamilySchema::new(&b"g"[..]).max_versions(3),
        ],
    )
    .expect("valid schema")
}

fn put_in(family: &'static [u8], qualifier: &[u8], value: &[u8], timestamp: i64) -> Mutation {
    Mutation::Put {
        family: Bytes::from_static(family),
        qualifier: Bytes::copy_from_slice(qualifier),
        timestamp,
        value: Bytes::copy_from_slice(value),
    }
}

/// The row's cells a scan with [`KeepColumns`] returns, as (family, qualifier,
/// timestamp, value), and the cells the filter was shown.
fn scan_columns(
    tablet: &Tablet,
    keep: &Arc<BTreeSet<Vec<u8>>>,
    hints: bool,
) -> (Vec<CellTuple>, usize) {
    let shown = Arc::new(AtomicUsize::new(0));
    let filter = KeepColumns {
        keep: keep.clone(),
        hints,
        shown: shown.clone(),
    };
    let mut scanner = tablet
        .scan(ScanRequest {
            start_row: Bytes::new(),
            stop_row: Bytes::new(),
            reverse: false,
            read: ReadOptions::latest().versions(3).filter(Box::new(filter)),
            batch: 0,
        })
        .expect("scan opens");
    let cells = scanner
        .next_rows(usize::MAX)
        .expect("scan reads")
        .into_iter()
        .flat_map(|r| r.cells)
        .map(|c| {
            (
                c.family.to_vec(),
                c.qualifier.to_vec(),
                c.timestamp,
                c.value.to_vec(),
            )
        })
        .collect();
    (cells, shown.load(Ordering::Relaxed))
}

/// A cell as (family, qualifier, timestamp, value).
type CellTuple = (Vec<u8>, Vec<u8>, i64, Vec<u8>);

fn qualifier(i: usize) -> Vec<u8> {
    format!("q{i:04}").into_bytes()
}

#[test]
fn a_column_hint_reads_only_the_columns_near_the_kept_ones() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_engine, tablet) = open_engine(quiet_options(dir.path(), NOW), two_family_schema());
    // One wide row: 2,000 columns in each family, two versions in an SSTable, a
    // third in the memtable for some, some columns deleted.
    for i in 0..2000 {
        for family in [&b"f"[..], b"g"] {
            let f: &'static [u8] = if family == b"f" { b"f" } else { b"g" };
            write(&tablet, b"r", put_in(f, &qualifier(i), b"v1", 10));
            write(&tablet, b"r", put_in(f, &qualifier(i), b"v2", 20));
        }
    }
    tablet.flush().expect("flush");
    for i in (0..2000).step_by(3) {
        write(&tablet, b"r", put_in(b"f", &qualifier(i), b"v3", 30));
    }
    for i in (0..2000).step_by(7) {
        write(
            &tablet,
            b"r",
            Mutation::DeleteColumn {
                family: Bytes::from_static(b"g"),
                qualifier: Bytes::from(qualifier(i)),
                timestamp: 40,
            },
        );
    }
    let keep: Arc<BTreeSet<Vec<u8>>> = Arc::new(
        [3usize, 7, 8, 1500, 1999]
            .into_iter()
            .map(qualifier)
            .collect(),
    );
    let (hinted, shown) = scan_columns(&tablet, &keep, true);
    let (every, shown_all) = scan_columns(&tablet, &keep, false);
    assert_eq!(hinted, every);
    // The model: per family, the kept columns' versions newest first.
    let mut expected = Vec::new();
    for family in [&b"f"[..], b"g"] {
        for q in keep.iter() {
            let i: usize = String::from_utf8_lossy(&q[1..]).parse().expect("number");
            if family == b"g" && i.is_multiple_of(7) {
                continue;
            }
            if family == b"f" && i.is_multiple_of(3) {
                expected.push((family.to_vec(), q.clone(), 30, b"v3".to_vec()));
            }
            expected.push((family.to_vec(), q.clone(), 20, b"v2".to_vec()));
            expected.push((family.to_vec(), q.clone(), 10, b"v1".to_vec()));
        }
    }
    assert_eq!(hinted, expected);
    assert!(shown < 60, "{shown} cells shown with hints");
    // One cell per column left (deleted ones are not shown).
    assert!(shown_all > 3700, "{shown_all} cells shown without hints");
}
