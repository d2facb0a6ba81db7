//! A get of one column's newest version reads its sources one at a time, the one
//! that may hold the newest timestamp first, and stops once the rest can only hold
//! older versions; files whose timestamps lie outside a get's time range are not
//! read at all. Counted here by block lookups, and checked where the shortcut must
//! not apply: equal timestamps in two files, and delete markers newer than the
//! range read.

mod common;

use bytes::Bytes;
use common::{open_engine, quiet_options};
use tabula_storage::engine::Engine;
use tabula_storage::types::{ColumnSelector, Mutation, TimeRange};
use tabula_storage::{Durability, FamilySchema, ReadOptions, RowMutation, TableSchema, Tablet};

const NOW: i64 = 1_000_000;

fn schema() -> TableSchema {
    TableSchema::new("t", vec![FamilySchema::new(&b"f"[..]).max_versions(5)]).expect("valid schema")
}

fn put(tablet: &Tablet, row: &str, qualifier: &'static str, ts: i64, value: &str) {
    tablet
        .mutate(
            &RowMutation {
                row: Bytes::from(row.to_string()),
                mutations: vec![Mutation::Put {
                    family: Bytes::from_static(b"f"),
                    qualifier: Bytes::from_static(qualifier.as_bytes()),
                    timestamp: ts,
                    value: Bytes::from(value.to_string()),
                }],
            },
            Durability::Sync,
        )
        .expect("put");
}

/// The newest value of `f:q` in `row` within `range`, and the block lookups the
/// get made.
fn newest(engine: &Engine, tablet: &Tablet, row: &str, range: TimeRange) -> (Option<Bytes>, u64) {
    let before = engine.block_cache().stats();
    let cells = tablet
        .get(
            &Bytes::from(row.to_string()),
            ReadOptions::latest()
                .columns(vec![ColumnSelector::Column(
                    Bytes::from_static(b"f"),
                    Bytes::from_static(b"q"),
                )])
                .time_range(range),
        )
        .expect("get");
    let after = engine.block_cache().stats();
    assert!(cells.len() <= 1, "one version asked for: {cells:?}");
    let lookups = (after.hits + after.misses) - (before.hits + before.misses);
    (cells.first().map(|c| c.value.clone()), lookups)
}

fn row(i: usize) -> String {
    format!("row{i:04}")
}

#[test]
fn a_rewritten_row_reads_only_the_newest_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    for i in 0..200 {
        put(&tablet, &row(i), "q", 100, &format!("old{i}"));
    }
    tablet.flush().expect("flush");
    put(&tablet, &row(7), "q", 200, "new7");
    tablet.flush().expect("flush");

    // Both files hold row 7: the newer one answers alone.
    let (value, lookups) = newest(&engine, &tablet, &row(7), TimeRange::ALL);
    assert_eq!(value, Some(Bytes::from("new7")));
    assert_eq!(lookups, 1, "the older file's block was read too");
    // As of a time before the rewrite, the newer file is not read.
    let (value, lookups) = newest(&engine, &tablet, &row(7), TimeRange::before(150));
    assert_eq!(value, Some(Bytes::from("old7")));
    assert_eq!(lookups, 1);
    // A row only the older file holds.
    let (value, _) = newest(&engine, &tablet, &row(8), TimeRange::ALL);
    assert_eq!(value, Some(Bytes::from("old8")));
    // A range after every write of the older file skips it.
    let (value, lookups) = newest(&engine, &tablet, &row(8), TimeRange::new(150, 300));
    assert_eq!(value, None);
    assert_eq!(lookups, 0, "no file holds a version of row 8 in [150, 300)");

    // The memtable's version is newer than every file's: no block is read.
    put(&tablet, &row(7), "q", 300, "newest7");
    let (value, lookups) = newest(&engine, &tablet, &row(7), TimeRange::ALL);
    assert_eq!(value, Some(Bytes::from("newest7")));
    assert_eq!(lookups, 0);
}

#[test]
fn equal_timestamps_in_two_files_give_the_later_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    // The older file also holds a newer cell of another column, so it is the one
    // that may hold the newest timestamp and is read first.
    put(&tablet, "r", "q", 100, "first");
    put(&tablet, "r", "z", 300, "other");
    tablet.flush().expect("flush");
    put(&tablet, "r", "q", 100, "second");
    tablet.flush().expect("flush");
    let (value, _) = newest(&engine, &tablet, "r", TimeRange::ALL);
    assert_eq!(
        value,
        Some(Bytes::from("second")),
        "a put replaces one at its timestamp"
    );
    // The same with the later write still in the memtable.
    put(&tablet, "r", "q", 100, "third");
    let (value, _) = newest(&engine, &tablet, "r", TimeRange::ALL);
    assert_eq!(value, Some(Bytes::from("third")));
}

#[test]
fn a_marker_newer_than_the_range_still_hides_older_versions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    put(&tablet, "r", "q", 100, "v100");
    tablet.flush().expect("flush");
    tablet
        .mutate(
            &RowMutation {
                row: Bytes::from_static(b"r"),
                mutations: vec![Mutation::DeleteColumn {
                    family: Bytes::from_static(b"f"),
                    qualifier: Bytes::from_static(b"q"),
                    timestamp: 300,
                }],
            },
            Durability::Sync,
        )
        .expect("delete");
    tablet.flush().expect("flush");
    // The marker's file holds nothing below 300, yet its marker hides version 100.
    let (value, _) = newest(&engine, &tablet, "r", TimeRange::before(200));
    assert_eq!(value, None);
    let (value, _) = newest(&engine, &tablet, "r", TimeRange::ALL);
    assert_eq!(value, None);
}
