//! A table with its compactions turned off (HBase's COMPACTION_ENABLED = false)
//! keeps every file its flushes write: no merging compaction when it holds more
//! runs than a read may consult, and a major compaction asked for does nothing.
//! Turned back on, the background worker merges what piled up meanwhile.

mod common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{open_engine, quiet_options};
use tabula_storage::{Durability, FamilySchema, ReadOptions, RowMutation, TableSchema, Tablet};

const FLUSHES: usize = 6;
const ROWS: usize = 20;

fn schema(compactions_disabled: bool) -> TableSchema {
    TableSchema::new("t", vec![FamilySchema::new(&b"a"[..]).max_versions(1)])
        .expect("schema")
        .with_compactions_disabled(compactions_disabled)
}

fn row(i: usize) -> Bytes {
    Bytes::from(format!("row{i:03}"))
}

/// Writes every row at `ts` and flushes: each flush overlaps the others, one run
/// of its own.
fn write_and_flush(tablet: &Tablet, ts: i64) {
    for i in 0..ROWS {
        let m = RowMutation::new(row(i)).put(&b"a"[..], &b"q"[..], ts, format!("v{ts}"));
        tablet.mutate(&m, Durability::Skip).expect("put");
    }
    tablet.flush().expect("flush");
}

fn latest(tablet: &Tablet, i: usize) -> Option<Bytes> {
    let cells = tablet.get(&row(i), ReadOptions::latest()).expect("get");
    cells.first().map(|c| c.value.clone())
}

#[test]
fn a_table_with_compactions_off_keeps_its_files_until_they_are_turned_back_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = quiet_options(dir.path(), 1_000);
    opts.max_files_per_read = 2;
    opts.background_work = true;
    let (_engine, tablet) = open_engine(opts, schema(true));
    assert!(!tablet.schema().compactions_enabled());
    for ts in 1..=FLUSHES as i64 {
        write_and_flush(&tablet, ts);
    }
    assert_eq!(tablet.version().family_runs(b"a").len(), FLUSHES);

    // Neither a merging nor a major compaction rewrites anything.
    let merging = tablet.compact_if_needed().expect("merging compaction");
    assert_eq!(merging.input_files, 0, "{merging:?}");
    let major = tablet.major_compact().expect("major compaction");
    assert_eq!(major.input_files, 0, "{major:?}");
    assert_eq!(tablet.version().files.len(), FLUSHES);
    // Reads see the newest version through every file.
    for i in 0..ROWS {
        assert_eq!(latest(&tablet, i), Some(Bytes::from(format!("v{FLUSHES}"))));
    }

    // Turned back on: the background worker merges the runs down to the limit.
    tablet.set_schema(schema(false));
    let deadline = Instant::now() + Duration::from_secs(30);
    while tablet.version().family_runs(b"a").len() > 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let runs = tablet.version().family_runs(b"a").len();
    assert!(runs <= 2, "{runs} runs left after compactions came back");
    for i in 0..ROWS {
        assert_eq!(latest(&tablet, i), Some(Bytes::from(format!("v{FLUSHES}"))));
    }
    // And a major compaction asked for now rewrites them into one file.
    let major = tablet.major_compact().expect("major compaction");
    assert!(major.input_files > 0, "{major:?}");
    assert_eq!(tablet.version().files.len(), 1);
}
