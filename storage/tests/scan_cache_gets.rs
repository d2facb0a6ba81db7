//! Gets through the scan cache: a row read from a file once is served from the
//! cache afterwards without a block lookup, newer writes and deletes still show
//! over it, and rows too large for it are read from their file every time.

mod common;

use bytes::Bytes;
use common::{open_engine, quiet_options};
use tabula_storage::engine::Engine;
use tabula_storage::types::{ColumnSelector, Mutation};
use tabula_storage::{Durability, FamilySchema, ReadOptions, RowMutation, TableSchema, Tablet};

const NOW: i64 = 1_000_000;

fn schema() -> TableSchema {
    TableSchema::new("t", vec![FamilySchema::new(&b"f"[..]).max_versions(100)])
        .expect("valid schema")
}

fn mutate(tablet: &Tablet, row: &str, mutation: Mutation) {
    tablet
        .mutate(
            &RowMutation {
                row: Bytes::from(row.to_string()),
                mutations: vec![mutation],
            },
            Durability::Sync,
        )
        .expect("mutate");
}

fn put(tablet: &Tablet, row: &str, ts: i64, value: &[u8]) {
    mutate(
        tablet,
        row,
        Mutation::Put {
            family: Bytes::from_static(b"f"),
            qualifier: Bytes::from_static(b"q"),
            timestamp: ts,
            value: Bytes::copy_from_slice(value),
        },
    );
}

/// The versions of `f:q` in `row` (newest first, at most `versions`) and the
/// block lookups the get made.
fn get(engine: &Engine, tablet: &Tablet, row: &str, versions: u32) -> (Vec<Bytes>, u64) {
    let before = engine.block_cache().stats();
    let cells = tablet
        .get(
            &Bytes::from(row.to_string()),
            ReadOptions::latest()
                .versions(versions)
                .columns(vec![ColumnSelector::Column(
                    Bytes::from_static(b"f"),
                    Bytes::from_static(b"q"),
                )]),
        )
        .expect("get");
    let after = engine.block_cache().stats();
    let lookups = (after.hits + after.misses) - (before.hits + before.misses);
    (cells.into_iter().map(|c| c.value).collect(), lookups)
}

fn row(i: usize) -> String {
    format!("row{i:04}")
}

#[test]
fn a_second_get_of_a_flushed_row_reads_no_block() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    for i in 0..100 {
        put(&tablet, &row(i), 10, format!("v{i}").as_bytes());
    }
    tablet.flush().expect("flush");

    let (first, lookups) = get(&engine, &tablet, &row(42), 1);
    assert_eq!(first, vec![Bytes::from("v42")]);
    assert!(lookups >= 1, "the first get reads the file");
    let stats = engine.scan_cache().stats();
    assert_eq!((stats.hits, stats.misses, stats.entries), (0, 1, 1));

    let (again, lookups) = get(&engine, &tablet, &row(42), 1);
    assert_eq!(again, first);
    assert_eq!(lookups, 0, "the cached row needs no block");
    assert_eq!(engine.scan_cache().stats().hits, 1);

    // Another row of the same file is its own entry.
    let (other, _) = get(&engine, &tablet, &row(43), 1);
    assert_eq!(other, vec![Bytes::from("v43")]);
    assert_eq!(engine.scan_cache().stats().entries, 2);
}

#[test]
fn newer_writes_and_deletes_show_over_a_cached_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    put(&tablet, "r", 10, b"old");
    tablet.flush().expect("flush");
    assert_eq!(get(&engine, &tablet, "r", 5).0, vec![Bytes::from("old")]);

    // A newer version in the memtable merges over the cached row.
    put(&tablet, "r", 20, b"new");
    assert_eq!(
        get(&engine, &tablet, "r", 5).0,
        vec![Bytes::from("new"), Bytes::from("old")]
    );
    // Flushed into a second file: both files answer, the old one from the cache.
    tablet.flush().expect("flush");
    assert_eq!(
        get(&engine, &tablet, "r", 5).0,
        vec![Bytes::from("new"), Bytes::from("old")]
    );
    // A column delete hides both, in the memtable, then flushed, then compacted.
    mutate(
        &tablet,
        "r",
        Mutation::DeleteColumn {
            family: Bytes::from_static(b"f"),
            qualifier: Bytes::from_static(b"q"),
            timestamp: 30,
        },
    );
    assert!(get(&engine, &tablet, "r", 5).0.is_empty());
    tablet.flush().expect("flush");
    assert!(get(&engine, &tablet, "r", 5).0.is_empty());
    tablet.major_compact().expect("major compaction");
    assert!(get(&engine, &tablet, "r", 5).0.is_empty());
    // A put after the delete shows again.
    put(&tablet, "r", 40, b"after");
    tablet.flush().expect("flush");
    assert_eq!(get(&engine, &tablet, "r", 5).0, vec![Bytes::from("after")]);
    assert_eq!(get(&engine, &tablet, "r", 5).0, vec![Bytes::from("after")]);
}

#[test]
fn a_row_too_large_for_the_cache_is_read_from_its_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    let versions = 40;
    let value_size = tabula_storage::scan_cache::MAX_ROW_BYTES / 20;
    for ts in 1..=versions {
        put(
            &tablet,
            "wide",
            ts,
            &vec![b'a' + (ts % 26) as u8; value_size],
        );
    }
    put(&tablet, "small", 1, b"s");
    tablet.flush().expect("flush");

    for _ in 0..2 {
        let (values, lookups) = get(&engine, &tablet, "wide", 100);
        assert_eq!(values.len(), versions as usize);
        assert_eq!(
            values.first().map(|v| v[0]),
            Some(b'a' + (versions % 26) as u8)
        );
        assert!(lookups >= 1, "a row over the limit is read from the file");
    }
    // The cache remembers the row as too large (a marker of a few bytes), so the
    // second get went straight to the file.
    let stats = engine.scan_cache().stats();
    assert_eq!((stats.entries, stats.hits, stats.misses), (1, 1, 1));
    assert!(stats.weighted_bytes < 1024, "{stats:?}");
    assert_eq!(get(&engine, &tablet, "small", 1).0, vec![Bytes::from("s")]);
    assert_eq!(engine.scan_cache().stats().entries, 2);
}
