//! A compaction whose input files were read from the block cache writes its output's
//! blocks into the cache as it goes and drops the inputs' blocks, so reads after it
//! still find their data cached (the output bypasses the page cache, and reads
//! back from the file after a restart); a compaction of files nobody reads leaves
//! the cache alone. Split children read their parent's files through the parent's
//! readers, so the parent's cached blocks serve them, and their rewrites of what
//! they inherited keep it cached while dropping the parent's blocks.

mod common;

use bytes::Bytes;
use common::{open_engine, quiet_options};
use tabula_storage::engine::Engine;
use tabula_storage::types::{ColumnSelector, Mutation};
use tabula_storage::{Durability, FamilySchema, ReadOptions, RowMutation, TableSchema, Tablet};

const NOW: i64 = 1_000_000;
const ROWS: usize = 2_000;

fn schema() -> TableSchema {
    TableSchema::new("t", vec![FamilySchema::new(&b"f"[..])]).expect("valid schema")
}

fn row(i: usize) -> Bytes {
    Bytes::from(format!("row{i:05}"))
}

fn value(i: usize, round: usize) -> Bytes {
    Bytes::from(format!("{round}-{i}-{}", "x".repeat(100)))
}

/// Writes every row with values of `round` and flushes them into a file.
fn write_round(tablet: &Tablet, round: usize) {
    for i in 0..ROWS {
        tablet
            .mutate(
                &RowMutation {
                    row: row(i),
                    mutations: vec![Mutation::Put {
                        family: Bytes::from_static(b"f"),
                        qualifier: Bytes::from_static(b"q"),
                        timestamp: NOW + round as i64,
                        value: value(i, round),
                    }],
                },
                Durability::Sync,
            )
            .expect("put");
    }
    tablet.flush().expect("flush");
}

/// Reads every row, checks it holds `round`'s value, and returns the block cache
/// misses the reads made.
fn read_all(engine: &Engine, tablet: &Tablet, round: usize) -> u64 {
    read_rows(engine, tablet, 0..ROWS, round)
}

/// Reads `rows` like [`read_all`].
fn read_rows(engine: &Engine, tablet: &Tablet, rows: std::ops::Range<usize>, round: usize) -> u64 {
    let before = engine.block_cache().stats().misses;
    for i in rows {
        let cells = tablet
            .get(
                &row(i),
                ReadOptions::latest()
                    .columns(vec![ColumnSelector::Family(Bytes::from_static(b"f"))]),
            )
            .expect("get");
        assert_eq!(cells.len(), 1, "row {i}");
        assert_eq!(cells[0].value, value(i, round), "row {i}");
    }
    engine.block_cache().stats().misses - before
}

/// Bytes the block cache holds once its pending maintenance has run.
fn cached_bytes(engine: &Engine) -> u64 {
    engine.block_cache().run_pending_tasks();
    engine.block_cache().stats().weighted_bytes
}

/// Writes two rounds into two files and reads every row until all of round 2's
/// data is cached; returns the bytes then cached.
fn cache_two_rounds(engine: &Engine, tablet: &Tablet) -> u64 {
    write_round(tablet, 1);
    write_round(tablet, 2);
    assert!(
        read_all(engine, tablet, 2) > 0,
        "the first reads load the blocks"
    );
    assert_eq!(read_all(engine, tablet, 2), 0, "the data is cached");
    cached_bytes(engine)
}

#[test]
fn a_compaction_of_cached_files_leaves_their_data_cached() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    let cached_before = cache_two_rounds(&engine, &tablet);

    tablet.major_compact().expect("major compaction");
    assert_eq!(
        tablet.stats().file_count,
        1,
        "one file after the compaction"
    );
    assert_eq!(
        read_all(&engine, &tablet, 2),
        0,
        "the compacted file's blocks were cached as it was written"
    );
    let cached_after = cached_bytes(&engine);
    // The newer file's blocks were read (and cached) before; the output holds the
    // same rows once: the inputs' blocks are gone from the cache.
    assert!(
        cached_after < cached_before + cached_before / 2,
        "input blocks still cached: {cached_before} bytes before, {cached_after} after"
    );
}

/// The output of a compaction of cached files is written around the page cache
/// (direct I/O where the file system allows): once the engine is reopened with an
/// empty block cache, every row still reads back from the file itself.
#[test]
fn a_compacted_file_cached_as_written_reads_back_from_disk_after_a_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    cache_two_rounds(&engine, &tablet);
    tablet.major_compact().expect("major compaction");
    assert_eq!(read_all(&engine, &tablet, 2), 0, "the output was cached");
    engine.shutdown().expect("shutdown");
    drop(tablet);
    drop(engine);

    let (engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    assert_eq!(tablet.stats().file_count, 1, "the compacted file");
    assert!(
        read_all(&engine, &tablet, 2) > 0,
        "a fresh block cache reads the blocks from the file"
    );
    assert_eq!(read_all(&engine, &tablet, 2), 0, "and caches them again");
}

#[test]
fn a_compaction_of_files_nobody_reads_leaves_the_cache_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    write_round(&tablet, 1);
    write_round(&tablet, 2);
    tablet.major_compact().expect("major compaction");
    engine.block_cache().run_pending_tasks();
    assert_eq!(
        engine.block_cache().stats().entries,
        0,
        "nothing was cached"
    );
    assert!(read_all(&engine, &tablet, 2) > 0, "reads load the blocks");
}

#[test]
fn split_children_read_their_parents_cached_blocks_and_keep_them_cached() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = open_engine(quiet_options(dir.path(), NOW), schema());
    let cached_before = cache_two_rounds(&engine, &tablet);

    let half = ROWS / 2;
    let (left, right) = engine
        .split_tablet(tablet.id(), &row(half), 2, 3)
        .expect("split");
    drop(tablet);
    assert_eq!(
        read_rows(&engine, &left, 0..half, 2) + read_rows(&engine, &right, half..ROWS, 2),
        0,
        "the children read the parent's cached blocks"
    );

    // Each child rewrites the files it inherited into one of its own.
    for child in [&left, &right] {
        child.compact_if_needed().expect("compaction");
        assert_eq!(child.stats().file_count, 1, "one file of its own");
    }
    assert_eq!(
        read_rows(&engine, &left, 0..half, 2) + read_rows(&engine, &right, half..ROWS, 2),
        0,
        "the rewritten files' blocks were cached as they were written"
    );
    let cached_after = cached_bytes(&engine);
    // The two round-2 halves are cached once more, the parent's blocks dropped.
    assert!(
        cached_after < cached_before + cached_before / 2,
        "the parent's blocks still cached: {cached_before} bytes before, {cached_after} after"
    );
}
