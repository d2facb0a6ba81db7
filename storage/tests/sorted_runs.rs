//! Files that follow one another (a sequential load's flushes) form one sorted run:
//! a merging compaction leaves them alone, gets read one file of the run, scans walk
//! it in either direction through one cursor, and a split point falls in the middle
//! of the run. Files that overlap count one run each and are merged as before.

mod common;

use bytes::Bytes;
use common::{open_engine, quiet_options};
use tabula_storage::{
    Durability, FamilySchema, ReadOptions, RowMutation, ScanRequest, TableSchema, Tablet,
};

const FILES: usize = 12;
const ROWS_PER_FILE: usize = 25;
const ROWS: usize = FILES * ROWS_PER_FILE;

fn row(i: usize) -> Bytes {
    Bytes::from(format!("row{i:05}"))
}

fn schema() -> TableSchema {
    TableSchema::new("t", vec![FamilySchema::new(&b"a"[..]).max_versions(3)]).expect("schema")
}

fn put(tablet: &Tablet, i: usize, ts: i64) {
    let m = RowMutation::new(row(i)).put(&b"a"[..], &b"q"[..], ts, format!("v{i}@{ts}"));
    tablet.mutate(&m, Durability::Skip).expect("put");
}

fn latest(tablet: &Tablet, i: usize) -> Option<Bytes> {
    let cells = tablet.get(&row(i), ReadOptions::latest()).expect("get");
    cells.first().map(|c| c.value.clone())
}

fn scan_rows(tablet: &Tablet, start: usize, reverse: bool) -> Vec<Bytes> {
    let mut scanner = tablet
        .scan(ScanRequest {
            start_row: row(start),
            stop_row: Bytes::new(),
            reverse,
            read: ReadOptions::latest(),
            batch: 0,
        })
        .expect("scan");
    let mut rows = Vec::new();
    while let Some(r) = scanner.next_row().expect("scan row") {
        rows.push(r.row().clone());
    }
    rows
}

#[test]
fn a_sequential_load_is_one_run_that_compactions_leave_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = quiet_options(dir.path(), 1_000);
    opts.max_files_per_read = 2;
    let (_engine, tablet) = open_engine(opts, schema());
    for f in 0..FILES {
        for i in f * ROWS_PER_FILE..(f + 1) * ROWS_PER_FILE {
            put(&tablet, i, 10);
        }
        tablet.flush().expect("flush");
    }
    let version = tablet.version();
    assert_eq!(version.files.len(), FILES);
    assert_eq!(
        version.family_runs(b"a").len(),
        1,
        "consecutive files are one run"
    );
    let report = tablet.compact_if_needed().expect("compact");
    assert_eq!(report.input_files, 0, "a run is not rewritten");

    for i in 0..ROWS {
        assert_eq!(
            latest(&tablet, i),
            Some(Bytes::from(format!("v{i}@10"))),
            "row {i}"
        );
    }
    assert_eq!(latest(&tablet, ROWS), None);
    let forward = scan_rows(&tablet, 0, false);
    assert_eq!(forward, (0..ROWS).map(row).collect::<Vec<_>>());
    // From inside a middle file, both ways across file boundaries.
    let from = 5 * ROWS_PER_FILE + 7;
    assert_eq!(
        scan_rows(&tablet, from, false),
        (from..ROWS).map(row).collect::<Vec<_>>()
    );
    assert_eq!(
        scan_rows(&tablet, from, true),
        (0..=from).rev().map(row).collect::<Vec<_>>()
    );

    // The split point is the middle of the run, not of one file.
    let mid = tablet.midpoint_row().expect("a split point");
    let lo = row(ROWS / 2 - ROWS_PER_FILE);
    let hi = row(ROWS / 2 + ROWS_PER_FILE);
    assert!(
        mid >= lo && mid <= hi,
        "midpoint {mid:?} not near the middle"
    );
}

#[test]
fn overlapping_files_are_merged_down_to_the_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = quiet_options(dir.path(), 1_000);
    opts.max_files_per_read = 3;
    let (engine, tablet) = open_engine(opts.clone(), schema());
    // A sequential run first, then flushes that each touch rows across all of it,
    // the last of which rewrites every row (newer timestamps win).
    for f in 0..4 {
        for i in f * ROWS_PER_FILE..(f + 1) * ROWS_PER_FILE {
            put(&tablet, i, 10);
        }
        tablet.flush().expect("flush");
    }
    let spread = 4 * ROWS_PER_FILE;
    for ts in 11..16i64 {
        for i in (ts as usize % 7..spread).step_by(7) {
            put(&tablet, i, ts);
        }
        tablet.flush().expect("flush");
    }
    assert_eq!(tablet.version().family_runs(b"a").len(), 6);
    let report = tablet.compact_if_needed().expect("compact");
    assert!(report.input_files > 0);
    let runs = tablet.version().family_runs(b"a").len();
    assert!(runs < 3, "{runs} runs left, limit 3");

    let expect = |i: usize| {
        let ts = (11..16i64)
            .rev()
            .find(|ts| i >= *ts as usize % 7 && (i - *ts as usize % 7).is_multiple_of(7))
            .unwrap_or(10);
        Some(Bytes::from(format!("v{i}@{ts}")))
    };
    for i in 0..spread {
        assert_eq!(latest(&tablet, i), expect(i), "row {i}");
    }
    assert_eq!(scan_rows(&tablet, 0, false).len(), spread);

    // The same after a reopen, from the manifest alone.
    drop(tablet);
    drop(engine);
    let (_engine, tablet) = open_engine(opts, schema());
    for i in 0..spread {
        assert_eq!(latest(&tablet, i), expect(i), "row {i} after reopen");
    }
}
